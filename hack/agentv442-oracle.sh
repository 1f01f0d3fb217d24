#!/usr/bin/env bash
# hack/agentv442-oracle.sh: records what AgentV 4.42.4 itself sends its LLM judge and how it scores, for the suites of
# its own examples/features that the operator should judge alike (the parity set), as the oracle's test data in
# internal/cli/check/testdata/agentv442 (its README.md says how to read it; docs/agentv-4.42-oracle.md how it was made).
#
#   hack/agentv442-oracle.sh                     # every suite of testdata/agentv442/suites.txt
#   SUITES="rubric/evals/dataset.eval.yaml" hack/agentv442-oracle.sh
#   AGENTV_SRC=/path/to/agentv@v4.42.4 hack/agentv442-oracle.sh   # first copy features/ again from AgentV's sources
#   JUDGE_PROVIDER=azure RECORDINGS=/tmp/azure hack/agentv442-oracle.sh   # judged through the Responses API instead
#
# What it does, from scratch:
#   1. AgentV 4.42.4 from npm into bin/agentv/4.42.4 (hack/agentv442/package{,-lock}.json pin it and every dependency),
#      bun from npm into bin/bun/VERSION (the judge image's pin and integrity, hack/judge-rootfs.sh), both once;
#   2. copies testdata/agentv442/features into a scratch directory (an empty .git makes it the repository root, as it is
#      the bundle root for collector check) and puts on PATH the judge image's uv shim, bun and node, each behind
#      hack/agentv442/record-stdin, which keeps every code grader's stdin;
#   3. for each suite: starts test/judgeserver on loopback (--replies hashed: replies that are a function of the
#      prompts alone, the scratch directory written /BUNDLE first; --record: every request body) and runs `agentv eval`
#      with one target, "batch": AgentV's cli provider with provider_batching: true running hack/agentv442/runner.py on
#      testdata/agentv442/answers/EXAMPLE.jsonl, judged by an "openai" target on the judge server (streamed chat
#      completions; JUDGE_PROVIDER=azure: an "azure" target, the streamed Responses API), one worker, its run
#      directory in the scratch directory;
#   4. hack/agentv442/normalize.py writes testdata/agentv442/recordings/EXAMPLE/NAME/ (the suite's eval file name
#      without .yaml; RECORDINGS names another directory): requests/, graders/ and results.jsonl, the scratch
#      directory written /BUNDLE.
# The environment AgentV sees is fixed: HOME and TMPDIR in the scratch directory, no update check, the judge's key and
# model, and the two variables of the env-interpolation example (EXPECTED_GREETING, CUSTOM_SYSTEM_PROMPT).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
set -euo pipefail

AGENTV_VERSION=4.42.4
TESTDATA="$ROOT/internal/cli/check/testdata/agentv442"
PORT="${PORT:-18742}"
JUDGE_PROVIDER="${JUDGE_PROVIDER:-openai}"
RECORDINGS="${RECORDINGS:-$TESTDATA/recordings}"
case "$JUDGE_PROVIDER" in
  openai) judge_target="    provider: openai
    endpoint: http://127.0.0.1:$PORT/v1" ;;
  azure) judge_target="    provider: azure
    endpoint: \${{ ORACLE_ENDPOINT }}" ;;
  *) die "JUDGE_PROVIDER must be openai or azure, not $JUDGE_PROVIDER" ;;
esac
AGENTV_DIR="$ROOT/bin/agentv/$AGENTV_VERSION"
HERE="$ROOT/hack/agentv442"

command -v npm >/dev/null || die "npm is missing (hack/nodejs.sh installs nodejs)"
command -v python3 >/dev/null || die "python3 is missing"
command -v curl >/dev/null || die "curl is missing"

# 1. AgentV and bun, once.
if ! cmp -s "$HERE/package-lock.json" "$AGENTV_DIR/package-lock.json" ||
  [ "$(node "$AGENTV_DIR/node_modules/agentv/dist/cli.js" --version 2>/dev/null)" != "$AGENTV_VERSION" ]; then
  log "installing AgentV $AGENTV_VERSION into $AGENTV_DIR"
  rm -rf "$AGENTV_DIR"
  mkdir -p "$AGENTV_DIR"
  cp "$HERE/package.json" "$HERE/package-lock.json" "$AGENTV_DIR/"
  (cd "$AGENTV_DIR" && npm install --no-audit --no-fund --ignore-scripts >/dev/null) || die "npm install of AgentV failed"
  cmp -s "$HERE/package-lock.json" "$AGENTV_DIR/package-lock.json" || die "npm changed the pinned lock file"
fi
[ "$(node "$AGENTV_DIR/node_modules/agentv/dist/cli.js" --version)" = "$AGENTV_VERSION" ] || die "bin/agentv is not AgentV $AGENTV_VERSION"

BUN="$(hack/bun.sh)"

# AGENTV_SRC: the example files again from AgentV's sources (files.txt names them), and its licence in NOTICE.
if [ -n "${AGENTV_SRC:-}" ]; then
  [ -f "$AGENTV_SRC/examples/features/README.md" ] || die "AGENTV_SRC=$AGENTV_SRC has no examples/features"
  grep -qF "$(sed -n 3p "$AGENTV_SRC/LICENSE")" "$TESTDATA/NOTICE" || die "NOTICE does not carry AgentV's licence"
  find "$TESTDATA/features" -mindepth 1 -maxdepth 1 ! -name evalrun-extra -exec rm -rf {} +
  grep -v '^#' "$TESTDATA/files.txt" | while read -r f; do
    install -D -m 0644 "$AGENTV_SRC/examples/features/$f" "$TESTDATA/features/$f"
  done
fi

work="$(mktemp -d)"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  [ -n "${KEEP:-}" ] || rm -rf "$work"
  [ -z "${KEEP:-}" ] || echo "kept $work" >&2
}
trap cleanup EXIT

# 2. The scratch directory and the PATH of the code graders (JUDGESERVER: a test/judgeserver already built).
if [ -n "${JUDGESERVER:-}" ]; then
  cp "$JUDGESERVER" "$work/judgeserver"
else
  go build -o "$work/judgeserver" ./test/judgeserver
fi
bundle="$work/features"
cp -r "$TESTDATA/features" "$bundle"
mkdir -p "$bundle/.git" "$work/home" "$work/tmp" "$work/bin" "$work/real"
install -m 0755 "$ROOT/hack/judge-image/uv" "$work/real/uv"
ln -s "$BUN" "$work/real/bun"
ln -s "$(command -v node)" "$work/real/node"
for tool in uv bun node; do ln -s "$HERE/record-stdin" "$work/bin/$tool"; done
# python3 by its real path: a version manager's shim may need the HOME AgentV does not get.
PYTHON="$(python3 -c 'import os, sys; print(os.path.realpath(sys.executable))')"
ln -s "$PYTHON" "$work/bin/python3"

run_suite() {
  local suite="$1"
  shift
  local example="${suite%%/*}" file name key
  file="$(basename "$suite")"
  name="${file%.yaml}"
  key="$example/$name"
  local answers="$TESTDATA/answers/$example.jsonl"
  [ -f "$bundle/$suite" ] || die "$suite: no such eval file in features/"
  [ -f "$answers" ] || die "$suite: no answers/$example.jsonl"
  cat >"$work/targets.yaml" <<EOF
targets:
  - name: batch
    provider: cli
    command: $PYTHON $HERE/runner.py $answers {OUTPUT_FILE}
    provider_batching: true
    grader_target: judge
  - name: judge
$judge_target
    api_key: \${{ ORACLE_API_KEY }}
    model: \${{ ORACLE_MODEL }}
EOF
  local rec="$work/rec/$key" stdin="$work/stdin/$key" out="$work/out/$key"
  mkdir -p "$rec" "$stdin" "$(dirname "$out")"
  "$work/judgeserver" --listen "127.0.0.1:$PORT" --record "$rec" --replies hashed --bundle-root "$bundle" \
    2>"$work/judgeserver-${key//\//-}.log" &
  server_pid=$!
  local up=""
  for _ in $(seq 50); do curl -fsS "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1 && { up=1; break; }; sleep 0.1; done
  [ -n "$up" ] || { cat "$work/judgeserver-${key//\//-}.log" >&2; die "the judge server did not start on port $PORT"; }
  local filter=()
  for id in "$@"; do filter+=(--test-id "$id"); done
  log "agentv eval $suite${*:+ (tests: $*)}"
  # AgentV exits non-zero when a test fails; index.jsonl is what tells whether it ran.
  (cd "$bundle" && env -i PATH="$work/bin:$PATH" HOME="$work/home" TMPDIR="$work/tmp" AGENTV_NO_UPDATE_CHECK=1 \
    ORACLE_API_KEY=oracle-key ORACLE_MODEL=oracle-model ORACLE_ENDPOINT="http://127.0.0.1:$PORT" \
    ORACLE_BUNDLE="$bundle" ORACLE_STDIN="$stdin" ORACLE_REAL="$work/real" EXPECTED_GREETING="Hello! Welcome." \
    CUSTOM_SYSTEM_PROMPT="You are a helpful assistant who always greets warmly." \
    node "$AGENTV_DIR/node_modules/agentv/dist/cli.js" eval run "$suite" --targets "$work/targets.yaml" \
    --target batch --workers 1 --output "$out" "${filter[@]}") >"$work/agentv-${key//\//-}.log" 2>&1 || true
  kill "$server_pid"
  wait "$server_pid" 2>/dev/null || true
  server_pid=""
  [ -s "$out/index.jsonl" ] || { cat "$work/agentv-${key//\//-}.log" >&2; die "$suite: AgentV wrote no index.jsonl"; }
  if grep -q '"execution_status":"execution_error"' "$out/index.jsonl"; then
    cat "$work/agentv-${key//\//-}.log" >&2
    die "$suite: AgentV reports an execution error (see above)"
  fi
  rm -rf "${RECORDINGS:?}/$key"
  python3 "$HERE/normalize.py" --bundle "$bundle" --index "$out/index.jsonl" --requests "$rec" --stdin "$stdin" \
    --out "$RECORDINGS/$key" | sed "s#^#$LOG_PREFIX: $key: #" >&2
}

# 3. and 4. Every suite.
if [ -n "${SUITES:-}" ]; then
  for s in $SUITES; do
    line="$(grep -E "^$s( |\$)" "$TESTDATA/suites.txt")" || die "$s is not in suites.txt"
    # shellcheck disable=SC2086
    run_suite $line
  done
else
  mapfile -t lines < <(grep -v -e '^#' -e '^$' "$TESTDATA/suites.txt")
  rm -rf "${RECORDINGS:?}"
  for line in "${lines[@]}"; do
    # shellcheck disable=SC2086
    run_suite $line
  done
fi
