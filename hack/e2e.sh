#!/usr/bin/env bash
# `make test-e2e`: bring the local cluster up, build and import the images, deploy the operator and run the
# end-to-end tests (test/e2e, build tag e2e) against it; with EVALRUN_E2E_MONITORING=1 also the Prometheus Operator
# and a Prometheus (hack/monitoring.sh) for TestMonitoringAlerts, which is not yet part of make test (see
# docs/monitoring.md). The cluster stays up for inspection; `make cluster-down` stops it. E2E_RUN selects tests (go test -run), E2E_TIMEOUT overrides the 45m budget.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
export KUBECONFIG="$ROOT/bin/cluster/kubeconfig"

t0=$(date +%s)
hack/cluster.sh up
t1=$(date +%s)
hack/images.sh
hack/deploy.sh
if [ -n "${EVALRUN_E2E_MONITORING:-}" ]; then hack/monitoring.sh up; fi
t2=$(date +%s)
status=0
go test -tags e2e ./test/e2e/ -count=1 -timeout "${E2E_TIMEOUT:-45m}" -v ${E2E_RUN:+-run "$E2E_RUN"} || status=$?
t3=$(date +%s)
echo "e2e: cluster up $((t1 - t0))s, images + deploy $((t2 - t1))s, tests $((t3 - t2))s, total $((t3 - t0))s"
exit $status
