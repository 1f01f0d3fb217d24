#!/usr/bin/env bash
# hack/agentv-oracle.sh: records what AgentV v2.0.1 itself sends its LLM judge for AgentV's own example eval files,
# the oracle of internal/cli/check's TestAgentVExamples (testdata/agentv/README.md says how to read the recordings).
#
#   AGENTV_SRC=/work/agentv-2.0.1 hack/agentv-oracle.sh               # mock targets: recordings/
#   AGENTV_SRC=/work/agentv-2.0.1 TARGET=cli hack/agentv-oracle.sh    # a CLI target: recordings-cli/
#
# AGENTV_SRC is AgentV's sources at tag v2.0.1 (git archive of github.com/EntityProcess/agentv) with its npm
# dependencies and tsx installed in AGENTV_SRC/node_modules (the versions of its bun.lock; the registry's newer
# `agentv` package is not v2.0.1) and @agentv/core resolving to AGENTV_SRC/packages/core/src. The script copies the
# examples of EXAMPLES from internal/cli/check/testdata/agentv/features into a scratch directory (an empty .git makes it
# AgentV's repository root, as it is the bundle root for collector check), writes a targets file where every
# target is AgentV's mock provider replying with answer.txt (TARGET=cli: AgentV's cli provider with
# provider_batching: true, hack/agentv442/runner.py answering every case with answer.txt, which AgentV shows its
# judges file references for, as for every runner of the operator) and judged by an "azure" target on a loopback
# test/judgeserver --record --replies hashed (replies that are a function of the prompts alone, the scratch
# directory written /BUNDLE first, so that the operator, asked the same way, can be compared score by score), runs
# `agentv eval` (one worker, so the recordings are numbered in a stable order) on each example and replaces
# testdata/agentv/recordings/<example>/ (TARGET=cli: recordings-cli/<example>/) with the request bodies the judge
# server saw.
#
# AGENTV_SRC is set up from the fetched repository: `git archive v2.0.1 | tar -x -C $AGENTV_SRC`; `bun install
# --ignore-scripts` there with "subagent" taken out of package.json and packages/core/package.json (npm does not serve
# subagent 0.5.6; only AgentV's vscode provider imports it: a stand-in module exporting its four functions, each
# throwing, at node_modules/.bun/subagent@0.5.6/node_modules/subagent); `bun run build` in packages/core, then in
# apps/cli. With apps/cli/dist/cli.js built the script runs it with node; otherwise with tsx from the sources.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
set -euo pipefail

: "${AGENTV_SRC:?set AGENTV_SRC to AgentV v2.0.1 sources with node_modules (see the header)}"
EXAMPLES="${EXAMPLES:-basic rubric composite weighted-evaluators local-cli cw-incident-triage}"
TARGET="${TARGET:-mock}"
case "$TARGET" in
  mock) RECORDINGS="recordings" ;;
  cli) RECORDINGS="recordings-cli" ;;
  *) die "TARGET must be mock or cli, not $TARGET" ;;
esac
if [ -f "$AGENTV_SRC/apps/cli/dist/cli.js" ]; then
  agentv=(node "$AGENTV_SRC/apps/cli/dist/cli.js")
else
  agentv=(node "$AGENTV_SRC/node_modules/.bin/tsx" "$AGENTV_SRC/apps/cli/src/cli.ts")
fi
PORT="${PORT:-18734}"
TESTDATA="$ROOT/internal/cli/check/testdata/agentv"

work="$(mktemp -d)"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  [ -n "${KEEP:-}" ] || rm -rf "$work"; [ -z "${KEEP:-}" ] || echo "kept $work" >&2
}
trap cleanup EXIT

go build -o "$work/judgeserver" ./test/judgeserver
cp -r "$TESTDATA/features" "$work/features"
mkdir -p "$work/features/.git"
answer="$(cat "$TESTDATA/answer.txt")"
{
  echo '$schema: agentv-targets-v2.2'
  echo 'targets:'
  for name in default azure_base local_cli mock_extractor; do
    echo "  - name: $name"
    echo '    judge_target: judge'
    if [ "$TARGET" = cli ]; then
      echo '    provider: cli'
      echo "    command_template: python3 $ROOT/hack/agentv442/runner.py $work/answers.jsonl {OUTPUT_FILE}"
      echo '    provider_batching: true'
    else
      echo '    provider: mock'
      printf '    response: %s\n' "$(printf '%s' "$answer" | python3 -c 'import json,sys; print(json.dumps(sys.stdin.read()))')"
    fi
  done
  echo '  - name: judge'
  echo '    provider: azure'
  echo '    endpoint: ${{ ORACLE_ENDPOINT }}'
  echo '    api_key: ${{ ORACLE_API_KEY }}'
  echo '    model: ${{ ORACLE_MODEL }}'
} > "$work/targets.yaml"

export ORACLE_ENDPOINT="http://127.0.0.1:$PORT" ORACLE_API_KEY=oracle ORACLE_MODEL=oracle-model
for ex in $EXAMPLES; do
  rec="$work/rec/$ex"
  mkdir -p "$rec"
  "$work/judgeserver" --listen "127.0.0.1:$PORT" --record "$rec" --replies hashed \
    --bundle-root "$work/features" 2>"$work/judgeserver-$ex.log" &
  server_pid=$!
  for _ in $(seq 50); do curl -fsS "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
  for f in "$work/features/$ex"/evals/*.yaml; do
    log "agentv eval $ex/evals/$(basename "$f")"
    # The CLI target's answers: every case of the file (its "  - id:" lines) answered with answer.txt.
    grep -E '^  - id:' "$f" | sed 's/^  - id: *//' | ANSWER="$answer" python3 -c '
import json, os, sys
for case_id in sys.stdin.read().split():
    print(json.dumps({"id": case_id, "text": os.environ["ANSWER"], "duration_ms": 1000}))' > "$work/answers.jsonl"
    (cd "$work/features" && "${agentv[@]}" eval "$f" \
      --targets "$work/targets.yaml" --workers 1 --out "$work/out-$ex.jsonl") >"$work/agentv-$ex.log" 2>&1 ||
      { cat "$work/agentv-$ex.log" >&2; die "agentv eval failed on $ex"; }
  done
  kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=""
  rm -rf "$TESTDATA/$RECORDINGS/$ex"
  mkdir -p "$TESTDATA/$RECORDINGS/$ex"
  cp "$rec"/*.json "$TESTDATA/$RECORDINGS/$ex/" 2>/dev/null || true
  cp "$work/out-$ex.jsonl" "$TESTDATA/$RECORDINGS/$ex/agentv-results.jsonl"
  # The scratch directory's path is the only thing of this machine in what AgentV sent or wrote: made "/BUNDLE".
  sed -i "s#$work#/BUNDLE/..#g; s#/BUNDLE/../features#/BUNDLE#g" "$TESTDATA/$RECORDINGS/$ex"/*
  n="$(find "$rec" -name '*.json' | wc -l)"
  [ "$n" -gt 0 ] || die "$ex: AgentV sent no request (see $work/out-$ex.jsonl)"
  log "$ex: $n requests recorded"
done
