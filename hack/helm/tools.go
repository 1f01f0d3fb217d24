//go:build tools

// Package helm pins helm (hack/helm.sh builds its binary from this module's go.sum).
package helm

import _ "helm.sh/helm/v4/cmd/helm"
