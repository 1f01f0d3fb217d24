#!/usr/bin/env bash
# `make test-e2e`: bring the local cluster up, build and import the images, deploy the operator, build the tools the
# tests install themselves (hack/e2e-tools.sh: Prometheus and the Prometheus Operator, which TestMonitoringAlerts
# installs with hack/monitoring.sh, and Kueue, which the Kueue tests install with hack/kueue.sh), and run the
# end-to-end tests (test/e2e, build tag e2e) against the cluster. The cluster stays up for inspection;
# `make cluster-down` stops it. E2E_RUN selects tests (go test -run), E2E_TIMEOUT overrides the 45m budget.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
export KUBECONFIG="$ROOT/bin/cluster/kubeconfig"

t0=$(date +%s)
hack/cluster.sh up
t1=$(date +%s)
hack/images.sh
hack/deploy.sh
t2=$(date +%s)
# Built (or waited for, when make test builds them in the background) before any test starts, so no test's time
# includes a build.
hack/e2e-tools.sh
t3=$(date +%s)
status=0
go test -tags e2e ./test/e2e/ -count=1 -timeout "${E2E_TIMEOUT:-45m}" -v ${E2E_RUN:+-run "$E2E_RUN"} || status=$?
t4=$(date +%s)
echo "e2e: cluster up $((t1 - t0))s, images + deploy $((t2 - t1))s, tools $((t3 - t2))s, tests $((t4 - t3))s, total $((t4 - t0))s"
exit $status
