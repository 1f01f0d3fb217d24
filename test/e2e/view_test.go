//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
)

// The runner reads at {EVAL_FILE} only the runner view of the eval file (spec.target.evalFileView Inputs, the
// default): a hostile runner finds no answer key to copy and no judging data anywhere it can read. Full opts back
// into the whole file, which these tests also use to prove that the attacks work when the data is there.

// canary is a canary's text; the runners build the prefix at run time ("ZQ" then "XJ"), so no runner command, in
// the runner's own configuration or /proc, holds a canary.
func canary(what string) string { return "ZQXJ-" + what }

// viewEval is an eval file of three cases judged by the answer field of the runner's JSON answer; the expected
// answers are canaries, and so are the expected outcomes, inline rubrics (withRubrics) and a code judge's script
// (withJudge).
func viewEval(withRubrics, withJudge bool) string {
	var b strings.Builder
	b.WriteString("$schema: agentv-eval-v2\nevalcases:\n")
	for i := 1; i <= 3; i++ {
		fmt.Fprintf(&b, "  - id: k%d\n    expected_outcome: %s\n", i, canary("OUTCOME"))
		fmt.Fprintf(&b, "    input_messages: [{role: user, content: \"Give the code word of case %d.\"}]\n", i)
		fmt.Fprintf(&b, "    expected_messages: [{role: assistant, content: {answer: %s-K%d}}]\n", canary("EXPECTED"), i)
		if withRubrics {
			fmt.Fprintf(&b, "    rubrics: [\"Mentions %s\"]\n", canary("RUBRIC"))
		}
		b.WriteString("    execution:\n      evaluators:\n" +
			"        - {name: answer, type: field_accuracy, fields: [{path: answer, match: exact, required: true}], aggregation: all_or_nothing}\n")
		if withJudge {
			fmt.Fprintf(&b, "        - {name: script, type: code_judge, script: \"cat >/dev/null; echo '{\\\"score\\\": 1}' # %s\"}\n", canary("SCRIPT"))
		}
	}
	return b.String()
}

// copyAnswers copies every "answer: X" it finds in its eval file ({EVAL_FILE}, also $EVAL_FILE: a placeholder may
// not stand inside $(...)) into the answers of k1..k3, in order.
const copyAnswers = `set -- $(sed -n 's/.*answer: *\([A-Za-z0-9-]*\).*/\1/p' "$EVAL_FILE"); : > {OUTPUT_FILE}; ` +
	`for id in k1 k2 k3; do printf '{"id":"%s","text":"{\\"answer\\":\\"%s\\"}"}\n' "$id" "$1" >> {OUTPUT_FILE}; ` +
	`if [ $# -gt 0 ]; then shift; fi; done`

// TestRunnerViewHidesExpectedAnswers: a runner that copies the expected answers out of {EVAL_FILE} fails every
// case under the default view and passes every case under Full.
func TestRunnerViewHidesExpectedAnswers(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "view-copy", nil)
	inputs := sampleRun("inputs", ns).Inline(viewEval(false, false)).Command(copyAnswers).Obj()
	full := sampleRun("full", ns).Inline(viewEval(false, false)).Command(copyAnswers).Obj()
	full.Spec.Target.EvalFileView = evalsv1alpha1.EvalFileViewFull
	create(t, inputs)
	create(t, full)

	got := waitFinished(t, ns, inputs.Name, runTimeout)
	expectCondition(t, got, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionTrue, evalsv1alpha1.ReasonCompleted})
	expectDiff(t, "verdicts under the default view", map[string]evalsv1alpha1.Verdict{
		"k1": evalsv1alpha1.VerdictFail, "k2": evalsv1alpha1.VerdictFail, "k3": evalsv1alpha1.VerdictFail}, verdicts(got))
	if ptr.Deref(got.Status.EvalFileView, "") != evalsv1alpha1.EvalFileViewInputs {
		t.Errorf("status.evalFileView %v, want Inputs", got.Status.EvalFileView)
	}

	got = waitFinished(t, ns, full.Name, runTimeout)
	expectCondition(t, got, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionTrue, evalsv1alpha1.ReasonCompleted})
	expectDiff(t, "verdicts under Full", map[string]evalsv1alpha1.Verdict{
		"k1": evalsv1alpha1.VerdictPass, "k2": evalsv1alpha1.VerdictPass, "k3": evalsv1alpha1.VerdictPass}, verdicts(got))
	if ptr.Deref(got.Status.EvalFileView, "") != evalsv1alpha1.EvalFileViewFull {
		t.Errorf("status.evalFileView %v, want Full", got.Status.EvalFileView)
	}
	events, err := clientset.CoreV1().Events(ns).List(ctxFor(t, time.Minute), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(events.Items, func(e corev1.Event) bool {
		return e.InvolvedObject.Name == full.Name && e.Reason == "EvalFileViewFull" && e.Type == corev1.EventTypeWarning
	}) {
		t.Errorf("no Warning event EvalFileViewFull for the run with evalFileView Full")
	}
}

// searchCanaries looks for every canary in every file the runner can read (all of / but /proc, /sys and /dev,
// whose own processes' environ and cmdline it reads instead, and the runner-end FIFO, which would block a read),
// in its environment, and prints what it found, one "FOUND <canary>" per line, on stderr; then it answers.
const searchCanaries = `out={OUTPUT_FILE}; p=ZQ; p="${p}XJ-[A-Z][A-Z]*"; found=$( ` +
	`for d in /* /evalrun/*; do case "$d" in /proc|/sys|/dev|/evalrun|/evalrun/bin) continue;; esac; ` +
	`grep -rsoh -e "$p" "$d"; done; ` +
	`grep -soh -e "$p" /proc/*/environ /proc/*/cmdline /proc/self/environ; env | grep -o -e "$p" ); ` +
	`printf '%s\n' "$found" | sort -u | sed -n 's/^./FOUND &/p' >&2; ` +
	`printf '{"id":"k1","text":"{}"}\n{"id":"k2","text":"{}"}\n{"id":"k3","text":"{}"}\n' > "$out"`

// TestRunnerViewCanarySearch: canaries planted in the expected answers, expected outcomes, rubrics, a code judge's
// script and spec.judging are nowhere the runner can read under the default view. Under Full the same search finds
// the eval file's canaries (so the search works), and still not spec.judging's (run.json is never the runner's).
func TestRunnerViewCanarySearch(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "view-search", nil)
	judging := &evalsv1alpha1.Judging{Evaluators: []runtime.RawExtension{{Raw: []byte(
		`{"name":"` + canary("JUDGING") + `","type":"latency","threshold":600000}`)}}}
	runs := map[evalsv1alpha1.EvalFileView][]string{
		evalsv1alpha1.EvalFileViewInputs: nil,
		evalsv1alpha1.EvalFileViewFull:   {canary("EXPECTED"), canary("OUTCOME"), canary("RUBRIC"), canary("SCRIPT")},
	}
	for view := range runs {
		run := sampleRun(strings.ToLower(string(view)), ns).Inline(viewEval(true, true)).Command(searchCanaries).Obj()
		run.Spec.Target.EvalFileView = view
		run.Spec.Target.TimeoutSeconds = ptr.To[int32](300) // a search that blocks ends, and the test says so
		run.Spec.Judging = judging.DeepCopy()
		create(t, run)
	}
	for view, want := range runs {
		name := strings.ToLower(string(view))
		got := waitFinished(t, ns, name, runTimeout)
		// The search ran to its end only if the runner then answered: a runner that failed searched nothing.
		expectCondition(t, got, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionTrue, evalsv1alpha1.ReasonCompleted})
		pods := runPods(t, ns, name)
		if len(pods) == 0 {
			t.Fatalf("run %s has no pod", name)
		}
		var found []string
		for _, line := range strings.Split(podLogs(t, ns, pods[0].Name, "runner"), "\n") {
			if c, ok := strings.CutPrefix(line, "FOUND "); ok {
				found = append(found, strings.TrimRight(c, "-"))
			}
		}
		slices.Sort(found)
		found = slices.Compact(found)
		wantSorted := slices.Clone(want)
		slices.Sort(wantSorted)
		if view == evalsv1alpha1.EvalFileViewInputs && len(found) > 0 {
			t.Errorf("under the default view the runner found %q", found)
		}
		if view == evalsv1alpha1.EvalFileViewFull {
			for _, c := range wantSorted {
				if !slices.ContainsFunc(found, func(f string) bool { return strings.HasPrefix(f, c) }) {
					t.Errorf("under Full the search did not find %s (found %q): the search does not work", c, found)
				}
			}
			if slices.ContainsFunc(found, func(f string) bool { return strings.HasPrefix(f, canary("JUDGING")) }) {
				t.Errorf("under Full the runner found spec.judging's canary: run.json is in its reach")
			}
		}
		if s := got.Status.Summary; s == nil || s.Total != 3 {
			t.Errorf("run %s summary %+v, want 3 judged cases", name, got.Status.Summary)
		}
		raw, _ := json.Marshal(got.Status.EvalFileView)
		if string(raw) != `"`+string(view)+`"` {
			t.Errorf("run %s status.evalFileView %s, want %s", name, raw, view)
		}
	}
}

// TestRunnerViewBatchCLIShape: AgentV's batch-cli runner shape (it reads each case's id and input_messages from
// {EVAL_FILE} and writes one JSONL record per id; the sample runner is one) works unchanged on the default view,
// one pod and sharded, with the sample's exact judgement.
func TestRunnerViewBatchCLIShape(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "view-batch", nil)
	one := sampleRun("one", ns).Inline(sampleEvalFile(t)).Obj()
	sharded := sampleRun("sharded", ns).Inline(sampleEvalFile(t)).Shards(3, 0).Obj()
	create(t, one)
	create(t, sharded)
	for _, name := range []string{one.Name, sharded.Name} {
		got := waitFinished(t, ns, name, runTimeout)
		expectCondition(t, got, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionFalse, evalsv1alpha1.ReasonMissingResults})
		expectDiff(t, name+" summary", counts{Total: 12, Passed: 10, Failed: 1, Errored: 1, Missing: 1}, summaryCounts(got))
		expectDiff(t, name+" verdicts", sampleVerdicts, verdicts(got))
		if ptr.Deref(got.Status.EvalFileView, "") != evalsv1alpha1.EvalFileViewInputs {
			t.Errorf("%s status.evalFileView %v, want Inputs", name, got.Status.EvalFileView)
		}
	}
}
