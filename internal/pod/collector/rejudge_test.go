package collector

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/outcome"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/records"
)

// recordChunk is one records chunk holding recs, as a source run's collector stores it.
func recordChunk(t *testing.T, recs ...records.Record) []byte {
	t.Helper()
	k := records.NewKeeper(evalsv1alpha1.RecordsInConfigMaps, []string{"src-evalrun-records-0"}, podwire.MaxRecordConfigMapBytes)
	for i := range recs {
		if err := k.Add(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	chunks, _, err := k.Finish()
	if err != nil || len(chunks) != 1 {
		t.Fatalf("%d chunks, %v", len(chunks), err)
	}
	return chunks[0].Data
}

// chunkSource is a RecordSource of the chunks.
func chunkSource(chunks ...[]byte) RecordSource {
	return func(_ context.Context, f func(string, []byte) error) error {
		for _, c := range chunks {
			if err := f("test chunk", c); err != nil {
				return err
			}
		}
		return nil
	}
}

// rejudgeFixture is a pod fixture of a re-judge of EvalRun "src".
func rejudgeFixture(t *testing.T, batching string) (*fixture, *evalfile.File, map[string]string) {
	t.Helper()
	f := newFixture(t)
	f.Config.Batching = batching
	f.Config.Rejudge = &podwire.Rejudge{From: "src", FromUID: "uid-1", ConfigMaps: []string{"src-evalrun-records-0"}}
	data, err := os.ReadFile(f.Config.EvalFile)
	if err != nil {
		t.Fatal(err)
	}
	file, err := evalfile.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return f, file, caseDigests(t, f.Config)
}

// TestRejudgeBatched: the source's kept records are hostile data. Only a record filed under a requested case, the
// first of its id, whose digest is the one this run's eval file gives and that reads as its own case's, goes into
// the snapshot's JSONL file; every other requested case is missing with its own error, and counted. The judged
// case says which run answered it.
func TestRejudgeBatched(t *testing.T) {
	f, file, digest := rejudgeFixture(t, string(evalsv1alpha1.BatchingBatched))
	beta := `{"id":"beta","text":"B"}`
	chunk := recordChunk(t,
		records.New("zeta", digest["beta"], records.ModeLine, []byte(`{"id":"zeta","text":"not requested"}`)),
		records.New("beta", digest["beta"], records.ModeLine, []byte(beta)),
		records.New("beta", digest["beta"], records.ModeLine, []byte(`{"id":"beta","text":"a later claim"}`)),
		records.New("alpha", strings.Repeat("0", 64), records.ModeLine, []byte(`{"id":"alpha","text":"A"}`)),
		records.New("gamma", digest["gamma"], records.ModeLine, []byte(`{"id":"delta","text":"claims another case"}`)),
	)
	rj, err := WriteRejudgeSnapshot(context.Background(), f.Config, file, chunkSource(chunk), f.Pod.SnapshotOutput())
	if err != nil {
		t.Fatal(err)
	}
	if got := [4]int{rj.Judged, rj.InputChanged, rj.Unreadable, rj.NotKept}; got != [4]int{1, 1, 1, 1} {
		t.Errorf("judged, input changed, unreadable, not kept = %v, want one each", got)
	}
	out, err := os.ReadFile(f.Pod.SnapshotOutput().BatchOutput())
	if err != nil || string(out) != beta+"\n" {
		t.Errorf("snapshot output %q, %v; want only beta's record", out, err)
	}
	in := GatherInput{Config: f.Config, Output: f.Pod.SnapshotOutput(), Snapshot: rj.Snapshot, EndCause: outcome.EndEnded,
		PodName: "pod-1", Now: time.Now(), EvalFile: file, MissingReasons: rj.MissingReasons, AnsweredBy: "src", Note: rj.Note("src")}
	g, err := Gather(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"alpha": "not judged: the case's input changed since EvalRun src answered it",
		"gamma": "not judged: the record EvalRun src kept does not read as this case's: it is the record of another case",
		"delta": "not judged: EvalRun src kept no record of this case",
	}
	for _, c := range g.Output.Section.Cases {
		switch {
		case c.ID == "beta":
			if c.Verdict == evalsv1alpha1.VerdictError || ptr.Deref(c.AnsweredBy, "") != "src" {
				t.Errorf("beta = %+v, want judged and answeredBy src", c)
			}
		case !strings.HasPrefix(c.Error, want[c.ID]) || c.AnsweredBy != nil:
			t.Errorf("case %s: error %q, answeredBy %v; want an error starting %q", c.ID, c.Error, c.AnsweredBy, want[c.ID])
		}
	}
	if g.Summary.Missing != 3 || g.Summary.Total != 4 {
		t.Errorf("summary %+v, want 3 of 4 missing", g.Summary)
	}
	if msg := g.Output.Section.Collection.Message; !strings.Contains(msg, "judged 1 records kept by EvalRun src, 1 not judged (input changed), 1 not judged (record not kept), 1 not judged (record unreadable)") {
		t.Errorf("collection message %q does not say what the re-judge did", msg)
	}
}

// TestRejudgePerCase: each kept record of a PerCase source is its case's file in the snapshot; a record kept in
// another mode than the source's runner wrote is not judged.
func TestRejudgePerCase(t *testing.T) {
	f, file, digest := rejudgeFixture(t, string(evalsv1alpha1.BatchingPerCase))
	chunk := recordChunk(t,
		records.New("delta", digest["delta"], records.ModeSingle, []byte("plain\ntext\n")),
		records.New("beta", digest["beta"], records.ModeLine, []byte(`{"id":"beta","text":"B"}`)),
	)
	rj, err := WriteRejudgeSnapshot(context.Background(), f.Config, file, chunkSource(chunk), f.Pod.SnapshotOutput())
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(f.Pod.SnapshotOutput().CaseOutput("delta"))
	if err != nil || string(got) != "plain\ntext\n" {
		t.Errorf("delta's file %q, %v", got, err)
	}
	if _, err := os.Stat(f.Pod.SnapshotOutput().CaseOutput("beta")); err == nil {
		t.Error("beta's record, kept in another mode, was written")
	}
	wantReasons := []string{"alpha", "beta", "gamma"}
	var reasons []string
	for _, id := range f.Config.CaseIDs {
		if _, ok := rj.MissingReasons[id]; ok {
			reasons = append(reasons, id)
		}
	}
	if diff := cmp.Diff(wantReasons, reasons); diff != "" {
		t.Errorf("cases not judged (-want +got):\n%s", diff)
	}
	if !strings.Contains(rj.MissingReasons["beta"], `it was read in mode "jsonl", the source's runner wrote "single"`) {
		t.Errorf("beta's reason %q", rj.MissingReasons["beta"])
	}
}

// TestRejudgeBatchBound: records past the output bound are not judged, and say why.
func TestRejudgeBatchBound(t *testing.T) {
	f, file, digest := rejudgeFixture(t, string(evalsv1alpha1.BatchingBatched))
	f.Config.MaxOutputBytes = 30
	chunk := recordChunk(t,
		records.New("beta", digest["beta"], records.ModeLine, []byte(`{"id":"beta","text":"B"}`)),
		records.New("gamma", digest["gamma"], records.ModeLine, []byte(`{"id":"gamma","text":"G"}`)),
	)
	rj, err := WriteRejudgeSnapshot(context.Background(), f.Config, file, chunkSource(chunk), f.Pod.SnapshotOutput())
	if err != nil {
		t.Fatal(err)
	}
	if rj.Judged != 1 || !strings.Contains(rj.MissingReasons["gamma"], "past its bound of 30 bytes") {
		t.Errorf("judged %d, gamma's reason %q", rj.Judged, rj.MissingReasons["gamma"])
	}
}
