package collector

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// judgesEval has three code-judged cases (a, b, c: judge 0 of 2 judges a and c, judge 1 judges b) and one
// without (d).
const judgesEval = `$schema: agentv-eval-v2
evalcases:
  - id: a
    input_messages: [{role: user, content: a}]
    execution: {evaluators: [{name: t, type: code_judge, script: "true"}]}
  - id: b
    input_messages: [{role: user, content: b}]
    execution: {evaluators: [{name: t, type: code_judge, script: "true"}]}
  - id: c
    input_messages: [{role: user, content: c}]
    execution: {evaluators: [{name: t, type: code_judge, script: "true"}]}
  - id: d
    input_messages: [{role: user, content: d}]
`

func newJudgesFixture(t *testing.T, judges int32) *fixture {
	t.Helper()
	f := newFixture(t)
	f.write(t, f.Config.EvalFile, judgesEval)
	f.Config.CaseIDs = []string{"a", "b", "c", "d"}
	f.Config.CodeJudges, f.Config.JudgeContainers = true, judges
	return f
}

// fakeJudge plays judge container index's judge runner: it connects, waits for the snapshot and sends frames
// (then the end frame unless crash).
func fakeJudge(t *testing.T, f *fixture, index int, frames []podwire.JudgeFrame, crash bool) {
	t.Helper()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		w, err := podwire.OpenJudgeEnd(ctx, f.Pod.JudgeEnd(index), nil)
		if err != nil || w == nil {
			t.Errorf("judge %d: %v", index, err)
			return
		}
		defer func() { _ = w.Close() }()
		if err := podwire.WaitForFile(ctx, f.Pod.SnapshotReady(), 0); err != nil {
			t.Errorf("judge %d: %v", index, err)
			return
		}
		for _, fr := range frames {
			if err := w.Send(fr); err != nil {
				t.Errorf("judge %d: %v", index, err)
			}
		}
		if !crash {
			_ = w.Send(podwire.JudgeFrame{End: &podwire.JudgeEnd{Judged: len(frames)}})
		}
	}()
}

func caseFrame(id string, lines ...podwire.JudgeLine) podwire.JudgeFrame {
	return podwire.JudgeFrame{CaseID: id, Results: lines}
}

func line(id, key string, score float64) podwire.JudgeLine {
	return podwire.JudgeLine{CaseID: id, Key: key, Result: verdict.EvaluatorResult{Name: key, Type: "code_judge", Score: score}}
}

func handOff(t *testing.T, f *fixture, timeout time.Duration) (Verdicts, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	v, problems, _ := handOffToJudge(ctx, Options{Config: f.Config, Pod: f.Pod, Log: testWriter{t}}, nil, true, "")
	return v, problems
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

func scores(v Verdicts) map[string]float64 {
	out := map[string]float64{}
	for id, m := range v {
		for key, r := range m {
			out[id+"/"+key] = r.Score
		}
	}
	return out
}

// The collector accepts, from each judge, the first result of each invocation it asked that judge for; lines for
// another judge's cases, unknown cases or keys, and repeats are ignored and said so. A script's writes into the
// FIFO, a forged verdicts file and a fake done marker change nothing.
func TestHandOffAcceptsOnlyAskedInvocations(t *testing.T) {
	f := newJudgesFixture(t, 2)
	fakeJudge(t, f, 0, []podwire.JudgeFrame{
		caseFrame("a", line("a", "t", 0), line("a", "t", 1), line("a", "other", 1)),
		caseFrame("b", line("b", "t", 1)), // judge 1's case
		caseFrame("zzz", line("zzz", "t", 1)),
		caseFrame("c", line("a", "t", 1), line("c", "t", 0)),
	}, false)
	fakeJudge(t, f, 1, []podwire.JudgeFrame{caseFrame("b", line("b", "t", 0)), caseFrame("d", line("d", "t", 1))}, false)
	// A script's forgeries, wherever it can write: the judge's own volume and the FIFOs.
	f.write(t, filepath.Join(f.Pod.Verdicts, "judges.jsonl"), `{"caseId":"a","key":"t","result":{"score":1}}`+"\n")
	f.write(t, filepath.Join(f.Pod.Verdicts, "done"), "{}")
	go func() {
		if err := podwire.WaitForFile(context.Background(), f.Pod.SnapshotReady(), 10*time.Second); err != nil {
			return
		}
		for i := range 2 {
			fd, err := unix.Open(f.Pod.JudgeEnd(i), unix.O_WRONLY|unix.O_NONBLOCK, 0)
			if err != nil {
				continue
			}
			_, _ = unix.Write(fd, []byte("\nevalrun-verdicts 60 "+strings.Repeat("ab", 32)+"\n"+`{"caseId":"a","results":[{"caseId":"a","key":"t","result":{"score":1}}]}`+"\n"))
			_ = unix.Close(fd)
		}
	}()
	v, note := handOff(t, f, 20*time.Second)
	if diff := cmp.Diff(map[string]float64{"a/t": 0, "b/t": 0, "c/t": 0}, scores(v)); diff != "" {
		t.Errorf("accepted verdicts (-want +got):\n%s", diff)
	}
	for _, want := range []string{
		`judge: 5 results ignored`, `case "a" evaluator "t" was reported again`, `case "a" evaluator "other" was not asked of judge`,
		`case "b" is not judge's`, `judge-1: 1 results ignored (case "d" is not judge-1's)`,
	} {
		if !strings.Contains(note, want) {
			t.Errorf("note %q does not say %q", note, want)
		}
	}
	var n verdictsNote
	if err := podwire.ReadJSON(f.Pod.JudgeVerdicts(), &n); err != nil || len(n.Verdicts) != 3 {
		t.Errorf("the collector's note of the verdicts: %+v (%v)", n, err)
	}
	if st, err := os.Stat(f.Pod.JudgeVerdicts()); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("the verdicts note's mode: %v (%v), want 0600 (no judge may read it)", st.Mode(), err)
	}
}

// A judge container that ends without its end frame (crashed, OOM-killed) keeps what it reported; the rest of
// its share is missing (the pipeline makes them Errors) and the note says why.
func TestHandOffJudgeThatCrashed(t *testing.T) {
	f := newJudgesFixture(t, 1)
	fakeJudge(t, f, 0, []podwire.JudgeFrame{caseFrame("a", line("a", "t", 0))}, true)
	v, note := handOff(t, f, 20*time.Second)
	if diff := cmp.Diff(map[string]float64{"a/t": 0}, scores(v)); diff != "" {
		t.Errorf("accepted verdicts (-want +got):\n%s", diff)
	}
	if !strings.Contains(note, "judge ended before it reported every case") {
		t.Errorf("note %q does not say the judge ended early", note)
	}
}

// A judge that never connects is given up after the connect timeout, and is never read afterwards; the others
// are judged.
func TestHandOffJudgeThatNeverConnects(t *testing.T) {
	old := judgeConnectTimeout
	judgeConnectTimeout = 500 * time.Millisecond
	t.Cleanup(func() { judgeConnectTimeout = old })
	f := newJudgesFixture(t, 2)
	fakeJudge(t, f, 0, []podwire.JudgeFrame{caseFrame("a", line("a", "t", 0)), caseFrame("c", line("c", "t", 1))}, false)
	v, note := handOff(t, f, 20*time.Second)
	if diff := cmp.Diff(map[string]float64{"a/t": 0, "c/t": 1}, scores(v)); diff != "" {
		t.Errorf("accepted verdicts (-want +got):\n%s", diff)
	}
	if !strings.Contains(note, "judge-1 did not start in time") {
		t.Errorf("note %q does not name judge-1", note)
	}
}

// A judge that never sends its end frame (a script holds everything up) is bounded by the judge deadline.
func TestHandOffIsBoundedByTheJudgeDeadline(t *testing.T) {
	f := newJudgesFixture(t, 1)
	go func() {
		w, err := podwire.OpenJudgeEnd(context.Background(), f.Pod.JudgeEnd(0), nil)
		if err != nil || w == nil {
			return
		}
		time.Sleep(5 * time.Second)
		_ = w.Close()
	}()
	start := time.Now()
	v, note := handOff(t, f, 1500*time.Millisecond)
	if len(v) != 0 || !strings.Contains(note, "judge did not finish within the judge deadline") {
		t.Errorf("verdicts %v note %q, want none and the deadline", v, note)
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("the hand-off took %s past its deadline", d)
	}
}

// A collector restarted after the snapshot was marked ready cannot trust any key it would read now: without its
// note of the verdicts, the code judges are lost (Errors), never taken from a file.
func TestHandOffAfterARestart(t *testing.T) {
	f := newJudgesFixture(t, 1)
	if err := podwire.WriteJSONAtomic(f.Pod.SnapshotReady(), podwire.SnapshotMarker{Final: true}); err != nil {
		t.Fatal(err)
	}
	f.write(t, filepath.Join(f.Pod.Verdicts, "done"), "{}")
	v, note := handOff(t, f, 5*time.Second)
	if v != nil || !strings.Contains(note, "restarted while the code judges ran") {
		t.Errorf("verdicts %v note %q, want none and the restart", v, note)
	}
	want := Verdicts{"a": {"t": {Score: 0.5}}}
	if err := noteVerdicts(f.Pod, want, nil, nil); err != nil {
		t.Fatal(err)
	}
	v, _ = handOff(t, f, 5*time.Second)
	if diff := cmp.Diff(want, v); diff != "" {
		t.Errorf("verdicts from the note (-want +got):\n%s", diff)
	}
}
