// Package e2e holds the end-to-end tests that run against the real local cluster (hack/cluster.sh). They are
// behind the e2e build tag: `hack/e2e.sh` (make test-e2e) brings the cluster up, imports the images, deploys the
// operator and runs `go test -tags e2e ./test/e2e/`.
//
// The tests run on the cluster's host as root: besides the API they read the kubelet's log and, for the collector
// restart scenario, signal a container process directly.
package e2e
