package collector

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// fullSection is the largest section the collector writes: the results builder over 20,000 judged cases, each
// with three evaluators and messages at their bounds, cut to the default status budget (512 KiB).
func fullSection(tb testing.TB) results.Section {
	tb.Helper()
	const n = 20_000
	b := results.NewBuilder(results.Options{BudgetBytes: evalsv1alpha1.DefaultStatusBudgetBytes, ConfigMaps: []string{"run-results-0", "run-results-1"}})
	verdicts := []evalsv1alpha1.Verdict{evalsv1alpha1.VerdictFail, evalsv1alpha1.VerdictError, evalsv1alpha1.VerdictPass}
	sum := evalsv1alpha1.RunSummary{Total: n, MeanScore: "0.5000", PassRate: "0.3333", Histogram: []int32{1, 2, 3, 4, 5}}
	for i := range n {
		c := evalsv1alpha1.CaseResult{ID: fmt.Sprintf("case-%06d", i), Verdict: verdicts[i%3], Score: "0.5000",
			Answer: strings.Repeat("a", 120), Error: "", CarriedFrom: nil}
		for _, name := range []string{"contains", "llm_judge", "code_judge"} {
			c.Evaluators = append(c.Evaluators, evalsv1alpha1.EvaluatorSummary{Name: name, Type: name, Verdict: verdicts[i%3],
				Score: "0.5000", Message: strings.Repeat("m", 80)})
		}
		line, err := json.Marshal(c)
		if err != nil {
			tb.Fatal(err)
		}
		if err := b.Add(results.Case{Index: i, Status: c, Line: line}); err != nil {
			tb.Fatal(err)
		}
	}
	out, err := b.Finish(results.Tail{Summary: sum, Collection: evalsv1alpha1.CollectionStatus{RunnerFinished: true,
		Outcome: evalsv1alpha1.OutcomeCompleted, Message: "collected", CollectedAt: ptr.To(metav1.NewTime(time.Unix(1_800_000_000, 0))),
		PodName: "run-evalrun-x7k2p", Launcher: &evalsv1alpha1.LauncherReport{ExitCode: ptr.To[int32](0), Invocations: 1}}})
	if err != nil {
		tb.Fatal(err)
	}
	if !out.Section.Truncated() || len(out.Section.Cases) < 500 {
		tb.Fatalf("the section holds %d cases and is not cut to the budget", len(out.Section.Cases))
	}
	return out.Section
}

// BenchmarkStatusApply measures the collector's status apply body for the largest section: building the typed
// apply configuration (build), and building and encoding it as the client sends it (build+encode).
func BenchmarkStatusApply(b *testing.B) {
	section := fullSection(b)
	b.Run("build", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = statusApply("ns", "run", "uid-1", &section)
		}
	})
	b.Run("build+encode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(statusApply("ns", "run", "uid-1", &section)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
