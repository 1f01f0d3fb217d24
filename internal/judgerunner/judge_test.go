package judgerunner

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/layout"
	"github.com/evalrun-operator/evalrun-operator/internal/podfiles"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
)

// runJudge runs Judge until it returns, noting "collected" once the verdicts are done, as the collector does.
func runJudge(t *testing.T, f *testutil.PodFixture) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		done <- Judge(context.Background(), Options{Config: f.Config, Pod: f.Pod, Shell: "/bin/sh", Log: io.Discard})
	}()
	if err := podfiles.WaitForFile(context.Background(), f.Pod.JudgesDone(), 30*time.Second); err != nil {
		t.Fatal(err)
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
}

func judgeLines(t *testing.T, f *testutil.PodFixture) []layout.JudgeLine {
	t.Helper()
	fh, err := os.Open(f.Pod.JudgeResults())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = fh.Close() }()
	var out []layout.JudgeLine
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		var l layout.JudgeLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		out = append(out, l)
	}
	return out
}

// The judge runs the code judges of the cases in the collector's snapshot and records their raw results.
func TestJudgeRunsCodeJudgesOnTheSnapshot(t *testing.T) {
	f := testutil.NewPodFixture(t, ": {OUTPUT_FILE}")
	f.Config.CodeJudges = true
	f.Write(t, f.Pod.SnapshotOutput().BatchOutput(), `{"id":"alpha","text":"A"}`+"\n")
	if err := podfiles.WriteJSONAtomic(f.Pod.SnapshotReady(), layout.SnapshotMarker{Final: true}); err != nil {
		t.Fatal(err)
	}
	runJudge(t, f)
	var m layout.JudgesMarker
	if err := podfiles.ReadJSON(f.Pod.JudgesDone(), &m); err != nil || m.Error != "" {
		t.Fatalf("done marker %+v (%v), want no error", m, err)
	}
	lines := judgeLines(t, f)
	if len(lines) != 1 || lines[0].CaseID != "alpha" || lines[0].Key != "judge" || lines[0].Result.Score != 1 ||
		len(lines[0].Result.Hits) != 1 || lines[0].Result.Hits[0] != "looks right" {
		t.Errorf("judge lines %+v, want alpha's judge with score 1 and its hit (the collector applies the threshold)", lines)
	}
}

// A snapshot taken before the runner ended is not judged: the done marker says why.
func TestJudgeRefusesANonFinalSnapshot(t *testing.T) {
	f := testutil.NewPodFixture(t, ": {OUTPUT_FILE}")
	f.Config.CodeJudges = true
	if err := podfiles.WriteJSONAtomic(f.Pod.SnapshotReady(), layout.SnapshotMarker{Final: false, Reason: "the runner did not end within 60s"}); err != nil {
		t.Fatal(err)
	}
	runJudge(t, f)
	var m layout.JudgesMarker
	if err := podfiles.ReadJSON(f.Pod.JudgesDone(), &m); err != nil || !strings.Contains(m.Error, "not final (the runner did not end within 60s)") {
		t.Errorf("done marker %+v (%v), want the reason the snapshot was not final", m, err)
	}
}
