# hack/cluster/containerd.sh: our own containerd (its config from templates/containerd.toml.tmpl, own root, state
# and socket; never the system instance), the pause image it needs first, and stopping every container it runs.
# Sourced by hack/cluster.sh.

# write_containerd_config writes $CONF/containerd.toml.
write_containerd_config() {
  render "$TEMPLATES/containerd.toml.tmpl" CTRD_ROOT CTRD_STATE CTRD_SOCK RUN PAUSE_IMAGE CNI_CONF_DIR \
    > "$CONF/containerd.toml"
}

start_containerd() {
  mkdir -p "$CTRD_ROOT" "$CTRD_STATE"
  start containerd containerd --config "$CONF/containerd.toml"
  wait_for "containerd" 30 ctr --address "$CTRD_SOCK" version
}

# ensure_pause_image imports the pause image unless containerd has it: it must be present before the kubelet
# creates its first sandbox.
ensure_pause_image() {
  if ! ctr_k8s images ls -q | grep -qxF "$PAUSE_IMAGE"; then
    CONTAINERD_ADDRESS="$CTRD_SOCK" "$ROOT/hack/images.sh" pause
  fi
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
