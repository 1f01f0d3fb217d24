#!/usr/bin/env bash
# Installs a real monitoring stack on the local cluster (`make monitoring`): the Prometheus Operator and one
# Prometheus (namespace monitoring), built from the Go module proxy at the versions hack/prometheus/go.mod and
# hack/prometheus-operator/go.mod pin, packed into images and imported like the project's own (hack/images.sh).
#
#   hack/monitoring.sh up        build (cached under bin/), import, install, wait for Prometheus to be ready
#   hack/monitoring.sh down      remove what up installed (the operator's CRDs stay, like the project's)
#
# The operator's CRDs and its ClusterRole come from the pinned module (example/prometheus-operator-crd,
# example/rbac/prometheus-operator); the rest is hack/monitoring/monitoring.yaml.tmpl. The e2e monitoring test
# (test/e2e/monitoring_test.go) applies the shipped ServiceMonitor and alerts itself.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
K8S_BIN="$(k8s_bin)"
export KUBECONFIG="${KUBECONFIG:-$ROOT/bin/cluster/kubeconfig}"
kubectl() { "$K8S_BIN/kubectl" "$@"; }
ADDRESS="${CONTAINERD_ADDRESS:-/run/evalrun-cluster/containerd.sock}"
OUT="$ROOT/bin/images"
IMAGEPACK="$ROOT/bin/tools/imagepack"

PROMETHEUS_VERSION="$(pinned_version hack/prometheus github.com/prometheus/prometheus)"
OPERATOR_VERSION="$(pinned_version hack/prometheus-operator github.com/prometheus-operator/prometheus-operator)"

# module_dir prints the pinned operator module's directory in the module cache.
module_dir() {
  (cd "$ROOT/hack/prometheus-operator" && go list -m -f '{{.Dir}}' github.com/prometheus-operator/prometheus-operator)
}

# pack_import NAME TARBALL IMAGEPACK-FLAGS...: pack one image and import it unless containerd has that digest.
pack_import() {
  local name="$1" tarball="$2" digest have; shift 2
  "$IMAGEPACK" --name "$name" --out "$tarball" --digest-file "$tarball.digest" "$@" >/dev/null
  digest="$(cat "$tarball.digest")"
  have="$(ctr --address "$ADDRESS" -n k8s.io images ls "name==$name" 2>/dev/null | awk 'NR > 1 {print $3}')"
  if [ "$have" != "$digest" ]; then
    ctr --address "$ADDRESS" -n k8s.io images import "$tarball" >/dev/null
    log "imported $name ($digest)"
  fi
}

up() {
  local prom op
  [ -f "$KUBECONFIG" ] || die "no kubeconfig at $KUBECONFIG: run hack/cluster.sh up first"
  prom="$(hack/prometheus.sh)"
  op="$(hack/prometheus-operator.sh)"
  [ -x "$IMAGEPACK" ] || go build -o "$IMAGEPACK" ./hack/imagepack
  mkdir -p "$OUT"
  pack_import "localhost/evalrun/prometheus:$PROMETHEUS_VERSION" "$OUT/prometheus.tar" \
    --file /bin/prometheus="$prom/prometheus" --file /bin/promtool="$prom/promtool" --dir /prometheus \
    --entrypoint /bin/prometheus --workdir /prometheus
  pack_import "localhost/evalrun/prometheus-operator:$OPERATOR_VERSION" "$OUT/prometheus-operator.tar" \
    --file /bin/operator="$op/operator" --entrypoint /bin/operator
  pack_import "localhost/evalrun/prometheus-config-reloader:$OPERATOR_VERSION" "$OUT/prometheus-config-reloader.tar" \
    --file /bin/prometheus-config-reloader="$op/prometheus-config-reloader" --entrypoint /bin/prometheus-config-reloader

  local mod
  mod="$(module_dir)"
  kubectl apply --server-side --force-conflicts -f "$mod/example/prometheus-operator-crd" >/dev/null
  kubectl wait --for condition=Established --timeout=60s crd/prometheuses.monitoring.coreos.com \
    crd/servicemonitors.monitoring.coreos.com crd/prometheusrules.monitoring.coreos.com >/dev/null
  kubectl apply --server-side -f "$mod/example/rbac/prometheus-operator/prometheus-operator-cluster-role.yaml" >/dev/null
  render hack/monitoring/monitoring.yaml.tmpl PROMETHEUS_VERSION OPERATOR_VERSION | kubectl apply --server-side -f - >/dev/null
  kubectl -n monitoring rollout status deployment/prometheus-operator --timeout=180s >&2
  local i
  for i in $(seq 1 90); do
    kubectl -n monitoring get statefulset prometheus-e2e >/dev/null 2>&1 && break
    sleep 2
  done
  kubectl -n monitoring rollout status statefulset/prometheus-e2e --timeout=300s >&2
  log "Prometheus $PROMETHEUS_VERSION and the Prometheus Operator $OPERATOR_VERSION ready in namespace monitoring"
}

down() {
  render hack/monitoring/monitoring.yaml.tmpl PROMETHEUS_VERSION OPERATOR_VERSION | kubectl delete --ignore-not-found -f - >/dev/null
  kubectl delete --ignore-not-found clusterrole prometheus-operator >/dev/null
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  *) die "usage: hack/monitoring.sh up|down" ;;
esac
