package check

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/evalrun-operator/evalrun-operator/internal/bundle"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// judgedCase is the judging part of a case in the JSON document.
type judgedCase struct {
	ID            string
	Verdict       verdict.Verdict
	Score         float64
	VerdictReason string
	Evaluators    []string // name=verdict
}

func judgedCases(t *testing.T, stdout string) ([]judgedCase, map[string]any, []verdict.EvaluatorResult) {
	t.Helper()
	var doc struct {
		Cases []struct {
			ID            string                    `json:"id"`
			Verdict       verdict.Verdict           `json:"verdict"`
			Score         *float64                  `json:"score"`
			VerdictReason string                    `json:"verdictReason"`
			Evaluators    []verdict.EvaluatorResult `json:"evaluators"`
		} `json:"cases"`
		Summary map[string]any `json:"summary"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("not a JSON document: %v\n%s", err, stdout)
	}
	var out []judgedCase
	var all []verdict.EvaluatorResult
	for _, c := range doc.Cases {
		if c.Score == nil {
			t.Errorf("case %s has no score", c.ID)
			continue
		}
		jc := judgedCase{ID: c.ID, Verdict: c.Verdict, Score: *c.Score, VerdictReason: c.VerdictReason}
		for _, e := range c.Evaluators {
			jc.Evaluators = append(jc.Evaluators, e.Name+"="+string(e.Verdict))
			all = append(all, e)
		}
		out = append(out, jc)
	}
	return out, doc.Summary, all
}

func TestCheckJudgesWithEval(t *testing.T) {
	evalPath, outPath := fixture("judging/eval.yaml"), fixture("judging/output.jsonl")
	notRun := "code_judge scripts do not run here (collector check runs them with --run-code-judges)"
	summary := func(passed, failed, errored, skipped, judged float64, mean, median, min, max float64, hist []any) map[string]any {
		return map[string]any{
			"requested": 4.0, "present": 3.0, "missing": 1.0, "parseErrors": 0.0, "unexpected": 0.0,
			"total": 4.0, "passed": passed, "failed": failed, "errored": errored, "skipped": skipped, "judged": judged,
			"meanScore": mean, "medianScore": median, "minScore": min, "maxScore": max, "histogram": hist,
		}
	}
	tests := []struct {
		name        string
		args        []string
		wantCases   []judgedCase
		wantSummary map[string]any
	}{
		{
			name: "built-in evaluators only",
			args: []string{"--mode", "batch", "--eval", evalPath, "--output", outPath},
			wantCases: []judgedCase{
				{ID: "clear", Verdict: verdict.VerdictPass, Score: 1, Evaluators: []string{"decision=Pass", "tools=Pass", "judge=Skipped"}},
				{ID: "review", Verdict: verdict.VerdictFail, Score: 0, Evaluators: []string{"decision=Fail"}},
				{ID: "crash", Verdict: verdict.VerdictSkipped, VerdictReason: "no evaluator could judge the case: judge: " + notRun,
					Evaluators: []string{"judge=Skipped"}},
				{ID: "absent", Verdict: verdict.VerdictError, VerdictReason: "the runner produced no record for this case"},
			},
			wantSummary: summary(1, 1, 1, 1, 2, 0.5, 0.5, 0, 1, []any{1.0, 0.0, 0.0, 0.0, 1.0}),
		},
		{
			name: "code judges run locally",
			args: []string{"--mode", "batch", "--eval", evalPath, "--output", outPath, "--run-code-judges"},
			wantCases: []judgedCase{
				{ID: "clear", Verdict: verdict.VerdictPass, Score: 1, Evaluators: []string{"decision=Pass", "tools=Pass", "judge=Pass"}},
				{ID: "review", Verdict: verdict.VerdictFail, Score: 0, Evaluators: []string{"decision=Fail"}},
				{ID: "crash", Verdict: verdict.VerdictError, Evaluators: []string{"judge=Error"}},
				{ID: "absent", Verdict: verdict.VerdictError, VerdictReason: "the runner produced no record for this case"},
			},
			wantSummary: summary(1, 1, 2, 0, 2, 0.5, 0.5, 0, 1, []any{1.0, 0.0, 0.0, 0.0, 1.0}),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runMain(t, tc.args...)
			if code != ExitFailed { // the absent case fails the output check
				t.Errorf("exit code = %d, want %d; stderr:\n%s", code, ExitFailed, stderr)
			}
			cases, gotSummary, evaluators := judgedCases(t, stdout)
			var crashReason string
			for i := range cases {
				if cases[i].ID == "crash" && cases[i].Verdict == verdict.VerdictError {
					crashReason, cases[i].VerdictReason = cases[i].VerdictReason, ""
				}
			}
			if diff := cmp.Diff(tc.wantCases, cases); diff != "" {
				t.Errorf("cases (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantSummary, gotSummary); diff != "" {
				t.Errorf("summary (-want +got):\n%s", diff)
			}
			if crashReason != "" && (!strings.HasPrefix(crashReason, `evaluator "judge" failed: the judge exited with status 5 after `) ||
				!strings.HasSuffix(crashReason, "; stderr: judge crashed on purpose")) {
				t.Errorf("crash reason = %q", crashReason)
			}
			for _, e := range evaluators {
				if e.Name == "judge" && e.Verdict == verdict.VerdictPass {
					if diff := cmp.Diff([]string{"decision is CLEAR"}, e.Hits); diff != "" || e.Reasoning != "matches" {
						t.Errorf("judge result: hits %v, reasoning %q", e.Hits, e.Reasoning)
					}
				}
			}

			// The summary format counts the same judgements without keeping the cases.
			code, stdout, _ = runMain(t, append(tc.args, "--format", "summary")...)
			var doc struct {
				Summary map[string]any `json:"summary"`
			}
			if err := json.Unmarshal([]byte(stdout), &doc); err != nil || code != ExitFailed {
				t.Fatalf("summary format: exit %d, %v\n%s", code, err, stdout)
			}
			if diff := cmp.Diff(tc.wantSummary, doc.Summary); diff != "" {
				t.Errorf("summary format (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheckJudgingTable(t *testing.T) {
	_, stdout, _ := runMain(t, "--mode", "batch", "--eval", fixture("judging/eval.yaml"), "--output", fixture("judging/output.jsonl"),
		"--format", "table")
	want := `ID      STATUS   VERDICT  SCORE   LINE  TRACE  MESSAGES  TEXT
clear   ok       Pass     1.0000  1     0      1         {"decision":"CLEAR"}
review  ok       Fail     0.0000  2     0      0         {"decision":"CLEAR"}
crash   ok       Skipped  -       3     0      0         whatever
absent  missing  Error    -       -     0      0         

Missing ids (1):
  absent

requested 4, present 3, missing 1, unexpected 0, line errors 0
judged: passed 1, failed 1, errored 1, skipped 1; score mean 0.5000, median 0.5000, min 0.0000, max 1.0000
FAILED: batch output failed: 1 requested id is missing (absent)
`
	if diff := cmp.Diff(want, stdout); diff != "" {
		t.Errorf("table (-want +got):\n%s", diff)
	}
}

func TestRunCodeJudgesNeedsEval(t *testing.T) {
	code, _, stderr := runMain(t, "--mode", "batch", "--ids", "a", "--output", fixture("batch-ok.jsonl"), "--run-code-judges")
	if code != ExitUsage || !strings.Contains(stderr, "--run-code-judges needs --eval") {
		t.Errorf("exit code %d, stderr %q", code, stderr)
	}
}

// The EvalRun's judging settings make a local check give the in-cluster verdicts: judging.evaluators judge a case
// that declares none, and the pass threshold moves a verdict.
func TestCheckJudgingSettings(t *testing.T) {
	dir := t.TempDir()
	evalPath := filepath.Join(dir, "eval.yaml")
	outPath := filepath.Join(dir, "out.jsonl")
	mustWriteFile(t, evalPath, "evalcases:\n  - id: a\n    input_messages: [{role: user, content: q}]\n")
	mustWriteFile(t, outPath, `{"id":"a","text":"x"}`+"\n")
	judging := filepath.Join(dir, "judging.yaml")
	mustWriteFile(t, judging, "evaluators:\n  - {name: half, type: code_judge, script: \"cat >/dev/null; echo '{\\\"score\\\": 0.5}'\"}\n")
	check := func(extra ...string) judgedCase {
		t.Helper()
		var stdout, stderr strings.Builder
		args := append([]string{"--mode", "batch", "--eval", evalPath, "--output", outPath, "--run-code-judges"}, extra...)
		Main(context.Background(), args, &stdout, &stderr)
		cases, _, _ := judgedCases(t, stdout.String())
		if len(cases) != 1 {
			t.Fatalf("cases %+v (stderr %s)", cases, stderr.String())
		}
		return cases[0]
	}
	if got := check(); got.Verdict != verdict.VerdictSkipped {
		t.Errorf("without judging settings: %+v, want Skipped (no evaluator)", got)
	}
	for _, tc := range []struct {
		threshold string
		want      verdict.Verdict
	}{{"0.4", verdict.VerdictPass}, {"0.6", verdict.VerdictFail}} {
		got := check("--judging", judging, "--pass-threshold", tc.threshold)
		if got.Verdict != tc.want || got.Score != 0.5 || len(got.Evaluators) != 1 {
			t.Errorf("judging.evaluators with threshold %s: %+v, want %s at score 0.5", tc.threshold, got, tc.want)
		}
	}
	var stderr strings.Builder
	if code := Main(context.Background(), []string{"--mode", "batch", "--ids", "a", "--output", outPath, "--pass-threshold", "0.5"}, &strings.Builder{}, &stderr); code != ExitUsage {
		t.Errorf("--pass-threshold without --eval: exit %d, want %d", code, ExitUsage)
	}
	if code := Main(context.Background(), []string{"--mode", "batch", "--eval", evalPath, "--output", outPath, "--pass-threshold", "2"}, &strings.Builder{}, &stderr); code != ExitUsage {
		t.Errorf("--pass-threshold 2: exit %d, want %d", code, ExitUsage)
	}
}

func mustWriteFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// --judging takes any valid spec.judging (the code judge timeout applies to local scripts) or a whole EvalRun
// manifest; an unknown field is a usage error that says what is wanted.
func TestCheckJudgingFileShapes(t *testing.T) {
	dir := t.TempDir()
	evalPath := filepath.Join(dir, "eval.yaml")
	outPath := filepath.Join(dir, "out.jsonl")
	mustWriteFile(t, evalPath, "evalcases:\n  - id: a\n    input_messages: [{role: user, content: q}]\n")
	mustWriteFile(t, outPath, `{"id":"a","text":"x"}`+"\n")
	slow := `{name: slow, type: code_judge, script: "sleep 5; echo '{\"score\": 1}'"}`
	block := filepath.Join(dir, "judging.yaml")
	mustWriteFile(t, block, "passThreshold: \"0.5\"\ncodeJudgeTimeoutSeconds: 1\ncodeJudgeWorkers: 4\nimage: judge:dev\nevaluators:\n  - "+slow+"\n")
	manifest := filepath.Join(dir, "evalrun.yaml")
	mustWriteFile(t, manifest, "apiVersion: evals.evalrun.io/v1alpha1\nkind: EvalRun\nmetadata: {name: r}\nspec:\n"+
		"  evalFile: {inline: \"x\"}\n  target: {image: runner:dev, commandTemplate: \"r {OUTPUT_FILE}\"}\n"+
		"  judging:\n    codeJudgeTimeoutSeconds: 1\n    evaluators:\n      - "+slow+"\n")
	for _, path := range []string{block, manifest} {
		var stdout, stderr strings.Builder
		Main(context.Background(), []string{"--mode", "batch", "--eval", evalPath, "--output", outPath, "--run-code-judges", "--judging", path}, &stdout, &stderr)
		cases, _, evs := judgedCases(t, stdout.String())
		if len(cases) != 1 || cases[0].Verdict != verdict.VerdictError || len(evs) != 1 || !strings.Contains(strings.Join(evs[0].Misses, " "), "timed out") {
			t.Errorf("%s: cases %+v evaluators %+v (stderr %s), want the slow judge timed out (codeJudgeTimeoutSeconds 1; the default 60 s would let it pass)", filepath.Base(path), cases, evs, stderr.String())
		}
	}
	bad := filepath.Join(dir, "bad.yaml")
	mustWriteFile(t, bad, "passThreshold: \"0.5\"\nthreshold: 1\n")
	var stderr strings.Builder
	if code := Main(context.Background(), []string{"--mode", "batch", "--eval", evalPath, "--output", outPath, "--judging", bad}, &strings.Builder{}, &stderr); code != ExitUsage ||
		!strings.Contains(stderr.String(), `unknown field "threshold"`) || !strings.Contains(stderr.String(), "spec.judging") {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
}

// TestBundleDir: --bundle DIR must hold --eval; the eval file's path inside it is where references resolve from.
func TestBundleDir(t *testing.T) {
	root := t.TempDir()
	abs := func(p string) string { return filepath.Join(root, filepath.FromSlash(p)) }
	for _, tc := range []struct {
		name, bundle, eval string
		want               bundle.Dir
		wantErr            string
	}{
		{name: "no --bundle: the eval file's directory", eval: abs("suites/eval.yaml"),
			want: bundle.Dir{Root: abs("suites"), EvalFile: "eval.yaml"}},
		{name: "the eval file deeper in the bundle", bundle: root, eval: abs("suites/math/eval.yaml"),
			want: bundle.Dir{Root: root, EvalFile: "suites/math/eval.yaml"}},
		{name: "a bundle given with dot-dots", bundle: abs("suites/.."), eval: abs("suites/eval.yaml"),
			want: bundle.Dir{Root: root, EvalFile: "suites/eval.yaml"}},
		{name: "the eval file outside the bundle", bundle: abs("suites"), eval: abs("other/eval.yaml"),
			wantErr: "--eval " + abs("other/eval.yaml") + " is not inside --bundle " + abs("suites")},
		{name: "the eval file in the bundle's parent", bundle: abs("suites"), eval: abs("eval.yaml"),
			wantErr: "is not inside --bundle"},
		{name: "a sibling whose name starts like the bundle's", bundle: abs("suites"), eval: abs("suites-evil/eval.yaml"),
			wantErr: "is not inside --bundle"},
		{name: "the eval file reached through dot-dots", bundle: abs("suites"), eval: abs("suites/../other/eval.yaml"),
			wantErr: "is not inside --bundle"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := bundleDir(tc.bundle, tc.eval)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("bundleDir = %+v, %v; want an error containing %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("bundleDir (-want +got):\n%s", diff)
			}
		})
	}
	// Through the command: a usage error with the message, nothing judged.
	evalPath := abs("other/eval.yaml")
	if err := os.MkdirAll(filepath.Dir(evalPath), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(evalPath, []byte("evalcases:\n  - {id: a, expected_outcome: x, input_messages: [{role: user, content: q}]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runMain(t, "--mode", "batch", "--eval", evalPath, "--bundle", abs("suites"), "--output", fixture("batch-ok.jsonl"))
	if code != ExitUsage || stdout != "" || !strings.Contains(stderr, "is not inside --bundle") {
		t.Errorf("collector check with the eval file outside --bundle: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}
