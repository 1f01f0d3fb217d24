package plugin

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/cli/report"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
)

// trialScreeningLines are three trials of screeningLines' ten cases, stored trial by trial: the cases in fail
// fail every trial, those in flaky fail their second trial only.
func trialScreeningLines(flaky, fail []string) []*results.Line {
	var out []*results.Line
	for trial := 1; trial <= 3; trial++ {
		failing := fail
		if trial == 2 {
			failing = append(slices.Clone(fail), flaky...)
		}
		for _, l := range screeningLines(failing, nil, nil) {
			if trial > 1 {
				l.Trial = trial
			}
			l.Answer = fmt.Sprintf(`{"decision":"CLEAR","trial":%d}`, trial)
			out = append(out, l)
		}
	}
	return out
}

// withTrials gives a run the status.trials the merge writes for trialScreeningLines(case-002 and case-005 flaky,
// case-007 failing).
func withTrials(r *evalsv1alpha1.EvalRun) {
	r.Status.Trials = &evalsv1alpha1.TrialsStatus{Count: 3, PassRate: "1", Cases: 10,
		RunPassRate:       &evalsv1alpha1.TrialsEstimate{Value: "0.7000", Low: "0.3968", High: "0.8922"},
		MeanTrialPassRate: &evalsv1alpha1.TrialsEstimate{Value: "0.8333", Low: "0.6333", High: "1.0000"},
		MeanScore:         &evalsv1alpha1.TrialsEstimate{Value: "0.9167", Low: "0.8167", High: "1.0000"},
		PassAtN:           "0.9000", PassHatN: "0.7000", FlakyCases: 2, Flaky: []string{"case-002", "case-005"}}
	r.Status.Summary = &evalsv1alpha1.RunSummary{Total: 10, Passed: 7, Failed: 3, PassRate: "0.7000", MeanScore: "0.9167"}
}

// TestResultsWithTrials: a run of three trials per case lists each case once, decided over its trials, with its
// trials passed and the flaky flag; the trials' figures go to stderr; --flaky keeps the flaky cases; -o json carries
// status.trials and every trial of each case.
func TestResultsWithTrials(t *testing.T) {
	ns := newNamespace(t)
	storedRun(t, ns, "trials", trialScreeningLines([]string{"case-002", "case-005"}, []string{"case-007"}), 3, withTrials)
	storedRun(t, ns, "once", screeningLines(nil, nil, nil), 1, nil)

	out, errOut, err := kubectlEvalrun(t, ns, "results", "trials")
	if err != nil {
		t.Fatal(err)
	}
	want := `ID         VERDICT   SCORE    TRIALS      EVALUATORS                    MESSAGE
case-002   Fail      0.8333   2/3 flaky   decision=2/3,trajectory=3/3   trial 2 of 3: decision: decision: expected "REVIEW", got "CLEAR"
case-005   Fail      0.8333   2/3 flaky   decision=2/3,trajectory=3/3   trial 2 of 3: decision: decision: expected "REVIEW", got "CLEAR"
case-007   Fail      0.5000   0/3         decision=0/3,trajectory=3/3   trial 1 of 3: decision: decision: expected "REVIEW", got "CLEAR"
case-001   Pass      1.0000   3/3         decision=3/3,trajectory=3/3   -
case-003   Pass      1.0000   3/3         decision=3/3,trajectory=3/3   -
case-004   Pass      1.0000   3/3         decision=3/3,trajectory=3/3   -
case-006   Pass      1.0000   3/3         decision=3/3,trajectory=3/3   -
case-008   Pass      1.0000   3/3         decision=3/3,trajectory=3/3   -
case-009   Pass      1.0000   3/3         decision=3/3,trajectory=3/3   -
case-010   Pass      1.0000   3/3         decision=3/3,trajectory=3/3   -
`
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	wantErr := `Trials: 3 per case; a case passes when every trial passes (passRate 1); 10 cases
Pass rate (cases): 0.7000 (95% CI 0.3968 to 0.8922) (Wilson)
Mean trial pass rate (pass@1): 0.8333 (95% CI 0.6333 to 1.0000) (bootstrap over cases)
Mean score: 0.9167 (95% CI 0.8167 to 1.0000) (bootstrap over cases)
pass@3: 0.9000 (some trial passed); pass^3: 0.7000 (every trial passed)
Flaky cases: 2: case-002, case-005
`
	if diff := cmp.Diff(wantErr, errOut); diff != "" {
		t.Errorf("stderr (-want +got):\n%s", diff)
	}

	out, _, err = kubectlEvalrun(t, ns, "results", "trials", "--flaky", "--verdict", "Fail", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var doc report.Cases
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("-o json: %v\n%s", err, out)
	}
	if doc.Stored != 30 || doc.Selected != 2 || doc.Trials == nil || doc.Trials.Count != 3 || doc.Trials.RunPassRate.Low != "0.3968" {
		t.Errorf("-o json: stored %d, selected %d, trials %+v", doc.Stored, doc.Selected, doc.Trials)
	}
	type caseRow struct {
		ID, Verdict, Score string
		Passed, Failed     int
		Flaky              bool
		Answers            []string
	}
	var got []caseRow
	for _, c := range doc.Cases {
		row := caseRow{ID: c.ID, Verdict: string(c.Verdict), Score: fmt.Sprintf("%.4f", c.Score)}
		if c.Trials != nil {
			row.Passed, row.Failed, row.Flaky = c.Trials.Passed, c.Trials.Failed, c.Trials.Flaky
			for _, r := range c.Trials.Results {
				row.Answers = append(row.Answers, fmt.Sprintf("%d:%s:%s", r.TrialNumber(), r.Verdict, r.Answer))
			}
		}
		got = append(got, row)
	}
	wantCases := []caseRow{
		{"case-002", "Fail", "0.8333", 2, 1, true, []string{`1:Pass:{"decision":"CLEAR","trial":1}`, `2:Fail:{"decision":"CLEAR","trial":2}`, `3:Pass:{"decision":"CLEAR","trial":3}`}},
		{"case-005", "Fail", "0.8333", 2, 1, true, []string{`1:Pass:{"decision":"CLEAR","trial":1}`, `2:Fail:{"decision":"CLEAR","trial":2}`, `3:Pass:{"decision":"CLEAR","trial":3}`}},
	}
	if diff := cmp.Diff(wantCases, got); diff != "" {
		t.Errorf("-o json cases (-want +got):\n%s", diff)
	}
	out, _, err = kubectlEvalrun(t, ns, "results", "trials", "--id", "case-00[12]$", "-o", "yaml")
	if err != nil || !strings.Contains(out, "    flaky: true\n") || !strings.Contains(out, "  count: 3\n") || !strings.Contains(out, "      trial: 3\n") {
		t.Errorf("-o yaml (%v):\n%s", err, out)
	}

	_, errOut, err = kubectlEvalrun(t, ns, "results", "trials", "--flaky", "--verdict", "Pass")
	if err != nil || errOut != "No cases of 10 stored (30 results of 3 trials each) match.\n" {
		t.Errorf("no match: err %v, stderr %q", err, errOut)
	}
	// Before the merge wrote status.trials, spec.trials says how many trials each case has.
	storedRun(t, ns, "unmerged", trialScreeningLines([]string{"case-003"}, nil), 1, nil)
	c, _ := apiServer(t)
	unmerged := &evalsv1alpha1.EvalRun{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "unmerged"}, unmerged); err != nil {
		t.Fatal(err)
	}
	unmerged.Spec.Trials = &evalsv1alpha1.Trials{Count: ptr.To[int32](3)}
	if err := c.Update(t.Context(), unmerged); err != nil {
		t.Fatal(err)
	}
	out, errOut, err = kubectlEvalrun(t, ns, "results", "unmerged", "--flaky")
	if err != nil || !strings.HasPrefix(out, "ID ") || !strings.Contains(out, "\ncase-003   Fail      0.8333   2/3 flaky") || strings.Count(out, "\n") != 2 ||
		errOut != "Trials: 3 per case; 1 of 10 cases flaky; the run's figures are not in its status yet (its results are not merged)\n" {
		t.Errorf("a run not merged yet (%v):\n%s\nstderr %q", err, out, errOut)
	}
	_, _, err = kubectlEvalrun(t, ns, "results", "once", "--flaky")
	if err == nil || !strings.Contains(err.Error(), "--flaky: EvalRun once answered each case once (spec.trials): no case can be flaky") {
		t.Errorf("--flaky of a run of one trial: %v", err)
	}
}

// TestExportWithTrials: the JSONL export has a line per (case, trial); the JUnit export a testcase per case, its
// verdict over its trials, and the trials' figures as the suite's properties.
func TestExportWithTrials(t *testing.T) {
	ns := newNamespace(t)
	lines := trialScreeningLines([]string{"case-002"}, []string{"case-007"})
	storedRun(t, ns, "trials", lines, 2, withTrials)

	out, _, err := kubectlEvalrun(t, ns, "export", "trials")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out, "\n"); n != 30 {
		t.Errorf("%d JSONL lines, want a line per trial of each case (30)", n)
	}
	out, _, err = kubectlEvalrun(t, ns, "export", "trials", "-o", "junit")
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Suite    struct {
			Props []struct {
				Name  string `xml:"name,attr"`
				Value string `xml:"value,attr"`
			} `xml:"properties>property"`
			Cases []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
				} `xml:"failure"`
				SystemOut string `xml:"system-out"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if s.Tests != 10 || s.Failures != 2 || len(s.Suite.Cases) != 10 {
		t.Errorf("%d tests, %d failures, %d testcases; want 10, 2 (case-002 and case-007) and 10", s.Tests, s.Failures, len(s.Suite.Cases))
	}
	props := map[string]string{}
	for _, p := range s.Suite.Props {
		props[p.Name] = p.Value
	}
	for name, want := range map[string]string{"trials": "3", "trials.passRate": "1", "trials.flakyCases": "2",
		"trials.runPassRate": "0.7000 (95% CI 0.3968 to 0.8922)"} {
		if props[name] != want {
			t.Errorf("property %s = %q, want %q", name, props[name], want)
		}
	}
	for _, c := range s.Suite.Cases {
		if c.Name == "case-002" && (c.Failure == nil || !strings.HasPrefix(c.Failure.Message, "score 0.8333, 2/3 trials passed: trial 2 of 3:") ||
			!strings.HasPrefix(c.SystemOut, "flaky: 2/3 trials passed (PFP)\n")) {
			t.Errorf("case-002: %+v", c)
		}
	}
}

// TestReportWithTrials: the report of a run with trials holds each case once with its trials, says how many cases
// and trial results it wrote, and shows the trials' figures.
func TestReportWithTrials(t *testing.T) {
	ns := newNamespace(t)
	storedRun(t, ns, "trials", trialScreeningLines([]string{"case-002"}, nil), 2, withTrials)
	out, errOut, err := kubectlEvalrun(t, ns, "report", "trials", "-o", t.TempDir()+"/trials.html")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errOut, "Wrote the report of trials (10 cases, 30 trial results, ") || out != "" {
		t.Errorf("stderr %q", errOut)
	}
	out, _, err = kubectlEvalrun(t, ns, "report", "trials", "-o", "-")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<div class="sub" id="pass-rate-ci">95% CI 0.3968 to 0.8922 (Wilson)</div>`, `"trials":3`,
		`"id":"case-002","o":"Fail","s":"0.8333"`, `"tp":2,"f":true,"tr":[{"t":1,"o":"Pass"`} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %s", want)
		}
	}
}
