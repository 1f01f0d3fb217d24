package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/evalrun-operator/evalrun-operator/internal/results"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// JUnitRun is what the JUnit report says about the run besides its cases.
type JUnitRun struct {
	// Name and Namespace name the EvalRun; the test cases' classname is Name.
	Name, Namespace string
	// Started and Duration are the run's start and length (zero: unknown; the cases' durations are added up).
	Started  time.Time
	Duration time.Duration
	// MissingIDs are requested ids the stored results have no line for (each becomes an error testcase of type
	// Missing, as a stored missing case does).
	MissingIDs []string
	// Properties are shown as the suite's properties (reason, pass rate, ...), in order.
	Properties [][2]string
	// Trials is how the run decided its cases over their trials (TrialRuleOf); with more than one trial a testcase
	// is a case over its trials (WriteJUnit).
	Trials results.TrialRule
}

// The JUnit XML schema as CI reporters read it (GitLab, Jenkins, GitHub Actions' test reporters): testsuites >
// testsuite > testcase with failure, error or skipped.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr,omitempty"`
	Properties *junitProps     `xml:"properties,omitempty"`
	Cases      []junitTestCase `xml:"testcase"`
}

type junitProps struct {
	Props []junitProp `xml:"property"`
}

type junitProp struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitTestCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	SystemOut *junitText    `xml:"system-out,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",cdata"`
}

// junitText is an element whose text is written as CDATA (kept readable: newlines and quotes as they are).
type junitText struct {
	Text string `xml:",cdata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr,omitempty"`
}

// maxAttr bounds the message attribute, in bytes; the full text is the element's body.
const maxAttr = 200

// WriteJUnit writes the run's results as JUnit XML: one testcase per eval case (classname the run), a failure
// for Fail with the evaluators' messages, an error of type Error for Error, an error of type Missing for each
// missing case (a stored one or one of MissingIDs), skipped for Skipped; the answer excerpt as system-out.
//
// A missing case is an error, as in the API: summary.errored counts it, the run does not succeed (MissingResults)
// and CI reporters show errors as red, where skipped would pass unnoticed and failure would claim it was judged
// below the threshold. So the suite's failures, errors and skipped are the run's summary.failed, summary.errored
// (missing included) and summary.skipped, and its counts add up to its cases.
//
// A run with trials has one testcase per case too, never one per trial: CI reporters track a testcase by its name
// from one run to the next, and the case's verdict over its trials is the one the run's summary, policy and
// baseline count. Its failure or error says how many trials passed and names the trial that stands for it; its
// body lists every trial's verdict, score and evaluators, its system-out every trial's answer under the trial's
// number, first saying "flaky" when the trials disagree (a passing flaky case has no failure to say it); its time
// adds up its trials' durations.
func WriteJUnit(w io.Writer, run JUnitRun, lines []*results.Line) error {
	suite := junitSuite{Name: run.Namespace + "/" + run.Name}
	if !run.Started.IsZero() {
		suite.Timestamp = run.Started.UTC().Format(time.RFC3339)
	}
	var sum float64
	if run.Trials.N() > 1 {
		sum = trialTestCases(&suite, run, lines)
		lines = nil
	}
	for _, l := range lines {
		tc := junitTestCase{Name: l.ID, Classname: run.Name, Time: "0"}
		if l.DurationMs != nil {
			sum += *l.DurationMs / 1000
			tc.Time = seconds(*l.DurationMs / 1000)
		}
		msg := Message(l)
		switch o := CaseOutcome(l); o {
		case OutcomeFail:
			suite.Failures++
			tc.Failure = &junitProblem{Type: string(o), Message: oneLine(scoreLine(l)+": "+msg, maxAttr), Text: xmlSafe(detail(l))}
		case OutcomeError, OutcomeMissing:
			suite.Errors++
			tc.Error = &junitProblem{Type: string(o), Message: oneLine(msg, maxAttr), Text: xmlSafe(detail(l))}
		case OutcomeSkipped:
			suite.Skipped++
			tc.Skipped = &junitSkipped{Message: oneLine(msg, maxAttr)}
		}
		if l.Answer != "" {
			tc.SystemOut = &junitText{Text: xmlSafe(l.Answer)}
		}
		suite.Cases = append(suite.Cases, tc)
	}
	for _, id := range run.MissingIDs {
		suite.Errors++
		suite.Cases = append(suite.Cases, junitTestCase{Name: id, Classname: run.Name, Time: "0",
			Error: &junitProblem{Type: string(OutcomeMissing), Message: verdict.MissingReason, Text: verdict.MissingReason + "\n"}})
	}
	suite.Tests = len(suite.Cases)
	suite.Time = seconds(sum)
	if run.Duration > 0 {
		suite.Time = seconds(run.Duration.Seconds())
	}
	if len(run.Properties) > 0 {
		suite.Properties = &junitProps{}
		for _, p := range run.Properties {
			suite.Properties.Props = append(suite.Properties.Props, junitProp{Name: p[0], Value: p[1]})
		}
	}
	doc := junitSuites{Name: "evalrun", Tests: suite.Tests, Failures: suite.Failures, Errors: suite.Errors,
		Skipped: suite.Skipped, Time: suite.Time, Suites: []junitSuite{suite}}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// trialTestCases adds a testcase per case of a run with trials to suite and returns the trials' total duration in
// seconds.
func trialTestCases(suite *junitSuite, run JUnitRun, lines []*results.Line) float64 {
	var sum float64
	for _, c := range GroupTrials(run.Trials, lines) {
		tc := junitTestCase{Name: c.ID, Classname: run.Name}
		var secs float64
		var out strings.Builder
		if c.Flaky() {
			fmt.Fprintf(&out, "flaky: %s trials passed (%s)\n", c.TrialsText(), c.Marks())
		}
		for i, l := range c.Trials {
			if l == nil {
				continue
			}
			if l.DurationMs != nil {
				secs += *l.DurationMs / 1000
			}
			if l.Answer != "" {
				fmt.Fprintf(&out, "--- trial %d: %s ---\n%s\n", i+1, CaseOutcome(l), l.Answer)
			}
		}
		sum += secs
		tc.Time = seconds(secs)
		passed := fmt.Sprintf("%s trials passed", c.TrialsText())
		msg := c.Message()
		switch o := c.Outcome(); o {
		case OutcomeFail:
			suite.Failures++
			score, _ := c.Score()
			tc.Failure = &junitProblem{Type: string(o), Message: oneLine(fmt.Sprintf("score %s, %s: %s", verdict.FormatScore(score), passed, msg), maxAttr),
				Text: xmlSafe(trialsDetail(c))}
		case OutcomeError, OutcomeMissing:
			suite.Errors++
			tc.Error = &junitProblem{Type: string(o), Message: oneLine(passed+": "+msg, maxAttr), Text: xmlSafe(trialsDetail(c))}
		case OutcomeSkipped:
			suite.Skipped++
			tc.Skipped = &junitSkipped{Message: oneLine(msg, maxAttr)}
		}
		if out.Len() > 0 {
			tc.SystemOut = &junitText{Text: xmlSafe(out.String())}
		}
		suite.Cases = append(suite.Cases, tc)
	}
	return sum
}

// trialsDetail is the body of a failure or error of a case over its trials: each trial's outcome and score, then
// its detail indented.
func trialsDetail(c *TrialCase) string {
	var b strings.Builder
	for i, l := range c.Trials {
		if l == nil {
			fmt.Fprintf(&b, "trial %d: Missing: no stored result\n", i+1)
			continue
		}
		o := CaseOutcome(l)
		fmt.Fprintf(&b, "trial %d: %s", i+1, o)
		if o == OutcomePass || o == OutcomeFail {
			b.WriteString(", " + scoreLine(l))
		}
		b.WriteString("\n")
		if o == OutcomeSkipped && l.Reason != "" {
			b.WriteString("  " + l.Reason + "\n")
		}
		for line := range strings.SplitSeq(strings.TrimSuffix(detail(l), "\n"), "\n") {
			if line != "" {
				b.WriteString("  " + line + "\n")
			}
		}
	}
	return b.String()
}

// scoreLine is "score 0.2500" for a judged case.
func scoreLine(l *results.Line) string { return "score " + verdict.FormatScore(l.Score) }

// detail is the body of a failure or error: the case's error, then one line per evaluator with its verdict,
// score and every miss or its reasoning.
func detail(l *results.Line) string {
	var b strings.Builder
	if o := CaseOutcome(l); o == OutcomeError || o == OutcomeMissing {
		if m := Message(l); m != "" {
			b.WriteString(m + "\n")
		}
	}
	for _, e := range l.Evaluators {
		fmt.Fprintf(&b, "%s (%s): %s, score %s\n", e.Name, e.Type, e.Verdict, verdict.FormatScore(e.Score))
		for _, m := range e.Misses {
			b.WriteString("  miss: " + m + "\n")
		}
		if e.Reasoning != "" {
			b.WriteString("  " + e.Reasoning + "\n")
		}
	}
	return b.String()
}

// xmlSafe replaces what XML 1.0 cannot hold (control characters other than tab and newlines, invalid UTF-8) with
// U+FFFD: the runner's answers and the evaluators' messages are hostile text, written as CDATA unescaped.
func xmlSafe(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n' || r == '\r',
			r >= 0x20 && r <= 0xD7FF && r != utf8.RuneError,
			r >= 0xE000 && r <= 0xFFFD,
			r >= 0x10000 && r <= 0x10FFFF:
			return r
		}
		return '\uFFFD'
	}, s)
}

func seconds(s float64) string { return strconv.FormatFloat(s, 'f', 3, 64) }
