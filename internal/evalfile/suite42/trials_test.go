package suite42

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
)

// trialsSuite is a suite of two tests whose execution is exec (indented under execution:).
func trialsSuite(exec string) string {
	return "execution:\n" + exec + "tests:\n  - {id: a, input: q, criteria: c}\n  - {id: b, input: r, criteria: d}\n"
}

// TestSuite42Trials: the suite's execution.trials are read as AgentV 4.42 reads them (count, strategy pass_at_k),
// as the EvalRun's trials: count trials, passing a case when any passes (passRate 1/count rounded down); no count,
// or count 1, is one trial (no trials), what else is then written warned about as AgentV ignores it.
func TestSuite42Trials(t *testing.T) {
	for _, tc := range []struct {
		name, exec string
		want       *evalfile.FileTrials
		warnings   []string
	}{
		{name: "no trials", exec: "  target: runner\n"},
		{name: "trials null", exec: "  trials:\n"},
		{name: "count 3", exec: "  trials: {count: 3}\n", want: &evalfile.FileTrials{Count: 3, PassRate: "0.333333", Line: 2}},
		{name: "pass_at_k", exec: "  target: runner\n  trials:\n    count: 2\n    strategy: pass_at_k\n",
			want: &evalfile.FileTrials{Count: 2, PassRate: "0.5", Line: 4}},
		{name: "count 7", exec: "  trials: {count: 7, strategy: pass_at_k}\n", want: &evalfile.FileTrials{Count: 7, PassRate: "0.142857", Line: 2}},
		{name: "count 100", exec: "  trials: {count: 100}\n", want: &evalfile.FileTrials{Count: 100, PassRate: "0.01", Line: 2}},
		{name: "a whole number written as a decimal", exec: "  trials: {count: 4.0}\n", want: &evalfile.FileTrials{Count: 4, PassRate: "0.25", Line: 2}},
		{name: "count 1", exec: "  trials: {count: 1}\n"},
		{name: "count 1 with a strategy and a cost limit", exec: "  trials:\n    count: 1\n    strategy: mean\n    cost_limit_usd: 2\n",
			warnings: []string{"4 execution.trials.strategy: ignored: with count 1 AgentV 4.42 answers each test once",
				"5 execution.trials.cost_limit_usd: ignored: with count 1 AgentV 4.42 answers each test once"}},
		{name: "no count", exec: "  trials: {strategy: confidence_interval, costLimitUsd: 1}\n",
			warnings: []string{"2 execution.trials.strategy: ignored: without a count AgentV 4.42 answers each test once",
				"2 execution.trials.costLimitUsd: ignored: without a count AgentV 4.42 answers each test once"}},
		{name: "an unknown key", exec: "  trials:\n    count: 3\n    early_exit: false\n",
			want:     &evalfile.FileTrials{Count: 3, PassRate: "0.333333", Line: 3},
			warnings: []string{`4 execution.trials.early_exit: unknown execution.trials key "early_exit": AgentV 4.42 ignores it`}},
		{name: "an anchored mapping", exec: "  trials: &t {count: 5}\n", want: &evalfile.FileTrials{Count: 5, PassRate: "0.2", Line: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := mustParseSuite(t, trialsSuite(tc.exec), nil)
			if diff := cmp.Diff(tc.want, f.Trials); diff != "" {
				t.Errorf("trials (-want +got):\n%s", diff)
			}
			var warnings []string
			for _, w := range f.Warnings {
				msg := w.Message
				if i := strings.Index(msg, " once"); i >= 0 {
					msg = msg[:i+len(" once")]
				}
				warnings = append(warnings, fmt.Sprintf("%d %s: %s", w.Line, w.Path, msg))
			}
			if diff := cmp.Diff(tc.warnings, warnings); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
			// The tests are the same whatever the trials: each is one case.
			if diff := cmp.Diff([]string{"a", "b"}, f.CaseIDs()); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSuite42TrialsRefused: what the operator cannot honour of execution.trials, and what AgentV 4.42 warns about
// and ignores, is refused with its key and line.
func TestSuite42TrialsRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		text string
		want []wantProblem
	}{
		{name: "not a mapping", text: trialsSuite("  trials: 3\n"),
			want: []wantProblem{{Line: 2, Path: "execution.trials", Contains: "must be a mapping such as {count: 3}, got 3"}}},
		{name: "count 0", text: trialsSuite("  trials: {count: 0}\n"),
			want: []wantProblem{{Line: 2, Path: "execution.trials.count", Contains: "must be a whole number of trials from 1 to 100, got 0 (AgentV 4.42 warns"}}},
		{name: "a negative count", text: trialsSuite("  trials:\n    count: -2\n"),
			want: []wantProblem{{Line: 3, Path: "execution.trials.count", Contains: "got -2"}}},
		{name: "a fractional count", text: trialsSuite("  trials:\n    count: 2.5\n"),
			want: []wantProblem{{Line: 3, Path: "execution.trials.count", Contains: "got 2.5"}}},
		{name: "a count as a string", text: trialsSuite("  trials:\n    count: '3'\n"),
			want: []wantProblem{{Line: 3, Path: "execution.trials.count", Contains: `got "3"`}}},
		{name: "a count as a boolean", text: trialsSuite("  trials:\n    count: true\n"),
			want: []wantProblem{{Line: 3, Path: "execution.trials.count", Contains: "got true"}}},
		{name: "a count above the bound", text: trialsSuite("  trials:\n    count: 101\n"),
			want: []wantProblem{{Line: 3, Path: "execution.trials.count", Contains: "must be at most 100, got 101: the EvalRun's spec.trials.count"}}},
		{name: "strategy mean", text: trialsSuite("  trials:\n    count: 3\n    strategy: mean\n"),
			want: []wantProblem{{Line: 4, Path: "execution.trials.strategy", Contains: "not supported: strategy mean decides a test by an aggregate " +
				"of its trials' scores; the operator decides a case by its pass rate over its trials (the EvalRun's spec.trials.passRate)"}}},
		{name: "strategy confidence_interval", text: trialsSuite("  trials:\n    count: 3\n    strategy: confidence_interval\n"),
			want: []wantProblem{{Line: 4, Path: "execution.trials.strategy", Contains: "strategy confidence_interval decides a test by an aggregate"}}},
		{name: "an unknown strategy", text: trialsSuite("  trials: {count: 3, strategy: best_of}\n"),
			want: []wantProblem{{Line: 2, Path: "execution.trials.strategy", Contains: `must be pass_at_k, got "best_of" (AgentV 4.42 knows pass_at_k, ` +
				"mean and confidence_interval, and warns and uses pass_at_k for any other value; the operator refuses it)"}}},
		{name: "a strategy that is not a string", text: trialsSuite("  trials: {count: 3, strategy: [pass_at_k]}\n"),
			want: []wantProblem{{Line: 2, Path: "execution.trials.strategy", Contains: "got an array"}}},
		{name: "cost_limit_usd", text: trialsSuite("  trials:\n    count: 3\n    cost_limit_usd: 1.5\n"),
			want: []wantProblem{{Line: 4, Path: "execution.trials.cost_limit_usd", Contains: "bounds the run's cost with the EvalRun's spec.target.maxCostUSD"}}},
		{name: "costLimitUsd", text: trialsSuite("  trials:\n    count: 3\n    costLimitUsd: 1.5\n"),
			want: []wantProblem{{Line: 4, Path: "execution.trials.costLimitUsd", Contains: "spec.target.maxCostUSD"}}},
		{name: "every refusal at once", text: trialsSuite("  trials:\n    count: 3\n    strategy: mean\n    cost_limit_usd: 0\n    costLimitUsd: 1\n"),
			want: []wantProblem{{Line: 4, Path: "execution.trials.strategy", Contains: "strategy mean"},
				{Line: 5, Path: "execution.trials.cost_limit_usd", Contains: "cost limit"},
				{Line: 6, Path: "execution.trials.costLimitUsd", Contains: "cost limit"}}},
		{name: "a test's own trials", text: "tests:\n  - id: a\n    input: q\n    criteria: c\n    execution:\n      trials: {count: 1}\n",
			want: []wantProblem{{Line: 6, Path: "tests[0].execution.trials", Contains: "AgentV 4.42 reads trials at the suite level only"}}},
		{name: "a test's trials in a tests file", text: "execution: {trials: {count: 2}}\ntests: ./cases.jsonl\n",
			want: []wantProblem{{File: "evals/cases.jsonl", Line: 2, Path: "tests[1].execution.trials", Contains: "at the suite level only"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{"evals/cases.jsonl": `{"id": "a", "input": "q", "criteria": "c"}` + "\n" +
				`{"id": "b", "input": "q", "criteria": "c", "execution": {"trials": {"count": 3}}}` + "\n"}
			_, err := parseSuite(tc.text, files)
			if err == nil {
				t.Fatal("Parse accepted the suite")
			}
			if diff := cmp.Diff(tc.want, problemsOf(t, err, tc.want)); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

// passRatePattern is spec.trials.passRate's CEL pattern (api/v1alpha1, Trials.PassRate) with its MaxLength (8).
var passRatePattern = regexp.MustCompile(`^(0[.][0-9]{0,5}[1-9][0-9]{0,5}|1([.]0{1,6})?)$`)

// TestPassAtKRateIsAPassRate: pass_at_k's pass rate, for every count a suite may ask for, is one the API would
// take for spec.trials.passRate; that it asks for exactly one passed trial is checked against the verdict rule in
// internal/manager/children (TestEffectiveTrials).
func TestPassAtKRateIsAPassRate(t *testing.T) {
	for n := 1; n <= evalfile.MaxTrials; n++ {
		r := evalfile.PassAtKRate(n)
		if len(r) > 8 || !passRatePattern.MatchString(r) {
			t.Errorf("PassAtKRate(%d) = %q: not a spec.trials.passRate", n, r)
		}
	}
	if got := evalfile.TrialsPassAtK(1); got != nil {
		t.Errorf("TrialsPassAtK(1) = %+v, want no trials", got)
	}
}

// TestSuite42TrialsScanned: a suite's trials are in the facts Scan gives (the manager reads a bucket object's
// with Scan), and survive Subset (the pods' shards).
func TestSuite42TrialsScanned(t *testing.T) {
	text := trialsSuite("  trials: {count: 3}\n")
	x, err := evalfile.Scan(bytes.NewReader([]byte(text)))
	if err != nil {
		t.Fatal(err)
	}
	want := &evalfile.FileTrials{Count: 3, PassRate: "0.333333", Line: 2}
	if diff := cmp.Diff(want, x.Trials); diff != "" {
		t.Errorf("Scan's trials (-want +got):\n%s", diff)
	}
	sub, err := evalfile.Subset([]byte(text), func(i int) bool { return i == 1 })
	if err != nil {
		t.Fatal(err)
	}
	f, err := evalfile.Parse(sub)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, f.Trials); diff != "" || f.NumCases() != 1 {
		t.Errorf("the shard's trials (-want +got):\n%s", diff)
	}
	// One trial: no trials in the facts either.
	x, err = evalfile.Scan(bytes.NewReader([]byte(trialsSuite("  trials: {count: 1}\n"))))
	if err != nil || x.Trials != nil {
		t.Errorf("Scan of one trial = %+v, %v", x, err)
	}
}
