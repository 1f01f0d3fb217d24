package plugin

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/cli/report"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// screeningLines are the stored results of the sample's shape: ten cases, decision (field_accuracy) and
// trajectory (tool_trajectory) evaluators; fail lists the cases that fail, errs those that error, missing those
// the runner gave no record for.
func screeningLines(fail, errs, missing []string) []*results.Line {
	var out []*results.Line
	for i := 1; i <= 10; i++ {
		id := fmt.Sprintf("case-%03d", i)
		dur := float64(900 + 10*i)
		l := &results.Line{CaseResult: verdict.CaseResult{ID: id, Verdict: verdict.VerdictPass, Score: 1,
			Evaluators: []verdict.EvaluatorResult{
				{Name: "decision", Type: "field_accuracy", Verdict: verdict.VerdictPass, Score: 1, Hits: []string{"decision"}, Weight: 1},
				{Name: "trajectory", Type: "tool_trajectory", Verdict: verdict.VerdictPass, Score: 1, Weight: 1},
			}}, Answer: `{"decision":"CLEAR"}`, Line: int64(i), DurationMs: &dur}
		switch {
		case contains(fail, id):
			l.Verdict, l.Score = verdict.VerdictFail, 0.5
			l.Evaluators[0].Verdict, l.Evaluators[0].Score = verdict.VerdictFail, 0
			l.Evaluators[0].Hits, l.Evaluators[0].Misses = nil, []string{`decision: expected "REVIEW", got "CLEAR"`}
		case contains(errs, id):
			l.Verdict, l.Score, l.Evaluators, l.Error = verdict.VerdictError, 0, nil, "answer is not a JSON object"
		case contains(missing, id):
			l = &results.Line{CaseResult: verdict.MissingCase(id)}
		}
		out = append(out, l)
	}
	return out
}

func contains(ids []string, id string) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

func TestResultsReadsEveryStoredCase(t *testing.T) {
	ns := newNamespace(t)
	storedRun(t, ns, "screening", screeningLines([]string{"case-004", "case-007"}, []string{"case-009"}, nil), 2, nil)

	out, _, err := kubectlEvalrun(t, ns, "results", "screening")
	if err != nil {
		t.Fatal(err)
	}
	want := `ID         VERDICT   SCORE    EVALUATORS                      MESSAGE
case-004   Fail      0.5000   decision=Fail,trajectory=Pass   decision: decision: expected "REVIEW", got "CLEAR"
case-007   Fail      0.5000   decision=Fail,trajectory=Pass   decision: decision: expected "REVIEW", got "CLEAR"
case-009   Error     -        -                               answer is not a JSON object
case-001   Pass      1.0000   decision=Pass,trajectory=Pass   -
case-002   Pass      1.0000   decision=Pass,trajectory=Pass   -
case-003   Pass      1.0000   decision=Pass,trajectory=Pass   -
case-005   Pass      1.0000   decision=Pass,trajectory=Pass   -
case-006   Pass      1.0000   decision=Pass,trajectory=Pass   -
case-008   Pass      1.0000   decision=Pass,trajectory=Pass   -
case-010   Pass      1.0000   decision=Pass,trajectory=Pass   -
`
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}

	out, _, err = kubectlEvalrun(t, ns, "results", "screening", "--verdict", "fail,error", "--id", "00[79]$", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var doc report.Cases
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("-o json: %v\n%s", err, out)
	}
	var got []string
	for _, l := range doc.Cases {
		got = append(got, l.ID+"="+string(l.Verdict))
	}
	if diff := cmp.Diff([]string{"case-007=Fail", "case-009=Error"}, got); diff != "" || doc.Stored != 10 || doc.Selected != 2 {
		t.Errorf("-o json: stored %d selected %d, cases (-want +got):\n%s", doc.Stored, doc.Selected, diff)
	}

	out, _, err = kubectlEvalrun(t, ns, "results", "screening", "--evaluator", "tool_trajectory", "--verdict", "Fail", "-o", "yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "selected: 2\n") || !strings.Contains(out, "- answer: '{\"decision\":\"CLEAR\"}'") {
		t.Errorf("-o yaml:\n%s", out)
	}

	_, errOut, err := kubectlEvalrun(t, ns, "results", "screening", "--id", "^nothing")
	if err != nil || errOut != "No cases of 10 stored match.\n" {
		t.Errorf("no match: err %v, stderr %q", err, errOut)
	}
}

func TestResultsErrors(t *testing.T) {
	ns := newNamespace(t)
	c, _ := apiServer(t)
	storedRun(t, ns, "running", screeningLines(nil, nil, nil), 1, func(r *evalsv1alpha1.EvalRun) {
		r.Status.Results = nil
	})
	storedRun(t, ns, "gone", screeningLines(nil, nil, nil), 1, nil)
	if err := c.Delete(t.Context(), configMap(ns, "gone-evalrun-results-0")); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		args []string
		want string
	}{
		"no such run":              {[]string{"results", "nope"}, `reading EvalRun ` + ns + `/nope: evalruns.evals.evalrun.io "nope" not found`},
		"no stored results":        {[]string{"results", "running"}, "EvalRun " + ns + "/running has no stored results: it has not stored results yet (Succeeded=True, Completed: done)"},
		"results gone":             {[]string{"export", "gone"}, "the results of EvalRun gone: result ConfigMap gone-evalrun-results-0: stored results are gone"},
		"bad verdict":              {[]string{"results", "gone", "--verdict", "Failed"}, `verdict "Failed" is not one of Pass, Fail, Error, Skipped, Missing`},
		"bad output":               {[]string{"results", "gone", "-o", "wide"}, `--output "wide" is not one of table, json, yaml`},
		"bad format":               {[]string{"export", "gone", "-o", "csv"}, `--output "csv" is not one of jsonl, junit`},
		"bad format, old flag":     {[]string{"export", "gone", "--format", "csv"}, `--output "csv" is not one of jsonl, junit`},
		"baseline without results": {[]string{"compare", "gone", "running"}, "EvalRun " + ns + "/running has no stored results: it has not stored results yet (Succeeded=True, Completed: done)"},
		"bad drop":                 {[]string{"compare", "gone", "gone", "--max-score-drop", "2"}, `--max-score-drop "2" is not a decimal in [0, 1]`},
		"bad test":                 {[]string{"compare", "gone", "gone", "--test", "Bayes"}, `--test "Bayes" is not one of Count, Paired`},
		"bad alpha":                {[]string{"compare", "gone", "gone", "--alpha", "1"}, `--alpha "1" is not a decimal strictly between 0 and 1`},
		"bad min effect":           {[]string{"compare", "gone", "gone", "--test", "Paired", "--min-effect", "0.5x"}, `--min-effect "0.5x" is not a decimal in [0, 1]`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, _, err := kubectlEvalrun(t, ns, tc.args...)
			if err == nil || err.Error() != tc.want {
				t.Errorf("error %v, want %q", err, tc.want)
			}
			if code := ExitCode(err); code != ExitError {
				t.Errorf("exit code %d, want %d (an error, not a regression)", code, ExitError)
			}
		})
	}
}

func TestExport(t *testing.T) {
	ns := newNamespace(t)
	lines := screeningLines([]string{"case-004"}, []string{"case-009"}, []string{"case-010"})
	storedRun(t, ns, "screening", lines, 2, func(r *evalsv1alpha1.EvalRun) {
		// An id the status lists as missing with no stored line (its results were lost) is an error testcase too.
		r.Status.MissingIDs = []string{"case-010", "case-011"}
	})

	out, _, err := kubectlEvalrun(t, ns, "export", "screening", "-o", "jsonl")
	if err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(rows) != 10 {
		t.Fatalf("%d JSONL lines, want 10:\n%s", len(rows), out)
	}
	for i, row := range rows {
		var l results.Line
		if err := json.Unmarshal([]byte(row), &l); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(lines[i], &l); diff != "" {
			t.Errorf("line %d (-want +got):\n%s", i+1, diff)
		}
	}

	file := filepath.Join(t.TempDir(), "report.xml")
	if out, _, err = kubectlEvalrun(t, ns, "export", "screening", "-o", "junit", "--output-file", file); err != nil || out != "" {
		t.Fatalf("export --output-file: err %v, stdout %q", err, out)
	}
	doc, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}

	var s struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Errors   int `xml:"errors,attr"`
		Skipped  int `xml:"skipped,attr"`
		Suite    struct {
			Name      string `xml:"name,attr"`
			Time      string `xml:"time,attr"`
			Timestamp string `xml:"timestamp,attr"`
			Cases     []struct {
				Name      string `xml:"name,attr"`
				Classname string `xml:"classname,attr"`
				Failure   *struct {
					Text string `xml:",chardata"`
				} `xml:"failure"`
				Error *struct {
					Type string `xml:"type,attr"`
				} `xml:"error"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	dec := xml.NewDecoder(bytes.NewReader(doc))
	dec.Strict = true
	if err := dec.Decode(&s); err != nil {
		t.Fatalf("JUnit is not well-formed: %v\n%s", err, doc)
	}
	if s.Tests != 11 || s.Failures != 1 || s.Errors != 3 || s.Skipped != 0 || len(s.Suite.Cases) != 11 {
		t.Errorf("counts %d/%d/%d/%d, %d testcases; want 11/1/3/0, 11", s.Tests, s.Failures, s.Errors, s.Skipped, len(s.Suite.Cases))
	}
	if s.Suite.Name != ns+"/screening" || s.Suite.Time != "42.000" || s.Suite.Timestamp != "2026-11-26T15:00:00Z" {
		t.Errorf("suite %q time %q timestamp %q", s.Suite.Name, s.Suite.Time, s.Suite.Timestamp)
	}
	for _, c := range s.Suite.Cases {
		if c.Classname != "screening" {
			t.Errorf("testcase %s classname %q", c.Name, c.Classname)
		}
		switch c.Name {
		case "case-004":
			if c.Failure == nil || !strings.Contains(c.Failure.Text, `miss: decision: expected "REVIEW", got "CLEAR"`) {
				t.Errorf("case-004 failure %+v", c.Failure)
			}
		case "case-010", "case-011":
			if c.Error == nil || c.Error.Type != "Missing" {
				t.Errorf("%s error %+v", c.Name, c.Error)
			}
		}
	}
}

// TestExportDeprecatedFlags: the flags export had before it followed kubectl's naming (--format, -f/--file) still
// work, with a warning naming their replacements, and write what -o and --output-file write.
func TestExportDeprecatedFlags(t *testing.T) {
	ns := newNamespace(t)
	storedRun(t, ns, "screening", screeningLines([]string{"case-004"}, nil, nil), 1, nil)
	dir := t.TempDir()
	newer, older := filepath.Join(dir, "new.xml"), filepath.Join(dir, "old.xml")
	if _, _, err := kubectlEvalrun(t, ns, "export", "screening", "-o", "junit", "--output-file", newer); err != nil {
		t.Fatal(err)
	}
	_, errOut, err := kubectlEvalrun(t, ns, "export", "screening", "--format", "junit", "-f", older)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Flag --file has been deprecated, use --output-file", "Flag --format has been deprecated, use -o/--output"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr %q does not say %q", errOut, want)
		}
	}
	a, errA := os.ReadFile(newer)
	b, errB := os.ReadFile(older)
	if errA != nil || errB != nil || !bytes.Equal(a, b) || len(a) == 0 {
		t.Errorf("the deprecated flags wrote another report (%v, %v)", errA, errB)
	}
}

func TestCompare(t *testing.T) {
	ns := newNamespace(t)
	storedRun(t, ns, "nightly", screeningLines([]string{"case-002"}, nil, []string{"case-010"}), 1, nil)
	storedRun(t, ns, "candidate", screeningLines([]string{"case-004", "case-007"}, nil, nil), 2, nil)

	out, _, err := kubectlEvalrun(t, ns, "compare", "candidate", "nightly")
	if !errors.Is(err, ErrRegressed) {
		t.Errorf("compare: error %v, want ErrRegressed", err)
	}
	if code := ExitCode(err); code != ExitRegressed {
		t.Errorf("compare: exit code %d, want %d", code, ExitRegressed)
	}
	want := `EvalRun candidate against baseline nightly (eval file: Same), 10 shared cases
Newly failing: 2
  case-004
  case-007
Newly passing: 2
  case-002
  case-010
Missing in run: 0
Missing in baseline: 1
  case-010
Mean score: 0.8889 (baseline 0.9444, delta -0.0555)
Result: REGRESSED: 2 newly failing cases (at most 0 allowed): "case-004", "case-007"
`
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("compare (-want +got):\n%s", diff)
	}

	out, _, err = kubectlEvalrun(t, ns, "compare", "candidate", "nightly", "--max-new-failures", "2", "--max-score-drop", "0.06", "-o", "json")
	if err != nil {
		t.Fatalf("within bounds: %v", err)
	}
	var doc report.Comparison
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Regressed || doc.NewlyFailingCount != 2 || doc.MeanScoreDelta != "-0.0555" || doc.RunName != "nightly" {
		t.Errorf("comparison %+v", doc)
	}
}

// TestComparePaired: --test Paired tests the paired pass rates (2 worse, 2 better of 10 is no regression, where
// Count calls the 2 newly failing cases one), prints the test's result and exits 0; a run whose own spec.baseline
// says Paired with alpha 0.2 is compared that way without flags (5 worse and 1 better: p = 7/64, exit 1), and a
// flag overrides its spec.
func TestComparePaired(t *testing.T) {
	ns := newNamespace(t)
	c, _ := apiServer(t)
	storedRun(t, ns, "nightly", screeningLines([]string{"case-002"}, nil, []string{"case-010"}), 1, nil)
	storedRun(t, ns, "candidate", screeningLines([]string{"case-004", "case-007"}, nil, nil), 2, nil)
	storedRun(t, ns, "worse", screeningLines([]string{"case-001", "case-003", "case-004", "case-005", "case-006"}, []string{"case-002"}, nil), 1, nil)
	worse := &evalsv1alpha1.EvalRun{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "worse"}, worse); err != nil {
		t.Fatal(err)
	}
	worse.Spec.Baseline = &evalsv1alpha1.Baseline{RunName: ptr.To("nightly"), Test: ptr.To(evalsv1alpha1.BaselineTestPaired), Alpha: ptr.To("0.2")}
	if err := c.Update(t.Context(), worse); err != nil {
		t.Fatal(err)
	}

	out, _, err := kubectlEvalrun(t, ns, "compare", "candidate", "nightly", "--test", "Paired")
	if err != nil {
		t.Fatalf("compare --test Paired: %v\n%s", err, out)
	}
	for _, want := range []string{
		"Newly failing: 2\n",
		"Paired test: McNemarExact over 10 cases (2 worse, 2 better); left out: 0 only in the baseline, 0 only in the run, 0 Skipped\n",
		"Paired pass rate: 0.8000 (baseline 0.8000, delta 0.0000, 95% CI ",
		"p-value (one-sided, the run worse): 0.687500\n",
		"Result: not regressed: pass rate stayed at 0.80 (change 95% CI ",
		"over 10 paired cases, 2 worse and 2 better; p = 0.688, not below alpha 0.05 (McNemar exact, one-sided)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("compare --test Paired:\n%s\nwant %q", out, want)
		}
	}
	if _, _, err := kubectlEvalrun(t, ns, "compare", "candidate", "nightly"); ExitCode(err) != ExitRegressed {
		t.Errorf("compare with Count: exit code %d (%v), want %d", ExitCode(err), err, ExitRegressed)
	}

	out, _, err = kubectlEvalrun(t, ns, "compare", "worse", "nightly", "-o", "json")
	if ExitCode(err) != ExitRegressed {
		t.Errorf("compare worse (its spec: Paired, alpha 0.2): exit code %d (%v), want %d", ExitCode(err), err, ExitRegressed)
	}
	var doc report.Comparison
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if p := doc.Paired; doc.Test != evalsv1alpha1.BaselineTestPaired || p == nil || p.WorseCases != 5 || p.BetterCases != 1 ||
		p.PValue != "0.109375" || p.PassRate == nil || p.PassRate.Delta != "-0.4000" || !doc.Regressed ||
		!strings.Contains(doc.Why, "p = 0.109 < alpha 0.2 (McNemar exact, one-sided)") {
		t.Errorf("comparison %+v, paired %+v", doc, doc.Paired)
	}
	for _, args := range [][]string{{"--alpha", "0.05"}, {"--test", "Count", "--max-new-failures", "5"}} {
		if _, _, err := kubectlEvalrun(t, ns, append([]string{"compare", "worse", "nightly"}, args...)...); err != nil {
			t.Errorf("compare worse %v: %v, want no regression", args, err)
		}
	}
}
