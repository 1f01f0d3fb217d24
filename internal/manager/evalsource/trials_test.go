package evalsource

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	// The manager reads AgentV 4.42 suites: cmd/manager links the reader, which registers itself.
	_ "github.com/evalrun-operator/evalrun-operator/internal/evalfile/suite42"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
)

// TestFileTrials: an AgentV 4.42 suite's own trials reach what the manager builds run.json from (JudgeLoad), read
// whole (an inline or ConfigMap file) or streamed (a bucket object, through Scan's facts); a file without them has
// none.
func TestFileTrials(t *testing.T) {
	suite := "execution:\n  trials:\n    count: 4\ntests:\n  - {id: a, input: q, criteria: c}\n"
	want := &evalfile.FileTrials{Count: 4, PassRate: "0.25", Line: 3}
	run := testutil.UnitRun()
	whole, msg := ValidateEvalFile(run, []byte(suite))
	if msg != "" {
		t.Fatal(msg)
	}
	facts, err := evalfile.Scan(bytes.NewReader([]byte(suite)))
	if err != nil {
		t.Fatal(err)
	}
	streamed := newFile(facts, facts.Text(), "digest")
	for name, f := range map[string]File{"whole": whole, "streamed": streamed} {
		if diff := cmp.Diff(want, f.Trials()); diff != "" {
			t.Errorf("%s: trials (-want +got):\n%s", name, diff)
		}
		if diff := cmp.Diff(want, f.JudgeLoad(run).FileTrials); diff != "" {
			t.Errorf("%s: JudgeLoad's trials (-want +got):\n%s", name, diff)
		}
	}
	v2, msg := ValidateEvalFile(run, []byte(testutil.ScreeningEval))
	if msg != "" || v2.Trials() != nil || v2.JudgeLoad(run).FileTrials != nil {
		t.Errorf("an agentv-eval-v2 file's trials %+v (%s)", v2.Trials(), msg)
	}
}
