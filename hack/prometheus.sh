#!/usr/bin/env bash
# Builds Prometheus's prometheus and promtool binaries from the Go module proxy only, and caches them under
# bin/prometheus/<version>/. promtool checks the shipped rules (`make check-rules`, test/install); prometheus runs
# on the local cluster for the e2e monitoring test (hack/monitoring.sh packs it into an image).
#
#   hack/prometheus.sh            prints the folder of the binaries (builds them the first time)
#   hack/prometheus.sh promtool   the same, building promtool only (make test-unit needs no more)
#
# The version is pinned by hack/prometheus/go.mod (a wrapper module: its tools.go imports both commands), outside
# the project's go.mod. Built with -tags remove_all_sd,enable_kubernetes_sd (Prometheus's own build tags: of the
# service discoveries only Kubernetes', which the Prometheus Operator's configuration uses) and without the
# embedded web UI (its API is what the tests read). Cold build times: docs/monitoring.md.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

version="$(pinned_version hack/prometheus github.com/prometheus/prometheus)"
dir="$ROOT/bin/prometheus/$version"
export BUILD_TAGS=remove_all_sd,enable_kubernetes_sd
case "${1:-all}" in
  all | promtool) ;;
  *) die "unknown argument $1 (want promtool or nothing)" ;;
esac
build_pinned_tool hack/prometheus github.com/prometheus/prometheus/cmd/promtool "$dir/promtool" >/dev/null
if [ "${1:-all}" = all ]; then
  build_pinned_tool hack/prometheus github.com/prometheus/prometheus/cmd/prometheus "$dir/prometheus" >/dev/null
fi
echo "$dir"
