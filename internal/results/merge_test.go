package results

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/evaluate"
)

func storedLine(t *testing.T, l Line) []byte {
	t.Helper()
	data, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestMergerBuildsOneSectionFromStoredCollections merges two shards' stored chunks and a carried chunk: the
// first stored result of a case wins, results of ids nobody requested are ignored, a requested case no chunk
// holds is missing with the reason given, parse errors name their shard, and cases are ordered by the run's ids.
func TestMergerBuildsOneSectionFromStoredCollections(t *testing.T) {
	pass := func(id string) Line {
		return Line{CaseResult: evaluate.CaseResult{ID: id, Score: 1, Verdict: evaluate.VerdictPass}}
	}
	fail := Line{CaseResult: evaluate.CaseResult{ID: "c", Score: 0.25, Verdict: evaluate.VerdictFail}}
	shard0, err := Chunks([]string{"r-0"}, [][]byte{storedLine(t, pass("a")), storedLine(t, fail), storedLine(t, pass("stranger"))})
	if err != nil {
		t.Fatal(err)
	}
	shard1, err := Chunks([]string{"r-1"}, [][]byte{storedLine(t, Line{CaseResult: evaluate.MissingCase("d")}), storedLine(t, pass("a"))})
	if err != nil {
		t.Fatal(err)
	}
	carriedA := pass("b")
	carriedA.CarriedFrom = "earlier"
	carried, err := Chunks([]string{"c-0"}, [][]byte{storedLine(t, carriedA)})
	if err != nil {
		t.Fatal(err)
	}
	m := NewMerger([]string{"a", "b", "c", "d", "e"}, []string{"r-0", "r-1", "c-0"}, nil, evalsv1alpha1.DefaultStatusBudgetBytes)
	for _, ch := range [][]Chunk{shard0, shard1, carried} {
		if err := m.AddChunk(ch[0].Data); err != nil {
			t.Fatal(err)
		}
	}
	m.AddCollection(&Section{Summary: &evalsv1alpha1.RunSummary{ParseErrors: 1, Unexpected: 1},
		ParseErrors: []evalsv1alpha1.ParseError{{Line: 4, Message: "not JSON"}}, UnexpectedIDs: []string{"stranger"}}, ptr.To[int32](0))
	m.AddCollection(&Section{Summary: &evalsv1alpha1.RunSummary{ParseErrors: 3},
		ParseErrors: []evalsv1alpha1.ParseError{{Line: 1, Message: "x"}}}, ptr.To[int32](1))
	at := metav1.Now()
	at.Time = at.Truncate(1e9)
	s, err := m.Finish(func(i int) string { return "shard 2 recorded nothing" }, at)
	if err != nil {
		t.Fatal(err)
	}
	var cases []string
	for _, c := range s.Cases {
		cases = append(cases, c.ID+"="+string(c.Verdict)+"/"+ptr.Deref(c.CarriedFrom, ""))
	}
	if diff := cmp.Diff([]string{"c=Fail/", "a=Pass/", "b=Pass/earlier"}, cases); diff != "" {
		t.Errorf("cases (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"d", "e"}, s.MissingIDs); diff != "" {
		t.Errorf("missing ids (-want +got):\n%s", diff)
	}
	want := evalsv1alpha1.RunSummary{Total: 5, Passed: 2, Failed: 1, Errored: 2, Missing: 2, ParseErrors: 4, Unexpected: 1,
		MeanScore: "0.7500", MedianScore: "1.0000", MinScore: "0.2500", MaxScore: "1.0000", PassRate: "0.4000", Histogram: []int32{0, 1, 0, 0, 2}}
	if diff := cmp.Diff(&want, s.Summary); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]evalsv1alpha1.ParseError{{Line: 4, Message: "not JSON", Shard: ptr.To[int32](0)}, {Line: 1, Message: "x", Shard: ptr.To[int32](1)}}, s.ParseErrors); diff != "" {
		t.Errorf("parse errors (-want +got):\n%s", diff)
	}
	if r := s.Results; r.TotalCases != 4 || r.OmittedParseErrors != 2 || len(r.ConfigMaps) != 3 || s.Collection != nil {
		t.Errorf("results %+v, collection %+v", r, s.Collection)
	}
}

func TestChunksFailsWhenResultsDoNotFit(t *testing.T) {
	if _, err := Chunks(nil, [][]byte{[]byte(`{"id":"a"}`)}); err == nil {
		t.Error("Chunks with no ConfigMap stored a result")
	}
}
