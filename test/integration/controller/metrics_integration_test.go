package controller_test

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
)

// nsMetric is the value of a metric's series of namespace ns with the extra label pair (if any).
func nsMetric(name, ns string, label ...string) float64 {
	return metricValue(name, append([]string{"namespace", ns}, label...)...)
}

// TestMetricsMoveWhenRunsFinish: a run in progress counts in evalrun_active_runs; once it finishes (one case
// failing, one missing) the finished-runs counter, the duration histogram and the per-verdict, missing and
// parse-error counters of its namespace move by exactly its figures, once, however often it is reconciled again.
func TestMetricsMoveWhenRunsFinish(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	run := createRun(t, testutil.MakeEvalRun("measured", ns).Inline(testutil.DecisionEval(4)))
	waitJob(t, run)
	eventually(t, "one active run", func() error {
		if n := nsMetric("evalrun_active_runs", ns); n != 1 {
			return fmt.Errorf("evalrun_active_runs = %v", n)
		}
		return nil
	})
	finishShards(t, run, func(id string) string {
		switch id {
		case "case-001":
			return "REVIEW"
		case "case-003":
			return ""
		}
		return "CLEAR"
	})
	waitReason(t, run, metav1.ConditionFalse, evalsv1alpha1.ReasonMissingResults)
	poke(t, run)
	for _, m := range []struct {
		name  string
		label []string
		want  float64
	}{
		{"evalrun_active_runs", nil, 0},
		{"evalrun_runs_finished_total", []string{"reason", "MissingResults"}, 1},
		{"evalrun_runs_finished_total", []string{"passed", "False"}, 1},
		{"evalrun_run_duration_seconds", nil, 1},
		{"evalrun_collection_latency_seconds", nil, 1},
		{"evalrun_cases_total", []string{"verdict", "Pass"}, 2},
		{"evalrun_cases_total", []string{"verdict", "Fail"}, 1},
		{"evalrun_missing_ids_total", nil, 1},
		{"evalrun_parse_errors_total", nil, 0},
	} {
		if got := nsMetric(m.name, ns, m.label...); got != m.want {
			t.Errorf("%s%v = %v, want %v", m.name, m.label, got, m.want)
		}
	}
}
