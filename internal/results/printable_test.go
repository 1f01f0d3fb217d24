package results

import (
	"encoding/json"
	"strings"
	"testing"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
)

// hostile is what a runner may write: a terminal escape that clears the screen and prints a green PASS, a forged
// line break, bidi overrides and a C1 control.
const hostile = "\x1b[2J\x1b[32mPASS\r\nSucceeded \u202eSSAP\u202c \u2066x\u2069 \u009b31m"

func assertPrintable(t *testing.T, what, s string) {
	t.Helper()
	if strings.ContainsAny(s, "\x1b\r\n\u202e\u202c\u2066\u2069\u009b") {
		t.Errorf("%s carries raw control characters: %q", what, s)
	}
	if !strings.Contains(s, `\x1b[2J\x1b[32mPASS`) || !strings.Contains(s, `\u202eSSAP`) {
		t.Errorf("%s does not show the runner's bytes escaped: %q", what, s)
	}
}

// The runner's bytes in every status text of the section (the answer, an evaluator's message quoting it, the
// case's error, a parse error's excerpt and message, an unexpected id, the collection message, the launcher's
// stderr tail) are escaped; the stored result line keeps them as written.
func TestSectionEscapesRunnerBytes(t *testing.T) {
	b := NewBuilder(Options{ConfigMaps: []string{"r-results-0"}})
	c := mkCase(0, evalsv1alpha1.VerdictError, hostile)
	c.Status.Error = "the answer " + hostile
	c.Status.Evaluators = []evalsv1alpha1.EvaluatorSummary{{Name: "e", Type: "contains", Verdict: evalsv1alpha1.VerdictFail, Message: "want x, got " + hostile}}
	if err := b.Add(c); err != nil {
		t.Fatal(err)
	}
	tl := tail()
	tl.Collection.Message = "line 1: " + hostile
	tl.Collection.Launcher = &evalsv1alpha1.LauncherReport{StderrTail: hostile}
	tl.ParseErrors, tl.ParseErrorCount = []evalsv1alpha1.ParseError{{Line: 1, Excerpt: hostile, Message: "not JSON: " + hostile}}, 1
	tl.UnexpectedIDs, tl.UnexpectedCount = []string{hostile}, 1
	out, err := b.Finish(tl)
	if err != nil {
		t.Fatal(err)
	}
	s := out.Section
	if len(s.Cases) != 1 || len(s.Cases[0].Evaluators) != 1 || len(s.ParseErrors) != 1 || len(s.UnexpectedIDs) != 1 {
		t.Fatalf("section = %+v", s)
	}
	assertPrintable(t, "cases[].answer", s.Cases[0].Answer)
	assertPrintable(t, "cases[].error", s.Cases[0].Error)
	assertPrintable(t, "cases[].evaluators[].message", s.Cases[0].Evaluators[0].Message)
	assertPrintable(t, "parseErrors[].excerpt", s.ParseErrors[0].Excerpt)
	assertPrintable(t, "parseErrors[].message", s.ParseErrors[0].Message)
	assertPrintable(t, "unexpectedIDs[]", s.UnexpectedIDs[0])
	assertPrintable(t, "collection.message", s.Collection.Message)
	assertPrintable(t, "collection.launcher.stderrTail", s.Collection.Launcher.StderrTail)
	// The stored line is the data: lossless.
	var stored struct{ Answer string }
	if err := json.Unmarshal([]byte(decodeChunks(t, out.Chunks)[0]), &stored); err != nil || stored.Answer != hostile {
		t.Errorf("stored answer = %q (%v), want the runner's bytes as written", stored.Answer, err)
	}
}
