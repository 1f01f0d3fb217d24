# hack/cluster/control-plane.sh: etcd, kube-apiserver, kube-controller-manager and kube-scheduler, as local
# processes with their flags (no config files: every setting is a flag). Sourced by hack/cluster.sh.

start_control_plane() {
  mkdir -p "$ETCD_DATA"
  chmod 700 "$ETCD_DATA"
  start etcd "$K8S_BIN/etcd" --name evalrun --data-dir "$ETCD_DATA" \
    --listen-client-urls "http://127.0.0.1:$ETCD_CLIENT_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_CLIENT_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "evalrun=http://127.0.0.1:$ETCD_PEER_PORT" \
    --unsafe-no-fsync=true --quota-backend-bytes=4294967296 --log-level=warn

  start kube-apiserver "$K8S_BIN/kube-apiserver" \
    --etcd-servers "http://127.0.0.1:$ETCD_CLIENT_PORT" \
    --bind-address "$NODE_IP" --advertise-address "$NODE_IP" --secure-port "$API_PORT" \
    --service-cluster-ip-range "$SVC_CIDR" \
    --client-ca-file "$PKI/ca.crt" --tls-cert-file "$PKI/apiserver.crt" --tls-private-key-file "$PKI/apiserver.key" \
    --kubelet-client-certificate "$PKI/apiserver-kubelet-client.crt" \
    --kubelet-client-key "$PKI/apiserver-kubelet-client.key" \
    --kubelet-certificate-authority "$PKI/ca.crt" \
    --kubelet-preferred-address-types InternalIP,Hostname \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-account-key-file "$PKI/sa.pub" --service-account-signing-key-file "$PKI/sa.key" \
    --authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction \
    --allow-privileged=false --profiling=false --endpoint-reconciler-type lease \
    --storage-media-type application/vnd.kubernetes.protobuf --v=1
  wait_for "kube-apiserver /readyz" 60 kubectl get --raw /readyz

  mkdir -p "$STATE/kcm-flexvolume"
  start kube-controller-manager "$K8S_BIN/kube-controller-manager" \
    --kubeconfig "$CONF/controller-manager.kubeconfig" \
    --authentication-kubeconfig "$CONF/controller-manager.kubeconfig" \
    --authorization-kubeconfig "$CONF/controller-manager.kubeconfig" \
    --bind-address 127.0.0.1 --secure-port 10257 \
    --service-account-private-key-file "$PKI/sa.key" --root-ca-file "$PKI/ca.crt" \
    --use-service-account-credentials=true --leader-elect=false --allocate-node-cidrs=false \
    --cluster-signing-cert-file "$PKI/ca.crt" --cluster-signing-key-file "$PKI/ca.key" \
    --flex-volume-plugin-dir "$STATE/kcm-flexvolume" \
    --profiling=false --v=1
  start kube-scheduler "$K8S_BIN/kube-scheduler" \
    --kubeconfig "$CONF/scheduler.kubeconfig" \
    --authentication-kubeconfig "$CONF/scheduler.kubeconfig" \
    --authorization-kubeconfig "$CONF/scheduler.kubeconfig" \
    --bind-address 127.0.0.1 --secure-port 10259 --leader-elect=false --profiling=false --v=1
}


# stop_control_plane stops it; its state (etcd's data) is discarded by `down`, so a long graceful drain of watches
# buys nothing.
stop_control_plane() { STOP_GRACE=3 stop kube-scheduler kube-controller-manager kube-apiserver etcd; }
