//go:build tools

// Package prometheusoperator pins the Prometheus Operator release whose operator and prometheus-config-reloader
// binaries the e2e monitoring test installs on the local cluster (hack/prometheus-operator.sh builds them).
package prometheusoperator

import (
	_ "github.com/prometheus-operator/prometheus-operator/cmd/operator"
	_ "github.com/prometheus-operator/prometheus-operator/cmd/prometheus-config-reloader"
)
