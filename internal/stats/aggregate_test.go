package stats

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCasePasses(t *testing.T) {
	tests := []struct {
		passed, trials int
		rate           float64
		want           bool
	}{
		{5, 5, 0, true},
		{4, 5, 0, false},
		{4, 5, 1, false},
		{3, 5, 0.6, true}, // 0.6·5 is 3.0000000000000004 in floats: still 3 trials
		{2, 5, 0.6, false},
		{1, 3, 0.3, true},
		{0, 3, 0.3, false},
		{1, 1, 0.5, true},
		{0, 1, 0.01, false},
	}
	for _, tt := range tests {
		c := Case{Passed: tt.passed, Trials: tt.trials}
		if got := c.Passes(tt.rate); got != tt.want {
			t.Errorf("%d of %d at rate %v: Passes = %v, want %v", tt.passed, tt.trials, tt.rate, got, tt.want)
		}
	}
}

func TestCaseStats(t *testing.T) {
	tests := []struct {
		c       Case
		want    CaseStats
		flaky   bool
		wantErr bool
	}{
		{c: Case{ID: "a", Passed: 3, Trials: 5}, want: CaseStats{PassRate: 0.6, PassAtN: 1, PassHatN: 0}, flaky: true},
		{c: Case{ID: "b", Passed: 5, Trials: 5}, want: CaseStats{PassRate: 1, PassAtN: 1, PassHatN: 1}},
		{c: Case{ID: "c", Passed: 0, Trials: 5}, want: CaseStats{PassRate: 0, PassAtN: 0, PassHatN: 0}},
		{c: Case{ID: "d", Passed: 1, Trials: 1}, want: CaseStats{PassRate: 1, PassAtN: 1, PassHatN: 1}},
		{c: Case{ID: "e", Passed: 2, Trials: 1}, wantErr: true},
		{c: Case{ID: "f", Passed: 0, Trials: 0}, wantErr: true},
	}
	for _, tt := range tests {
		got, err := tt.c.Stats()
		if (err != nil) != tt.wantErr {
			t.Fatalf("%+v: err = %v, want error %v", tt.c, err, tt.wantErr)
		}
		if diff := cmp.Diff(tt.want, got, approx); diff != "" {
			t.Errorf("%+v: Stats (-want +got):\n%s", tt.c, diff)
		}
		if !tt.wantErr && tt.c.Flaky() != tt.flaky {
			t.Errorf("%+v: Flaky = %v, want %v", tt.c, tt.c.Flaky(), tt.flaky)
		}
	}
}

func TestSummarize(t *testing.T) {
	run := []Case{
		{ID: "a", Passed: 5, Trials: 5, Score: 1},
		{ID: "b", Passed: 4, Trials: 5, Score: 0.8},
		{ID: "c", Passed: 0, Trials: 5, Score: 0.1},
		{ID: "d", Passed: 3, Trials: 5, Score: 0.7},
	}
	wilson := func(s, n int) Interval { w, _ := Wilson(s, n, 0.95); return w }
	tint := func(v ...float64) Interval { i, _ := TInterval(v, 0.95); return i }
	boot := func(v ...float64) Interval { i, _ := BootstrapMean(v, BootstrapOptions{Seed: 2}); return i }
	tests := []struct {
		name    string
		cases   []Case
		opts    SummaryOptions
		want    Summary
		wantErr string
	}{
		{
			name: "every trial must pass", cases: run,
			want: Summary{Cases: 4, PassedCases: 1, PassRate: wilson(1, 4), Trials: 20, PassedTrials: 12,
				MeanPassRate: tint(1, 0.8, 0, 0.6), MeanPassAtN: 0.75, MeanPassHatN: 0.25,
				Scored: 4, MeanScore: tint(1, 0.8, 0.1, 0.7), Flaky: []string{"b", "d"}},
		},
		{
			name: "60% of the trials, bootstrap", cases: run,
			opts: SummaryOptions{CasePassRate: 0.6, ScoreInterval: IntervalBootstrap, Bootstrap: BootstrapOptions{Seed: 2}},
			want: Summary{Cases: 4, PassedCases: 3, PassRate: wilson(3, 4), Trials: 20, PassedTrials: 12,
				MeanPassRate: boot(1, 0.8, 0, 0.6), MeanPassAtN: 0.75, MeanPassHatN: 0.25,
				Scored: 4, MeanScore: boot(1, 0.8, 0.1, 0.7), Flaky: []string{"b", "d"}},
		},
		{
			name: "one case: no score interval", cases: run[:1],
			want: Summary{Cases: 1, PassedCases: 1, PassRate: wilson(1, 1), Trials: 5, PassedTrials: 5,
				MeanPassRate: Interval{Estimate: 1, Low: 1, High: 1}, MeanPassAtN: 1, MeanPassHatN: 1,
				Scored: 1, MeanScore: Interval{Estimate: 1, Low: 1, High: 1}},
		},
		{
			name: "one trial a case: the mean pass rate is Wilson's; cases without a score are left out of the mean score",
			cases: []Case{{ID: "a", Passed: 1, Trials: 1, Score: 0.9}, {ID: "b", Passed: 0, Trials: 1, Score: 0.2},
				{ID: "c", Passed: 0, Trials: 1, NoScore: true}, {ID: "d", Passed: 1, Trials: 1, Score: 0.7}},
			want: Summary{Cases: 4, PassedCases: 2, PassRate: wilson(2, 4), Trials: 4, PassedTrials: 2,
				MeanPassRate: wilson(2, 4), MeanPassAtN: 0.5, MeanPassHatN: 0.5, Scored: 3, MeanScore: tint(0.9, 0.2, 0.7)},
		},
		{
			name:  "no case has a score",
			cases: []Case{{ID: "a", Passed: 0, Trials: 3, NoScore: true}, {ID: "b", Passed: 0, Trials: 3, NoScore: true}},
			want: Summary{Cases: 2, PassRate: wilson(0, 2), Trials: 6,
				MeanPassRate: tint(0, 0)},
		},
		{name: "no cases", wantErr: "summary: no cases"},
		{name: "bad case", cases: []Case{{ID: "x", Passed: 6, Trials: 5}},
			wantErr: `summary: case "x": 6 passed of 5 trials: want 0 <= passed <= trials and trials >= 1`},
		{name: "bad rate", cases: run, opts: SummaryOptions{CasePassRate: 1.5},
			wantErr: "summary: case pass rate 1.5 must lie in (0, 1] (0 for 1, every trial)"},
		{name: "bad method", cases: run, opts: SummaryOptions{ScoreInterval: "Normal"},
			wantErr: `summary: score interval "Normal" is not one of "T", "Bootstrap"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Summarize(tt.cases, tt.opts)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, approx); diff != "" {
				t.Errorf("Summarize (-want +got):\n%s", diff)
			}
		})
	}
}
