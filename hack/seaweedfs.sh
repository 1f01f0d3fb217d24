#!/usr/bin/env bash
# Builds SeaweedFS's `weed` binary (a real S3-compatible server for the object store tests and the e2e bucket) from
# the Go module proxy only, and caches it under bin/seaweedfs/<version>/weed.
#
#   hack/seaweedfs.sh            prints the binary's path (builds it the first time)
#
# The version is pinned by hack/seaweedfs/go.mod (a wrapper module: its tools.go imports
# github.com/seaweedfs/seaweedfs/weed). Static and stripped (157 MiB). A cold build took 9.6 minutes on a 2-core
# machine, after 2.7 minutes of module downloads on a machine that had none.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

build_pinned_tool hack/seaweedfs github.com/seaweedfs/seaweedfs/weed \
  "$ROOT/bin/seaweedfs/$(pinned_version hack/seaweedfs github.com/seaweedfs/seaweedfs)/weed"
