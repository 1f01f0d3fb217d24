#!/usr/bin/env bash
# A real single-node Kubernetes cluster on this machine, for `make demo` and the end-to-end tests.
#
#   hack/cluster.sh up        build the components (first time only), start everything, wait until usable
#   hack/cluster.sh down      stop what `up` started and undo every host change it made
#   hack/cluster.sh status    show what is running
#   hack/cluster.sh down --purge   also delete certificates and imported images
#
# Every component is a local process started by this script with a pid file, a log file and its own state
# directory. Nothing here touches a system containerd or a system kubelet: containerd runs with its own config,
# socket, root and state directories.
#
# Layout
#   bin/k8s/<version>/            components, built by hack/k8s-binaries.sh from the Go module proxy
#   bin/cluster/kubeconfig        admin kubeconfig (stable path; KUBECONFIG for kubectl, tests and demo)
#   bin/cluster/logs/             one log per component (symlink to the state directory's logs)
#   /var/lib/evalrun-cluster/     persistent state: pki/, containerd root (images survive `down`), configs
#   /run/evalrun-cluster/         runtime state: pid files, sockets, containerd state, etcd data, kubelet root
#
# Network (a hard rule: no packet for a cluster address ever leaves this machine)
#   node IP       10.203.0.1/32 alias on lo; kube-apiserver and the kubelet bind to it, the rest to 127.0.0.1
#   pod CIDR      10.204.0.0/24 on bridge evalrun0 (created here, before any pod), pods get routes only to the
#                 node, pod and service ranges (no default route)
#   service CIDR  10.205.0.0/24 routed to evalrun0, so a packet kube-proxy did not rewrite stays on the bridge
#   safety net    unreachable routes for 10.203.0.0/16, 10.204.0.0/16, 10.205.0.0/16 (less specific than the
#                 routes above), and chain EVALRUN-FORWARD rejects anything forwarded between evalrun0 and any
#                 other interface
#   All three ranges are checked against the machine's own routes before anything starts.
#
# Settings this VM needs (see /work/shared/LOCAL-CLUSTER-NOTES.md)
#   kubelet: failCgroupV1=false (cgroup v1 hosts), cgroupDriver=cgroupfs (no systemd), oomScoreAdj=0 and
#            kube-proxy oomScoreAdj=0 (root lacks CAP_SYS_RESOURCE), volumePluginDir in the state directory,
#            eviction and image GC relaxed (imported images cannot be pulled again)
#   containerd CRI: restrict_oom_score_adj=true, SystemdCgroup=false, sandbox_image=local pause image,
#            netns_mounts_under_state_dir=true
#   kube-apiserver: --kubelet-preferred-address-types=InternalIP,Hostname (no DNS for the node name)
#   kube-controller-manager: --flex-volume-plugin-dir in the state directory
#
# Host changes undone by `down`: the lo alias, bridge, routes, iptables chains (ours, kube-proxy's via
# `kube-proxy --cleanup`, the kubelet's KUBE-FIREWALL/KUBE-KUBELET-CANARY/KUBE-IPTABLES-HINT), sysctls the
# kubelet, kube-proxy and the bridge change, mounts under the state directories, kubepods cgroups, and the
# directories components hard-code (/var/log/containers, /var/lib/kubelet/device-plugins, /var/lib/cni,
# /run/containerd/s) when this script created them.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

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

# ---------------------------------------------------------------------------------------------------------------
# Packages
# ---------------------------------------------------------------------------------------------------------------
ensure_packages() {
  local want=() cmd pkg
  for pair in containerd:containerd runc:runc ctr:containerd iptables:iptables conntrack:conntrack \
      /usr/lib/cni/bridge:containernetworking-plugins /bin/busybox:busybox-static openssl:openssl gcc:gcc; do
    cmd="${pair%%:*}" pkg="${pair##*:}"
    if [[ "$cmd" == /* ]]; then [ -x "$cmd" ] && continue; else command -v "$cmd" >/dev/null && continue; fi
    case " ${want[*]} " in *" $pkg "*) ;; *) want+=("$pkg") ;; esac
  done
  # libc6-dev provides the static libc gcc -static needs for the pause binary.
  [ -e /usr/lib/x86_64-linux-gnu/libc.a ] || [ -e /usr/lib/aarch64-linux-gnu/libc.a ] || want+=(libc6-dev)
  [ ${#want[@]} -eq 0 ] && return 0
  log "installing missing packages: ${want[*]}"
  # Debian would start the containerd service on install where an init system exists; policy-rc.d (if present)
  # and the absence of systemd keep it stopped here. We never use the system service.
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${want[@]}" >/dev/null ||
    { DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${want[@]}" >/dev/null; } ||
    die "apt-get install ${want[*]} failed"
}

# ---------------------------------------------------------------------------------------------------------------
# Certificates and kubeconfigs
# ---------------------------------------------------------------------------------------------------------------
# gen_cert NAME CN ORG EKU [SAN]: a P-256 key and a certificate signed by the cluster CA.
gen_cert() {
  local name="$1" cn="$2" org="$3" eku="$4" san="${5:-}" subj ext
  [ -s "$PKI/$name.crt" ] && [ -s "$PKI/$name.key" ] && return 0
  subj="/CN=$cn"
  [ -n "$org" ] && subj="/O=$org$subj"
  ext="$PKI/$name.ext"
  {
    echo "basicConstraints=critical,CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=$eku"
    [ -n "$san" ] && echo "subjectAltName=$san"
  } > "$ext"
  openssl ecparam -name prime256v1 -genkey -noout -out "$PKI/$name.key" 2>/dev/null
  openssl req -new -key "$PKI/$name.key" -subj "$subj" -out "$PKI/$name.csr" 2>/dev/null
  openssl x509 -req -in "$PKI/$name.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" -CAcreateserial \
    -days 3650 -sha256 -extfile "$ext" -out "$PKI/$name.crt" 2>/dev/null
  rm -f "$PKI/$name.csr" "$ext"
}

# write_kubeconfig FILE CERTNAME: a kubeconfig for the API server at the node IP with a client certificate.
write_kubeconfig() {
  local file="$1" cert="$2"
  cat > "$file" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: evalrun
  cluster:
    server: https://$NODE_IP:$API_PORT
    certificate-authority-data: $(base64 -w0 < "$PKI/ca.crt")
users:
- name: $cert
  user:
    client-certificate-data: $(base64 -w0 < "$PKI/$cert.crt")
    client-key-data: $(base64 -w0 < "$PKI/$cert.key")
contexts:
- name: evalrun
  context: {cluster: evalrun, user: $cert}
current-context: evalrun
EOF
  chmod 600 "$file"
}

ensure_pki() {
  mkdir -p "$PKI" "$CONF"
  chmod 700 "$PKI"
  if [ ! -s "$PKI/ca.crt" ]; then
    log "generating the cluster CA, certificates and service-account keys"
    openssl ecparam -name prime256v1 -genkey -noout -out "$PKI/ca.key" 2>/dev/null
    openssl req -x509 -new -key "$PKI/ca.key" -subj "/CN=evalrun-local-ca" -days 3650 -sha256 \
      -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature" \
      -out "$PKI/ca.crt" 2>/dev/null
  fi
  gen_cert apiserver kube-apiserver "" serverAuth \
    "IP:$NODE_IP,IP:$SVC_API_IP,IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
  gen_cert apiserver-kubelet-client kube-apiserver-kubelet-client system:masters clientAuth
  gen_cert admin evalrun-admin system:masters clientAuth
  gen_cert controller-manager system:kube-controller-manager "" clientAuth
  gen_cert scheduler system:kube-scheduler "" clientAuth
  gen_cert kube-proxy system:kube-proxy "" clientAuth
  gen_cert kubelet "system:node:$NODE_NAME" system:nodes clientAuth
  gen_cert kubelet-serving "system:node:$NODE_NAME" system:nodes serverAuth "IP:$NODE_IP,DNS:$NODE_NAME"
  if [ ! -s "$PKI/sa.key" ]; then
    openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$PKI/sa.key" 2>/dev/null
    openssl pkey -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub" 2>/dev/null
  fi
  for c in admin controller-manager scheduler kube-proxy kubelet; do write_kubeconfig "$CONF/$c.kubeconfig" "$c"; done
  mkdir -p "$OUT_DIR"
  cp "$CONF/admin.kubeconfig" "$KUBECONFIG_OUT"
  chmod 600 "$KUBECONFIG_OUT"
}

# ---------------------------------------------------------------------------------------------------------------
# Configuration files
# ---------------------------------------------------------------------------------------------------------------
write_configs() {
  mkdir -p "$CONF" "$CNI_CONF_DIR" "$LOGS"
  cat > "$CONF/containerd.toml" <<EOF
# containerd for the evalrun local cluster only: own root, state and socket; never the system instance.
version = 2
root = "$CTRD_ROOT"
state = "$CTRD_STATE"
oom_score = 0
disabled_plugins = ["io.containerd.internal.v1.opt", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs"]

[grpc]
  address = "$CTRD_SOCK"

[ttrpc]
  address = "$RUN/containerd-ttrpc.sock"

[debug]
  address = ""

[metrics]
  address = ""

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  # Without it every sandbox fails with "can't get final child's PID from pipe: EOF" (no CAP_SYS_RESOURCE).
  restrict_oom_score_adj = true
  # Keeps network namespaces under our state directory instead of /run/netns.
  netns_mounts_under_state_dir = true
  enable_selinux = false
  max_container_log_line_size = 16384
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$CNI_CONF_DIR"
    max_conf_num = 1
EOF

  # Pods get routes to the node, pod and service ranges only: no default route, so nothing can leave.
  cat > "$CNI_CONF_DIR/10-evalrun.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "evalrun",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$BRIDGE",
      "isGateway": true,
      "isDefaultGateway": false,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "$CNI_IPAM_DIR",
        "ranges": [[{"subnet": "$POD_CIDR", "gateway": "$POD_GW"}]],
        "routes": [{"dst": "$NODE_NET"}, {"dst": "$SVC_CIDR"}]
      }
    }
  ]
}
EOF

  cat > "$CONF/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $NODE_IP
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $PKI/ca.crt}
authorization:
  mode: Webhook
tlsCertFile: $PKI/kubelet-serving.crt
tlsPrivateKeyFile: $PKI/kubelet-serving.key
containerRuntimeEndpoint: unix://$CTRD_SOCK
# This VM mounts cgroup v1 controllers and has no systemd.
failCgroupV1: false
cgroupDriver: cgroupfs
# Root here lacks CAP_SYS_RESOURCE: negative OOM score adjustments fail.
oomScoreAdj: 0
failSwapOn: false
volumePluginDir: $STATE/kubelet-volume-plugins
podLogsDir: $RUN/pod-logs
resolvConf: /etc/resolv.conf
clusterDomain: cluster.local
registerNode: true
rotateCertificates: false
serverTLSBootstrap: false
serializeImagePulls: false
maxPods: 110
# Nearly full CI disks must not evict test pods; imported images cannot be pulled again, so never GC them.
evictionHard:
  memory.available: "50Mi"
  nodefs.available: "1%"
  nodefs.inodesFree: "1%"
  imagefs.available: "1%"
evictionPressureTransitionPeriod: 10s
# Local storage limits (emptyDir sizeLimit, ephemeral-storage limits) are enforced by the eviction manager,
# independently of the relaxed thresholds above: keep the isolation on (the default, stated so nobody turns it
# off), and measure volume usage every 10 s instead of every minute so that a runner over its output volume's
# sizeLimit is evicted within about 20 s (TestRunnerFillingOutEndsWithoutRetry); a du of this node's few pod
# volumes every 10 s is cheap.
localStorageCapacityIsolation: true
volumeStatsAggPeriod: 10s
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
imageMinimumGCAge: 876000h
nodeStatusUpdateFrequency: 4s
syncFrequency: 10s
fileCheckFrequency: 60s
shutdownGracePeriod: 0s
EOF

  cat > "$CONF/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: $CONF/kube-proxy.kubeconfig
hostnameOverride: $NODE_NAME
mode: iptables
clusterCIDR: $POD_CIDR
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
nodePortAddresses: ["$NODE_IP/32"]
oomScoreAdj: 0
iptables:
  localhostNodePorts: false
  syncPeriod: 30s
  minSyncPeriod: 0s
# Leave the host's conntrack settings alone.
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
EOF
}

# ---------------------------------------------------------------------------------------------------------------
# Host changes (recorded in $HOSTCHANGES so `down` undoes exactly those)
# ---------------------------------------------------------------------------------------------------------------
record() { echo "$*" >> "$HOSTCHANGES"; }
recorded() { [ -f "$HOSTCHANGES" ] && grep -qxF "$*" "$HOSTCHANGES"; }

ip2int() { local IFS=.; set -- $1; echo $(( ($1 << 24) | ($2 << 16) | ($3 << 8) | $4 )); }

# overlaps A/N B/M: true when the two prefixes share an address.
overlaps() {
  local a="${1%/*}" n="${1#*/}" b="${2%/*}" m="${2#*/}" bits mask
  [ "$n" = "$1" ] && n=32
  [ "$m" = "$2" ] && m=32
  bits=$(( n < m ? n : m ))
  mask=$(( bits == 0 ? 0 : (0xffffffff << (32 - bits)) & 0xffffffff ))
  [ $(( $(ip2int "$a") & mask )) -eq $(( $(ip2int "$b") & mask )) ]
}

# Refuse to start when a cluster range overlaps a route or address the machine already has (ours excluded).
check_ranges() {
  local dst net
  for dst in $(ip -4 route show table all | grep -v -e "dev $BRIDGE" -e "proto static metric 4000" \
      | awk '{d = ($1 == "local" || $1 == "broadcast" || $1 == "unreachable" || $1 == "blackhole" || $1 == "prohibit") ? $2 : $1;
               if (d ~ /^[0-9.]+(\/[0-9]+)?$/) print d}'); do
    [ "$dst" = "$NODE_IP" ] && continue
    for net in "$NODE_NET" "$POD_NET" "$SVC_NET"; do
      overlaps "$dst" "$net" && die "address range $net overlaps the route to $dst on this machine; refusing to start"
    done
  done
  return 0
}

save_sysctls() {
  [ -f "$STATE/sysctl.saved" ] && return 0
  local k v
  : > "$STATE/sysctl.saved.tmp"
  for k in "${SYSCTLS[@]}"; do
    v="$(sysctl -n "$k" 2>/dev/null)" || continue
    printf '%s=%s\n' "$k" "$v" >> "$STATE/sysctl.saved.tmp"
  done
  mv "$STATE/sysctl.saved.tmp" "$STATE/sysctl.saved"
}

restore_sysctls() {
  [ -f "$STATE/sysctl.saved" ] || return 0
  local line k v cur
  while IFS= read -r line; do
    k="${line%%=*}" v="${line#*=}"
    cur="$(sysctl -n "$k" 2>/dev/null)" || continue
    [ "$cur" = "$v" ] && continue
    sysctl -q -w "$k=$v" >/dev/null 2>&1 || log "could not restore sysctl $k=$v"
  done < "$STATE/sysctl.saved"
  rm -f "$STATE/sysctl.saved"
}

setup_network() {
  if ! ip -4 addr show dev lo | grep -q " $NODE_IP/32"; then
    ip addr add "$NODE_IP/32" dev lo
    record "addr $NODE_IP/32 lo"
  fi
  if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
    ip link add "$BRIDGE" type bridge
    record "link $BRIDGE"
  fi
  ip addr show dev "$BRIDGE" | grep -q " $POD_GW/" || ip addr add "$POD_GW/${POD_CIDR#*/}" dev "$BRIDGE"
  sysctl -q -w "net.ipv6.conf.$BRIDGE.disable_ipv6=1" >/dev/null 2>&1 || true
  ip link set "$BRIDGE" up
  # Service range on the bridge: a packet kube-proxy did not DNAT stays on this machine.
  ip route replace "$SVC_CIDR" dev "$BRIDGE" proto static
  local net
  for net in "$NODE_NET" "$POD_NET" "$SVC_NET"; do
    ip route replace unreachable "$net" proto static metric 4000
  done
  # Nothing is forwarded between the bridge and any other interface, in either direction.
  if ! iptables -w -S "$FWD_CHAIN" >/dev/null 2>&1; then
    iptables -w -N "$FWD_CHAIN"
    iptables -w -A "$FWD_CHAIN" -i "$BRIDGE" ! -o "$BRIDGE" -j REJECT --reject-with icmp-net-prohibited
    iptables -w -A "$FWD_CHAIN" ! -i "$BRIDGE" -o "$BRIDGE" -j DROP
  fi
  iptables -w -C FORWARD -j "$FWD_CHAIN" 2>/dev/null || iptables -w -I FORWARD 1 -j "$FWD_CHAIN"
}

teardown_network() {
  iptables -w -D FORWARD -j "$FWD_CHAIN" 2>/dev/null || true
  iptables -w -F "$FWD_CHAIN" 2>/dev/null && iptables -w -X "$FWD_CHAIN" 2>/dev/null || true
  ip route del "$SVC_CIDR" dev "$BRIDGE" 2>/dev/null || true
  local net
  for net in "$NODE_NET" "$POD_NET" "$SVC_NET"; do ip route del unreachable "$net" metric 4000 2>/dev/null || true; done
  # Pod veths die with their network namespaces; delete any left over on our bridge.
  local veth
  for veth in $(ip -o link show master "$BRIDGE" 2>/dev/null | awk -F': ' '{print $2}' | cut -d@ -f1); do
    ip link del "$veth" 2>/dev/null || true
  done
  ip link del "$BRIDGE" 2>/dev/null || true
  ip addr del "$NODE_IP/32" dev lo 2>/dev/null || true
}

# Chains the kubelet creates (kube-proxy's own are removed by `kube-proxy --cleanup`), in iptables and ip6tables,
# removed only when `up` recorded that they did not exist before.
KUBELET_CHAINS=("filter KUBE-FIREWALL" "filter KUBE-KUBELET-CANARY" "nat KUBE-KUBELET-CANARY" "mangle KUBE-KUBELET-CANARY"
  "mangle KUBE-IPTABLES-HINT" "nat KUBE-MARK-MASQ" "nat KUBE-POSTROUTING" "nat KUBE-MARK-DROP")
record_preexisting_chains() {
  local ipt entry
  for ipt in iptables ip6tables; do
    command -v "$ipt" >/dev/null || continue
    for entry in "${KUBELET_CHAINS[@]}"; do
      set -- $entry
      if "$ipt" -w -t "$1" -S "$2" >/dev/null 2>&1; then record "preexisting-chain $ipt $1 $2"; fi
    done
  done
}

remove_kubelet_chains() {
  local ipt entry table chain rule
  for ipt in iptables ip6tables; do
    command -v "$ipt" >/dev/null || continue
    for entry in "${KUBELET_CHAINS[@]}"; do
      set -- $entry
      table="$1" chain="$2"
      recorded "preexisting-chain $ipt $table $chain" && continue
      "$ipt" -w -t "$table" -S "$chain" >/dev/null 2>&1 || continue
      # Delete every rule that jumps to the chain, then the chain.
      { "$ipt" -w -t "$table" -S | grep -E -- "-j $chain( |$)" || true; } | sed 's/^-A /-D /' | while read -r rule; do
        eval "\"$ipt\" -w -t \"$table\" $rule" 2>/dev/null || true
      done
      "$ipt" -w -t "$table" -F "$chain" 2>/dev/null || true
      "$ipt" -w -t "$table" -X "$chain" 2>/dev/null || true
    done
  done
}

record_dirs() {
  local d
  for d in "${HARDCODED_DIRS[@]}" /run/containerd/s; do
    [ -e "$d" ] || recorded "created-dir $d" || record "created-dir $d"
  done
}

# ---------------------------------------------------------------------------------------------------------------
# Processes
# ---------------------------------------------------------------------------------------------------------------
pid_of() { [ -s "$PIDS/$1.pid" ] && cat "$PIDS/$1.pid"; }

running() {
  local pid
  pid="$(pid_of "$1")" || return 1
  [ -n "$pid" ] && [ -d "/proc/$pid" ] || return 1
  # The pid must still be the binary we started (pids are reused).
  tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$1"
}

# start NAME BINARY ARGS...: run in its own session, log to $LOGS/NAME.log, record the pid.
start() {
  local name="$1"; shift
  if running "$name"; then return 0; fi
  mkdir -p "$PIDS" "$LOGS"
  setsid "$@" >> "$LOGS/$name.log" 2>&1 < /dev/null &
  echo $! > "$PIDS/$name.pid"
}

# stop NAME...: SIGTERM to each (only the pids this script recorded), wait up to STOP_GRACE seconds (default 10)
# for all, then SIGKILL.
stop() {
  local name pid i t0 pids=() names=() grace="${STOP_GRACE:-10}"
  t0=$(now_ms)
  for name in "$@"; do
    if running "$name"; then
      pid="$(pid_of "$name")"
      kill -TERM "$pid" 2>/dev/null || true
      pids+=("$pid") names+=("$name")
    fi
  done
  if [ ${#pids[@]} -gt 0 ]; then
    for i in $(seq 1 $(( grace * 10 ))); do
      local alive=0
      for pid in "${pids[@]}"; do [ -d "/proc/$pid" ] && alive=1; done
      [ $alive = 0 ] && break
      sleep 0.1
    done
    for pid in "${pids[@]}"; do [ -d "/proc/$pid" ] && kill -KILL "$pid" 2>/dev/null; done
    [ "${CLUSTER_VERBOSE:-}" = 1 ] && log "stopped ${names[*]} in $(( $(now_ms) - t0 ))ms"
  fi
  for name in "$@"; do rm -f "$PIDS/$name.pid"; done
  return 0
}

# wait_for DESCRIPTION TIMEOUT_S COMMAND...: poll every 0.2 s.
wait_for() {
  local what="$1" timeout="$2" deadline; shift 2
  deadline=$(( $(date +%s) + timeout ))
  until "$@" >/dev/null 2>&1; do
    if [ "$(date +%s)" -ge "$deadline" ]; then
      log "timed out after ${timeout}s waiting for $what; last log lines:"
      tail -n 20 "$LOGS"/*.log 2>/dev/null | tail -n 60 >&2 || true
      return 1
    fi
    sleep 0.2
  done
}

start_containerd() {
  mkdir -p "$CTRD_ROOT" "$CTRD_STATE"
  start containerd containerd --config "$CONF/containerd.toml"
  wait_for "containerd" 30 ctr --address "$CTRD_SOCK" version
}

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

all_running() {
  local c
  for c in "${COMPONENTS[@]}"; do running "$c" || return 1; done
}

cmd_up() {
  need_root
  local t0 t1 t2
  t0=$(now_ms)
  if all_running && kubectl get --raw /readyz >/dev/null 2>&1; then
    log "already running; kubeconfig: $KUBECONFIG_OUT"
    return 0
  fi
  if [ -d "$PIDS" ] && ls "$PIDS"/*.pid >/dev/null 2>&1; then
    log "a previous cluster is partly running; tearing it down first"
    cmd_down
  fi
  ensure_packages
  "$ROOT/hack/k8s-binaries.sh" etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl >/dev/null
  t1=$(now_ms)
  mkdir -p "$STATE" "$RUN"
  check_ranges
  [ -f "$HOSTCHANGES" ] || { record_dirs; record_preexisting_chains; }
  save_sysctls
  ensure_pki
  write_configs
  ln -sfn "$LOGS" "$OUT_DIR/logs"
  setup_network
  start_containerd
  # The pause image must be present before the kubelet creates its first sandbox.
  if ! ctr_k8s images ls -q | grep -qxF "$PAUSE_IMAGE"; then
    CONTAINERD_ADDRESS="$CTRD_SOCK" "$ROOT/hack/images.sh" pause
  fi
  start_control_plane
  start_node
  wait_for "node $NODE_NAME Ready" 90 node_ready
  t2=$(now_ms)
  wait_for "default ServiceAccount" 60 default_sa
  wait_for "kube-proxy rules for the kubernetes Service" 60 proxy_rules
  # kube-proxy inserts its FORWARD jumps at the top; put ours first again so it is checked before any ACCEPT.
  iptables -w -D FORWARD -j "$FWD_CHAIN" 2>/dev/null || true
  iptables -w -I FORWARD 1 -j "$FWD_CHAIN"
  log "ready in $(( ($(now_ms) - t1) ))ms after the binaries were present (node Ready after $(( t2 - t1 ))ms; total $(( $(now_ms) - t0 ))ms)"
  log "kubeconfig: $KUBECONFIG_OUT   (export KUBECONFIG=$KUBECONFIG_OUT; kubectl: $K8S_BIN/kubectl)"
}

# Kill every container our containerd runs, then containerd and its shims.
stop_containers() {
  if running containerd; then
    local ids id
    ids="$(ctr_k8s tasks ls -q 2>/dev/null || true)"
    for id in $ids; do
      ( ctr_k8s tasks kill -a -s SIGKILL "$id" >/dev/null 2>&1 || true
        for _ in 1 2 3 4 5 6 7 8 9 10; do ctr_k8s tasks delete "$id" >/dev/null 2>&1 && break; sleep 0.2; done ) &
    done
    wait
    for id in $(ctr_k8s containers ls -q 2>/dev/null || true); do
      ctr_k8s containers delete "$id" >/dev/null 2>&1 &
    done
    wait
  fi
  stop containerd
  # Shims outlive containerd; ours are the ones started with our socket address.
  local pid
  for pid in $(pgrep -f -- "containerd-shim-runc-v2 .*-address $CTRD_SOCK" || true); do
    kill -KILL "$pid" 2>/dev/null || true
  done
}

unmount_under() {
  local dir="$1" m
  [ -d "$dir" ] || return 0
  # Deepest first.
  for m in $(awk -v d="$dir" '$5 == d || index($5, d "/") == 1 {print $5}' /proc/self/mountinfo | sort -r); do
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || log "could not unmount $m"
  done
}

remove_cgroups() {
  local ctl d
  for ctl in /sys/fs/cgroup/*/ /sys/fs/cgroup/unified/; do
    [ -d "$ctl/kubepods" ] || continue
    find "$ctl/kubepods" -depth -type d -exec rmdir {} \; 2>/dev/null || true
    [ -d "$ctl/kubepods" ] && log "cgroup $ctl/kubepods still in use"
  done
  for d in /sys/fs/cgroup/*/kubepods.slice; do [ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null; done
  return 0
}

cmd_down() {
  need_root
  local t0 t1 c d
  t0=$(now_ms)
  stop kube-proxy kubelet
  if [ -x "$K8S_BIN/kube-proxy" ] && command -v iptables >/dev/null && [ -f "$HOSTCHANGES" ]; then
    "$K8S_BIN/kube-proxy" --cleanup --v=0 >> "$LOGS/kube-proxy-cleanup.log" 2>&1 || true
  fi
  t1=$(now_ms)
  stop_containers
  [ "${CLUSTER_VERBOSE:-}" = 1 ] && log "stopped containers and containerd in $(( $(now_ms) - t1 ))ms"
  # Their state (etcd's data) is discarded below, so a long graceful drain of watches buys nothing.
  STOP_GRACE=3 stop kube-scheduler kube-controller-manager kube-apiserver etcd
  unmount_under "$KUBELET_ROOT"
  unmount_under "$RUN"
  unmount_under "$CTRD_ROOT"
  remove_cgroups
  if command -v iptables >/dev/null; then teardown_network; remove_kubelet_chains; else teardown_network 2>/dev/null || true; fi
  restore_sysctls
  if [ -f "$HOSTCHANGES" ]; then
    for d in $(sed -n 's/^created-dir //p' "$HOSTCHANGES" | sort -r); do
      [ -e "$d" ] || continue
      unmount_under "$d"
      rm -rf --one-file-system "$d" 2>/dev/null || log "could not remove $d"
    done
    rm -f "$HOSTCHANGES"
  fi
  # Per-run state goes; certificates, configs, logs and images (containerd root) stay for the next `up`.
  rm -rf --one-file-system "$RUN"
  log "down in $(( $(now_ms) - t0 ))ms"
}

cmd_purge() {
  cmd_down
  unmount_under "$STATE"
  rm -rf --one-file-system "$STATE" "$OUT_DIR"
  log "purged $STATE and $OUT_DIR"
}

cmd_status() {
  local c state
  for c in "${COMPONENTS[@]}"; do
    if running "$c"; then state="running (pid $(pid_of "$c"))"; else state="stopped"; fi
    printf '  %-24s %s\n' "$c" "$state"
  done
  if all_running 2>/dev/null && kubectl get --raw /readyz >/dev/null 2>&1; then
    kubectl get nodes -o wide
    echo "kubeconfig: $KUBECONFIG_OUT"
    echo "logs:       $LOGS"
  else
    echo "cluster is not (fully) running"
    return 1
  fi
}

case "${1:-}" in
  up) cmd_up ;;
  down) if [ "${2:-}" = --purge ]; then cmd_purge; else cmd_down; fi ;;
  status) cmd_status ;;
  *) echo "usage: $0 up|down [--purge]|status" >&2; exit 2 ;;
esac
