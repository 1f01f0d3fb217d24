#!/usr/bin/env bash
# Kueue on the local cluster, built from the Go module proxy only.
#
#   hack/kueue.sh [build]    prints the path of Kueue's manager binary (builds it the first time)
#   hack/kueue.sh install    builds it, packs and imports its image (hack/images.sh kueue), applies Kueue's own
#                            manifests with this project's overlay and waits until its webhooks answer
#   hack/kueue.sh manifests  prints the manifests install applies
#
# The version is pinned by hack/kueue/go.mod (a wrapper module: its tools.go imports sigs.k8s.io/kueue/cmd/kueue), so
# the project's own go.mod does not grow Kueue's dependencies. The binary is cached under bin/kueue/<version>/kueue:
# static, stripped (84 MiB). Cold (Kueue's k8s.io v0.35.3 dependencies not in the Go build cache, modules already
# downloaded: 30 s more without them): 13m0s user + 4m8s sys of CPU, 85 minutes of wall time on a 2-core machine
# shared with six other agents' builds (load 20-40, niced for the first 55 minutes); on an idle 2-core machine
# expect roughly 10 minutes. Warm (binary cached): 0.8 s.
# The manifests are the module zip's own config/default (CRDs, RBAC, manager, internal certificate management:
# Kueue writes its webhook certificate and injects the CA itself), with hack/kueue/overlay on top (what it changes,
# and why: its kustomization.yaml).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

VERSION="$(pinned_version hack/kueue sigs.k8s.io/kueue)"
BIN="$ROOT/bin/kueue/$VERSION/kueue"
export KUBECONFIG="${KUBECONFIG:-$ROOT/bin/cluster/kubeconfig}"
kubectl() { "$(k8s_bin)/kubectl" "$@"; }

build() {
  build_pinned_tool hack/kueue sigs.k8s.io/kueue/cmd/kueue "$BIN"
}

# manifests prints config/default of the pinned module with hack/kueue/overlay applied.
manifests() {
  local src work
  src="$(cd "$ROOT/hack/kueue" && go list -m -f '{{.Dir}}' sigs.k8s.io/kueue)"
  [ -d "$src/config/default" ] || die "no config/default in $src"
  work="$(mktemp -d)"
  # shellcheck disable=SC2064
  trap "rm -rf '$work'" RETURN
  cp -r "$src/config" "$work/config"
  chmod -R u+w "$work/config"
  mkdir "$work/overlay"
  cp "$ROOT"/hack/kueue/overlay/*.yaml "$work/overlay/"
  KUEUE_VERSION="$VERSION"
  render "$ROOT/hack/kueue/overlay/kustomization.yaml" KUEUE_VERSION > "$work/overlay/kustomization.yaml"
  kubectl kustomize "$work/overlay"
}

install() {
  local start deadline
  start=$(date +%s)
  [ -f "$KUBECONFIG" ] || die "no kubeconfig at $KUBECONFIG: run hack/cluster.sh up first"
  build >/dev/null
  hack/images.sh kueue
  manifests | kubectl apply --server-side --force-conflicts -f - >/dev/null
  kubectl wait --for condition=Established --timeout=60s \
    crd/workloads.kueue.x-k8s.io crd/clusterqueues.kueue.x-k8s.io crd/localqueues.kueue.x-k8s.io >/dev/null
  kubectl -n kueue-system rollout status deployment/kueue-controller-manager --timeout=180s >&2
  # Ready is not enough: the webhooks answer only once Kueue has written its certificate and injected the CA, and a
  # ResourceFlavor goes through both its webhooks and its CRD's conversion.
  deadline=$(($(date +%s) + 120))
  until kubectl create --dry-run=server -o name -f - >/dev/null 2>&1 <<'YAML'
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata:
  name: kueue-sh-probe
YAML
  do
    [ "$(date +%s)" -lt "$deadline" ] || die "Kueue's webhooks did not answer within 120s"
    sleep 1
  done
  log "Kueue $VERSION ready in $(($(date +%s) - start))s"
}

case "${1:-build}" in
  build) build ;;
  install) install ;;
  manifests) manifests ;;
  *) die "unknown command $1 (want build, install or manifests)" ;;
esac
