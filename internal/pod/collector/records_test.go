package collector

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/records"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
)

// keptRecords reads every record Gather kept.
func keptRecords(t *testing.T, g *Gathered) map[string]*records.Record {
	t.Helper()
	out := map[string]*records.Record{}
	for _, ch := range g.Records {
		if err := records.Each(ch.Data, func(r *records.Record) error {
			if _, dup := out[r.ID]; dup {
				t.Errorf("case %s kept twice", r.ID)
			}
			c := *r
			out[r.ID] = &c
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// caseDigests are the runner-view digests of the fixture's eval file, by case id.
func caseDigests(t *testing.T, cfg *podwire.RunConfig) map[string]string {
	t.Helper()
	data, err := os.ReadFile(cfg.EvalFile)
	if err != nil {
		t.Fatal(err)
	}
	f, err := evalfile.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for i := range f.NumCases() {
		v, err := f.CaseView(i)
		if err != nil {
			t.Fatal(err)
		}
		out[f.CaseAt(i).ID] = records.Digest(v, nil)
	}
	return out
}

// TestGatherKeepsRecords: a hostile runner's batch output. Only the records the pipeline claimed for a requested
// case are kept, each under that case's id, as written, with the digest of that case's runner view: a record for
// an id nobody asked for, a duplicate that tries to replace an earlier record, and a broken line are not kept.
func TestGatherKeepsRecords(t *testing.T) {
	f := newFixture(t)
	f.Config.Records = &podwire.Records{ConfigMaps: []string{"run-records-0"}, ConfigMapsPerShard: 1}
	alpha := `{"id":"alpha","text":"A","output_messages":[{"role":"assistant","content":"A","tool_calls":[{"tool":"search"}]}],"token_usage":{"input":3,"output":1}}`
	f.write(t, f.Pod.Output().BatchOutput(), alpha+"\n"+
		`{"id":"zeta","text":"not requested"}`+"\n"+
		`{"id":"beta","text":"B"}`+"\n"+
		`{"id":"alpha","text":"a later claim on alpha"}`+"\n"+
		`{"id":"gamma","te`+"\n")
	f.finishedRunner(t, 0)
	g := f.gather(t, true)
	kept := keptRecords(t, g)
	want := caseDigests(t, f.Config)
	if len(kept) != 2 {
		t.Fatalf("kept %d records (%v), want alpha and beta", len(kept), kept)
	}
	for id, text := range map[string]string{"alpha": alpha, "beta": `{"id":"beta","text":"B"}`} {
		r := kept[id]
		if string(r.Data()) != text || r.Mode != records.ModeLine || r.ViewSHA256 != want[id] {
			t.Errorf("record of %s = %+v, want %q with digest %s", id, r, text, want[id])
		}
		resp, err := r.Response()
		if err != nil || resp.ID != id {
			t.Errorf("record of %s does not read as its own: %v %v", id, resp, err)
		}
	}
	if diff := cmp.Diff(&evalsv1alpha1.RecordsStatus{Kept: 2, Bytes: int64(len(g.Records[0].Data)), Where: evalsv1alpha1.RecordsInConfigMaps},
		g.Output.Section.Records); diff != "" {
		t.Errorf("status.records (-want +got):\n%s", diff)
	}
	if g.Records[0].Destination != "run-records-0" {
		t.Errorf("records go to %s", g.Records[0].Destination)
	}
}

// TestGatherKeepsPerCaseRecords: one file per case is kept whole, in single-case mode; the runner's own claim of
// an id inside a file does not move it to another case.
func TestGatherKeepsPerCaseRecords(t *testing.T) {
	f := newFixture(t)
	f.Config.Batching = "PerCase"
	f.Config.Records = &podwire.Records{ConfigMaps: []string{"run-records-0"}, ConfigMapsPerShard: 1}
	f.write(t, f.Pod.Output().CaseOutput("alpha"), `{"id":"beta","text":"A"}`)
	f.write(t, f.Pod.Output().CaseOutput("delta"), "plain\ntext\n")
	f.finishedRunner(t, 0)
	g := f.gather(t, true)
	kept := keptRecords(t, g)
	want := caseDigests(t, f.Config)
	if len(kept) != 2 || string(kept["alpha"].Data()) != `{"id":"beta","text":"A"}` || string(kept["delta"].Data()) != "plain\ntext\n" ||
		kept["alpha"].Mode != records.ModeSingle || kept["delta"].ViewSHA256 != want["delta"] {
		t.Errorf("kept %+v", kept)
	}
	if resp, err := kept["alpha"].Response(); err != nil || resp.ID != "alpha" || resp.Text != "A" {
		t.Errorf("alpha's record reads as %+v, %v", resp, err)
	}
}

// TestGatherRecordsBudget: records beyond the record ConfigMaps' room are counted as not kept; the results are
// whole all the same.
func TestGatherRecordsBudget(t *testing.T) {
	f := newFixture(t)
	f.Config.Records = &podwire.Records{} // a budget of no ConfigMaps: nothing fits
	f.write(t, f.Pod.Output().BatchOutput(), `{"id":"alpha","text":"A"}`+"\n"+`{"id":"beta","text":"B"}`+"\n")
	f.finishedRunner(t, 0)
	g := f.gather(t, true)
	if st := g.Output.Section.Records; st == nil || st.Kept != 0 || st.NotKept != 2 || len(g.Records) != 0 {
		t.Errorf("status.records %+v, %d chunks; want both counted as not kept", st, len(g.Records))
	}
	if g.Summary.Total != 4 {
		t.Errorf("summary %+v", g.Summary)
	}
}

// TestGatherRecordsHostileRunner: what the runner writes or can reach never changes a kept record's id or digest.
// Its records carry forged viewSha256, mode and base64 fields and a nested claim of another id; it rewrote the
// runner view it reads (in a pod that file is read-only to it) and left an eval file and a records chunk of its
// own in its output. Every kept record is filed under the id the pipeline claimed, with the digest the pinned eval
// file gives that id, and keeps the runner's bytes only as its text.
func TestGatherRecordsHostileRunner(t *testing.T) {
	f := newFixture(t)
	f.Config.Records = &podwire.Records{ConfigMaps: []string{"run-records-0"}, ConfigMapsPerShard: 1}
	forged := `"viewSha256":"` + strings.Repeat("0", 64) + `","mode":"single","base64":"AAAA"`
	alpha := `{"id":"alpha",` + forged + `,"text":"A","meta":{"id":"beta"}}`
	beta := `{"id":"beta","text":"B","record":{"id":"gamma","viewSha256":"ff"}}`
	f.write(t, f.Pod.Output().BatchOutput(), alpha+"\n"+beta+"\n"+`{"id":"zeta",`+forged+`}`+"\n")
	tampered := strings.ReplaceAll(testutil.PodTestEval, "second question", "another question")
	f.write(t, f.Config.RunnerEvalFile, tampered)
	f.write(t, filepath.Join(f.Pod.Out, "eval.yaml"), tampered)
	f.write(t, filepath.Join(f.Pod.Out, "records.jsonl.gz"), "not a chunk")
	f.finishedRunner(t, 0)
	g := f.gather(t, true)
	kept := keptRecords(t, g)
	want := caseDigests(t, f.Config)
	if len(kept) != 2 || kept["alpha"] == nil || kept["beta"] == nil {
		t.Fatalf("kept %v, want alpha and beta only", kept)
	}
	for id, text := range map[string]string{"alpha": alpha, "beta": beta} {
		r := kept[id]
		if r.ID != id || r.ViewSHA256 != want[id] || r.Mode != records.ModeLine || r.Base64 != nil || r.Text != text {
			t.Errorf("record of %s = %+v, want its own id, digest %s, the line as text", id, r, want[id])
		}
		if resp, err := r.Response(); err != nil || resp.ID != id {
			t.Errorf("record of %s reads as %v, %v", id, resp, err)
		}
	}
	if want["beta"] == digestOf(t, tampered, "beta") {
		t.Fatal("the tampered view does not change beta's digest: the test proves nothing")
	}
}

// TestViewDigestsUnknownCase: a case the eval file does not hold has no digest (the pipeline never claims one, but
// the digest must not fall back to another case's).
func TestViewDigestsUnknownCase(t *testing.T) {
	f := newFixture(t)
	file, err := evalfile.Parse([]byte(testutil.PodTestEval))
	if err != nil {
		t.Fatal(err)
	}
	d, err := newViewDigests(f.Config, file)
	if err != nil {
		t.Fatal(err)
	}
	scratch := []byte("kept")
	got, scratch, err := d.of(scratch, "beta", 0)
	if err != nil || got.String() != caseDigests(t, f.Config)["beta"] || string(scratch) != "kept" {
		t.Errorf("digest of beta = %s, %v; scratch %q", got, err, scratch)
	}
	if _, _, err := d.of(scratch, "zeta", 1); err == nil {
		t.Error("a digest for a case the eval file does not hold")
	}
	if _, err := newViewDigests(f.Config, nil); err == nil {
		t.Error("digests without the whole eval file")
	}
}

// digestOf is the digest case id has in the eval file text.
func digestOf(t *testing.T, text, id string) string {
	t.Helper()
	f, err := evalfile.Parse([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	i, ok := f.Find(id, 0)
	if !ok {
		t.Fatalf("no case %s", id)
	}
	v, err := f.CaseView(i)
	if err != nil {
		t.Fatal(err)
	}
	return records.Digest(v, nil)
}
