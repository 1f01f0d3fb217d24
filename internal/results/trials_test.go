package results

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/evalrun-operator/evalrun-operator/internal/stats"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

func TestAggregateCase(t *testing.T) {
	pass := func(trial int, score float64) TrialRecord {
		return TrialRecord{Trial: trial, Verdict: verdict.VerdictPass, Score: score}
	}
	fail := func(trial int, score float64) TrialRecord {
		return TrialRecord{Trial: trial, Verdict: verdict.VerdictFail, Score: score}
	}
	errored := func(trial int) TrialRecord {
		return TrialRecord{Trial: trial, Verdict: verdict.VerdictError, Score: 0.9}
	}
	missing := func(trial int) TrialRecord {
		return TrialRecord{Trial: trial, Verdict: verdict.VerdictError, Missing: true}
	}
	skipped := func(trial int) TrialRecord {
		return TrialRecord{Trial: trial, Verdict: verdict.VerdictSkipped, Score: 1}
	}
	three := TrialRule{Count: 3, PassRate: 1}
	tests := []struct {
		name    string
		rule    TrialRule
		records []TrialRecord
		want    CaseTrials
	}{
		{name: "every trial passed", rule: three, records: []TrialRecord{pass(2, 0.9), pass(1, 1), pass(3, 0.8)},
			want: CaseTrials{N: 3, Passed: 3, Verdict: verdict.VerdictPass, Score: 0.9, Scored: 3, Shown: 1}},
		{name: "flaky under every-trial: Fail, shown by its failed trial", rule: three,
			records: []TrialRecord{pass(1, 1), fail(2, 0.4), pass(3, 1)},
			want:    CaseTrials{N: 3, Passed: 2, Failed: 1, Verdict: verdict.VerdictFail, Score: 0.8, Scored: 3, Shown: 2}},
		{name: "flaky at a pass rate of 0.6: 2 of 3 is enough (0.6·3 rounds up to 2)", rule: TrialRule{Count: 3, PassRate: 0.6},
			records: []TrialRecord{pass(1, 1), fail(2, 0.4), pass(3, 1)},
			want:    CaseTrials{N: 3, Passed: 2, Failed: 1, Verdict: verdict.VerdictPass, Score: 0.8, Scored: 3, Shown: 1}},
		{name: "1 of 3 at 0.6 is not", rule: TrialRule{Count: 3, PassRate: 0.6},
			records: []TrialRecord{fail(1, 0.2), fail(2, 0.4), pass(3, 1)},
			want:    CaseTrials{N: 3, Passed: 1, Failed: 2, Verdict: verdict.VerdictFail, Score: 1.6 / 3, Scored: 3, Shown: 1}},
		{name: "a missing trial counts as not passed: Error when the others passed", rule: three,
			records: []TrialRecord{pass(1, 1), missing(2), pass(3, 1)},
			want:    CaseTrials{N: 3, Passed: 2, Missing: 1, Verdict: verdict.VerdictError, Score: 1, Scored: 2, Shown: 2}},
		{name: "a trial never stored is missing too: Error, shown by no record", rule: three,
			records: []TrialRecord{pass(1, 1), pass(2, 1)},
			want:    CaseTrials{N: 3, Passed: 2, Missing: 1, Verdict: verdict.VerdictError, Score: 1, Scored: 2, FirstAbsent: 3}},
		{name: "a lost trial cannot make a case pass at 0.5 that would not with it", rule: TrialRule{Count: 4, PassRate: 0.5},
			records: []TrialRecord{pass(1, 1), fail(2, 0), fail(3, 0)},
			want:    CaseTrials{N: 4, Passed: 1, Failed: 2, Missing: 1, Verdict: verdict.VerdictFail, Score: 1.0 / 3, Scored: 3, Shown: 2, FirstAbsent: 4}},
		{name: "errored and failed: Fail", rule: three, records: []TrialRecord{errored(1), fail(2, 0.5), pass(3, 1)},
			want: CaseTrials{N: 3, Passed: 1, Failed: 1, Errored: 1, Verdict: verdict.VerdictFail, Score: 0.5, Scored: 3, Shown: 2}},
		{name: "every non-passing trial errored or missing: Error; an Error scores 0", rule: three,
			records: []TrialRecord{errored(2), missing(1), pass(3, 0.9)},
			want:    CaseTrials{N: 3, Passed: 1, Errored: 1, Missing: 1, Verdict: verdict.VerdictError, Score: 0.45, Scored: 2, Shown: 1}},
		{name: "all missing, stored as missing", rule: three, records: []TrialRecord{missing(3), missing(1), missing(2)},
			want: CaseTrials{N: 3, Missing: 3, Verdict: verdict.VerdictError, AllMissing: true, Shown: 1}},
		{name: "all missing, nothing stored", rule: three,
			want: CaseTrials{N: 3, Missing: 3, Verdict: verdict.VerdictError, AllMissing: true, FirstAbsent: 1}},
		{name: "all skipped: Skipped, no score", rule: three, records: []TrialRecord{skipped(1), skipped(2), skipped(3)},
			want: CaseTrials{N: 3, Skipped: 3, Verdict: verdict.VerdictSkipped, Shown: 1}},
		{name: "skipped trials are left out: 2 passed of 2 judged", rule: three, records: []TrialRecord{skipped(1), pass(2, 1), pass(3, 0.8)},
			want: CaseTrials{N: 3, Passed: 2, Skipped: 1, Verdict: verdict.VerdictPass, Score: 0.9, Scored: 2, Shown: 2}},
		{name: "skipped and errored: Error", rule: three, records: []TrialRecord{skipped(1), errored(2), skipped(3)},
			want: CaseTrials{N: 3, Errored: 1, Skipped: 2, Verdict: verdict.VerdictError, Scored: 1, Shown: 2}},
		{name: "skipped and missing: Error, not missing", rule: three, records: []TrialRecord{skipped(1), missing(2), skipped(3)},
			want: CaseTrials{N: 3, Skipped: 2, Missing: 1, Verdict: verdict.VerdictError, Shown: 2}},
		{name: "a second record of a trial is ignored: the first wins", rule: three,
			records: []TrialRecord{fail(1, 0), pass(1, 1), pass(2, 1), pass(2, 1), pass(3, 1)},
			want:    CaseTrials{N: 3, Passed: 2, Failed: 1, Ignored: 2, Verdict: verdict.VerdictFail, Score: 2.0 / 3, Scored: 3, Shown: 1}},
		{name: "trials out of range are ignored: 0, -1, N+1, far beyond", rule: three,
			records: []TrialRecord{pass(0, 1), pass(-1, 1), pass(4, 1), pass(1<<40, 1), pass(1, 1)},
			want:    CaseTrials{N: 3, Passed: 1, Missing: 2, Ignored: 4, Verdict: verdict.VerdictError, Score: 1, Scored: 1, FirstAbsent: 2}},
		{name: "hostile scores are clamped to [0, 1]", rule: TrialRule{Count: 2}, records: []TrialRecord{pass(1, 7), fail(2, -3)},
			want: CaseTrials{N: 2, Passed: 1, Failed: 1, Verdict: verdict.VerdictFail, Score: 0.5, Scored: 2, Shown: 2}},
		{name: "a verdict nothing set is an Error", rule: TrialRule{Count: 1}, records: []TrialRecord{{Trial: 1, Score: 1}},
			want: CaseTrials{N: 1, Errored: 1, Verdict: verdict.VerdictError, Scored: 1, Shown: 1}},
		{name: "budget-unjudged trials mark an Error case", rule: TrialRule{Count: 2},
			records: []TrialRecord{{Trial: 1, Verdict: verdict.VerdictError, BudgetUnjudged: true}, pass(2, 1)},
			want:    CaseTrials{N: 2, Passed: 1, Errored: 1, Verdict: verdict.VerdictError, BudgetUnjudged: true, Score: 0.5, Scored: 2, Shown: 1}},
		{name: "100 trials, the last missing", rule: TrialRule{Count: 100, PassRate: 0.99}, records: func() []TrialRecord {
			var out []TrialRecord
			for i := 1; i < 100; i++ {
				out = append(out, pass(i, 1))
			}
			return out
		}(), want: CaseTrials{N: 100, Passed: 99, Missing: 1, Verdict: verdict.VerdictPass, Score: 1, Scored: 99, Shown: 1, FirstAbsent: 100}},
		{name: "a count beyond what a tally holds is cut to 100", rule: TrialRule{Count: 1000}, records: []TrialRecord{pass(101, 1)},
			want: CaseTrials{N: 100, Missing: 100, Ignored: 1, Verdict: verdict.VerdictError, AllMissing: true, FirstAbsent: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := AggregateCase(tt.rule, tt.records)
			if diff := cmp.Diff(tt.want, got, cmpApprox); diff != "" {
				t.Errorf("AggregateCase (-want +got):\n%s", diff)
			}
			if sum := got.Passed + got.Failed + got.Errored + got.Skipped + got.Missing; sum != got.N {
				t.Errorf("the trials add up to %d, not N %d", sum, got.N)
			}
			// The records' order does not matter but for which of two records of one trial is first.
			rev := make([]TrialRecord, len(tt.records))
			for i, r := range tt.records {
				rev[len(rev)-1-i] = r
			}
			if back := AggregateCase(tt.rule, rev); back.Verdict != got.Verdict || back.Passed != got.Passed || back.Shown != got.Shown {
				if !hasDuplicateTrial(tt.records) {
					t.Errorf("reversed records: verdict %s, %d passed, shown %d; want %s, %d, %d", back.Verdict, back.Passed, back.Shown,
						got.Verdict, got.Passed, got.Shown)
				}
			}
		})
	}
}

var cmpApprox = cmpopts.EquateApprox(0, 1e-12)

func hasDuplicateTrial(rs []TrialRecord) bool {
	seen := map[int]bool{}
	for _, r := range rs {
		if seen[r.Trial] {
			return true
		}
		seen[r.Trial] = true
	}
	return false
}

// TestAggregateCaseOneTrialIsToday: with one trial, a case's verdict and score are its one result's, as before trials.
func TestAggregateCaseOneTrialIsToday(t *testing.T) {
	for _, l := range []Line{
		{CaseResult: verdict.CaseResult{ID: "p", Verdict: verdict.VerdictPass, Score: 0.9}},
		{CaseResult: verdict.CaseResult{ID: "f", Verdict: verdict.VerdictFail, Score: 0.3}},
		{CaseResult: verdict.ErrorCase("e", "judge crashed")},
		{CaseResult: verdict.MissingCase("m")},
		{CaseResult: verdict.CaseResult{ID: "s", Verdict: verdict.VerdictSkipped}},
	} {
		got := AggregateCase(TrialRule{}, []TrialRecord{TrialRecordOf(&l)})
		if got.Verdict != l.Verdict || got.AllMissing != l.Missing || got.Shown != 1 {
			t.Errorf("%s: verdict %s, missing %v, shown %d; want %s, %v, 1", l.ID, got.Verdict, got.AllMissing, got.Shown, l.Verdict, l.Missing)
		}
		if judged := l.Verdict == verdict.VerdictPass || l.Verdict == verdict.VerdictFail; judged && got.Score != l.Score {
			t.Errorf("%s: score %v, want %v", l.ID, got.Score, l.Score)
		}
	}
}

func TestParseTrialRule(t *testing.T) {
	tests := []struct {
		count    int32
		passRate string
		want     TrialRule
		wantErr  string
	}{
		{count: 0, want: TrialRule{Count: 1, PassRate: 1, PassRateText: "1"}},
		{count: 3, passRate: "0.6", want: TrialRule{Count: 3, PassRate: 0.6, PassRateText: "0.6"}},
		{count: 100, passRate: "1.000000", want: TrialRule{Count: 100, PassRate: 1, PassRateText: "1.000000"}},
		{count: 101, wantErr: "trials.count 101 is not between 1 and 100"},
		{count: 3, passRate: "0", wantErr: `trials.passRate "0" is not a decimal in (0, 1]`},
		{count: 3, passRate: "NaN", wantErr: `trials.passRate "NaN" is not a decimal in (0, 1]`},
		{count: 3, passRate: "1.5", wantErr: `trials.passRate "1.5" is not a decimal in (0, 1]`},
	}
	for _, tt := range tests {
		got, err := ParseTrialRule(tt.count, tt.passRate)
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("ParseTrialRule(%d, %q) = %v, want %q", tt.count, tt.passRate, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ParseTrialRule(%d, %q) (-want +got):\n%s", tt.count, tt.passRate, diff)
		}
	}
}

// TestStatsCase: the case as the statistics read it agrees with its verdict (one rule), and only judged cases score.
func TestStatsCase(t *testing.T) {
	rule := TrialRule{Count: 5, PassRate: 0.6}
	for passed := range 6 {
		var rs []TrialRecord
		for i := 1; i <= 5; i++ {
			v := verdict.VerdictFail
			if i <= passed {
				v = verdict.VerdictPass
			}
			rs = append(rs, TrialRecord{Trial: i, Verdict: v, Score: 0.5})
		}
		c := AggregateCase(rule, rs)
		sc := c.StatsCase("x")
		if sc.Passes(rule.PassRate) != (c.Verdict == verdict.VerdictPass) {
			t.Errorf("%d of 5 passed: the statistics say passes %v, the verdict is %s", passed, sc.Passes(rule.PassRate), c.Verdict)
		}
		if sc.Flaky() != c.Flaky() || sc.NoScore {
			t.Errorf("%d of 5 passed: flaky %v and %v, no score %v", passed, sc.Flaky(), c.Flaky(), sc.NoScore)
		}
	}
	var allSkipped []TrialRecord
	for i := 1; i <= 5; i++ {
		allSkipped = append(allSkipped, TrialRecord{Trial: i, Verdict: verdict.VerdictSkipped})
	}
	skipped := AggregateCase(rule, allSkipped)
	if diff := cmp.Diff(stats.Case{ID: "s", Trials: 5, NoScore: true}, skipped.StatsCase("s")); diff != "" {
		t.Errorf("a skipped case (-want +got):\n%s", diff)
	}
}
