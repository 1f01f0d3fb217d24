#!/usr/bin/env bash
# Builds the helm binary (for `helm lint` and `helm template` of charts/evalrun-operator) from the Go module proxy
# only, and caches it under bin/tools/helm-<version>.
#
#   hack/helm.sh            prints the binary's path (builds it the first time)
#
# The version is pinned by hack/helm/go.mod (a wrapper module outside the project's main module: its tools.go
# imports helm.sh/helm/v4/cmd/helm, and go.sum verifies the whole dependency graph). Static and stripped (64 MiB). A
# build with an empty Go build cache took 38 minutes on a 2-core machine shared with other heavy builds (load 11-14,
# this one niced): 13 minutes of CPU (9m53s user, 3m18s sys), so several minutes on an idle one; module downloads
# (about 20 s) come first when the module cache has none.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MOD="$ROOT/hack/helm"
cd "$MOD"

VERSION="$(go list -m -f '{{.Version}}' helm.sh/helm/v4)"
BIN="$ROOT/bin/tools/helm-$VERSION"

if [ -x "$BIN" ]; then
  echo "$BIN"
  exit 0
fi

log() { echo "helm: $*" >&2; }

mkdir -p "$ROOT/bin/tools"
start=$(date +%s)
log "building helm $VERSION"
# GOFLAGS is reset so a caller's flags cannot reach this module; -mod=readonly makes a stale go.sum an error.
CGO_ENABLED=0 GOFLAGS=-mod=readonly nice -n 10 go build -trimpath -ldflags "-s -w" -o "$BIN.tmp" helm.sh/helm/v4/cmd/helm
mv "$BIN.tmp" "$BIN"
end=$(date +%s)
log "built $BIN in $((end - start))s ($(du -h "$BIN" | cut -f1))"
echo "$BIN"
