package results

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// trialChunk is one pod's stored results: lines of one trial (or, for hostile input, of any trial).
func trialChunk(t *testing.T, lines ...Line) []byte {
	t.Helper()
	raw := make([][]byte, len(lines))
	for i, l := range lines {
		raw[i] = storedLine(t, l)
	}
	ch, err := Chunks([]string{"r"}, raw)
	if err != nil {
		t.Fatal(err)
	}
	return ch[0].Data
}

func trialLine(id string, trial int, v verdict.Verdict, score float64) Line {
	l := Line{CaseResult: verdict.CaseResult{ID: id, Verdict: v, Score: score}, Answer: fmt.Sprintf("%s answered in trial %d", id, trial)}
	if trial > 1 {
		l.Trial = trial
	}
	l.CostUSD = ptr.To(0.01)
	if v == verdict.VerdictError {
		l.Error = "judge crashed"
	}
	return l
}

func missingTrial(id string, trial int) Line {
	l := Line{CaseResult: verdict.MissingCase(id)}
	if trial > 1 {
		l.Trial = trial
	}
	return l
}

// mergeTrials merges chunks of a run of cases ids with rule, two passes, and the parse errors of one pod.
func mergeTrials(t *testing.T, ids []string, rule TrialRule, chunks ...[]byte) *Section {
	t.Helper()
	m := NewMerger(ids, []string{"r-0", "r-1", "r-2"}, nil, evalsv1alpha1.DefaultStatusBudgetBytes).WithTrials(rule,
		func(index, trial int) string {
			return fmt.Sprintf("shard 0 trial %d recorded no result for case %s", trial, ids[index])
		})
	for _, ch := range chunks {
		if err := m.AddChunk(ch); err != nil {
			t.Fatal(err)
		}
	}
	for _, ch := range chunks {
		if err := m.ShowChunk(ch); err != nil {
			t.Fatal(err)
		}
	}
	m.AddCollection(&Section{Summary: &evalsv1alpha1.RunSummary{ParseErrors: 1},
		ParseErrors: []evalsv1alpha1.ParseError{{Line: 2, Message: "not JSON"}}}, ptr.To[int32](0), ptr.To[int32](2))
	s, err := m.Finish(func(int) string { t.Error("the one-trial reason was asked in a run with trials"); return "" },
		func(int) (int32, bool) { return 0, true }, metav1.Now())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestMergerWithTrials merges three trials' pods of one shard, the third pod lost: cases are decided over their
// trials (verdict.go's rule), shown by one trial's result with their trials passed of N, counted once each in the
// summary, every stored trial's cost counted; a second result of one trial and results of trials outside 1..N are
// ignored, and status.trials lists the flaky cases.
func TestMergerWithTrials(t *testing.T) {
	ids := []string{"a", "b", "c", "d", "e"}
	trial1 := trialChunk(t, trialLine("a", 1, verdict.VerdictPass, 1), trialLine("b", 1, verdict.VerdictPass, 0.9),
		trialLine("c", 1, verdict.VerdictFail, 0.2), missingTrial("d", 1), trialLine("e", 1, verdict.VerdictPass, 1),
		trialLine("stranger", 1, verdict.VerdictPass, 1))
	trial2 := trialChunk(t, trialLine("a", 2, verdict.VerdictPass, 1), trialLine("b", 2, verdict.VerdictFail, 0.3),
		trialLine("c", 2, verdict.VerdictFail, 0.1), missingTrial("d", 2), trialLine("e", 2, verdict.VerdictPass, 0.8),
		// Hostile: a second result of a's trial 2, and trials outside 1..3.
		trialLine("a", 2, verdict.VerdictFail, 0), trialLine("e", 4, verdict.VerdictFail, 0), trialLine("e", -1, verdict.VerdictFail, 0))
	trial3 := trialChunk(t, trialLine("e", 3, verdict.VerdictError, 0))
	s := mergeTrials(t, ids, TrialRule{Count: 3, PassRate: 1, PassRateText: "1"}, trial1, trial2, trial3)

	type shown struct {
		ID, Verdict, Score, Error, Answer string
		Trials                            evalsv1alpha1.CaseTrials
	}
	var got []shown
	for _, c := range s.Cases {
		got = append(got, shown{c.ID, string(c.Verdict), c.Score, c.Error, c.Answer, *c.Trials})
	}
	want := []shown{
		{ID: "a", Verdict: "Error", Error: "1 of 3 trials have no record; trial 3: shard 0 trial 3 recorded no result for case a",
			Trials: evalsv1alpha1.CaseTrials{Passed: 2, Count: 3}},
		{ID: "b", Verdict: "Fail", Score: "0.6000", Answer: "b answered in trial 2", Trials: evalsv1alpha1.CaseTrials{Passed: 1, Count: 3}},
		{ID: "c", Verdict: "Fail", Score: "0.1500", Answer: "c answered in trial 1", Trials: evalsv1alpha1.CaseTrials{Passed: 0, Count: 3}},
		{ID: "e", Verdict: "Error", Error: "trial 3 of 3: judge crashed", Answer: "e answered in trial 3",
			Trials: evalsv1alpha1.CaseTrials{Passed: 2, Count: 3}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cases (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"d"}, s.MissingIDs); diff != "" {
		t.Errorf("missing ids (-want +got):\n%s", diff)
	}
	wantSummary := evalsv1alpha1.RunSummary{Total: 5, Failed: 2, Errored: 3, Missing: 1, ParseErrors: 1, PassRate: "0.0000",
		MeanScore: "0.3750", MedianScore: "0.3750", MinScore: "0.1500", MaxScore: "0.6000", Histogram: []int32{1, 0, 0, 1, 0}}
	if diff := cmp.Diff(wantSummary, *s.Summary); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
	// Every kept trial result costs: 5 + 3 of trial 1 and 2 (d's missing ones cost nothing), e's trial 3.
	if r := s.Cost.Runner; r == nil || r.Cases != 9 || r.CostUSD != "0.09" {
		t.Errorf("the runner's cost %+v, want 9 trials with a record and 0.09 USD", s.Cost.Runner)
	}
	if s.Results.TotalCases != 11 {
		t.Errorf("totalCases %d, want the 11 trial results kept", s.Results.TotalCases)
	}
	if diff := cmp.Diff([]evalsv1alpha1.ParseError{{Line: 2, Message: "not JSON", Shard: ptr.To[int32](0), Trial: ptr.To[int32](2)}}, s.ParseErrors); diff != "" {
		t.Errorf("parse errors (-want +got):\n%s", diff)
	}
	tr := s.Trials
	if tr == nil {
		t.Fatal("no status.trials")
	}
	// Flaky: a (2 of 3, one lost), b (1 of 3), e (2 of 3).
	if diff := cmp.Diff([]string{"a", "b", "e"}, tr.Flaky); diff != "" || tr.FlakyCases != 3 {
		t.Errorf("flaky %d (-want +got):\n%s", tr.FlakyCases, diff)
	}
	if tr.Count != 3 || tr.PassRate != "1" || tr.Cases != 5 || tr.RunPassRate.Value != "0.0000" ||
		tr.MeanTrialPassRate.Value != "0.3333" || tr.MeanScore.Value != "0.3750" || tr.PassAtN != "0.6000" || tr.PassHatN != "0.0000" {
		t.Errorf("status.trials %+v: want 3 trials at 1 over 5 cases, none passing, a mean trial pass rate of 5/15, "+
			"a mean score of 0.375 over b and c, pass@3 3/5 and pass^3 0", tr)
	}
	if lo, hi := tr.MeanTrialPassRate.Low, tr.MeanTrialPassRate.High; lo > "0.3333" || hi < "0.3333" || lo >= hi {
		t.Errorf("mean trial pass rate interval [%s, %s] does not hold 0.3333", lo, hi)
	}
}

// TestMergerWithTrialsPassRate: at a pass rate of 0.6, two passed trials of three pass a case; the summary's pass
// rate and status.trials' agree.
func TestMergerWithTrialsPassRate(t *testing.T) {
	ids := []string{"a", "b"}
	s := mergeTrials(t, ids, TrialRule{Count: 3, PassRate: 0.6, PassRateText: "0.6"},
		trialChunk(t, trialLine("a", 1, verdict.VerdictPass, 1), trialLine("b", 1, verdict.VerdictPass, 1)),
		trialChunk(t, trialLine("a", 2, verdict.VerdictFail, 0.5), trialLine("b", 2, verdict.VerdictFail, 0.5)),
		trialChunk(t, trialLine("a", 3, verdict.VerdictPass, 1), trialLine("b", 3, verdict.VerdictFail, 0.5)))
	if s.Summary.Passed != 1 || s.Summary.Failed != 1 || s.Trials.RunPassRate.Value != "0.5000" || s.Trials.PassRate != "0.6" {
		t.Errorf("summary %+v, trials %+v: want a passing (2 of 3 at 0.6) and b failing", s.Summary, s.Trials)
	}
	for _, c := range s.Cases {
		if c.ID == "a" && (c.Answer != "a answered in trial 1" || c.Verdict != evalsv1alpha1.VerdictPass) {
			t.Errorf("a passing case is shown by its first passed trial: %+v", c)
		}
		if c.ID == "b" && c.Answer != "b answered in trial 2" {
			t.Errorf("a failing case is shown by its first failed trial: %+v", c)
		}
	}
}

// TestMergerWithOneTrialIsUnchanged: WithTrials of one trial leaves the Merger as it was: a second stored result of
// a case is ignored, as before trials, and no status.trials is written.
func TestMergerWithOneTrialIsUnchanged(t *testing.T) {
	build := func(trials bool) *Section {
		m := NewMerger([]string{"a"}, []string{"r-0"}, nil, evalsv1alpha1.DefaultStatusBudgetBytes)
		if trials {
			m = m.WithTrials(TrialRule{Count: 1}, nil)
		}
		ch := trialChunk(t, trialLine("a", 1, verdict.VerdictPass, 1), trialLine("a", 2, verdict.VerdictFail, 0))
		if err := m.AddChunk(ch); err != nil {
			t.Fatal(err)
		}
		if err := m.ShowChunk(ch); err != nil {
			t.Fatal(err)
		}
		s, err := m.Finish(func(int) string { return "" }, func(int) (int32, bool) { return 0, true }, metav1.Time{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if diff := cmp.Diff(build(false), build(true)); diff != "" {
		t.Errorf("WithTrials of one trial changed the section (-without +with):\n%s", diff)
	}
	if s := build(true); s.Trials != nil || s.Cases[0].Trials != nil || s.Summary.Passed != 1 {
		t.Errorf("one trial: status.trials %v, the case's trials %v, %d passed", s.Trials, s.Cases[0].Trials, s.Summary.Passed)
	}
}

// TestFlakyIDsWithinTheBudget: the flaky ids are cut to what the status budget holds; flakyCases still counts them
// all.
func TestFlakyIDsWithinTheBudget(t *testing.T) {
	flaky := make([]string, evalsv1alpha1.MaxStatusFlakyIDs)
	for i := range flaky {
		flaky[i] = fmt.Sprintf("%0256d", i)
	}
	const budget = 8 << 10
	b := NewBuilder(Options{BudgetBytes: budget, AlreadyStored: true})
	out, err := b.Finish(Tail{Trials: &evalsv1alpha1.TrialsStatus{Count: 3, PassRate: "1", FlakyCases: 100, Flaky: flaky}})
	if err != nil {
		t.Fatal(err)
	}
	tr := out.Section.Trials
	if n := len(tr.Flaky); n == 0 || n >= len(flaky) || tr.FlakyCases != 100 {
		t.Errorf("%d flaky ids kept of %d (flakyCases %d): want some, cut to the budget", n, len(flaky), tr.FlakyCases)
	}
	if size := jsonSize(out.Section); size > budget {
		t.Errorf("the section is %d bytes, over its %d-byte budget", size, budget)
	}
	if len(flaky[0]) != 256 || flaky[0] == "" {
		t.Error("the test's ids were changed by the builder")
	}
}
