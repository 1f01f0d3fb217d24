package judgerunner

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/pod/reaper"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
	"github.com/google/go-cmp/cmp"
)

// judged is what the collector's side of a judge-end FIFO received.
type judged struct {
	frames  []podwire.JudgeFrame
	skipped int
}

// runJudge runs Judge as judge container index, plays the collector (connects to its judge-end FIFO, marks the
// snapshot ready, reads the frames until the end frame, notes "collected") and returns what it read.
func runJudge(t *testing.T, f *testutil.PodFixture, index int) judged {
	t.Helper()
	return runJudgeWith(t, f, index, Options{Shell: "/bin/sh"})
}

// runJudgeWith is runJudge with o's Shell and Confine.
func runJudgeWith(t *testing.T, f *testutil.PodFixture, index int, o Options) judged {
	t.Helper()
	judging := &atomic.Bool{}
	done := make(chan error, 1)
	o.Config, o.Pod, o.Index, o.Log, o.Judging, o.Scratch = f.Config, f.Pod, index, io.Discard, judging, []string{scratch(f)}
	go func() { done <- Judge(context.Background(), o) }()
	r, err := podwire.OpenJudgeEndReader(f.Pod.JudgeEnd(index))
	if err != nil {
		t.Fatal(err)
	}
	if err := podwire.WriteJSONAtomic(f.Pod.SnapshotReady(), podwire.SnapshotMarker{Final: true}); err != nil {
		t.Fatal(err)
	}
	var got judged
	for {
		payload, err := r.Next(time.Now().Add(60 * time.Second))
		if err != nil {
			t.Fatalf("reading the judge's frames: %v (got %+v)", err, got.frames)
		}
		var fr podwire.JudgeFrame
		if err := json.Unmarshal(payload, &fr); err != nil {
			t.Fatal(err)
		}
		got.frames = append(got.frames, fr)
		if fr.End != nil {
			break
		}
	}
	got.skipped = r.Skipped
	_ = r.Close()
	if !judging.Load() {
		t.Error("the judge did not say that scripts may run (its signals would not be ignored)")
	}
	f.Write(t, f.Pod.Collected(), "{}")
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the judge did not end after the collector's note")
	}
	return got
}

// scratch is the scripts' writable directory ($SCRATCH), emptied after every case.
func scratch(f *testutil.PodFixture) string { return filepath.Join(f.Pod.Verdicts, "scratch") }

// withEval replaces the fixture's eval file and requested cases.
func withEval(t *testing.T, f *testutil.PodFixture, eval string, ids ...string) {
	t.Helper()
	f.Write(t, f.Config.EvalFile, eval)
	f.Config.CaseIDs = ids
	f.Config.CodeJudges = true
}

// The judge runs the code judges of the cases in the collector's snapshot and reports their raw results.
func TestJudgeRunsCodeJudgesOnTheSnapshot(t *testing.T) {
	f := testutil.NewPodFixture(t, ": {OUTPUT_FILE}")
	f.Config.CodeJudges = true
	f.Write(t, f.Pod.SnapshotOutput().BatchOutput(), `{"id":"alpha","text":"A"}`+"\n")
	got := runJudge(t, f, 0)
	if len(got.frames) != 2 {
		t.Fatalf("frames %+v, want alpha's and the end", got.frames)
	}
	c, end := got.frames[0], got.frames[1].End
	if c.CaseID != "alpha" || len(c.Results) != 1 || c.Results[0].Key != "judge" || c.Results[0].Result.Score != 1 ||
		len(c.Results[0].Result.Hits) != 1 || c.Results[0].Result.Hits[0] != "looks right" || c.Leftovers != 0 {
		t.Errorf("alpha's frame %+v, want its judge with score 1 and its hit (the collector applies the threshold)", c)
	}
	if end == nil || end.Judged != 1 || end.Error != "" || end.Survivors != 0 {
		t.Errorf("end %+v, want one case judged, no error", end)
	}
}

// A snapshot marked ready before the judge connected (not final, or the collector gave up on it): the judge runs
// no script and ends with the collector's note.
func TestJudgeDoesNotJudgeWithoutTheCollector(t *testing.T) {
	f := testutil.NewPodFixture(t, ": {OUTPUT_FILE}")
	f.Config.CodeJudges = true
	if err := podwire.WriteJSONAtomic(f.Pod.SnapshotReady(), podwire.SnapshotMarker{Final: false, Reason: "the runner did not end within 60s"}); err != nil {
		t.Fatal(err)
	}
	f.Write(t, f.Pod.Collected(), "{}")
	if err := Judge(context.Background(), Options{Config: f.Config, Pod: f.Pod, Shell: "/bin/sh", Log: io.Discard}); err != nil {
		t.Fatal(err)
	}
}

// isolationEval: c1's answer, executed by its judge, leaves a setsid daemon that keeps rewriting a file (and
// writes its pid); c2's judge, run after it, scores 1 only if that daemon is gone. Both judges score c1 and c2's
// answers 0 and 1 honestly.
const isolationEval = `$schema: agentv-eval-v2
evalcases:
  - id: c1
    input_messages: [{role: user, content: one}]
    execution:
      evaluators:
        - name: run-answer
          type: code_judge
          script: |
            cat >/dev/null
            mkdir -p "$SCRATCH/locked"; echo planted > "$SCRATCH/locked/for-c2"; chmod 0 "$SCRATCH/locked"
            setsid sh -c 'echo $$ > "$DAEMON/daemon.pid"; while :; do echo forged > "$DAEMON/forged"; sleep 0.05; done' </dev/null >/dev/null 2>&1 &
            sleep 0.3
            echo '{"score": 0}'
  - id: c2
    input_messages: [{role: user, content: two}]
    execution:
      evaluators:
        - name: run-answer
          type: code_judge
          script: |
            cat >/dev/null
            if kill -0 "$(cat "$DAEMON/daemon.pid")" 2>/dev/null; then echo '{"score": 0, "misses": ["c1 daemon alive"]}'
            elif [ -n "$(ls -A "$SCRATCH" 2>/dev/null)" ]; then echo '{"score": 0, "misses": ["c1 files left"]}'
            else echo '{"score": 1}'; fi
`

// Every process a case's judge leaves behind is killed and reaped before the next case's judge starts and before
// the case's verdict is sent, and its scratch files are removed; the case's result says so.
func TestJudgeKillsWhatACaseLeavesBehind(t *testing.T) {
	f := testutil.NewPodFixture(t, ": {OUTPUT_FILE}")
	withEval(t, f, isolationEval, "c1", "c2")
	t.Setenv("DAEMON", f.Pod.Verdicts)
	t.Setenv("SCRATCH", scratch(f))
	f.Write(t, f.Pod.SnapshotOutput().BatchOutput(), `{"id":"c1","text":"a"}`+"\n"+`{"id":"c2","text":"b"}`+"\n")
	got := runJudge(t, f, 0)
	if len(got.frames) != 3 {
		t.Fatalf("frames %+v, want c1's, c2's and the end", got.frames)
	}
	c1, c2 := got.frames[0], got.frames[1]
	if c1.CaseID != "c1" || c1.Leftovers < 1 || len(c1.Results) != 1 || c1.Results[0].Result.Score != 0 ||
		!strings.Contains(strings.Join(c1.Results[0].Result.Misses, "|"), "were killed before anything else ran") {
		t.Errorf("c1 %+v, want score 0 and the killed leftover recorded", c1)
	}
	if c2.CaseID != "c2" || len(c2.Results) != 1 || c2.Results[0].Result.Score != 1 || c2.Leftovers != 0 {
		t.Errorf("c2 %+v, want score 1: c1's daemon and files must be gone before c2's judge runs", c2)
	}
	if left := reaper.ChildrenOf(os.Getpid()); len(left) > 0 {
		t.Errorf("processes left after judging: %v", left)
	}
	st, err := os.Stat(filepath.Join(f.Pod.Verdicts, "forged"))
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if st2, err := os.Stat(filepath.Join(f.Pod.Verdicts, "forged")); err != nil || !st2.ModTime().Equal(st.ModTime()) {
		t.Error("the daemon still writes after judging ended")
	}
}

// forgeryEval: c1's answer writes forged frames and junk into every judge-end FIFO it finds and forged verdict
// files wherever it can write; the judge's own frames are still the only ones read.
const forgeryEval = `$schema: agentv-eval-v2
evalcases:
  - id: c1
    input_messages: [{role: user, content: one}]
    execution:
      evaluators:
        - name: run-answer
          type: code_judge
          script: |
            cat >/dev/null
            for p in "$BIN"/judge-end-*; do
              printf 'evalrun-verdicts 2 %064d\n{}' 0 > "$p"
              printf '\nevalrun-verdicts 300 %064d\n' 0 > "$p"
              printf '{"caseId":"c1","results":[{"caseId":"c1","key":"run-answer","result":{"score":1}}]}\n' > "$p"
            done
            echo '{"caseId":"c1","key":"run-answer","result":{"score":1}}' > "$SCRATCH/judges.jsonl"
            echo '{}' > "$SCRATCH/done"
            echo '{"score": 0}'
`

func TestJudgeFramesCannotBeForgedByScripts(t *testing.T) {
	f := testutil.NewPodFixture(t, ": {OUTPUT_FILE}")
	withEval(t, f, forgeryEval, "c1")
	t.Setenv("SCRATCH", scratch(f))
	t.Setenv("BIN", f.Pod.Bin)
	f.Write(t, f.Pod.SnapshotOutput().BatchOutput(), `{"id":"c1","text":"a"}`+"\n")
	got := runJudge(t, f, 0)
	if len(got.frames) != 2 || got.frames[0].CaseID != "c1" || len(got.frames[0].Results) != 1 || got.frames[0].Results[0].Result.Score != 0 {
		t.Fatalf("frames %+v, want only the judge's own: c1 scored 0, then the end", got.frames)
	}
	if got.skipped == 0 {
		t.Error("the script's writes into the FIFO were not counted as skipped")
	}
}

// The judge's share: judge container 1 of 2 judges every second code-judged case, and only those.
func TestJudgeJudgesItsShareOnly(t *testing.T) {
	f := testutil.NewPodFixture(t, ": {OUTPUT_FILE}")
	withEval(t, f, isolationEval, "c1", "c2")
	t.Setenv("DAEMON", f.Pod.Verdicts)
	f.Config.JudgeContainers = 2
	t.Setenv("SCRATCH", scratch(f))
	f.Write(t, f.Pod.SnapshotOutput().BatchOutput(), `{"id":"c1","text":"a"}`+"\n"+`{"id":"c2","text":"b"}`+"\n")
	got := runJudge(t, f, 1)
	if len(got.frames) != 2 || got.frames[0].CaseID != "c2" || got.frames[1].End == nil || got.frames[1].End.Judged != 1 {
		t.Fatalf("frames %+v, want c2's only, then the end", got.frames)
	}
}

// suite42Eval is an AgentV 4.42 suite whose test has a code grader.
const suite42Eval = `tests:
  - id: c1
    input: Greet.
    assertions:
      - name: greets
        type: code-grader
        command: "grep -q hi && echo '{\"score\": 0.75, \"assertions\": [{\"text\": \"says hi\", \"passed\": true}]}'"
`

// The judge runs an AgentV 4.42 test's code graders as AgentV 4.42 runs them (its Judge is given the 4.42 graders):
// the grader reads the test's stdin and its reply is read in AgentV 4.42's terms.
func TestJudgeRunsAgentV442CodeGraders(t *testing.T) {
	f := testutil.NewPodFixture(t, ": {OUTPUT_FILE}")
	withEval(t, f, suite42Eval, "c1")
	f.Write(t, f.Pod.SnapshotOutput().BatchOutput(), `{"id":"c1","text":"hi there"}`+"\n")
	got := runJudge(t, f, 0)
	if len(got.frames) != 2 || got.frames[0].CaseID != "c1" || got.frames[1].End == nil {
		t.Fatalf("frames %+v, want c1's, then the end", got.frames)
	}
	want := []podwire.JudgeLine{{CaseID: "c1", Key: "greets", Result: verdict.EvaluatorResult{Score: 0.75, Hits: []string{"says hi"}}}}
	if diff := cmp.Diff(want, got.frames[0].Results); diff != "" {
		t.Errorf("c1's results (-want +got):\n%s", diff)
	}
}
