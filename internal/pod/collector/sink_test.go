package collector

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/evaluate"
	"github.com/evalrun-operator/evalrun-operator/internal/outcome"
	"github.com/evalrun-operator/evalrun-operator/internal/pipeline"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
	"github.com/google/go-cmp/cmp"
)

// serialSink is the reference statusSink is held to: every case handled on the committing goroutine, its line
// encoded by encoding/json into its own allocation and its full status built, with no shortcut and no reuse.
type serialSink struct{ builder *results.Builder }

func (s *serialSink) Prepare(_ *[]byte, c pipeline.Case) (pipeline.Case, error) { return c, nil }

func (s *serialSink) Commit(c pipeline.Case) error {
	full := results.Line{CaseResult: c.Result}
	if resp := c.Response; resp != nil {
		full.Answer, full.Line = resp.Text, resp.Line
		full.TokenUsage, full.CostUSD, full.DurationMs = resp.TokenUsage, resp.CostUSD, resp.DurationMs
	}
	line, err := json.Marshal(full)
	if err != nil {
		return err
	}
	return s.builder.Add(results.Case{Index: c.Index, Status: full.Status(), Missing: c.Result.Missing, Line: line, Usage: full.Usage()})
}

// sinkWorkload writes the reference workload for n cases with its output shuffled in blocks (so that commit order
// is not case order), every 29th case missing, and an unexpected id and an invalid line among the records.
func sinkWorkload(t *testing.T, n int) (ids []string, evalPath, outPath string) {
	t.Helper()
	dir := t.TempDir()
	evalPath, outPath = filepath.Join(dir, "eval.yaml"), filepath.Join(dir, "out.jsonl")
	ids, err := testutil.WriteReferenceWorkload(evalPath, outPath, n)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(outPath)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	var out []byte
	for block := 0; block*100 < n; block++ {
		// Blocks of 100 records, every other one reversed.
		part := slices.Clone(lines[block*100 : min(block*100+100, n)])
		if block%2 == 1 {
			slices.Reverse(part)
		}
		for k, l := range part {
			if k == 50 && block == 3 {
				out = append(out, `{"id":"nobody-asked","text":"x"}`+"\n"...)
				out = append(out, "{not json\n"...)
			}
			var rec struct {
				ID string `json:"id"`
			}
			if err := json.Unmarshal(l, &rec); err != nil {
				t.Fatal(err)
			}
			if i := slices.Index(ids, rec.ID); i%29 != 7 {
				out = append(out, l...)
			}
		}
	}
	if err := os.WriteFile(outPath, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return ids, evalPath, outPath
}

// TestStatusSinkMatchesSerialReference holds the collector's parallel path (statusSink on many workers: status
// forms built only for cases the section may show, lines encoded into shared, reused buffers) to the serial
// reference: the same chunks (ConfigMap names, order, case counts and decompressed lines), the same section and
// the same summary, on a workload that fills many chunks and cuts off both groups of cases.
func TestStatusSinkMatchesSerialReference(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 1200
	}
	ids, evalPath, outPath := sinkWorkload(t, n)
	cfg := testutil.RunConfig(evalPath, ids, ": {OUTPUT_FILE}")
	file, err := podwire.LoadEvalFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, 64)
	for i := range names {
		names[i] = fmt.Sprintf("run-results-%d", i)
	}
	for _, tc := range []struct {
		name string
		opts results.Options
		// manyChunks: the reference must fill at least 8 chunks; dropped: it must drop cases.
		manyChunks, dropped bool
	}{
		{name: "many chunks, small budget", opts: results.Options{BudgetBytes: 24 << 10, ConfigMaps: names, MaxChunkBytes: 16 << 10}, manyChunks: true},
		{name: "too few ConfigMaps", opts: results.Options{BudgetBytes: 24 << 10, ConfigMaps: names[:3], MaxChunkBytes: 16 << 10}, dropped: true},
		{name: "default budget", opts: results.Options{ConfigMaps: names}},
		{name: "shard section, no cases", opts: results.Options{BudgetBytes: 32 << 10, ConfigMaps: names, NoCases: true, MaxChunkBytes: 24 << 10}, manyChunks: true},
		{name: "one bucket object", opts: results.Options{ConfigMaps: []string{"s3://bucket/results.jsonl.gz"}, MaxChunkBytes: math.MaxInt}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pin := pipeline.Input{IDs: ids, File: file, MaxListed: evalsv1alpha1.MaxStatusMissingIDs,
				Judge: &evaluate.Judge{Threshold: 0.8, MissingCodeJudge: verdict.VerdictError}}
			ref := results.NewBuilder(tc.opts)
			pin.Workers = 1
			wantRes, want := collectWith(t, pin, outPath, ref, &serialSink{builder: ref})
			if tc.manyChunks && len(want.Chunks) < 8 {
				t.Fatalf("the reference made %d chunks: the workload does not exercise many chunks", len(want.Chunks))
			}
			if want.Section.Results.OmittedCases == 0 {
				t.Fatal("the reference section shows every case: the workload does not exercise the cutoff")
			}
			if tc.dropped != (want.DroppedCases > 0) {
				t.Fatalf("the reference dropped %d cases", want.DroppedCases)
			}
			for _, workers := range []int{2, 8} {
				b := results.NewBuilder(tc.opts)
				pin.Workers = workers
				gotRes, got := collectWith(t, pin, outPath, b, &statusSink{builder: b})
				if diff := cmp.Diff(wantRes, gotRes); diff != "" {
					t.Errorf("%d workers: pipeline result differs (-serial +parallel):\n%s", workers, diff)
				}
				if diff := cmp.Diff(want.Section, got.Section); diff != "" {
					t.Errorf("%d workers: section differs (-serial +parallel):\n%s", workers, diff)
				}
				if got.StoredCases != want.StoredCases || got.DroppedCases != want.DroppedCases {
					t.Errorf("%d workers: stored %d, dropped %d; the reference stored %d, dropped %d", workers,
						got.StoredCases, got.DroppedCases, want.StoredCases, want.DroppedCases)
				}
				if diff := cmp.Diff(chunkContents(t, want.Chunks), chunkContents(t, got.Chunks)); diff != "" {
					t.Errorf("%d workers: chunks differ (-serial +parallel):\n%s", workers, diff)
				}
			}
		})
	}
}

// collectWith runs the pipeline into sink, which adds to b, and finishes b as Gather does.
func collectWith[T any](t *testing.T, pin pipeline.Input, outPath string, b *results.Builder, sink pipeline.Sink[T]) (*pipeline.Result, *results.Output) {
	t.Helper()
	pr, err := pipeline.Run(context.Background(), pin, pipeline.Batch{Path: outPath}, sink)
	if err != nil {
		t.Fatal(err)
	}
	tail := results.Tail{MissingIDs: pr.MissingIDs, MissingCount: pr.MissingCount, UnexpectedIDs: pr.UnexpectedIDs,
		UnexpectedCount: pr.UnexpectedCount, ParseErrorCount: pr.ParseErrorCount,
		Summary: results.SummaryStatus(pr.Summary, pr.ParseErrorCount, pr.UnexpectedCount)}
	out, err := b.Finish(tail)
	if err != nil {
		t.Fatal(err)
	}
	return pr, out
}

// storedChunk is a chunk as its readers see it: where it goes, how many cases it says it holds, its lines.
type storedChunk struct {
	ConfigMap string
	Cases     int
	Lines     []string
}

func chunkContents(t *testing.T, chunks []results.Chunk) []storedChunk {
	t.Helper()
	out := make([]storedChunk, len(chunks))
	for i, c := range chunks {
		out[i] = storedChunk{ConfigMap: c.Destination, Cases: c.Cases, Lines: testutil.GunzipLines(t, c.Data)}
	}
	return out
}

// TestSharedEvaluatorsGatherTheSame: when the manager found that every case is judged by its id and inherited
// evaluators (podwire.RunConfig.SharedEvaluators), the collector reads only the eval file's header, and collects
// exactly what reading the whole file gives: the same chunks, section and summary, for evaluators from the file
// and from judging.evaluators, with missing, unexpected and invalid records; and ids that do not count the file's
// items send it back to the whole file.
func TestSharedEvaluatorsGatherTheSame(t *testing.T) {
	ids, evalPath, outPath := sinkWorkload(t, 1500)
	p := podwire.Output{Root: t.TempDir()}
	data, err := os.ReadFile(outPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p.BatchOutput(), data, 0o644); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name     string
		defaults []map[string]any
		ids      []string
	}{
		{name: "the file's evaluators", ids: ids},
		{name: "judging.evaluators", ids: ids, defaults: []map[string]any{{"name": "cheap", "type": "cost", "budget": 0.001}}},
		{name: "fewer ids than items", ids: ids[:1000]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testutil.RunConfig(evalPath, tc.ids, ": {OUTPUT_FILE}")
			cfg.DefaultEvaluators = tc.defaults
			cfg.ResultConfigMaps = []string{"r-0", "r-1", "r-2", "r-3"}
			full, err := podwire.LoadEvalFile(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if !evalfile.JudgedByID(full, false) {
				t.Fatal("the workload's cases are not judged by id: the test does not exercise the header-only read")
			}
			gather := func(shared bool) *Gathered {
				c := *cfg
				c.SharedEvaluators = shared
				g, err := Gather(t.Context(), GatherInput{Config: &c, Output: p, EndCause: outcome.EndEnded, Now: now})
				if err != nil {
					t.Fatal(err)
				}
				return g
			}
			want, got := gather(false), gather(true)
			if want.Summary.Total == 0 || want.Summary.ParseErrors == 0 || want.Summary.Missing == 0 {
				t.Fatalf("summary %+v: the workload must have cases, parse errors and missing ones", want.Summary)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("header-only collection differs (-whole file +header only):\n%s", diff)
			}
		})
	}
}
