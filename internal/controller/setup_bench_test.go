package controller

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
)

// fullBudgetRun is a finished EvalRun whose collector filled the status budget: 2,000 cases with 200-byte
// answers and evaluator messages (about 512 KiB), plus missing ids and parse errors.
func fullBudgetRun(i int) *evalsv1alpha1.EvalRun {
	run := testRun()
	run.Name = fmt.Sprintf("run-%d", i)
	for c := range 2000 {
		run.Status.Cases = append(run.Status.Cases, evalsv1alpha1.CaseResult{
			ID: fmt.Sprintf("case-%05d", c), Verdict: evalsv1alpha1.VerdictFail, Score: "0.5000",
			Answer:     strings.Repeat("a", 200),
			Evaluators: []evalsv1alpha1.EvaluatorSummary{{Name: "e", Type: "code_judge", Verdict: evalsv1alpha1.VerdictFail, Message: strings.Repeat("m", 40)}},
		})
	}
	for c := range 500 {
		run.Status.MissingIDs = append(run.Status.MissingIDs, fmt.Sprintf("missing-%05d", c))
	}
	run.Status.Summary = &evalsv1alpha1.RunSummary{Total: 2500, Failed: 2000, Missing: 500}
	return run
}

// BenchmarkCachedEvalRunHeap reports the heap one finished run at full status budget holds in the manager's
// cache, as cached before (whole object) and now (StripCollectedResults): the retained-bytes/run metric.
func BenchmarkCachedEvalRunHeap(b *testing.B) {
	for _, tc := range []struct {
		name  string
		strip bool
	}{{"whole", false}, {"stripped", true}} {
		b.Run(tc.name, func(b *testing.B) {
			const runs = 200
			var retained uint64
			for b.Loop() {
				runtime.GC()
				var before runtime.MemStats
				runtime.ReadMemStats(&before)
				cache := make([]any, runs)
				for i := range cache {
					var obj any = fullBudgetRun(i)
					if tc.strip {
						obj, _ = StripCollectedResults(obj)
					}
					cache[i] = obj
				}
				runtime.GC()
				var after runtime.MemStats
				runtime.ReadMemStats(&after)
				retained = (after.HeapAlloc - min(after.HeapAlloc, before.HeapAlloc)) / runs
				runtime.KeepAlive(cache)
			}
			b.ReportMetric(float64(retained), "retained-bytes/run")
		})
	}
}
