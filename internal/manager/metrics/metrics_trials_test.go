package metrics

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
)

// trialCounts are the trial counters of a namespace.
type trialCounts struct {
	Trials, TrialCases, Flaky, Cases float64
}

func trialCountsOf(ns string) trialCounts {
	var cases float64
	for _, v := range []string{"Pass", "Fail", "Error", "Skipped"} {
		cases += testutil.ToFloat64(casesJudged.WithLabelValues(ns, v))
	}
	return trialCounts{Trials: testutil.ToFloat64(trials.WithLabelValues(ns)), TrialCases: testutil.ToFloat64(trialCases.WithLabelValues(ns)),
		Flaky: testutil.ToFloat64(flakyCases.WithLabelValues(ns)), Cases: cases}
}

// TestRecordDecisionsCountsTrials: a finished run adds its cases times its trials to evalrun_trials_total, and with
// trials its cases and flaky cases (status.trials), once per attempt; a run of one trial adds its cases as trials
// and nothing else; a run in progress or without a summary adds nothing.
func TestRecordDecisionsCountsTrials(t *testing.T) {
	terminal := []metav1.Condition{{Type: evalsv1alpha1.ConditionSucceeded, Status: metav1.ConditionTrue, Reason: evalsv1alpha1.ReasonCompleted}}
	running := []metav1.Condition{{Type: evalsv1alpha1.ConditionSucceeded, Status: metav1.ConditionUnknown, Reason: evalsv1alpha1.ReasonRunning}}
	summary := &evalsv1alpha1.RunSummary{Total: 40, Passed: 30, Failed: 10}
	for _, c := range []struct {
		name    string
		summary *evalsv1alpha1.RunSummary
		trials  *evalsv1alpha1.TrialsStatus
		after   []metav1.Condition
		// again records the same decision a second time (the memo says it is not the first).
		again bool
		want  trialCounts
	}{
		{"five trials", summary, &evalsv1alpha1.TrialsStatus{Count: 5, PassRate: "1", Cases: 40, FlakyCases: 7}, terminal, false,
			trialCounts{Trials: 200, TrialCases: 40, Flaky: 7, Cases: 40}},
		{"counted once per attempt", summary, &evalsv1alpha1.TrialsStatus{Count: 5, PassRate: "1", Cases: 40, FlakyCases: 7}, terminal, true,
			trialCounts{Trials: 200, TrialCases: 40, Flaky: 7, Cases: 40}},
		{"one trial", summary, nil, terminal, false, trialCounts{Trials: 40, Cases: 40}},
		{"status.trials of one trial", summary, &evalsv1alpha1.TrialsStatus{Count: 1}, terminal, false, trialCounts{Trials: 40, Cases: 40}},
		{"no summary", nil, &evalsv1alpha1.TrialsStatus{Count: 3, Cases: 4, FlakyCases: 1}, terminal, false, trialCounts{}},
		{"not finished", summary, &evalsv1alpha1.TrialsStatus{Count: 3, Cases: 40, FlakyCases: 1}, running, false, trialCounts{}},
	} {
		ns := "trials-" + c.name
		NoteRunNamespace(ns)
		run := &evalsv1alpha1.EvalRun{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: ns}}
		run.Status.Summary, run.Status.Trials = c.summary, c.trials
		run.Status.Conditions = running
		desired := run.Status.DeepCopy()
		desired.Conditions = c.after
		seen := map[string]bool{}
		first := func(what string) bool {
			if seen[what] {
				return false
			}
			seen[what] = true
			return true
		}
		RecordDecisions(run, desired, time.Time{}, time.Now(), first)
		if c.again {
			RecordDecisions(run, desired, time.Time{}, time.Now(), first)
		}
		if diff := cmp.Diff(c.want, trialCountsOf(ns)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, diff)
		}
	}
}
