package report

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/evalrun-operator/evalrun-operator/internal/results"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// Parsed JUnit, as a CI reporter reads it.
type xSuites struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	Skipped  int      `xml:"skipped,attr"`
	Suites   []xSuite `xml:"testsuite"`
}

type xSuite struct {
	Name      string `xml:"name,attr"`
	Tests     int    `xml:"tests,attr"`
	Failures  int    `xml:"failures,attr"`
	Errors    int    `xml:"errors,attr"`
	Skipped   int    `xml:"skipped,attr"`
	Time      string `xml:"time,attr"`
	Timestamp string `xml:"timestamp,attr"`
	Props     []struct {
		Name  string `xml:"name,attr"`
		Value string `xml:"value,attr"`
	} `xml:"properties>property"`
	Cases []xCase `xml:"testcase"`
}

type xCase struct {
	Name      string    `xml:"name,attr"`
	Classname string    `xml:"classname,attr"`
	Time      string    `xml:"time,attr"`
	Failure   *xProblem `xml:"failure"`
	Error     *xProblem `xml:"error"`
	Skipped   *xProblem `xml:"skipped"`
	SystemOut string    `xml:"system-out"`
}

type xProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// checkJUnit parses a JUnit document strictly (well-formed, one root) and checks that its counts add up.
func checkJUnit(t *testing.T, doc []byte) xSuites {
	t.Helper()
	if !bytes.HasPrefix(doc, []byte(xml.Header)) {
		t.Errorf("no XML header: %q", doc[:min(len(doc), 40)])
	}
	dec := xml.NewDecoder(bytes.NewReader(doc))
	dec.Strict = true
	for {
		if _, err := dec.Token(); err != nil {
			if err.Error() != "EOF" {
				t.Fatalf("not well-formed: %v", err)
			}
			break
		}
	}
	var s xSuites
	if err := xml.Unmarshal(doc, &s); err != nil {
		t.Fatalf("unmarshal: %v", err)
	}
	var tests, failures, errs, skipped int
	for _, su := range s.Suites {
		var f, e, sk int
		for _, c := range su.Cases {
			n := 0
			if c.Failure != nil {
				f, n = f+1, n+1
			}
			if c.Error != nil {
				e, n = e+1, n+1
			}
			if c.Skipped != nil {
				sk, n = sk+1, n+1
			}
			if n > 1 {
				t.Errorf("testcase %s has %d outcomes", c.Name, n)
			}
		}
		if su.Tests != len(su.Cases) || su.Failures != f || su.Errors != e || su.Skipped != sk {
			t.Errorf("suite %s counts tests=%d failures=%d errors=%d skipped=%d, its cases %d/%d/%d/%d",
				su.Name, su.Tests, su.Failures, su.Errors, su.Skipped, len(su.Cases), f, e, sk)
		}
		tests, failures, errs, skipped = tests+su.Tests, failures+su.Failures, errs+su.Errors, skipped+su.Skipped
	}
	if s.Tests != tests || s.Failures != failures || s.Errors != errs || s.Skipped != skipped {
		t.Errorf("testsuites counts %d/%d/%d/%d, the suites add up to %d/%d/%d/%d",
			s.Tests, s.Failures, s.Errors, s.Skipped, tests, failures, errs, skipped)
	}
	return s
}

func TestWriteJUnit(t *testing.T) {
	var b bytes.Buffer
	start := time.Date(2026, 11, 26, 15, 0, 0, 0, time.UTC)
	run := JUnitRun{Name: "nightly", Namespace: "evals", Started: start, Duration: 90 * time.Second,
		MissingIDs: []string{"case-006"}, Properties: [][2]string{{"passRate", "0.2000"}}}
	if err := WriteJUnit(&b, run, sampleLines()); err != nil {
		t.Fatal(err)
	}
	s := checkJUnit(t, b.Bytes())
	if s.Tests != 6 || s.Failures != 1 || s.Errors != 3 || s.Skipped != 1 {
		t.Errorf("counts tests=%d failures=%d errors=%d skipped=%d, want 6/1/3/1", s.Tests, s.Failures, s.Errors, s.Skipped)
	}
	su := s.Suites[0]
	if su.Name != "evals/nightly" || su.Time != "90.000" || su.Timestamp != "2026-11-26T15:00:00Z" {
		t.Errorf("suite name %q time %q timestamp %q", su.Name, su.Time, su.Timestamp)
	}
	if len(su.Props) != 1 || su.Props[0].Name != "passRate" || su.Props[0].Value != "0.2000" {
		t.Errorf("properties %+v", su.Props)
	}
	checkJUnitCases(t, su.Cases)
}

// checkJUnitCases checks the testcases WriteJUnit writes for sampleLines and one more missing id.
func checkJUnitCases(t *testing.T, cases []xCase) {
	t.Helper()
	got := map[string]xCase{}
	var names []string
	for _, c := range cases {
		if c.Classname != "nightly" {
			t.Errorf("testcase %s classname %q, want the run's name", c.Name, c.Classname)
		}
		got[c.Name] = c
		names = append(names, c.Name)
	}
	if diff := cmp.Diff([]string{"case-001", "case-002", "case-003", "case-004", "case-005", "case-006"}, names); diff != "" {
		t.Errorf("testcases (-want +got):\n%s", diff)
	}
	if c := got["case-001"]; c.Failure != nil || c.Error != nil || c.Skipped != nil || c.Time != "1.500" || c.SystemOut != `{"decision":"CLEAR"}` {
		t.Errorf("passing case %+v", c)
	}
	if f := got["case-002"].Failure; f == nil || f.Type != "Fail" ||
		f.Message != `score 0.2500: decision: decision: want "REVIEW", got "CLEAR"` ||
		!strings.Contains(f.Text, `  miss: decision: want "REVIEW", got "CLEAR"`) || !strings.Contains(f.Text, "policy (code_judge): Pass, score 1.0000") {
		t.Errorf("failing case %+v", f)
	}
	if e := got["case-003"].Error; e == nil || e.Type != "Error" || e.Message != "output is not JSON <&>" {
		t.Errorf("erroring case %+v", e)
	}
	if sk := got["case-004"].Skipped; sk == nil || sk.Message != "no evaluator applies" {
		t.Errorf("skipped case %+v", sk)
	}
	// A stored missing case and a missing id with no stored line read the same.
	for _, id := range []string{"case-005", "case-006"} {
		if e := got[id].Error; e == nil || e.Type != "Missing" || e.Message != verdict.MissingReason || e.Text != verdict.MissingReason+"\n" {
			t.Errorf("missing case %s: %+v", id, e)
		}
	}
}

func TestWriteJUnitEmptyAndTimeFromCases(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJUnit(&b, JUnitRun{Name: "r", Namespace: "n"}, nil); err != nil {
		t.Fatal(err)
	}
	if s := checkJUnit(t, b.Bytes()); s.Tests != 0 || s.Suites[0].Timestamp != "" {
		t.Errorf("empty run: %+v", s)
	}
	b.Reset()
	if err := WriteJUnit(&b, JUnitRun{Name: "r", Namespace: "n"}, sampleLines()); err != nil {
		t.Fatal(err)
	}
	if s := checkJUnit(t, b.Bytes()); s.Suites[0].Time != "1.500" {
		t.Errorf("suite time %q, want the cases' 1.500", s.Suites[0].Time)
	}
}

func TestWriteJUnitHostileText(t *testing.T) {
	lines := sampleLines()[1:3]
	lines[0].Answer = "]]><x>\x00\x1b[31m\xff"
	lines[0].Evaluators[0].Misses = []string{"]]>", "\x07bell"}
	lines[1].Error = "<error/>]]>\x0c"
	var b bytes.Buffer
	if err := WriteJUnit(&b, JUnitRun{Name: "r", Namespace: "n"}, lines); err != nil {
		t.Fatal(err)
	}
	s := checkJUnit(t, b.Bytes())
	c := s.Suites[0].Cases
	if want := "]]><x>\uFFFD\uFFFD[31m\uFFFD"; c[0].SystemOut != want {
		t.Errorf("system-out %q, want %q", c[0].SystemOut, want)
	}
	if !strings.Contains(c[0].Failure.Text, "miss: ]]>\n") || !strings.Contains(c[1].Error.Text, "<error/>]]>\uFFFD") {
		t.Errorf("failure %q, error %q", c[0].Failure.Text, c[1].Error.Text)
	}
}

// Whatever text the runner and the evaluators produce, the JUnit document stays well-formed and its counts add up.
func FuzzWriteJUnit(f *testing.F) {
	f.Add("case-1", "answer", "miss", "error", "reason")
	f.Add("]]>", "\x00<&>\"'", "]]]]><![CDATA[", "\xff\xfe", "\u2028")
	f.Fuzz(func(t *testing.T, id, answer, miss, errText, reason string) {
		lines := sampleLines()
		for _, l := range lines {
			l.ID, l.Answer = id+l.ID, answer
		}
		lines[1].Evaluators[0].Misses = []string{miss}
		lines[2].Error = errText
		lines[3].Reason = reason
		var b bytes.Buffer
		if err := WriteJUnit(&b, JUnitRun{Name: id, Namespace: reason, MissingIDs: []string{miss}}, lines); err != nil {
			t.Fatal(err)
		}
		if s := checkJUnit(t, b.Bytes()); s.Tests != len(lines)+1 {
			t.Errorf("%d tests, want %d", s.Tests, len(lines)+1)
		}
	})
}

// A run with trials: one testcase per case, with its verdict over its trials; the failure or error says how many
// trials passed and names the trial that stands for the case, the body lists every trial, system-out every
// trial's answer, and says "flaky" when the trials disagree.
func TestWriteJUnitTrials(t *testing.T) {
	lines := trialRunLines()
	dur := 500.0
	for _, l := range lines {
		if l.ID == "case-b" {
			l.DurationMs = &dur
		}
	}
	var b bytes.Buffer
	if err := WriteJUnit(&b, JUnitRun{Name: "nightly", Namespace: "evals", Trials: trialRule, MissingIDs: []string{"case-z"}}, lines); err != nil {
		t.Fatal(err)
	}
	s := checkJUnit(t, b.Bytes())
	type tc struct {
		Name, Outcome, Message, Time string
	}
	var got []tc
	byName := map[string]xCase{}
	for _, c := range s.Suites[0].Cases {
		out := tc{Name: c.Name, Outcome: "Pass", Time: c.Time}
		switch {
		case c.Failure != nil:
			out.Outcome, out.Message = "failure "+c.Failure.Type, c.Failure.Message
		case c.Error != nil:
			out.Outcome, out.Message = "error "+c.Error.Type, c.Error.Message
		case c.Skipped != nil:
			out.Outcome, out.Message = "skipped", c.Skipped.Message
		}
		got = append(got, out)
		byName[c.Name] = c
	}
	want := []tc{
		{"case-a", "Pass", "", "0.000"},
		{"case-b", "failure Fail", "score 0.8333, 2/3 trials passed: trial 2 of 3: decision: decision: want REVIEW", "1.500"},
		{"case-c", "error Error", "0/3 trials passed: trial 1 of 3: answer is not JSON", "0.000"},
		{"case-d", "error Missing", "0/3 trials passed: the runner produced no record for this case", "0.000"},
		{"case-e", "Pass", "", "0.000"},
		{"case-f", "failure Fail", "score 0.3333, 0/3 trials passed: trial 1 of 3: decision: decision: want REVIEW", "0.000"},
		{"case-z", "error Missing", verdict.MissingReason, "0"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("testcases (-want +got):\n%s", diff)
	}
	if s.Tests != 7 || s.Failures != 2 || s.Errors != 3 {
		t.Errorf("counts %d/%d/%d, want 7 tests, 2 failures, 3 errors: a case counts once", s.Tests, s.Failures, s.Errors)
	}
	wantBody := "trial 1: Pass, score 1.0000\n  decision (field_accuracy): Pass, score 1.0000\n" +
		"trial 2: Fail, score 0.5000\n  decision (field_accuracy): Fail, score 0.0000\n    miss: decision: want REVIEW\n" +
		"trial 3: Pass, score 1.0000\n  decision (field_accuracy): Pass, score 1.0000\n"
	if diff := cmp.Diff(wantBody, byName["case-b"].Failure.Text); diff != "" {
		t.Errorf("case-b's failure body (-want +got):\n%s", diff)
	}
	wantOut := "flaky: 2/3 trials passed (PFP)\n--- trial 1: Pass ---\nb1\n--- trial 2: Fail ---\nb2\n--- trial 3: Pass ---\nb3\n"
	if diff := cmp.Diff(wantOut, byName["case-b"].SystemOut); diff != "" {
		t.Errorf("case-b's system-out (-want +got):\n%s", diff)
	}
	if body := byName["case-c"].Error.Text; !strings.Contains(body, "trial 3: Missing: no stored result\n") {
		t.Errorf("case-c's error body does not say its third trial stored nothing: %q", body)
	}
}

// Whatever text the runner and the evaluators produce in any trial, the JUnit document of a run with trials stays
// well-formed, and a case counts once whatever its trials.
func FuzzWriteJUnitTrials(f *testing.F) {
	f.Add("case-1", "answer", "miss", "error", uint8(2))
	f.Add("]]>", "\x00<&>\"'", "]]]]><![CDATA[", "\xff\xfe", uint8(7))
	f.Fuzz(func(t *testing.T, id, answer, miss, errText string, trials uint8) {
		rule := results.TrialRule{Count: int(trials%5) + 2, PassRate: 1}
		var lines []*results.Line
		for i, l := range trialRunLines() {
			c := *l
			c.ID, c.Answer = id+l.ID, answer+c.Answer
			if c.Error != "" {
				c.Error = errText
			}
			if len(c.Evaluators) > 0 && i%2 == 0 {
				c.Evaluators = []verdict.EvaluatorResult{{Name: miss, Verdict: verdict.VerdictFail, Misses: []string{miss}}}
			}
			lines = append(lines, &c)
		}
		var b bytes.Buffer
		if err := WriteJUnit(&b, JUnitRun{Name: id, Namespace: errText, Trials: rule}, lines); err != nil {
			t.Fatal(err)
		}
		if s := checkJUnit(t, b.Bytes()); s.Tests != 6 {
			t.Errorf("%d tests, want the 6 cases", s.Tests)
		}
	})
}
