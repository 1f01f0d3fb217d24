//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
)

// latencyRuns is how many one-case runs TestOneCaseLatency measures.
const latencyRuns = 5

// TestOneCaseLatency measures, as a figure and not a timed assertion, how long a one-case run takes from its
// create to a terminal Succeeded condition, one run at a time (median and spread in the log). It runs before the
// parallel scenarios so their load does not skew it.
func TestOneCaseLatency(t *testing.T) {
	ns := newNamespace(t, "latency", nil)
	eval := "$schema: agentv-eval-v2\nevalcases:\n  - id: one\n    input_messages: [{role: user, content: hi}]\n" +
		"    expected_messages: [{role: assistant, content: hi}]\n"
	var took []time.Duration
	for i := range latencyRuns {
		run := MakeEvalRun(fmt.Sprintf("one-%d", i), ns).Inline(eval).Command(`echo '{"id":"one","text":"hi"}' > {OUTPUT_FILE}`).Obj()
		start := time.Now()
		create(t, run)
		got := waitTerminalFast(t, ns, run.Name)
		took = append(took, time.Since(start))
		expectCondition(t, got, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionTrue, evalsv1alpha1.ReasonCompleted})
	}
	sorted := slices.Clone(took)
	slices.Sort(sorted)
	t.Logf("latency: one-case run, create -> terminal Succeeded, %d runs: median %s, min %s, max %s (all: %v)",
		len(took), sorted[len(sorted)/2].Round(10*time.Millisecond), sorted[0].Round(10*time.Millisecond),
		sorted[len(sorted)-1].Round(10*time.Millisecond), took)
}

// waitTerminalFast polls every 25 ms (the shared poll interval would blur the figure) for a terminal condition.
func waitTerminalFast(t *testing.T, ns, name string) *evalsv1alpha1.EvalRun {
	t.Helper()
	ctx := ctxFor(t, runTimeout)
	run := &evalsv1alpha1.EvalRun{}
	err := wait.PollUntilContextCancel(ctx, 25*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, run); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		c := succeeded(run)
		return c != nil && c.Status != metav1.ConditionUnknown, nil
	})
	if err != nil {
		t.Fatalf("EvalRun %s/%s did not end: %v%s", ns, name, err, describeConditions(run.Status.Conditions))
	}
	return run
}
