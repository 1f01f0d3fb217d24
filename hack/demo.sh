#!/usr/bin/env bash
# `make demo`: bring the local cluster up (building it on first use), build and import the images, deploy the
# operator, run the sample screening EvalRun, print its results and write its HTML report (kubectl evalrun report;
# DEMO_REPORT names the file, bin/demo/<run>.html by default). The cluster stays up.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
K8S_BIN="$(k8s_bin)"
export KUBECONFIG="$ROOT/bin/cluster/kubeconfig"
NAMESPACE="${DEMO_NAMESPACE:-default}"
RUN=screening-sample
TIMEOUT="${DEMO_TIMEOUT:-600}"
kubectl() { "$K8S_BIN/kubectl" "$@"; }

hack/cluster.sh up
hack/images.sh pause manager collector judge screening-runner   # the demo needs no bucket (SeaweedFS is for the tests)
hack/deploy.sh

# A fresh run every time: the spec is immutable and the results belong to one execution.
kubectl -n "$NAMESPACE" delete evalrun "$RUN" --ignore-not-found --wait=true >/dev/null
kubectl -n "$NAMESPACE" apply -k examples/screening >/dev/null
echo "demo: applied EvalRun $NAMESPACE/$RUN (examples/screening)"

start=$(date +%s)
while :; do
  line="$(kubectl -n "$NAMESPACE" get evalrun "$RUN" -o go-template='{{range .status.conditions}}{{if eq .type "Succeeded"}}{{.status}} {{.reason}}{{end}}{{end}}|{{with .status.summary}}{{.total}}{{end}}' 2>/dev/null || true)"
  cond="${line%%|*}" total="${line#*|}"
  status="${cond%% *}" reason="${cond#* }"
  elapsed=$(( $(date +%s) - start ))
  printf '\rdemo: %3ds  %s  Succeeded=%s  reason=%s  cases=%s   ' "$elapsed" "$RUN" "${status:-Unknown}" "${reason:--}" "${total:--}"
  if [ "$status" = True ] || [ "$status" = False ]; then echo; break; fi
  if [ "$elapsed" -ge "$TIMEOUT" ]; then
    echo
    echo "demo: the run did not finish within ${TIMEOUT}s; kubectl -n $NAMESPACE describe evalrun $RUN" >&2
    exit 1
  fi
  sleep 1
done

echo
printf '%-12s %-8s %-7s %s\n' CASE VERDICT SCORE NOTE
kubectl -n "$NAMESPACE" get evalrun "$RUN" -o go-template='{{range .status.cases}}{{.id}}{{"\t"}}{{.verdict}}{{"\t"}}{{if .score}}{{.score}}{{else}}-{{end}}{{"\t"}}{{if .error}}{{.error}}{{else}}{{range $i, $e := .evaluators}}{{if ne $e.verdict "Pass"}}{{$e.name}}: {{$e.message}} {{end}}{{end}}{{end}}{{"\n"}}{{end}}{{range .status.missingIds}}{{.}}{{"\t"}}Missing{{"\t"}}-{{"\t"}}the runner produced no record for this case{{"\n"}}{{end}}' \
  | sort | awk -F'\t' '{ note = $4; if (length(note) > 70) note = substr(note, 1, 67) "..."; printf "%-12s %-8s %-7s %s\n", $1, $2, $3, note }'
echo
kubectl -n "$NAMESPACE" get evalruns
# What the run spent (status.cost): the runner's reported figures with the count of cases that reported each, and
# the LLM judges' usage.
kubectl -n "$NAMESPACE" get evalrun "$RUN" -o go-template='{{with .status.cost}}{{with .runner}}runner: {{.costUSD}} USD ({{.costCases}} of {{.cases}} cases), {{.totalTokens}} tokens ({{.tokenUsageCases}} cases), {{.durationMilliseconds}} ms ({{.durationCases}} cases){{"\n"}}{{end}}{{with .judges}}LLM judges: {{.calls}} requests, {{.totalTokens}} tokens{{"\n"}}{{end}}{{end}}'
echo

# The same run as one self-contained HTML page, next to the table above.
REPORT="${DEMO_REPORT:-$ROOT/bin/demo/$RUN.html}"
mkdir -p "$(dirname "$REPORT")"
CGO_ENABLED=0 go build -trimpath -o "$ROOT/bin/kubectl-evalrun" ./cmd/kubectl-evalrun
"$ROOT/bin/kubectl-evalrun" -n "$NAMESPACE" report "$RUN" -o "$REPORT"
echo "demo: the HTML report of $RUN is $REPORT (open it in a browser; kubectl evalrun report $RUN --serve serves it)"
echo
echo "demo: the cluster is still running (KUBECONFIG=$KUBECONFIG). Stop it and undo every host change with: make cluster-down"
