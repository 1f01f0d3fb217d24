#!/usr/bin/env bash
# Builds the Kubernetes components (and etcd) this project runs against, from the Go
# module proxy only, and caches them under bin/k8s/<version>/.
#
#   hack/k8s-binaries.sh [component...]     (default: all)
#
# Components: kube-apiserver kubectl etcd (enough for envtest) and kubelet
# kube-controller-manager kube-scheduler kube-proxy (the local cluster).
#
# The version is derived from go.mod: k8s.io/api v0.Y.Z -> Kubernetes v1.Y.Z.
# k8s.io/kubernetes cannot be required directly (its go.mod points its 33 staging
# modules at ./staging/...), so a throwaway wrapper module requires it and replaces
# every staging module with its published v0.Y.Z release. etcd is built from
# go.etcd.io/etcd/server/v3 at the version k8s.io/kubernetes itself requires.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

K8S_VERSION="$(k8s_version)"                     # v1.37.2
API_VERSION="v0.${K8S_VERSION#v1.}"             # v0.37.2: the staging modules' release
MINOR="$(echo "$API_VERSION" | cut -d. -f2)"
OUT="$ROOT/bin/k8s/$K8S_VERSION"
WORK="$ROOT/bin/k8s/build-$K8S_VERSION"
ALL=(kube-apiserver etcd kubectl kubelet kube-controller-manager kube-scheduler kube-proxy)
WANT=("$@")
[ ${#WANT[@]} -eq 0 ] && WANT=("${ALL[@]}")

missing=()
for c in "${WANT[@]}"; do [ -x "$OUT/$c" ] || missing+=("$c"); done
if [ ${#missing[@]} -eq 0 ]; then
  echo "$OUT"
  exit 0
fi
mkdir -p "$OUT" "$WORK/k8s" "$WORK/etcd"


# --- wrapper module for k8s.io/kubernetes -------------------------------------
if [ ! -f "$WORK/k8s/.ready" ]; then
  log "preparing wrapper module for k8s.io/kubernetes $K8S_VERSION"
  modfile="$(cd "$WORK/k8s" && GOFLAGS= GO111MODULE=on go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')"
  {
    echo "module evalrun.local/k8sbuild"
    echo
    echo "go $(sed -n 's/^go \(.*\)$/\1/p' "$modfile")"
    echo
    echo "require k8s.io/kubernetes $K8S_VERSION"
    echo
    grep -E '^\s*k8s.io/[a-z0-9-]+ => \./staging/' "$modfile" \
      | awk -v v="$API_VERSION" '{print "replace " $1 " => " $1 " " v}'
  } > "$WORK/k8s/go.mod"
  echo 'package k8sbuild' > "$WORK/k8s/doc.go"
  (cd "$WORK/k8s" && GOFLAGS=-mod=mod go mod download k8s.io/kubernetes)
  touch "$WORK/k8s/.ready"
fi

ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION \
-X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$MINOR \
-X k8s.io/component-base/version.gitTreeState=clean \
-X k8s.io/client-go/pkg/version.gitVersion=$K8S_VERSION \
-X k8s.io/client-go/pkg/version.gitMajor=1 -X k8s.io/client-go/pkg/version.gitMinor=$MINOR"

build_k8s() {
  local c="$1" start end
  start=$(date +%s)
  log "building $c $K8S_VERSION"
  (cd "$WORK/k8s" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "$ldflags" \
      -o "$OUT/$c.tmp" "k8s.io/kubernetes/cmd/$c")
  mv "$OUT/$c.tmp" "$OUT/$c"
  end=$(date +%s)
  log "built $c in $((end - start))s"
}

build_etcd() {
  local modfile ev start end
  start=$(date +%s)
  modfile="$(cd "$WORK/k8s" && go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')"
  ev="$(awk '$1=="go.etcd.io/etcd/server/v3"{print $2; exit}' "$modfile")"
  log "building etcd $ev"
  cat > "$WORK/etcd/go.mod" <<MOD
module evalrun.local/etcdbuild

go 1.26

require go.etcd.io/etcd/server/v3 $ev
MOD
  cat > "$WORK/etcd/main.go" <<'GO'
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
GO
  (cd "$WORK/etcd" && GOFLAGS=-mod=mod go mod tidy && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$OUT/etcd.tmp" .)
  mv "$OUT/etcd.tmp" "$OUT/etcd"
  end=$(date +%s)
  log "built etcd in $((end - start))s"
}

# kubelet first when wanted: it compiles most shared packages for the others.
for c in kubelet kube-apiserver etcd kubectl kube-controller-manager kube-scheduler kube-proxy; do
  case " ${missing[*]} " in *" $c "*) ;; *) continue ;; esac
  if [ "$c" = etcd ]; then build_etcd; else build_k8s "$c"; fi
done
echo "$OUT"
