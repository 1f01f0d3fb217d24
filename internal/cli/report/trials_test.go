package report

import (
	"bytes"
	"encoding/json"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// caseView is what every report shows of a case of a run with trials.
type caseView struct {
	ID, Outcome, Marks, Trials, Message, Evaluators string
	Flaky, HasScore                                 bool
	Score                                           string
	Ignored                                         int
}

func viewOf(c *TrialCase) caseView {
	score, has := c.Score()
	v := caseView{ID: c.ID, Outcome: string(c.Outcome()), Marks: c.Marks(), Trials: c.TrialsText(), Message: c.Message(),
		Evaluators: c.EvaluatorsText(), Flaky: c.Flaky(), HasScore: has, Ignored: c.Case.Ignored}
	if has {
		v.Score = verdict.FormatScore(score)
	}
	return v
}

func TestGroupTrials(t *testing.T) {
	var got []caseView
	for _, c := range GroupTrials(trialRule, trialRunLines()) {
		got = append(got, viewOf(c))
	}
	want := []caseView{
		{ID: "case-a", Outcome: "Pass", Marks: "PPP", Trials: "3/3", Evaluators: "decision=3/3", HasScore: true, Score: "1.0000", Ignored: 2},
		{ID: "case-b", Outcome: "Fail", Marks: "PFP", Trials: "2/3", Message: "trial 2 of 3: decision: decision: want REVIEW",
			Evaluators: "decision=2/3", Flaky: true, HasScore: true, Score: "0.8333"},
		{ID: "case-c", Outcome: "Error", Marks: "EEM", Trials: "0/3", Message: "trial 1 of 3: answer is not JSON"},
		{ID: "case-d", Outcome: "Missing", Marks: "MMM", Trials: "0/3", Message: "the runner produced no record for this case"},
		{ID: "case-e", Outcome: "Pass", Marks: "PSP", Trials: "2/3", Evaluators: "decision=2/2", HasScore: true, Score: "1.0000"},
		{ID: "case-f", Outcome: "Fail", Marks: "FFF", Trials: "0/3", Message: "trial 1 of 3: decision: decision: want REVIEW",
			Evaluators: "decision=0/3", HasScore: true, Score: "0.3333"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cases (-want +got):\n%s", diff)
	}
}

// A case whose non-passing trials stored nothing at all is an Error no trial stands for: its message counts them.
func TestTrialCaseWithoutStoredResults(t *testing.T) {
	cases := GroupTrials(trialRule, []*results.Line{trialLine("case-x", 2, "Pass", 1, "")})
	if diff := cmp.Diff(caseView{ID: "case-x", Outcome: "Error", Marks: "MPM", Trials: "1/3", Flaky: true,
		Message: "2 of 3 trials have no stored result", Evaluators: "decision=1/1"}, viewOf(cases[0])); diff != "" {
		t.Errorf("case (-want +got):\n%s", diff)
	}
}

func TestMatchCaseAndSort(t *testing.T) {
	cases := GroupTrials(trialRule, trialRunLines())
	for _, c := range []struct {
		name   string
		filter Filter
		want   []string
	}{
		{"every case, failing first", Filter{}, []string{"case-b", "case-f", "case-c", "case-d", "case-a", "case-e"}},
		{"flaky", Filter{Flaky: true}, []string{"case-b"}},
		{"Error includes Missing", Filter{Verdicts: []Outcome{OutcomeError}}, []string{"case-c", "case-d"}},
		{"Missing alone", Filter{Verdicts: []Outcome{OutcomeMissing}}, []string{"case-d"}},
		{"an evaluator that judged some trial", Filter{Evaluator: "field_accuracy", Verdicts: []Outcome{OutcomePass, OutcomeFail}},
			[]string{"case-b", "case-f", "case-a", "case-e"}},
		{"flaky and passing", Filter{Flaky: true, Verdicts: []Outcome{OutcomePass}}, nil},
		{"id", Filter{ID: regexp.MustCompile("[ae]$")}, []string{"case-a", "case-e"}},
	} {
		var kept []*TrialCase
		for _, tc := range cases {
			if c.filter.Match(trialRunLines()[0]) && c.filter.Flaky {
				t.Errorf("%s: a line of one trial matched a flaky filter", c.name)
			}
			if c.filter.MatchCase(tc) {
				kept = append(kept, tc)
			}
		}
		SortCasesFailingFirst(kept)
		var got []string
		for _, tc := range kept {
			got = append(got, tc.ID)
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, diff)
		}
	}
}

func TestWriteTrialsTable(t *testing.T) {
	cases := GroupTrials(trialRule, trialRunLines())
	SortCasesFailingFirst(cases)
	var b bytes.Buffer
	if err := WriteTrialsTable(&b, cases); err != nil {
		t.Fatal(err)
	}
	want := `ID       VERDICT   SCORE    TRIALS      EVALUATORS     MESSAGE
case-b   Fail      0.8333   2/3 flaky   decision=2/3   trial 2 of 3: decision: decision: want REVIEW
case-f   Fail      0.3333   0/3         decision=0/3   trial 1 of 3: decision: decision: want REVIEW
case-c   Error     -        0/3         -              trial 1 of 3: answer is not JSON
case-d   Missing   -        0/3         -              the runner produced no record for this case
case-a   Pass      1.0000   3/3         decision=3/3   -
case-e   Pass      1.0000   2/3         decision=2/2   -
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("table (-want +got):\n%s", diff)
	}
}

// A case's document: the case's verdict and score over its trials, its counts, and every stored trial as stored;
// it reads back as it was written.
func TestCaseDocOf(t *testing.T) {
	cases := GroupTrials(trialRule, trialRunLines())
	doc := CaseDocOf(cases[1])
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		ID      string  `json:"id"`
		Verdict string  `json:"verdict"`
		Score   float64 `json:"score"`
		Trials  struct {
			Passed, Failed, Errored, Skipped, Missing, Count int
			Flaky                                            bool
			Results                                          []*results.Line
		} `json:"trials"`
	}
	if err := json.Unmarshal(out, &back); err != nil {
		t.Fatal(err)
	}
	if back.ID != "case-b" || back.Verdict != "Fail" || verdict.FormatScore(back.Score) != "0.8333" {
		t.Errorf("case %s %s %v, want case-b Fail 0.8333", back.ID, back.Verdict, back.Score)
	}
	if b := back.Trials; b.Passed != 2 || b.Failed != 1 || b.Count != 3 || !b.Flaky || len(b.Results) != 3 {
		t.Errorf("trials %+v", b)
	}
	if diff := cmp.Diff(cases[1].Trials, back.Trials.Results); diff != "" {
		t.Errorf("results (-stored +read back):\n%s", diff)
	}
	// One trial: the line, field for field (the trials key absent).
	one, err := json.Marshal(CaseDoc{Line: sampleLines()[1]})
	if err != nil {
		t.Fatal(err)
	}
	line, _ := json.Marshal(sampleLines()[1])
	if diff := cmp.Diff(string(line), string(one)); diff != "" {
		t.Errorf("one trial (-line +document):\n%s", diff)
	}
}

func TestTrialRuleOf(t *testing.T) {
	for _, c := range []struct {
		name string
		run  func(*evalsv1alpha1.EvalRun)
		want results.TrialRule
	}{
		{"no trials", func(*evalsv1alpha1.EvalRun) {}, results.TrialRule{Count: 1}},
		{"one trial in the spec", func(r *evalsv1alpha1.EvalRun) { r.Spec.Trials = &evalsv1alpha1.Trials{Count: ptr.To[int32](1)} },
			results.TrialRule{Count: 1}},
		{"the status", func(r *evalsv1alpha1.EvalRun) {
			r.Spec.Trials = &evalsv1alpha1.Trials{Count: ptr.To[int32](9)}
			r.Status.Trials = &evalsv1alpha1.TrialsStatus{Count: 5, PassRate: "0.6"}
		}, results.TrialRule{Count: 5, PassRate: 0.6, PassRateText: "0.6"}},
		{"the spec before the merge", func(r *evalsv1alpha1.EvalRun) {
			r.Spec.Trials = &evalsv1alpha1.Trials{Count: ptr.To[int32](4), PassRate: ptr.To("0.5")}
		}, results.TrialRule{Count: 4, PassRate: 0.5, PassRateText: "0.5"}},
		{"a pass rate the API refuses", func(r *evalsv1alpha1.EvalRun) {
			r.Status.Trials = &evalsv1alpha1.TrialsStatus{Count: 3, PassRate: "2"}
		}, results.TrialRule{Count: 3, PassRate: 1, PassRateText: "1"}},
	} {
		run := &evalsv1alpha1.EvalRun{}
		c.run(run)
		if diff := cmp.Diff(c.want, TrialRuleOf(run)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, diff)
		}
	}
}

func TestTrialsLines(t *testing.T) {
	st := &evalsv1alpha1.TrialsStatus{Count: 5, PassRate: "0.6", Cases: 40,
		RunPassRate:       &evalsv1alpha1.TrialsEstimate{Value: "0.7500", Low: "0.5980", High: "0.8580"},
		MeanTrialPassRate: &evalsv1alpha1.TrialsEstimate{Value: "0.8000", Low: "0.7100", High: "0.8800"},
		MeanScore:         &evalsv1alpha1.TrialsEstimate{Value: "0.8100", Low: "0.7300", High: "0.8900"},
		PassAtN:           "0.9500", PassHatN: "0.6000", FlakyCases: 14, Flaky: []string{"s-1", "s-2"}}
	for _, c := range []struct {
		name  string
		st    *evalsv1alpha1.TrialsStatus
		flaky []string
		want  []string
	}{
		{"no trials", nil, nil, nil},
		{"one trial", &evalsv1alpha1.TrialsStatus{Count: 1}, nil, nil},
		{"the status's flaky ids", st, nil, []string{
			"Trials: 5 per case; a case passes when at least 0.6 of its trials pass (passRate 0.6); 40 cases",
			"Pass rate (cases): 0.7500 (95% CI 0.5980 to 0.8580) (Wilson)",
			"Mean trial pass rate (pass@1): 0.8000 (95% CI 0.7100 to 0.8800) (bootstrap over cases)",
			"Mean score: 0.8100 (95% CI 0.7300 to 0.8900) (bootstrap over cases)",
			"pass@5: 0.9500 (some trial passed); pass^5: 0.6000 (every trial passed)",
			"Flaky cases: 14: s-1, s-2 and 12 more",
		}},
		{"the stored flaky ids, three named, a hostile one escaped", &evalsv1alpha1.TrialsStatus{Count: 2, PassRate: "1", Cases: 4, FlakyCases: 4},
			[]string{"a\x1b[31m", "b", "c", "d"}, []string{
				"Trials: 2 per case; a case passes when every trial passes (passRate 1); 4 cases",
				"Flaky cases: 4: a\\x1b[31m, b, c and 1 more",
			}},
	} {
		if diff := cmp.Diff(c.want, TrialsLines(c.st, c.flaky, 3)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, diff)
		}
	}
}
