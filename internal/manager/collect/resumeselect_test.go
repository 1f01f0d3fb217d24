package collect

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// storedResult is one stored result of a resume's source: "<id>/<trial>=<verdict>", the verdict Pass, Fail, Error,
// Skipped or Missing (a result stored as missing); trial 0 is a line that omits it (trial 1).
type storedResult string

func (s storedResult) line(t *testing.T) *results.Line {
	t.Helper()
	var id, v string
	var trial int
	if _, err := fmt.Sscanf(strings.NewReplacer("/", " ", "=", " ").Replace(string(s)), "%s %d %s", &id, &trial, &v); err != nil {
		t.Fatalf("stored %q: %v", s, err)
	}
	l := &results.Line{CaseResult: verdict.CaseResult{ID: id, Verdict: verdict.Verdict(v)}, Trial: trial}
	switch v {
	case "Missing":
		l.CaseResult = verdict.MissingCase(id)
		l.Trial = trial
	case "Pass":
		l.Score = 1
	}
	return l
}

// carriedLine is a carried line as "<id>/<trial>=<verdict>@<carriedFrom>".
func carriedLine(t *testing.T, data []byte) string {
	t.Helper()
	var l results.Line
	if err := json.Unmarshal(data, &l); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%s/%d=%s@%s", l.ID, l.TrialNumber(), l.Verdict, l.CarriedFrom)
}

// TestResumeSelection: what a resume carries from its source's stored results and what it runs again, with one
// trial (as a resume always decided) and with three: Missing runs each case's trials without a result; NotPassed
// runs every trial of a case that does not pass and never only the trials that did not pass (that would bias the
// case's pass rate upward), but the trials without a result of a case that passes. Hostile stored results (a second
// result of a trial, a trial outside 1..N, an unknown case) are left out as the merge leaves them out.
func TestResumeSelection(t *testing.T) {
	ids := []string{"a", "b", "c", "d"}
	tests := []struct {
		name     string
		trials   int
		passRate string
		mode     evalsv1alpha1.ResumeCases
		stored   []storedResult
		// wantRun are the cases run again; wantTrialRuns each trial's cases among them (nil: every trial runs
		// every case of wantRun).
		wantRun       []string
		wantTrialRuns [][]podwire.CaseSpan
		wantRanTrials int
		wantCarried   []string
		wantIgnored   int
	}{
		{name: "one trial, Missing: every result with a record is carried", trials: 1, mode: evalsv1alpha1.ResumeMissing,
			stored:  []storedResult{"a/0=Pass", "b/0=Fail", "c/0=Missing"},
			wantRun: []string{"c", "d"}, wantRanTrials: 2, wantCarried: []string{"a/1=Pass@src", "b/1=Fail@src"}},
		{name: "one trial, NotPassed: only passing results are carried", trials: 1, mode: evalsv1alpha1.ResumeNotPassed,
			stored:  []storedResult{"a/0=Pass", "b/0=Fail", "c/0=Missing", "d/0=Skipped"},
			wantRun: []string{"b", "c", "d"}, wantRanTrials: 3, wantCarried: []string{"a/1=Pass@src"}},
		{name: "three trials, Missing: each trial without a result runs, the others are carried with their trials", trials: 3,
			mode: evalsv1alpha1.ResumeMissing,
			stored: []storedResult{"a/0=Pass", "a/2=Pass", "a/3=Pass", "b/1=Pass", "b/2=Missing", "d/1=Fail", "d/2=Pass", "d/3=Error",
				"c/4=Pass"},
			wantRun: []string{"b", "c"}, wantRanTrials: 5,
			// Trial 1 runs c only; trials 2 and 3 run b and c.
			wantTrialRuns: [][]podwire.CaseSpan{{{1, 2}}, {{0, 2}}, {{0, 2}}},
			wantCarried:   []string{"a/1=Pass@src", "a/2=Pass@src", "a/3=Pass@src", "b/1=Pass@src", "d/1=Fail@src", "d/2=Pass@src", "d/3=Error@src"},
			wantIgnored:   1},
		{name: "three trials, NotPassed: every trial of a case that did not pass runs, never only its failed ones", trials: 3,
			mode: evalsv1alpha1.ResumeNotPassed,
			stored: []storedResult{"a/1=Pass", "a/2=Pass", "a/3=Pass", "b/1=Pass", "b/2=Pass", "b/3=Fail", "c/1=Pass", "c/2=Pass",
				"d/1=Fail", "d/2=Fail", "d/3=Fail"},
			wantRun: []string{"b", "c", "d"}, wantRanTrials: 9, wantCarried: []string{"a/1=Pass@src", "a/2=Pass@src", "a/3=Pass@src"}},
		{name: "three trials at 0.6, NotPassed: a passing case keeps its failed trial and runs the one without a result",
			trials: 3, passRate: "0.6", mode: evalsv1alpha1.ResumeNotPassed,
			stored: []storedResult{"a/1=Pass", "a/2=Fail", "a/3=Pass", "b/1=Pass", "b/2=Pass", "c/1=Pass", "c/2=Fail", "c/3=Error",
				"d/1=Skipped", "d/2=Pass", "d/3=Skipped"},
			wantRun: []string{"b", "c"}, wantRanTrials: 4,
			wantTrialRuns: [][]podwire.CaseSpan{{{1, 2}}, {{1, 2}}, {{0, 2}}},
			wantCarried: []string{"a/1=Pass@src", "a/2=Fail@src", "a/3=Pass@src", "b/1=Pass@src", "b/2=Pass@src",
				"d/1=Skipped@src", "d/2=Pass@src", "d/3=Skipped@src"}},
		{name: "hostile: duplicates, trials out of range, an unknown case; the first result of a trial counts", trials: 3,
			mode: evalsv1alpha1.ResumeNotPassed,
			stored: []storedResult{"a/1=Pass", "a/1=Fail", "a/2=Pass", "a/3=Pass", "a/0=Fail", "b/1=Fail", "b/1=Pass", "b/2=Pass", "b/3=Pass",
				"c/-1=Pass", "c/4=Pass", "c/101=Pass", "c/1=Pass", "c/2=Pass", "c/3=Pass", "zz/1=Pass", "d/3=Missing", "d/3=Pass",
				"d/1=Pass", "d/2=Pass"},
			wantRun: []string{"b", "d"}, wantRanTrials: 6,
			wantCarried: []string{"a/1=Pass@src", "a/2=Pass@src", "a/3=Pass@src", "c/1=Pass@src", "c/2=Pass@src", "c/3=Pass@src"},
			wantIgnored: 8},
		{name: "hostile, Missing: a result stored as missing first leaves its trial to run", trials: 3, mode: evalsv1alpha1.ResumeMissing,
			stored:  []storedResult{"a/1=Missing", "a/1=Pass", "a/2=Pass", "a/3=Pass", "b/1=Pass", "b/2=Pass", "b/3=Pass", "c/1=Pass", "c/2=Pass", "c/3=Pass", "d/1=Pass", "d/2=Pass", "d/3=Pass"},
			wantRun: []string{"a"}, wantRanTrials: 1, wantTrialRuns: [][]podwire.CaseSpan{{{0, 1}}, nil, nil},
			wantCarried: []string{"a/2=Pass@src", "a/3=Pass@src", "b/1=Pass@src", "b/2=Pass@src", "b/3=Pass@src", "c/1=Pass@src", "c/2=Pass@src",
				"c/3=Pass@src", "d/1=Pass@src", "d/2=Pass@src", "d/3=Pass@src"},
			wantIgnored: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rule, err := results.ParseTrialRule(int32(tt.trials), tt.passRate)
			if err != nil {
				t.Fatal(err)
			}
			s := newResumeSelector(ids, rule, tt.mode, "src")
			for _, st := range tt.stored {
				if err := s.add(st.line(t)); err != nil {
					t.Fatal(err)
				}
			}
			sel := s.finish()
			if diff := cmp.Diff(tt.wantRun, sel.Run); diff != "" {
				t.Errorf("cases run (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantTrialRuns, sel.TrialRuns); diff != "" {
				t.Errorf("trial runs (-want +got):\n%s", diff)
			}
			var carried []string
			for _, l := range sel.Lines {
				carried = append(carried, carriedLine(t, l))
			}
			if diff := cmp.Diff(tt.wantCarried, carried); diff != "" {
				t.Errorf("carried (-want +got):\n%s", diff)
			}
			if sel.RanTrials != tt.wantRanTrials || sel.Ignored != tt.wantIgnored {
				t.Errorf("ran %d trials, ignored %d results; want %d and %d", sel.RanTrials, sel.Ignored, tt.wantRanTrials, tt.wantIgnored)
			}
			for i, id := range ids {
				if sel.Keep[i] != slices.Contains(tt.wantRun, id) {
					t.Errorf("keep[%d] (%s) = %v", i, id, sel.Keep[i])
				}
			}
		})
	}
}

// TestResumeSelectionKeepsCarriedFrom: a result the source itself carried keeps the run it came from, and every
// carried result keeps its trial (omitted for the first, as stored).
func TestResumeSelectionKeepsCarriedFrom(t *testing.T) {
	rule, err := results.ParseTrialRule(2, "")
	if err != nil {
		t.Fatal(err)
	}
	s := newResumeSelector([]string{"a"}, rule, evalsv1alpha1.ResumeMissing, "second")
	first := &results.Line{CaseResult: verdict.CaseResult{ID: "a", Verdict: verdict.VerdictPass, Score: 1}, CarriedFrom: "first"}
	if err := s.add(first); err != nil {
		t.Fatal(err)
	}
	if err := s.add(&results.Line{CaseResult: verdict.CaseResult{ID: "a", Verdict: verdict.VerdictFail}, Trial: 2}); err != nil {
		t.Fatal(err)
	}
	sel := s.finish()
	var got []string
	for _, l := range sel.Lines {
		got = append(got, string(l))
	}
	want := []string{`{"id":"a","score":1,"verdict":"Pass","carriedFrom":"first"}`, `{"id":"a","score":0,"verdict":"Fail","carriedFrom":"second","trial":2}`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("carried lines (-want +got):\n%s", diff)
	}
	if len(sel.Run) != 0 {
		t.Errorf("ran %v", sel.Run)
	}
}

// TestResumeMismatch: a resume of a source with other trials, or judged another way, is refused naming both sides.
func TestResumeMismatch(t *testing.T) {
	base := podwire.RunConfig{PassThreshold: "0.8"}
	three := base
	three.Trials = 3
	otherJudging := three
	otherJudging.PassThreshold = "0.9"
	for _, tc := range []struct {
		name        string
		there, here podwire.RunConfig
		want        string
	}{
		{name: "the same", there: three, here: three},
		{name: "one trial each", there: base, here: base},
		{name: "3 trials there, 1 here", there: three, here: base,
			want: "EvalRun nightly answered every case 3 times (its trials.count); this run's spec.trials.count is 1"},
		{name: "1 trial there, 3 here", there: base, here: three,
			want: "EvalRun nightly answered every case 1 times (its trials.count); this run's spec.trials.count is 3"},
		{name: "other judging", there: three, here: otherJudging, want: `spec.judging.passThreshold is "0.8" there, "0.9" here`},
	} {
		if got := resumeMismatch("nightly", tc.there, tc.here); (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
