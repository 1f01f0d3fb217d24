# hack/cluster/host.sh: what `up` changes on the host and `down` undoes: packages, the record of host changes, the
# address-range check, sysctls, the lo alias, bridge, routes and iptables chains, the directories components
# hard-code, mounts and kubepods cgroups. Sourced by hack/cluster.sh.

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
  # Debian would start the containerd service on install where an init system exists; policy-rc.d (if present)
  # and the absence of systemd keep it stopped here. We never use the system service.
  apt_install "${want[@]}"
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
