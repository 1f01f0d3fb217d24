package results

import (
	"encoding/json"
	"testing"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
)

// The runner's bytes in every status text of the section (the answer, an evaluator's message quoting it, the
// case's error, a parse error's excerpt and message, an unexpected id, the collection message, the launcher's
// stderr tail) are escaped; the stored result line keeps them as written.
func TestSectionEscapesRunnerBytes(t *testing.T) {
	b := NewBuilder(Options{ConfigMaps: []string{"r-results-0"}})
	c := mkCase(0, evalsv1alpha1.VerdictError, testutil.HostileText)
	c.Status.Error = "the answer " + testutil.HostileText
	c.Status.Evaluators = []evalsv1alpha1.EvaluatorSummary{{Name: "e", Type: "contains", Verdict: evalsv1alpha1.VerdictFail, Message: "want x, got " + testutil.HostileText}}
	if err := b.Add(c); err != nil {
		t.Fatal(err)
	}
	tl := tail()
	tl.Collection.Message = "line 1: " + testutil.HostileText
	tl.Collection.Launcher = &evalsv1alpha1.LauncherReport{StderrTail: testutil.HostileText}
	tl.ParseErrors, tl.ParseErrorCount = []evalsv1alpha1.ParseError{{Line: 1, Excerpt: testutil.HostileText, Message: "not JSON: " + testutil.HostileText}}, 1
	tl.UnexpectedIDs, tl.UnexpectedCount = []string{testutil.HostileText}, 1
	out, err := b.Finish(tl)
	if err != nil {
		t.Fatal(err)
	}
	s := out.Section
	if len(s.Cases) != 1 || len(s.Cases[0].Evaluators) != 1 || len(s.ParseErrors) != 1 || len(s.UnexpectedIDs) != 1 {
		t.Fatalf("section = %+v", s)
	}
	testutil.AssertPrintable(t, "cases[].answer", s.Cases[0].Answer)
	testutil.AssertPrintable(t, "cases[].error", s.Cases[0].Error)
	testutil.AssertPrintable(t, "cases[].evaluators[].message", s.Cases[0].Evaluators[0].Message)
	testutil.AssertPrintable(t, "parseErrors[].excerpt", s.ParseErrors[0].Excerpt)
	testutil.AssertPrintable(t, "parseErrors[].message", s.ParseErrors[0].Message)
	testutil.AssertPrintable(t, "unexpectedIDs[]", s.UnexpectedIDs[0])
	testutil.AssertPrintable(t, "collection.message", s.Collection.Message)
	testutil.AssertPrintable(t, "collection.launcher.stderrTail", s.Collection.Launcher.StderrTail)
	// The stored line is the data: lossless.
	var stored struct{ Answer string }
	if err := json.Unmarshal([]byte(decodeChunks(t, out.Chunks)[0]), &stored); err != nil || stored.Answer != testutil.HostileText {
		t.Errorf("stored answer = %q (%v), want the runner's bytes as written", stored.Answer, err)
	}
}
