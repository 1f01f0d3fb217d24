#!/usr/bin/env bash
# kube-network-policies (a NetworkPolicy enforcer) on the local cluster, built from the Go module proxy only, so
# e2e tests can check that a run's NetworkPolicy holds.
#
#   hack/kube-network-policies.sh [build]   prints the path of its binary (builds it the first time)
#   hack/kube-network-policies.sh install   builds it, packs and imports its image, applies
#                                           hack/kube-network-policies/install.yaml and waits for its DaemonSet
#   hack/kube-network-policies.sh uninstall deletes it and waits until its pod is gone (it removes its nftables
#                                           table on the way out): the cluster enforces no NetworkPolicy again
#
# The version is pinned by hack/kube-network-policies/go.mod (a wrapper module whose tools.go imports its cmd), so
# the project's own go.mod does not grow its dependencies. The binary is cached under
# bin/kube-network-policies/<version>/netpol. It hooks nftables' POSTROUTING and FORWARD paths through an nfqueue:
# traffic from a pod to the node itself is not filtered, so tests check pod-to-pod traffic.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

VERSION="$(pinned_version hack/kube-network-policies sigs.k8s.io/kube-network-policies)"
BIN="$ROOT/bin/kube-network-policies/$VERSION/netpol"
IMAGE="localhost/evalrun/kube-network-policies:$VERSION"
export KUBECONFIG="${KUBECONFIG:-$ROOT/bin/cluster/kubeconfig}"
kubectl() { "$(k8s_bin)/kubectl" "$@"; }

build() {
  build_pinned_tool hack/kube-network-policies sigs.k8s.io/kube-network-policies/cmd "$BIN"
}

install() {
  "$ROOT/hack/images.sh" kube-network-policies
  IMAGE="$IMAGE" envsubst '${IMAGE}' <"$ROOT/hack/kube-network-policies/install.yaml" | kubectl apply --server-side -f - >/dev/null
  kubectl -n kube-system rollout status daemonset/kube-network-policies --timeout=120s >/dev/null
  log "kube-network-policies $VERSION enforces NetworkPolicies"
}

uninstall() {
  IMAGE="$IMAGE" envsubst '${IMAGE}' <"$ROOT/hack/kube-network-policies/install.yaml" |
    kubectl delete --ignore-not-found --wait=true -f - >/dev/null
  kubectl -n kube-system wait --for=delete pod -l app=kube-network-policies --timeout=120s >/dev/null 2>&1 || true
  log "kube-network-policies removed"
}

case "${1:-build}" in
  build) build ;;
  install) install ;;
  uninstall) uninstall ;;
  *) die "unknown command $1 (want build, install or uninstall)" ;;
esac
