//go:build tools

// Package tools pins the developer tools that are built from the Go module proxy.
package tools

import (
	_ "github.com/golangci/golangci-lint/v2/cmd/golangci-lint"
	_ "golang.org/x/perf/cmd/benchstat"
	_ "sigs.k8s.io/kube-api-linter/cmd/golangci-lint-kube-api-linter"
)
