#!/usr/bin/env bash
# The tools the end-to-end tests run besides the project's own images, built from the Go module proxy and cached
# under bin/: Prometheus and promtool (hack/prometheus.sh; promtool also serves make test-unit), the Prometheus
# Operator (hack/prometheus-operator.sh; both for TestMonitoringAlerts) and Kueue (hack/kueue.sh; the Kueue tests).
#
#   hack/e2e-tools.sh             builds whichever is not cached yet, one after the other (hack/e2e.sh runs it
#                                 before the tests, so no test waits for a build)
#   hack/e2e-tools.sh during CMD  runs CMD while the same build runs in the background at nice 19, logged to
#                                 bin/logs/e2e-tools.log, and exits with CMD's status; the background build is
#                                 stopped if CMD ends first. `make test` runs verify, lint, test-unit and test-e2e
#                                 this way: on a fresh machine the tools build in the CPU those leave idle
#                                 (downloads, links, tests waiting on their API servers) instead of after them.
#
# Two builds of one binary never race: build_pinned_tool (hack/lib.sh) holds a lock per binary, so a foreground
# caller (make test-unit's promtool, hack/e2e.sh) waits for the background build of that binary and uses it, or
# builds it itself if the background build failed. Cold build times: docs/development.md.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# build builds the tools in the order make test needs them: promtool (make test-unit), then what only the e2e tests
# need.
build() {
  local start
  start=$(date +%s)
  hack/prometheus.sh >/dev/null
  hack/prometheus-operator.sh >/dev/null
  hack/kueue.sh build >/dev/null
  log "Prometheus, the Prometheus Operator and Kueue built or cached ($(($(date +%s) - start))s)"
}

# during CMD... runs CMD with build in the background (its own process group, so that stopping it stops the go
# commands it started).
during() {
  [ "$#" -gt 0 ] || die "usage: hack/e2e-tools.sh during CMD..."
  local logfile="$ROOT/bin/logs/e2e-tools.log" bg status=0
  mkdir -p "$(dirname "$logfile")"
  setsid nice -n 19 "$ROOT/hack/e2e-tools.sh" >"$logfile" 2>&1 &
  bg=$!
  log "building Prometheus, the Prometheus Operator and Kueue in the background (pid $bg, log $logfile)"
  "$@" || status=$?
  if kill -0 "$bg" 2>/dev/null; then
    log "stopping the background build (the command ended first)"
    # Its process group; again a moment later if it had not made its own group yet (CMD ended at once).
    local i
    for i in 1 2 3 4 5; do
      kill -0 "$bg" 2>/dev/null || break
      kill -TERM -- "-$bg" 2>/dev/null || kill -TERM "$bg" 2>/dev/null || true
      sleep 1
    done
  fi
  wait "$bg" 2>/dev/null || true
  return "$status"
}

case "${1:-build}" in
  build) build ;;
  during) shift; during "$@" ;;
  *) die "unknown command $1 (want build or during CMD...)" ;;
esac
