#!/usr/bin/env bash
# Deploys the CRD, RBAC and the manager (config/default) to the local cluster and waits for the rollout.
# The manager image tag is fixed (localhost/evalrun/manager:dev), so when `hack/images.sh` imported a new build the
# Deployment's pod template gets the image digest as an annotation, which rolls the manager exactly when it changed.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
K8S_BIN="$(k8s_bin)"
export KUBECONFIG="${KUBECONFIG:-$ROOT/bin/cluster/kubeconfig}"
NAMESPACE=evalrun-system
kubectl() { "$K8S_BIN/kubectl" "$@"; }

[ -f "$KUBECONFIG" ] || { log "no kubeconfig at $KUBECONFIG: run hack/cluster.sh up first"; exit 1; }
[ -f config/default/kustomization.yaml ] || { log "config/default/kustomization.yaml does not exist yet"; exit 1; }

kubectl apply --server-side --force-conflicts -k config/default >/dev/null
kubectl wait --for condition=Established --timeout=60s crd/evalruns.evals.evalrun.io >/dev/null

digest=""
[ -f bin/images/manager.tar.digest ] && digest="$(cat bin/images/manager.tar.digest)"
for d in $(kubectl -n "$NAMESPACE" get deployments -o name); do
  if [ -n "$digest" ]; then
    current="$(kubectl -n "$NAMESPACE" get "$d" -o jsonpath='{.spec.template.metadata.annotations.evalrun\.io/image-digest}')"
    if [ "$current" != "$digest" ]; then
      kubectl -n "$NAMESPACE" patch "$d" --type merge \
        -p "{\"spec\":{\"template\":{\"metadata\":{\"annotations\":{\"evalrun.io/image-digest\":\"$digest\"}}}}}" >/dev/null
    fi
  fi
  kubectl -n "$NAMESPACE" rollout status "$d" --timeout=180s >&2
done
log "manager ready in namespace $NAMESPACE"
