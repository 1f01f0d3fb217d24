package results

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
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
		return Line{CaseResult: verdict.CaseResult{ID: id, Score: 1, Verdict: verdict.VerdictPass}}
	}
	fail := Line{CaseResult: verdict.CaseResult{ID: "c", Score: 0.25, Verdict: verdict.VerdictFail}}
	shard0, err := Chunks([]string{"r-0"}, [][]byte{storedLine(t, pass("a")), storedLine(t, fail), storedLine(t, pass("stranger"))})
	if err != nil {
		t.Fatal(err)
	}
	shard1, err := Chunks([]string{"r-1"}, [][]byte{storedLine(t, Line{CaseResult: verdict.MissingCase("d")}), storedLine(t, pass("a"))})
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
		ParseErrors: []evalsv1alpha1.ParseError{{Line: 4, Message: "not JSON"}}, UnexpectedIDs: []string{"stranger"}}, ptr.To[int32](0), nil)
	m.AddCollection(&Section{Summary: &evalsv1alpha1.RunSummary{ParseErrors: 3},
		ParseErrors: []evalsv1alpha1.ParseError{{Line: 1, Message: "x"}}}, ptr.To[int32](1), nil)
	at := metav1.Now()
	at.Time = at.Truncate(1e9)
	// a and c ran in shard 0, d in shard 1, e in shard 2; b was carried.
	shardOf := map[int]int32{0: 0, 2: 0, 3: 1, 4: 2}
	s, err := m.Finish(func(i int) string { return "shard 2 recorded nothing" }, func(i int) (int32, bool) {
		k, ok := shardOf[i]
		return k, ok
	}, at)
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
	if diff := cmp.Diff([]evalsv1alpha1.MissingIDRun{{Shard: ptr.To[int32](1), Count: 1}, {Shard: ptr.To[int32](2), Count: 1}}, s.MissingIDShards); diff != "" {
		t.Errorf("missing ids' shards (-want +got):\n%s", diff)
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

// TestMissingIDShardsAreRunsOfTheListedIDs: the missing ids' shards are runs in the order of missingIds, ids no
// shard ran in runs without a shard, and cut with the ids the budget leaves out.
func TestMissingIDShardsAreRunsOfTheListedIDs(t *testing.T) {
	ids := make([]string, 2000)
	for i := range ids {
		ids[i] = fmt.Sprintf("case-%04d-%s", i, strings.Repeat("x", 200))
	}
	// Cases 0-999 ran in 4 shards of 250; 1000-1999 were carried.
	shardOf := func(i int) (int32, bool) { return int32(i / 250), i < 1000 }
	for _, tc := range []struct {
		name   string
		budget int64
		want   []evalsv1alpha1.MissingIDRun
	}{
		{name: "every missing id listed (the API's 1,000)", budget: evalsv1alpha1.DefaultStatusBudgetBytes,
			want: []evalsv1alpha1.MissingIDRun{{Shard: ptr.To[int32](0), Count: 250}, {Shard: ptr.To[int32](1), Count: 250},
				{Shard: ptr.To[int32](2), Count: 250}, {Shard: ptr.To[int32](3), Count: 250}}},
		{name: "a small budget cuts the ids and their runs", budget: 64 << 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewMerger(ids, []string{"r-0"}, nil, tc.budget)
			s, err := m.Finish(func(int) string { return "" }, shardOf, metav1.Now())
			if err != nil {
				t.Fatal(err)
			}
			total := 0
			for _, r := range s.MissingIDShards {
				total += int(r.Count)
			}
			if total != len(s.MissingIDs) {
				t.Errorf("the runs cover %d ids, missingIds lists %d", total, len(s.MissingIDs))
			}
			if tc.want != nil {
				if diff := cmp.Diff(tc.want, s.MissingIDShards); diff != "" {
					t.Errorf("runs (-want +got):\n%s", diff)
				}
			} else if len(s.MissingIDs) >= evalsv1alpha1.MaxStatusMissingIDs || s.Results.OmittedMissingIDs == 0 {
				t.Errorf("%d missing ids listed, %d omitted: the budget did not cut them", len(s.MissingIDs), s.Results.OmittedMissingIDs)
			}
			if size := jsonLen(t, s); int64(size) > tc.budget {
				t.Errorf("section %d bytes, over the %d-byte budget", size, tc.budget)
			}
		})
	}
}

func jsonLen(t *testing.T, v any) int {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return len(data)
}

// TestLocationsShareAPrefixPastTheirShare: a merged run's 1,000 bucket objects with the longest names, or 2,048
// result ConfigMaps with the longest names, would not fit the status budget as full names; the section then names
// them after the prefix they share, and ObjectURLs and ConfigMapNames give the full names back. A few short names
// stay as they are.
func TestLocationsShareAPrefixPastTheirShare(t *testing.T) {
	base := "s3://" + strings.Repeat("b", 63) + "/" + strings.Repeat("p", 512) + "/" + strings.Repeat("n", 63) + "/" +
		strings.Repeat("r", 253) + "/0b7a1c2e-3f4d-4e5f-8a9b-0c1d2e3f4a5b/shards/"
	objects := make([]string, 1000)
	for i := range objects {
		objects[i] = fmt.Sprintf("%s%d/results.jsonl.gz", base, i)
	}
	cms := make([]string, 2048)
	for i := range cms {
		cms[i] = fmt.Sprintf("%s-0123abcd-evalrun-results-%d", strings.Repeat("r", 253-len(fmt.Sprintf("-0123abcd-evalrun-results-%d", i))), i)
	}
	for _, tc := range []struct {
		name       string
		configMaps []string
		objects    []string
		shortened  bool
	}{
		{name: "1,000 objects", objects: objects, shortened: true},
		{name: "2,048 ConfigMaps", configMaps: cms, shortened: true},
		{name: "two objects", objects: objects[:2]},
		{name: "three ConfigMaps", configMaps: cms[:3]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewMerger([]string{"a"}, tc.configMaps, tc.objects, evalsv1alpha1.DefaultStatusBudgetBytes)
			s, err := m.Finish(func(int) string { return "" }, func(int) (int32, bool) { return 0, true }, metav1.Now())
			if err != nil {
				t.Fatal(err)
			}
			r := s.Results
			if got := r.ObjectsPrefix != nil || r.ConfigMapsPrefix != nil; got != tc.shortened {
				t.Errorf("prefixes %v %v, want shortened %t", r.ObjectsPrefix, r.ConfigMapsPrefix, tc.shortened)
			}
			if diff := cmp.Diff(tc.objects, ObjectURLs(r)); diff != "" {
				t.Errorf("object URLs (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.configMaps, ConfigMapNames(r)); diff != "" {
				t.Errorf("ConfigMap names (-want +got):\n%s", diff)
			}
			if size := jsonLen(t, s); size > evalsv1alpha1.DefaultStatusBudgetBytes {
				t.Errorf("section %d bytes, over the budget", size)
			}
			for _, it := range append(slices.Clone(r.Objects), r.ConfigMaps...) {
				if it == "" || !utf8.ValidString(it) {
					t.Fatalf("item %q", it)
				}
			}
		})
	}
}

// TestShortenedCutsBetweenRunes: the shared prefix never ends inside a rune, and never takes a whole item.
func TestShortenedCutsBetweenRunes(t *testing.T) {
	for _, tc := range []struct {
		items         []string
		prefix        string
		wantShortened []string
	}{
		{items: []string{"abcé1", "abcé2"}, prefix: "abcé", wantShortened: []string{"1", "2"}},
		{items: []string{"abé", "abè"}, prefix: "ab", wantShortened: []string{"é", "è"}},
		{items: []string{"abc", "abcd"}, prefix: "ab", wantShortened: []string{"c", "cd"}},
		{items: []string{"x1", "y1"}, prefix: "", wantShortened: []string{"x1", "y1"}},
	} {
		p, got := shortened(tc.items, 0)
		if prefix := ptr.Deref(p, ""); prefix != tc.prefix || (p != nil && prefix == "") || !slices.Equal(got, tc.wantShortened) {
			t.Errorf("shortened(%q) = %q %q, want %q %q", tc.items, prefix, got, tc.prefix, tc.wantShortened)
		}
	}
}

// TestMergerCountsCasesTheBudgetLeftUnjudged: shards (and a resumed run's carried results) each count the cases
// their pod's LLM budget left unjudged; the merged summary adds them up from the stored lines, as the collector
// encodes them, and the status keeps them Errors.
func TestMergerCountsCasesTheBudgetLeftUnjudged(t *testing.T) {
	unjudged := func(id string) []byte {
		l := Line{CaseResult: verdict.CaseResult{ID: id, Score: 1, Verdict: verdict.VerdictError, BudgetUnjudged: true,
			Error: `evaluator "judge" was not judged, so the case is not judged: the LLM judging budget is spent`,
			Evaluators: []verdict.EvaluatorResult{
				{Name: "fast", Type: "latency", Score: 1, Verdict: verdict.VerdictPass, Weight: 1},
				{Name: "judge", Type: "llm_judge", Verdict: verdict.VerdictSkipped, SkipCause: verdict.SkipBudgetSpent, Weight: 1},
			}}}
		b, err := l.AppendJSON(nil)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	pass := storedLine(t, Line{CaseResult: verdict.CaseResult{ID: "b", Score: 1, Verdict: verdict.VerdictPass}})
	carried := Line{CaseResult: verdict.CaseResult{ID: "e", Verdict: verdict.VerdictError, BudgetUnjudged: true}, CarriedFrom: "earlier"}
	var stored [][]Chunk
	for i, lines := range [][][]byte{{unjudged("a"), pass}, {unjudged("c"), unjudged("d")}, {storedLine(t, carried)}} {
		ch, err := Chunks([]string{fmt.Sprintf("r-%d", i)}, lines)
		if err != nil {
			t.Fatal(err)
		}
		stored = append(stored, ch)
	}
	m := NewMerger([]string{"a", "b", "c", "d", "e"}, []string{"r-0", "r-1", "r-2"}, nil, evalsv1alpha1.DefaultStatusBudgetBytes)
	for _, ch := range stored {
		if err := m.AddChunk(ch[0].Data); err != nil {
			t.Fatal(err)
		}
	}
	s, err := m.Finish(func(int) string { return "" }, func(int) (int32, bool) { return 0, false }, metav1.Now())
	if err != nil {
		t.Fatal(err)
	}
	if sum := s.Summary; sum.UnjudgedByBudget() != 4 || sum.Errored != 4 || sum.Passed != 1 || sum.Total != 5 {
		t.Errorf("summary = %+v, want 4 cases left unjudged by the budget, all errored", sum)
	}
	for _, c := range s.Cases {
		if c.ID != "b" && (c.Verdict != evalsv1alpha1.VerdictError || c.Score != "") {
			t.Errorf("case %s = %s score %q, want Error without a score", c.ID, c.Verdict, c.Score)
		}
	}
}
