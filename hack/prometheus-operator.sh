#!/usr/bin/env bash
# Builds the Prometheus Operator (operator) and its prometheus-config-reloader from the Go module proxy only, and
# caches them under bin/prometheus-operator/<version>/ (hack/monitoring.sh packs them into images for the local
# cluster).
#
#   hack/prometheus-operator.sh   prints the folder of the binaries (builds them the first time)
#
# The version is pinned by hack/prometheus-operator/go.mod (a wrapper module: its tools.go imports both commands),
# outside the project's go.mod. Cold build times: docs/monitoring.md.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

version="$(pinned_version hack/prometheus-operator github.com/prometheus-operator/prometheus-operator)"
dir="$ROOT/bin/prometheus-operator/$version"
build_pinned_tool hack/prometheus-operator github.com/prometheus-operator/prometheus-operator/cmd/prometheus-config-reloader \
  "$dir/prometheus-config-reloader" >/dev/null
build_pinned_tool hack/prometheus-operator github.com/prometheus-operator/prometheus-operator/cmd/operator "$dir/operator" >/dev/null
echo "$dir"
