//go:build e2e

package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
)

// extraEvaluator is an evaluator added to every case of the sample: it reads the answer only, so the cases'
// inputs (their runner view) stay as the first run's runner saw them.
const extraEvaluator = "      evaluators:\n        - name: decision-again\n          type: field_accuracy\n" +
	"          fields:\n            - path: decision\n              match: exact\n"

// caseScores are the run's stored results' verdict and score by case (missing cases included), and which run
// answered each.
func caseScores(t *testing.T, run *evalsv1alpha1.EvalRun) (map[string]string, map[string]string) {
	t.Helper()
	scores, answered := map[string]string{}, map[string]string{}
	eachStoredResult(t, run, func(l *results.Line, _ []byte) {
		scores[l.ID] = fmt.Sprintf("%s %.4f missing=%v", l.Verdict, l.Score, l.Missing)
		answered[l.ID] = l.AnsweredBy
	})
	return scores, answered
}

// TestRejudge: a run of the sample, then a re-judge of it with an added evaluator and a changed threshold. The
// re-judge's pod has no runner container, every answered case says the first run answered it, and its verdicts
// and scores are those of a fresh run of the same eval file and judging. A re-judge whose eval file changed one
// case's input reports that case, with its reason, and does not judge it.
func TestRejudge(t *testing.T) {
	ns := newNamespace(t, "rejudge", nil)
	eval := sampleEvalFile(t)
	create(t, sampleRun("first", ns).Inline(eval).Obj())
	first := waitFinished(t, ns, "first", runTimeout)
	if r := first.Status.Records; r == nil || r.Kept == 0 {
		t.Fatalf("the first run kept no records: %+v", first.Status.Records)
	}

	judged := strings.ReplaceAll(eval, "      evaluators:\n", extraEvaluator)
	judging := &evalsv1alpha1.Judging{PassThreshold: "0.5"}
	rejudge := sampleRun("rejudge", ns).Inline(judged).Obj()
	rejudge.Spec.Judging, rejudge.Spec.Rejudge = judging.DeepCopy(), &evalsv1alpha1.Rejudge{From: "first"}
	fresh := sampleRun("fresh", ns).Inline(judged).Obj()
	fresh.Spec.Judging = judging.DeepCopy()
	create(t, rejudge)
	create(t, fresh)
	gotRejudge := waitFinished(t, ns, "rejudge", runTimeout)
	gotFresh := waitFinished(t, ns, "fresh", runTimeout)

	for _, pod := range runPods(t, ns, "rejudge") {
		for _, c := range pod.Spec.Containers {
			if c.Name == podwire.ContainerRunner {
				t.Errorf("pod %s of the re-judge has a runner container", pod.Name)
			}
		}
	}
	rejudged, answeredBy := caseScores(t, gotRejudge)
	freshScores, _ := caseScores(t, gotFresh)
	expectDiff(t, "verdicts and scores of the re-judge against a fresh run", freshScores, rejudged)
	for id, by := range answeredBy {
		if missing := slices.Contains(gotRejudge.Status.MissingIDs, id); missing == (by == "first") {
			t.Errorf("case %s: answeredBy %q (missing: %v); want first for every case answered, none for a missing one", id, by, missing)
		}
	}
	expectDiff(t, "the re-judge's summary against a fresh run's", summaryCounts(gotFresh), summaryCounts(gotRejudge))

	// case-001's input changes: it is reported, not judged.
	changed := strings.Replace(judged, "amount: 5000", "amount: 5001", 1)
	if changed == judged {
		t.Fatal("the sample's case-001 has no amount: 5000 to change")
	}
	inputs := sampleRun("changed-input", ns).Inline(changed).Obj()
	inputs.Spec.Judging, inputs.Spec.Rejudge = judging.DeepCopy(), &evalsv1alpha1.Rejudge{From: "first"}
	create(t, inputs)
	got := waitFinished(t, ns, "changed-input", runTimeout)
	if c := succeeded(got); c == nil || c.Status != metav1.ConditionFalse || c.Reason != evalsv1alpha1.ReasonMissingResults {
		t.Errorf("Succeeded %+v, want False/MissingResults", c)
	}
	eachStoredResult(t, got, func(l *results.Line, _ []byte) {
		if l.ID == "case-001" && (!l.Missing || !strings.Contains(l.Error, "not judged: the case's input changed since EvalRun first answered it")) {
			t.Errorf("case-001: missing %v, error %q; want missing, saying its input changed", l.Missing, l.Error)
		}
	})
	if s := got.Status.Summary; s == nil || s.Missing != summaryCounts(gotRejudge).Missing+1 {
		t.Errorf("summary %+v: want one more case missing than the re-judge of the same inputs", got.Status.Summary)
	}
}
