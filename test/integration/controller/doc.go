// Package controller holds the integration tests of internal/manager/controller: the real manager against a real
// kube-apiserver and etcd (envtest), no kubelet. They need KUBEBUILDER_ASSETS (make test-unit builds the binaries
// and sets it); the pure tests of the controller stay next to its code and run with plain `go test`.
package controller
