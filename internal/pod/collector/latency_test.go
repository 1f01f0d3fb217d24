package collector

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/outcome"
	"github.com/evalrun-operator/evalrun-operator/internal/pod/launcher"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// latencyEval judges two cases by latency alone, with a threshold the slow case's invocation passes.
const latencyEval = `evalcases:
  - id: slow
    input_messages: [{role: user, content: q}]
    evaluators: [{name: fast, type: latency, threshold: 300}]
  - id: quick
    input_messages: [{role: user, content: q}]
    evaluators: [{name: fast, type: latency, threshold: 300}]
`

// TestHostileRunnerClaimsALatency: a PerCase runner that claims duration_ms 1 for every case but sleeps past the
// latency threshold in one of them fails latency there: the launcher (PID 1 of the runner container, out of the
// runner's reach) measures each invocation, its report carries every case's wall time by position through the
// runner-end FIFO, and the latency evaluator judges that, saying so. The quick case passes on its measurement.
func TestHostileRunnerClaimsALatency(t *testing.T) {
	f := newFixture(t)
	evalPath := filepath.Join(f.Dir, "latency.yaml")
	if err := os.WriteFile(evalPath, []byte(latencyEval), 0o644); err != nil {
		t.Fatal(err)
	}
	f.Config.EvalFile, f.Config.CaseIDs = evalPath, []string{"slow", "quick"}
	f.Config.Batching, f.Config.Workers = "PerCase", 2
	f.Config.ResultConfigMaps = []string{"run-results-0"}
	f.Config.CommandTemplate = `[ {EVAL_ID} != slow ] || sleep 0.6; printf '{"text":"fast, honestly","duration_ms":1}' > {OUTPUT_FILE}`

	w := podwire.WatchRunnerEnd(f.Pod.RunnerEnd(), false)
	code := launcher.Launch(context.Background(), launcher.Options{Config: f.Config.RunnerConfig(f.Config.EvalFile), Pod: f.Pod,
		Stdout: io.Discard, Stderr: io.Discard, Log: io.Discard})
	select {
	case <-w.Ended:
	case err := <-w.Failed:
		t.Fatalf("runner-end FIFO: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the runner-end FIFO did not end")
	}
	kind, payload, err := w.Final()
	if err != nil || kind != podwire.FrameEnd || code != 0 {
		t.Fatalf("launcher: code %d, frame %q, %v", code, kind, err)
	}
	rep, err := decodeLauncherReport(payload)
	if err != nil {
		t.Fatal(err)
	}
	if rep.CaseDurations == "" {
		t.Fatalf("the launcher's report carries no case durations: %+v", rep)
	}
	in := GatherInput{Config: f.Config, Output: f.Pod.SnapshotOutput(), EndCause: outcome.EndEnded, PodName: "pod-1", Now: time.Now(),
		Snapshot: TakeSnapshot(f.Config, f.Pod.Output(), f.Pod.SnapshotOutput()), Launcher: rep}
	g, err := Gather(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]results.Line{}
	for id, raw := range decodeAll(t, g) {
		var l results.Line
		if err := json.Unmarshal([]byte(raw), &l); err != nil {
			t.Fatalf("result line %q: %v", raw, err)
		}
		got[id] = l
	}
	slow, quick := got["slow"], got["quick"]
	if slow.Verdict != verdict.VerdictFail || len(slow.Evaluators) != 1 ||
		!strings.HasPrefix(strings.Join(slow.Evaluators[0].Misses, ";"), "measured duration ") ||
		!strings.Contains(slow.Evaluators[0].Reasoning, "the runner claimed 1ms") {
		t.Errorf("slow = %s %+v: a runner's claim of 1ms must not pass a latency it did not meet", slow.Verdict, slow.Evaluators)
	}
	if quick.Verdict != verdict.VerdictPass || !strings.Contains(quick.Evaluators[0].Reasoning, "as the launcher measured") {
		t.Errorf("quick = %s %+v, want Pass on the launcher's measurement", quick.Verdict, quick.Evaluators)
	}
	// The stored metric stays the runner's record (what it reported), as status.cost shows it.
	if slow.DurationMs == nil || *slow.DurationMs != 1 {
		t.Errorf("slow's stored duration_ms %v, want the runner's 1", slow.DurationMs)
	}
}
