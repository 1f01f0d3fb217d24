package results

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var collectedAt = metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))

func mkCase(i int, verdict evalsv1alpha1.Verdict, answer string) Case {
	id := fmt.Sprintf("case-%05d", i)
	st := evalsv1alpha1.CaseResult{ID: id, Verdict: verdict, Score: "0.5000", Answer: answer}
	line, _ := json.Marshal(map[string]any{"id": id, "verdict": verdict, "answer": answer})
	return Case{Index: i, Status: st, Line: line}
}

func ids(cs []evalsv1alpha1.CaseResult) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}

func tail() Tail {
	return Tail{Collection: evalsv1alpha1.CollectionStatus{RunnerFinished: true, Outcome: "Completed", CollectedAt: &collectedAt}}
}

func TestFinishAllFit(t *testing.T) {
	b := NewBuilder(Options{ConfigMaps: []string{"r-results-0", "r-results-1"}})
	verdicts := []evalsv1alpha1.Verdict{evalsv1alpha1.VerdictPass, evalsv1alpha1.VerdictFail, evalsv1alpha1.VerdictPass, evalsv1alpha1.VerdictError, evalsv1alpha1.VerdictSkipped}
	for i, v := range verdicts {
		if err := b.Add(mkCase(i, v, "a")); err != nil {
			t.Fatal(err)
		}
	}
	missing := mkCase(5, evalsv1alpha1.VerdictError, "")
	missing.Missing = true
	if err := b.Add(missing); err != nil {
		t.Fatal(err)
	}
	tl := tail()
	tl.MissingIDs, tl.MissingCount = []string{"case-00005"}, 1
	tl.ParseErrors, tl.ParseErrorCount = []evalsv1alpha1.ParseError{{Line: 3, Excerpt: "{", Message: "not valid JSON"}}, 1
	tl.UnexpectedIDs, tl.UnexpectedCount = []string{"zzz"}, 1
	out, err := b.Finish(tl)
	if err != nil {
		t.Fatal(err)
	}
	// Non-passing first, in index order, then passing.
	if diff := cmp.Diff([]string{"case-00001", "case-00003", "case-00004", "case-00000", "case-00002"}, ids(out.Section.Cases)); diff != "" {
		t.Errorf("case order (-want +got):\n%s", diff)
	}
	wantRef := &evalsv1alpha1.ResultsReference{ConfigMaps: []string{"r-results-0"}, Key: "results.jsonl.gz", Format: "jsonl+gzip", TotalCases: 6}
	if diff := cmp.Diff(wantRef, out.Section.Results); diff != "" {
		t.Errorf("results reference (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"case-00005"}, out.Section.MissingIDs); diff != "" {
		t.Errorf("missing ids (-want +got):\n%s", diff)
	}
	cond := out.Section.TruncatedCondition()
	if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != evalsv1alpha1.ReasonAllResultsInStatus || !cond.LastTransitionTime.Equal(&collectedAt) {
		t.Errorf("ResultsTruncated condition = %+v, want False/AllResultsInStatus at the collection time", cond)
	}
	lines := decodeChunks(t, out.Chunks)
	if len(lines) != 6 || !strings.Contains(lines[5], "case-00005") {
		t.Errorf("chunk lines = %q, want 6 lines in add order", lines)
	}
}

func TestFinishBudgetOrdering(t *testing.T) {
	const budget = 16 << 10
	answer := strings.Repeat("x", 200)
	b := NewBuilder(Options{BudgetBytes: budget, ConfigMaps: []string{"cm-0"}})
	// 400 cases: every third fails. Add them shuffled: the output must not depend on arrival order.
	order := rand.New(rand.NewPCG(1, 2)).Perm(400)
	for _, i := range order {
		v := evalsv1alpha1.VerdictPass
		if i%3 == 0 {
			v = evalsv1alpha1.VerdictFail
		}
		if err := b.Add(mkCase(i, v, answer)); err != nil {
			t.Fatal(err)
		}
	}
	tl := tail()
	for i := 0; i < 2000; i++ {
		tl.MissingIDs = append(tl.MissingIDs, fmt.Sprintf("missing-%04d", i))
	}
	tl.MissingCount = 2500
	out, err := b.Finish(tl)
	if err != nil {
		t.Fatal(err)
	}
	enc, _ := json.Marshal(out.Section)
	if len(enc) > budget {
		t.Fatalf("section is %d bytes, over the %d budget", len(enc), budget)
	}
	if len(enc) < budget*3/4 {
		t.Errorf("section is only %d bytes of a %d budget", len(enc), budget)
	}
	cases := out.Section.Cases
	if len(cases) == 0 {
		t.Fatal("no cases in status")
	}
	// A prefix of the failing cases, in index order, and no passing case unless every failing one fits.
	for k, c := range cases {
		want := fmt.Sprintf("case-%05d", 3*k)
		if c.ID != want {
			t.Fatalf("cases[%d] = %s, want %s (failing cases in index order)", k, c.ID, want)
		}
	}
	ref := out.Section.Results
	if got, want := int(ref.OmittedCases), 400-len(cases); got != want {
		t.Errorf("omittedCases = %d, want %d", got, want)
	}
	if got, want := int(ref.OmittedMissingIDs), 2500-len(out.Section.MissingIDs); got != want {
		t.Errorf("omittedMissingIds = %d, want %d", got, want)
	}
	if len(out.Section.MissingIDs) == 0 {
		t.Errorf("missing ids were starved by cases; the list reserve should keep some")
	}
	if len(out.Section.MissingIDs) > evalsv1alpha1.MaxStatusMissingIDs {
		t.Errorf("%d missing ids, over the API maximum", len(out.Section.MissingIDs))
	}
	cond := out.Section.TruncatedCondition()
	if cond == nil || cond.Status != metav1.ConditionTrue || cond.Reason != evalsv1alpha1.ReasonStatusBudgetExceeded {
		t.Errorf("ResultsTruncated condition = %+v, want True/StatusBudgetExceeded", cond)
	}
	if out.StoredCases != 400 || len(decodeChunks(t, out.Chunks)) != 400 {
		t.Errorf("stored %d cases, want all 400 in the ConfigMaps", out.StoredCases)
	}
}

func TestFinishIsDeterministic(t *testing.T) {
	run := func(seed uint64) []byte {
		b := NewBuilder(Options{BudgetBytes: 8 << 10, ConfigMaps: []string{"a", "b", "c"}, MaxChunkBytes: 8 << 10})
		rng := rand.New(rand.NewPCG(seed, 7))
		for _, i := range rng.Perm(300) {
			v := evalsv1alpha1.VerdictPass
			if i%5 == 0 {
				v = evalsv1alpha1.VerdictError
			}
			if err := b.Add(Case{Index: i, Status: mkCase(i, v, "ans").Status}); err != nil {
				t.Fatal(err)
			}
		}
		out, err := b.Finish(tail())
		if err != nil {
			t.Fatal(err)
		}
		enc, _ := json.Marshal(out.Section)
		return enc
	}
	if diff := cmp.Diff(string(run(1)), string(run(99))); diff != "" {
		t.Errorf("the section depends on arrival order (-first +second):\n%s", diff)
	}
}

// TestMayShowLeavesTheSectionAsItIs holds a Builder given cases in a shuffled order, with only the verdict of the
// cases MayShow rules out (as the collector's workers do), to one given every status in case order: the sections
// must match.
func TestMayShowLeavesTheSectionAsItIs(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    Options
		n       int
		answers int // the longest answer; they vary, so that which cases fit depends on which are kept
		seeds   uint64
	}{
		{name: "cutoffs in both groups", opts: Options{BudgetBytes: 12 << 10}, n: 600, answers: 120, seeds: 20},
		{name: "everything fits", n: 600, answers: 120, seeds: 3},
		{name: "no cases (a shard)", opts: Options{BudgetBytes: 12 << 10, NoCases: true}, n: 600, answers: 120, seeds: 3},
		// Tiny cases under a large budget: the count bound, not the bytes, decides which are kept, and every kept
		// failing case is shown, so that the cutoff's exact edge is seen.
		{name: "count bound", opts: Options{BudgetBytes: 4 << 20}, n: evalsv1alpha1.MaxStatusCases + 2000, answers: 2, seeds: 2},
	} {
		name, opts, n := tc.name, tc.opts, tc.n
		t.Run(name, func(t *testing.T) {
			answer := strings.Repeat("a", tc.answers)
			mk := func(i int) Case {
				v := evalsv1alpha1.VerdictPass
				if i%3 != 0 || tc.answers < 10 {
					v = evalsv1alpha1.VerdictFail
				}
				return mkCase(i, v, answer[:i%(tc.answers+1)])
			}
			full := NewBuilder(opts)
			for i := range n {
				if err := full.Add(mk(i)); err != nil {
					t.Fatal(err)
				}
			}
			want, err := full.Finish(tail())
			if err != nil {
				t.Fatal(err)
			}
			skipped, shown := 0, 0
			var got *Output
			for seed := range tc.seeds {
				lazy := NewBuilder(opts)
				for _, i := range rand.New(rand.NewPCG(seed, 6)).Perm(n) {
					c := mk(i)
					if v := c.Status.Verdict; !lazy.MayShow(i, v) {
						c.Status = evalsv1alpha1.CaseResult{Verdict: v}
						skipped++
					} else {
						shown++
					}
					if err := lazy.Add(c); err != nil {
						t.Fatal(err)
					}
				}
				if got, err = lazy.Finish(tail()); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want.Section, got.Section); diff != "" {
					t.Fatalf("seed %d: section differs (-every status, in order +shuffled, with MayShow):\n%s", seed, diff)
				}
			}
			switch {
			case opts.NoCases && shown > 0:
				t.Errorf("MayShow allowed %d cases into a section without cases", shown)
			case name == "cutoffs in both groups" && (skipped == 0 || len(got.Section.Cases) == 0):
				t.Errorf("MayShow ruled out %d cases, the section shows %d: the test does not exercise the cutoff", skipped, len(got.Section.Cases))
			case name == "everything fits" && skipped > 0:
				t.Errorf("MayShow ruled out %d cases though every case fits", skipped)
			}
		})
	}
}

// TestMayShowIsFinal checks the promise callers rely on: once MayShow is false for an index, it stays false for
// that index and every higher one of its group, whatever is added later.
func TestMayShowIsFinal(t *testing.T) {
	b := NewBuilder(Options{BudgetBytes: 8 << 10})
	answer := strings.Repeat("b", 200)
	ruledOut := map[evalsv1alpha1.Verdict]int{}
	for _, i := range rand.New(rand.NewPCG(7, 8)).Perm(500) {
		v := evalsv1alpha1.VerdictPass
		if i%2 == 0 {
			v = evalsv1alpha1.VerdictError
		}
		for verdict, lowest := range ruledOut {
			for _, j := range []int{lowest, lowest + 1, lowest + 100} {
				if b.MayShow(j, verdict) {
					t.Fatalf("MayShow(%d, %s) became true again after it was false for %d", j, verdict, lowest)
				}
			}
		}
		if !b.MayShow(i, v) {
			if lowest, ok := ruledOut[v]; !ok || i < lowest {
				ruledOut[v] = i
			}
		}
		if err := b.Add(mkCase(i, v, answer)); err != nil {
			t.Fatal(err)
		}
	}
	if len(ruledOut) != 2 {
		t.Errorf("MayShow ruled out cases of %d groups, want both: the test does not exercise the cutoff", len(ruledOut))
	}
}

func TestChunksOverflow(t *testing.T) {
	const limit = 4 << 10
	// Incompressible lines, so few fit a chunk.
	rng := rand.New(rand.NewPCG(3, 4))
	line := func(i int) []byte {
		buf := make([]byte, 600)
		for j := range buf {
			buf[j] = "abcdefghijklmnopqrstuvwxyz0123456789"[rng.IntN(36)]
		}
		return []byte(fmt.Sprintf(`{"id":"c%d","answer":"%s"}`, i, buf))
	}
	b := NewBuilder(Options{ConfigMaps: []string{"cm-0", "cm-1", "cm-2"}, MaxChunkBytes: limit})
	for i := 0; i < 100; i++ {
		if err := b.Add(Case{Index: i, Status: evalsv1alpha1.CaseResult{ID: fmt.Sprint(i), Verdict: evalsv1alpha1.VerdictPass}, Line: line(i)}); err != nil {
			t.Fatal(err)
		}
	}
	out, err := b.Finish(tail())
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Chunks) != 3 {
		t.Fatalf("%d chunks, want all 3 ConfigMaps used", len(out.Chunks))
	}
	for i, c := range out.Chunks {
		if len(c.Data) >= limit {
			t.Errorf("chunk %d is %d bytes, not under the %d limit", i, len(c.Data), limit)
		}
		if c.Destination != []string{"cm-0", "cm-1", "cm-2"}[i] {
			t.Errorf("chunk %d goes to %s", i, c.Destination)
		}
	}
	lines := decodeChunks(t, out.Chunks)
	if len(lines) != out.StoredCases || out.StoredCases+out.DroppedCases != 100 || out.DroppedCases == 0 {
		t.Errorf("stored %d (decoded %d), dropped %d; want stored+dropped = 100 with some dropped", out.StoredCases, len(lines), out.DroppedCases)
	}
	cond := out.Section.TruncatedCondition()
	if cond.Status != metav1.ConditionTrue || !strings.Contains(cond.Message, "did not fit the 3 result ConfigMaps") {
		t.Errorf("condition %+v, want it to say results were not stored", cond)
	}
	if int(out.Section.Results.TotalCases) != out.StoredCases {
		t.Errorf("totalCases = %d, want %d", out.Section.Results.TotalCases, out.StoredCases)
	}
}

func TestNoConfigMaps(t *testing.T) {
	b := NewBuilder(Options{})
	if err := b.Add(mkCase(0, evalsv1alpha1.VerdictPass, "a")); err != nil {
		t.Fatal(err)
	}
	out, err := b.Finish(tail())
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Chunks) != 0 || out.DroppedCases != 1 || out.Section.Results.ConfigMaps != nil {
		t.Errorf("without ConfigMaps: chunks %d, dropped %d, refs %v", len(out.Chunks), out.DroppedCases, out.Section.Results.ConfigMaps)
	}
}

func TestBoundCase(t *testing.T) {
	long := strings.Repeat("é", 1000)
	evs := make([]evalsv1alpha1.EvaluatorSummary, 20)
	for i := range evs {
		evs[i] = evalsv1alpha1.EvaluatorSummary{Name: long, Verdict: evalsv1alpha1.VerdictPass, Message: long}
	}
	got := boundCase(evalsv1alpha1.CaseResult{ID: "x", Verdict: evalsv1alpha1.VerdictFail, Answer: long, Error: long, Evaluators: evs})
	if len(got.Answer) > 512 || len(got.Error) > 1024 || len(got.Evaluators) != 16 || len(got.Evaluators[0].Name) > 128 || len(got.Evaluators[0].Message) > 512 {
		t.Errorf("boundCase did not bound: answer %d, error %d, evaluators %d, name %d, message %d",
			len(got.Answer), len(got.Error), len(got.Evaluators), len(got.Evaluators[0].Name), len(got.Evaluators[0].Message))
	}
	if !strings.HasSuffix(got.Answer, "…") {
		t.Errorf("cut answer is not marked")
	}
}

func decodeChunks(t *testing.T, chunks []Chunk) []string {
	t.Helper()
	var lines []string
	for i, c := range chunks {
		got := testutil.GunzipLines(t, c.Data)
		if len(got) != c.Cases {
			t.Errorf("chunk %d has %d lines, says %d", i, len(got), c.Cases)
		}
		lines = append(lines, got...)
	}
	return lines
}

// TestChunksLongAndShortLines: lines shorter and longer than what the writer gathers before compressing
// (stagedBytes), compressible or not, split into chunks under the limit, stored in order and each exactly once; a
// line that does not fit a chunk even alone is dropped and counted, and the lines after it are stored.
func TestChunksLongAndShortLines(t *testing.T) {
	const limit = 200 << 10
	rng := rand.New(rand.NewPCG(5, 6))
	noise := func(n int) string {
		buf := make([]byte, n)
		for j := range buf {
			buf[j] = "abcdefghijklmnopqrstuvwxyz0123456789"[rng.IntN(36)]
		}
		return string(buf)
	}
	var want []string
	dropped := ""
	b := NewBuilder(Options{ConfigMaps: []string{"cm-0", "cm-1", "cm-2", "cm-3", "cm-4", "cm-5", "cm-6", "cm-7"}, MaxChunkBytes: limit})
	for i := 0; i < 400; i++ {
		var answer string
		switch {
		case i == 150:
			answer = noise(limit) // incompressible and larger than a chunk: dropped
		case i%37 == 0:
			answer = noise(stagedBytes + 1000) // longer than the staging, incompressible
		case i%11 == 0:
			answer = strings.Repeat("long and compressible ", 5000)
		default:
			answer = noise(rng.IntN(300))
		}
		line := fmt.Sprintf(`{"id":"c%d","answer":"%s"}`, i, answer)
		if i == 150 {
			dropped = line
		} else {
			want = append(want, line)
		}
		if err := b.Add(Case{Index: i, Status: evalsv1alpha1.CaseResult{ID: fmt.Sprint(i), Verdict: evalsv1alpha1.VerdictPass}, Line: []byte(line)}); err != nil {
			t.Fatal(err)
		}
	}
	out, err := b.Finish(tail())
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Chunks) < 3 {
		t.Fatalf("%d chunks: the test must split the lines over several", len(out.Chunks))
	}
	for i, c := range out.Chunks {
		if len(c.Data) >= limit {
			t.Errorf("chunk %d is %d bytes, not under the %d limit", i, len(c.Data), limit)
		}
	}
	got := decodeChunks(t, out.Chunks)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stored lines (-want +got):\n%s", diff)
	}
	if out.DroppedCases != 1 || out.StoredCases != len(want) || slices.Contains(got, dropped) {
		t.Errorf("stored %d, dropped %d; want %d and 1 (the line larger than a chunk)", out.StoredCases, out.DroppedCases, len(want))
	}
}

// TestObjectsHoldEveryResult: with a bucket object, every result goes into its one chunk, however large (no
// ConfigMap bound), and the section names the object, never a ConfigMap or a ConfigMap key.
func TestObjectsHoldEveryResult(t *testing.T) {
	const object = "s3://bucket/runs/ns/r/uid/shard-0/results.jsonl.gz"
	b := NewBuilder(Options{ConfigMaps: []string{"r-results-0"}, Objects: []string{object}, MaxChunkBytes: 64})
	long := strings.Repeat("an answer that a 64-byte chunk could never hold ", 40)
	for i := range 50 {
		if err := b.Add(mkCase(i, evalsv1alpha1.VerdictPass, long)); err != nil {
			t.Fatal(err)
		}
	}
	out, err := b.Finish(tail())
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Chunks) != 1 || out.Chunks[0].Destination != object || out.DroppedCases != 0 {
		t.Fatalf("chunks %d (first to %q), dropped %d: want one chunk in %s and nothing dropped", len(out.Chunks),
			out.Chunks[0].Destination, out.DroppedCases, object)
	}
	wantRef := &evalsv1alpha1.ResultsReference{Objects: []string{object}, Format: "jsonl+gzip", TotalCases: 50}
	if diff := cmp.Diff(wantRef, out.Section.Results, cmpopts.IgnoreFields(evalsv1alpha1.ResultsReference{}, "OmittedCases")); diff != "" {
		t.Errorf("results reference (-want +got):\n%s", diff)
	}
	if got := len(decodeChunks(t, out.Chunks)); got != 50 {
		t.Errorf("the object holds %d results, want 50", got)
	}
	if msg := out.Section.TruncatedCondition().Message; strings.Contains(msg, "ConfigMap") {
		t.Errorf("the truncation message names ConfigMaps for a bucket run: %q", msg)
	}
}

// TestMergedLocations: the manager's merged section names the shards' ConfigMaps and objects as they were stored.
func TestMergedLocations(t *testing.T) {
	m := NewMerger([]string{"a"}, []string{"c-0"}, []string{"s3://b/0", "s3://b/1"}, evalsv1alpha1.DefaultStatusBudgetBytes)
	s, err := m.Finish(func(int) string { return "gone" }, func(int) (int32, bool) { return 0, false }, collectedAt)
	if err != nil {
		t.Fatal(err)
	}
	want := &evalsv1alpha1.ResultsReference{ConfigMaps: []string{"c-0"}, Objects: []string{"s3://b/0", "s3://b/1"}, Key: "results.jsonl.gz", Format: "jsonl+gzip"}
	if diff := cmp.Diff(want, s.Results); diff != "" {
		t.Errorf("results reference (-want +got):\n%s", diff)
	}
}
