//go:build tools

// Package prometheus pins the Prometheus release whose prometheus and promtool binaries the e2e monitoring test
// runs (a real Prometheus scraping the manager, evaluating the shipped rules) and whose promtool checks the
// shipped rules (hack/prometheus.sh builds them).
package prometheus

import (
	_ "github.com/prometheus/prometheus/cmd/prometheus"
	_ "github.com/prometheus/prometheus/cmd/promtool"
)
