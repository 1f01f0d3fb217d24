//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
)

// TestResumeFromRejudge: a run of the sample; a re-judge of it with a changed threshold and case-001's input
// changed (case-001 and the cases the first run did not answer are missing in it); a resume of the re-judge with
// the first run's judging is refused naming the threshold, and one with the re-judge's judging carries every
// judged case with the re-judge's verdict and score (carriedFrom the re-judge, answeredBy the first run) and runs
// exactly the cases the re-judge could not judge.
func TestResumeFromRejudge(t *testing.T) {
	ns := newNamespace(t, "resume-rejudge", nil)
	eval := sampleEvalFile(t)
	create(t, sampleRun("first", ns).Inline(eval).Obj())
	waitFinished(t, ns, "first", runTimeout)

	changed := strings.Replace(eval, "amount: 5000", "amount: 5001", 1)
	if changed == eval {
		t.Fatal("the sample's case-001 has no amount: 5000 to change")
	}
	judging := &evalsv1alpha1.Judging{PassThreshold: "0.5"}
	rejudge := sampleRun("rejudge", ns).Inline(changed).Obj()
	rejudge.Spec.Judging, rejudge.Spec.Rejudge = judging.DeepCopy(), &evalsv1alpha1.Rejudge{From: "first"}
	create(t, rejudge)
	src := waitFinished(t, ns, "rejudge", runTimeout)
	rejudged := map[string]results.Line{}
	eachStoredResult(t, src, func(l *results.Line, _ []byte) { rejudged[l.ID] = *l })
	if l, ok := rejudged["case-001"]; !ok || !l.Missing {
		t.Fatalf("the re-judge's case-001 (input changed): %+v, want missing", l)
	}

	// The first run's judging (threshold 0.8) is not the re-judge's: refused, without a pod.
	create(t, sampleRun("refused", ns).Inline(changed).Resume("rejudge", evalsv1alpha1.ResumeMissing).Obj())
	got := waitFinished(t, ns, "refused", runTimeout)
	if c := succeeded(got); c.Reason != evalsv1alpha1.ReasonResumeSourceInvalid ||
		!strings.Contains(c.Message, `spec.judging.passThreshold is "0.5" there, "0.8" here`) {
		t.Errorf("Succeeded %s: %q; want ResumeSourceInvalid naming the threshold", c.Reason, c.Message)
	}
	if pods := runPods(t, ns, "refused"); len(pods) > 0 {
		t.Errorf("the refused resume ran %d pods", len(pods))
	}

	resume := sampleRun("resumed", ns).Inline(changed).Resume("rejudge", evalsv1alpha1.ResumeMissing).Obj()
	resume.Spec.Judging = judging.DeepCopy()
	create(t, resume)
	got = waitFinished(t, ns, "resumed", runTimeout)
	var wantRan []string
	for id, l := range rejudged {
		if l.Missing {
			wantRan = append(wantRan, id)
		}
	}
	if r := got.Status.Resume; r == nil || r.From != "rejudge" || int(r.Ran) != len(wantRan) || int(r.Carried) != len(rejudged)-len(wantRan) {
		t.Errorf("resume status %+v, want %d run (%v) and %d carried from rejudge", got.Status.Resume, len(wantRan), wantRan,
			len(rejudged)-len(wantRan))
	}
	carried, ran := map[string]string{}, map[string]bool{}
	eachStoredResult(t, got, func(l *results.Line, _ []byte) {
		if l.CarriedFrom == "" {
			ran[l.ID] = true
			return
		}
		carried[l.ID] = fmt.Sprintf("%s %.4f answeredBy=%s carriedFrom=%s", l.Verdict, l.Score, l.AnsweredBy, l.CarriedFrom)
	})
	want := map[string]string{}
	for id, l := range rejudged {
		if !l.Missing {
			want[id] = fmt.Sprintf("%s %.4f answeredBy=first carriedFrom=rejudge", l.Verdict, l.Score)
		}
	}
	expectDiff(t, "the carried verdicts against the re-judge's", want, carried)
	for _, id := range wantRan {
		if !ran[id] {
			t.Errorf("case %s, which the re-judge did not judge, was not run again", id)
		}
	}
	if !ran["case-001"] {
		t.Error("case-001, whose input changed, was not run again")
	}
}
