//go:build tools

// Package kubenetworkpolicies pins kube-network-policies, a NetworkPolicy enforcer (nfqueue on the node), so the
// local cluster's e2e tests can check that a run's NetworkPolicy holds (hack/kube-network-policies.sh).
package kubenetworkpolicies

import _ "sigs.k8s.io/kube-network-policies/cmd"
