# hack/cluster/process.sh: the components as processes: pid files, start in a session with a log, stop (only the
# pids this script recorded), polling waits. Sourced by hack/cluster.sh.

pid_of() { [ -s "$PIDS/$1.pid" ] && cat "$PIDS/$1.pid"; }

running() {
  local pid
  pid="$(pid_of "$1")" || return 1
  [ -n "$pid" ] && [ -d "/proc/$pid" ] || return 1
  # The pid must still be the binary we started (pids are reused).
  tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$1"
}

# close_inherited_fds closes every file descriptor above 2 of the calling (sub)shell.
close_inherited_fds() {
  local fd
  for fd in /proc/self/fd/*; do
    fd="${fd##*/}"
    [ "$fd" -gt 2 ] 2>/dev/null || continue
    eval "exec $fd>&-" 2>/dev/null || true
  done
}

# start NAME BINARY ARGS...: run in its own session, log to $LOGS/NAME.log, record the pid. The component inherits
# no file descriptor but its stdin, stdout and stderr: a lock its caller holds (`flock /work/cluster.lock make
# cluster-up`) is released when the caller ends, not held by the daemons for as long as the cluster runs.
start() {
  local name="$1"; shift
  if running "$name"; then return 0; fi
  mkdir -p "$PIDS" "$LOGS"
  ( close_inherited_fds; exec setsid "$@" ) >> "$LOGS/$name.log" 2>&1 < /dev/null &
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
all_running() {
  local c
  for c in "${COMPONENTS[@]}"; do running "$c" || return 1; done
}

