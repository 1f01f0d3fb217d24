//go:build tools

// Package kueue pins Kueue (hack/kueue.sh builds its manager binary from this module's go.sum and takes its CRDs and
// webhook configuration from the same module zip).
package kueue

import _ "sigs.k8s.io/kueue/cmd/kueue"
