# hack/cluster/settings.sh: the local cluster's paths, addresses and component list, and the small commands every
# part uses (kubectl with the admin kubeconfig, ctr on our containerd). Sourced by hack/cluster.sh after lib.sh.

K8S_VERSION="$(k8s_version)"
K8S_BIN="$(k8s_bin)"
OUT_DIR="$ROOT/bin/cluster"
KUBECONFIG_OUT="$OUT_DIR/kubeconfig"

STATE="${EVALRUN_CLUSTER_STATE:-/var/lib/evalrun-cluster}"
RUN="${EVALRUN_CLUSTER_RUN:-/run/evalrun-cluster}"
PKI="$STATE/pki"
CONF="$STATE/config"
LOGS="$STATE/logs"
PIDS="$RUN/pids"
CTRD_ROOT="$STATE/containerd"
CTRD_STATE="$RUN/containerd"
CTRD_SOCK="$RUN/containerd.sock"
KUBELET_ROOT="$RUN/kubelet"
ETCD_DATA="$RUN/etcd"
CNI_CONF_DIR="$STATE/cni/net.d"
CNI_IPAM_DIR="$RUN/cni-ipam"
HOSTCHANGES="$STATE/host-changes"   # what `up` changed on the host, read by `down`

NODE_NAME="evalrun-node"
NODE_IP="10.203.0.1"
NODE_NET="10.203.0.0/16"
POD_CIDR="10.204.0.0/24"
POD_GW="10.204.0.1"
POD_NET="10.204.0.0/16"
SVC_CIDR="10.205.0.0/24"
SVC_NET="10.205.0.0/16"
SVC_API_IP="10.205.0.1"
BRIDGE="evalrun0"
FWD_CHAIN="EVALRUN-FORWARD"
API_PORT=6443
ETCD_CLIENT_PORT=23790
ETCD_PEER_PORT=23800
PAUSE_IMAGE="localhost/evalrun/pause:dev"

# Sysctls the kubelet (kernel defaults it enforces), kube-proxy and the CNI bridge may change.
SYSCTLS=(vm.overcommit_memory kernel.panic kernel.panic_on_oops kernel.keys.root_maxkeys kernel.keys.root_maxbytes
  net.ipv4.ip_forward net.ipv4.conf.all.route_localnet net.bridge.bridge-nf-call-iptables
  net.bridge.bridge-nf-call-ip6tables net.netfilter.nf_conntrack_max
  net.netfilter.nf_conntrack_tcp_timeout_established net.netfilter.nf_conntrack_tcp_timeout_close_wait)
# Directories components hard-code outside the state directories; removed by `down` when `up` created them.
HARDCODED_DIRS=(/var/log/containers /var/log/pods /var/lib/kubelet /var/lib/cni /run/containerd /usr/libexec/kubernetes)
# Components in start order; `down` stops them in reverse.
COMPONENTS=(containerd etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy)

now_ms() { date +%s%3N; }
kubectl() { "$K8S_BIN/kubectl" --kubeconfig "$KUBECONFIG_OUT" "$@"; }
ctr_k8s() { ctr --address "$CTRD_SOCK" -n k8s.io "$@"; }

need_root() { [ "$(id -u)" = 0 ] || die "must run as root (it starts containerd and the kubelet)"; }

# TEMPLATES holds every configuration file the cluster writes, rendered by lib.sh's render (only the ${NAME}s each
# writer names are substituted).
TEMPLATES="$ROOT/hack/cluster/templates"
