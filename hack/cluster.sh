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
# The script is split by concern; each part is sourced here and documents itself:
#   hack/cluster/settings.sh       paths, addresses, the component list, kubectl/ctr wrappers
#   hack/cluster/host.sh           packages, recorded host changes, range check, sysctls, network, iptables, cgroups
#   hack/cluster/process.sh        pid files, start, stop, waits
#   hack/cluster/pki.sh            CA, certificates, service-account keys, kubeconfigs
#   hack/cluster/containerd.sh     containerd's config, start, pause image, stopping every container
#   hack/cluster/control-plane.sh  etcd, kube-apiserver, kube-controller-manager, kube-scheduler
#   hack/cluster/node.sh           CNI network, kubelet, kube-proxy, readiness checks
#   hack/cluster/templates/        every configuration file written (containerd, CNI, kubelet, kube-proxy,
#                                  kubeconfig), rendered by lib.sh's render: only the ${NAME}s the writer names
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
for part in settings host process pki containerd control-plane node; do
  source "$ROOT/hack/cluster/$part.sh"
done

# write_configs writes every configuration file under the state directory from hack/cluster/templates.
write_configs() {
  mkdir -p "$CONF" "$CNI_CONF_DIR" "$LOGS"
  write_containerd_config
  write_node_configs
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
  ensure_pause_image
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


cmd_down() {
  need_root
  local t0 t1 c d
  t0=$(now_ms)
  stop_node
  t1=$(now_ms)
  stop_containers
  [ "${CLUSTER_VERBOSE:-}" = 1 ] && log "stopped containers and containerd in $(( $(now_ms) - t1 ))ms"
  stop_control_plane
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
