#!/usr/bin/env bash
# Builds the helm binary (for `helm lint` and `helm template` of charts/evalrun-operator) from the Go module proxy
# only, and caches it under bin/tools/helm-<version>.
#
#   hack/helm.sh            prints the binary's path (builds it the first time)
#
# The version is pinned by hack/helm/go.mod (a wrapper module: its tools.go imports helm.sh/helm/v4/cmd/helm).
# Static and stripped (64 MiB). A build with an empty Go build cache took 38 minutes on a 2-core machine shared with
# other heavy builds (load 11-14, this one niced): 13 minutes of CPU (9m53s user, 3m18s sys), so several minutes on
# an idle one; module downloads (about 20 s) come first when the module cache has none.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

build_pinned_tool hack/helm helm.sh/helm/v4/cmd/helm "$ROOT/bin/tools/helm-$(pinned_version hack/helm helm.sh/helm/v4)"
