#!/usr/bin/env bash
# Builds this project's container images without Docker and imports them into the local cluster's containerd.
#
#   hack/images.sh [pause|manager|collector|judge|screening-runner|seaweedfs|judgeserver|hostile-runner|kueue|kube-network-policies ...]
#                                       (default: all but kueue and kube-network-policies)
#
# Each image is static binaries on an empty base, packed by hack/imagepack into an OCI image-layout tarball under
# bin/images/ and imported with `ctr -n k8s.io images import`. Packing is deterministic, so an image whose
# inputs did not change has the same digest and is not imported again. Images run as uid 65532 (nonroot), except
# pause (65535, like the upstream image) and judge (65530, the judge containers' uid).
#
#   localhost/evalrun/pause:dev             /pause, built with gcc -static from k8s.io/kubernetes's build/pause
#   localhost/evalrun/manager:dev           /manager
#   localhost/evalrun/collector:dev         /collector (entrypoint: install, collect, judge) and /launcher (the
#                                           runner's init), which `collector install` copies into the pod's bin
#                                           volume
#   localhost/evalrun/judge:dev             the judge image: the manager's --judge-image, where code_judge scripts
#                                           run unless spec.judging.image names another: sh, coreutils, python3,
#                                           node, bun and a `uv run` shim on Debian packages (hack/judge-rootfs.sh
#                                           builds and caches its root file system), uid 65530
#   localhost/evalrun/screening-runner:dev  busybox sh + /app/screening-runner and /app/eval.yaml (the sample of
#                                           examples/screening; its code judge is in the sample's bundle)
#   localhost/evalrun/seaweedfs:dev         /weed (SeaweedFS, built by hack/seaweedfs.sh), the S3-compatible bucket of
#                                           the end-to-end tests (test/e2e/testdata/seaweedfs.yaml)
#   localhost/evalrun/judgeserver:dev       /judgeserver (test/judgeserver), the deterministic OpenAI-compatible judge of
#                                           the LLM-judge end-to-end test (test/e2e/testdata/judgeserver.yaml)
#   localhost/evalrun/hostile-runner:dev   /test/hostilerunner at /bin/sh, /usr/bin/python3, /usr/bin/node, ...: a runner
#                                           image whose interpreters print a passing verdict (test/e2e's judge image test)
#   localhost/evalrun/kueue:<version>       /manager (Kueue, built by hack/kueue.sh); only when named (hack/kueue.sh
#                                           install names it), not among the default images
#   localhost/evalrun/kube-network-policies:<version>  /bin/netpol (built by hack/kube-network-policies.sh); only
#                                           when named (hack/kube-network-policies.sh install names it)
#
# CONTAINERD_ADDRESS overrides the containerd socket (default: the local cluster's, see hack/cluster.sh).
# IMAGES_NO_IMPORT=1 only packs the tarballs.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ADDRESS="${CONTAINERD_ADDRESS:-/run/evalrun-cluster/containerd.sock}"
OUT="$ROOT/bin/images"
BUILD="$OUT/build"
TAG="${IMAGE_TAG:-dev}"
IMAGEPACK="$ROOT/bin/tools/imagepack"
ALL=(pause manager collector judge screening-runner seaweedfs judgeserver hostile-runner)
OPTIONAL=(kueue kube-network-policies)
WANT=("$@")
[ ${#WANT[@]} -eq 0 ] && WANT=("${ALL[@]}")


mkdir -p "$OUT" "$BUILD"
go build -o "$IMAGEPACK" ./hack/imagepack

gobuild() { # gobuild OUTPUT PACKAGE
  CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$1" "$2"
}

# import NAME TARBALL DIGEST: import unless containerd already has this exact manifest under that name.
import_image() {
  local name="$1" tarball="$2" digest="$3" have
  if [ "${IMAGES_NO_IMPORT:-}" = 1 ]; then return 0; fi
  [ -S "$ADDRESS" ] || die "no containerd socket at $ADDRESS: start the cluster first (hack/cluster.sh up)"
  have="$(ctr --address "$ADDRESS" -n k8s.io images ls "name==$name" 2>/dev/null | awk 'NR > 1 {print $3}')"
  if [ "$have" = "$digest" ]; then
    log "$name unchanged ($digest)"
    return 0
  fi
  ctr --address "$ADDRESS" -n k8s.io images import "$tarball" >/dev/null
  have="$(ctr --address "$ADDRESS" -n k8s.io images ls "name==$name" 2>/dev/null | awk 'NR > 1 {print $3}')"
  [ "$have" = "$digest" ] || die "import of $tarball did not register $name at $digest (found '${have:-nothing}')"
  log "imported $name ($digest)"
}

# pack NAME TARBALL IMAGEPACK-FLAGS...: pack and import one image.
pack() {
  local name="$1" tarball="$2" digest; shift 2
  "$IMAGEPACK" --name "$name" --out "$tarball" --digest-file "$tarball.digest" "$@" >/dev/null
  digest="$(cat "$tarball.digest")"
  import_image "$name" "$tarball" "$digest"
}

build_pause() {
  local modfile src dir version
  version="$(k8s_version)"
  dir="$(cd /tmp && GOFLAGS=-mod=mod go mod download -json "k8s.io/kubernetes@$version" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')"
  src="$dir/build/pause/linux/pause.c"
  [ -f "$src" ] || die "pause source not found at $src"
  if [ ! -x "$BUILD/pause" ] || [ "$src" -nt "$BUILD/pause" ]; then
    command -v gcc >/dev/null || die "gcc is needed for the pause image (apt-get install gcc libc6-dev)"
    gcc -Os -static -Wall -Werror -DVERSION="\"$version-evalrun\"" -o "$BUILD/pause.tmp" "$src"
    strip "$BUILD/pause.tmp" 2>/dev/null || true
    mv "$BUILD/pause.tmp" "$BUILD/pause"
  fi
  pack "localhost/evalrun/pause:$TAG" "$OUT/pause.tar" --file /pause="$BUILD/pause" --entrypoint /pause --user 65535:65535
}

build_manager() {
  [ -d cmd/manager ] && ls cmd/manager/*.go >/dev/null 2>&1 || die "cmd/manager has no Go files yet"
  gobuild "$BUILD/manager" ./cmd/manager
  pack "localhost/evalrun/manager:$TAG" "$OUT/manager.tar" --file /manager="$BUILD/manager" --entrypoint /manager
}

build_collector() {
  gobuild "$BUILD/collector" ./cmd/collector
  gobuild "$BUILD/launcher" ./cmd/launcher
  pack "localhost/evalrun/collector:$TAG" "$OUT/collector.tar" --file /collector="$BUILD/collector" \
    --file /launcher="$BUILD/launcher" --entrypoint /collector
}

build_judge() {
  local rootfs stamp flags
  rootfs="$(hack/judge-rootfs.sh | tail -n 1)"
  flags=(--rootfs "$rootfs" --user 65530:65530
    --env PATH=/usr/local/bin:/usr/bin:/bin --env HOME=/tmp --env PYTHONDONTWRITEBYTECODE=1
    --env BUN_RUNTIME_TRANSPILER_CACHE_PATH=0
    --label org.opencontainers.image.title=evalrun-judge
    --label "org.opencontainers.image.description=sh, coreutils, python3, node, bun and a uv run shim for code_judge scripts")
  # Packing 250 MB takes a while: the tarball is kept while its root file system (keyed by the package versions),
  # the flags and imagepack's source are the same.
  stamp="$( { printf '%s\n' "$TAG" "${flags[@]}"; cat hack/imagepack/*.go; } | sha256sum | cut -c1-16)"
  if [ -f "$OUT/judge.tar" ] && [ -f "$OUT/judge.tar.digest" ] && [ "$(cat "$OUT/judge.tar.stamp" 2>/dev/null)" = "$stamp" ]; then
    import_image "localhost/evalrun/judge:$TAG" "$OUT/judge.tar" "$(cat "$OUT/judge.tar.digest")"
    return
  fi
  rm -f "$OUT/judge.tar.stamp"
  pack "localhost/evalrun/judge:$TAG" "$OUT/judge.tar" "${flags[@]}"
  echo "$stamp" >"$OUT/judge.tar.stamp"
}

build_screening_runner() {
  local busybox=/bin/busybox
  [ -x "$busybox" ] || die "$busybox is missing (apt-get install busybox-static)"
  gobuild "$BUILD/screening-runner" ./examples/screening/runner
  pack "localhost/evalrun/screening-runner:$TAG" "$OUT/screening-runner.tar" \
    --busybox "$busybox" \
    --file /app/screening-runner="$BUILD/screening-runner" \
    --file /app/eval.yaml="$ROOT/examples/screening/eval.yaml:0644" \
    --workdir /app --cmd /app/screening-runner --cmd --healthcheck
}

build_seaweedfs() {
  local weed version
  weed="$(hack/seaweedfs.sh | tail -n 1)"
  version="$(basename "$(dirname "$weed")")"
  pack "localhost/evalrun/seaweedfs:$TAG" "$OUT/seaweedfs.tar" \
    --file /weed="$weed" --entrypoint /weed \
    --label org.opencontainers.image.title=seaweedfs \
    --label org.opencontainers.image.version="$version" \
    --label org.opencontainers.image.licenses=Apache-2.0
}

build_judgeserver() {
  gobuild "$BUILD/judgeserver" ./test/judgeserver
  pack "localhost/evalrun/judgeserver:$TAG" "$OUT/judgeserver.tar" --file /judgeserver="$BUILD/judgeserver" --entrypoint /judgeserver
}

build_hostile_runner() {
  gobuild "$BUILD/hostilerunner" ./test/hostilerunner
  local files=() f
  for f in /bin/sh /bin/python3 /usr/bin/python3 /usr/bin/node /usr/bin/bun /usr/local/bin/python3 /usr/local/bin/bun; do
    files+=(--file "$f=$BUILD/hostilerunner")
  done
  pack "localhost/evalrun/hostile-runner:$TAG" "$OUT/hostile-runner.tar" "${files[@]}" --env PATH=/usr/local/bin:/usr/bin:/bin
}

build_kueue() {
  local bin version
  bin="$(hack/kueue.sh build | tail -n 1)"
  version="$(basename "$(dirname "$bin")")"
  pack "localhost/evalrun/kueue:$version" "$OUT/kueue.tar" \
    --file /manager="$bin" --entrypoint /manager \
    --label org.opencontainers.image.title=kueue \
    --label org.opencontainers.image.version="$version" \
    --label org.opencontainers.image.licenses=Apache-2.0
}

build_kube_network_policies() {
  local bin version
  bin="$(hack/kube-network-policies.sh build | tail -n 1)"
  version="$(basename "$(dirname "$bin")")"
  pack "localhost/evalrun/kube-network-policies:$version" "$OUT/kube-network-policies.tar" \
    --file /bin/netpol="$bin" --entrypoint /bin/netpol \
    --label org.opencontainers.image.title=kube-network-policies \
    --label org.opencontainers.image.version="$version" \
    --label org.opencontainers.image.licenses=Apache-2.0
}

for image in "${WANT[@]}"; do
  case "$image" in
    pause) build_pause ;;
    manager) build_manager ;;
    collector) build_collector ;;
    screening-runner) build_screening_runner ;;
    seaweedfs) build_seaweedfs ;;
    judge) build_judge ;;
    judgeserver) build_judgeserver ;;
    hostile-runner) build_hostile_runner ;;
    kueue) build_kueue ;;
    kube-network-policies) build_kube_network_policies ;;
    *) die "unknown image $image (want one of: ${ALL[*]} ${OPTIONAL[*]})" ;;
  esac
done
