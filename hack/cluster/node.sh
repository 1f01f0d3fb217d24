# hack/cluster/node.sh: the node: the CNI bridge network (templates/cni.conflist.tmpl), the kubelet
# (templates/kubelet.yaml.tmpl) and kube-proxy (templates/kube-proxy.yaml.tmpl), and the checks that say the node
# is usable. Sourced by hack/cluster.sh.

# write_node_configs writes the CNI network, the kubelet's and kube-proxy's configuration. Pods get routes to the
# node, pod and service ranges only: no default route, so nothing can leave.
write_node_configs() {
  render "$TEMPLATES/cni.conflist.tmpl" BRIDGE CNI_IPAM_DIR POD_CIDR POD_GW NODE_NET SVC_CIDR \
    > "$CNI_CONF_DIR/10-evalrun.conflist"
  render "$TEMPLATES/kubelet.yaml.tmpl" NODE_IP PKI CTRD_SOCK STATE RUN > "$CONF/kubelet.yaml"
  render "$TEMPLATES/kube-proxy.yaml.tmpl" CONF NODE_NAME POD_CIDR NODE_IP > "$CONF/kube-proxy.yaml"
}

start_node() {
  mkdir -p "$KUBELET_ROOT" "$STATE/kubelet-volume-plugins" "$RUN/pod-logs"
  start kubelet "$K8S_BIN/kubelet" --config "$CONF/kubelet.yaml" --kubeconfig "$CONF/kubelet.kubeconfig" \
    --root-dir "$KUBELET_ROOT" --hostname-override "$NODE_NAME" --node-ip "$NODE_IP" --v=1
  start kube-proxy "$K8S_BIN/kube-proxy" --config "$CONF/kube-proxy.yaml" --v=1
}

node_ready() {
  [ "$(kubectl get node "$NODE_NAME" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ]
}
default_sa() { kubectl -n default get serviceaccount default; }
proxy_rules() { iptables -w -t nat -S KUBE-SERVICES | grep -q 'default/kubernetes:https'; }

# stop_node stops kube-proxy and the kubelet, then removes kube-proxy's rules (`kube-proxy --cleanup`) when `up`
# recorded host changes.
stop_node() {
  stop kube-proxy kubelet
  if [ -x "$K8S_BIN/kube-proxy" ] && command -v iptables >/dev/null && [ -f "$HOSTCHANGES" ]; then
    "$K8S_BIN/kube-proxy" --cleanup --v=0 >> "$LOGS/kube-proxy-cleanup.log" 2>&1 || true
  fi
}
