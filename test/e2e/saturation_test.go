//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
)

// TestOneCaseSaturation (issue 41; a measurement run: EVALRUN_E2E_SCALE=1): N one-case EvalRuns applied at once
// (EVALRUN_E2E_SATURATION_RUNS, default 30), timed from the first create until every one is terminal, against N bare
// Jobs with the same runner, command and image applied at once, timed until every one is Complete; in turn, twice
// each (runs, Jobs, runs, Jobs), on a node the other tests leave alone. It logs each figure and the ratio of the
// totals, and per run and per Job the API writes in its namespace by kind (watched) and the CPU the node spent
// (/proc: the machine's, and kubelet's, containerd's, the API server's, etcd's, the manager's); it asserts only that
// every run Completed and every Job completed, never a time.
func TestOneCaseSaturation(t *testing.T) {
	scaleOnly(t)
	n := 30
	if s := os.Getenv("EVALRUN_E2E_SATURATION_RUNS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v <= 0 {
			t.Fatalf("EVALRUN_E2E_SATURATION_RUNS=%q: want a positive number", s)
		}
		n = v
	}
	eval := "$schema: agentv-eval-v2\nevalcases:\n  - id: one\n    input_messages: [{role: user, content: hi}]\n" +
		"    expected_messages: [{role: assistant, content: hi}]\n"
	var runsTotal, jobsTotal time.Duration
	for round := range 2 {
		ns := newNamespace(t, fmt.Sprintf("saturation-runs-%d", round), nil)
		writes := watchNamespaceWrites(t, ns)
		cpu := readCPUTicks()
		start := time.Now()
		names := make([]string, n)
		for i := range n {
			names[i] = fmt.Sprintf("one-%d", i)
			create(t, sampleRun(names[i], ns).Inline(eval).Command(fmt.Sprintf(latencyCommand, "{OUTPUT_FILE}")).Obj())
		}
		// Waited for in turn on the test's goroutine (a wait may fail the test): the last to end sets the figure, and
		// a run already terminal answers the first poll.
		for _, name := range names {
			got := waitTerminalFast(t, ns, name)
			expectCondition(t, got, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionTrue, evalsv1alpha1.ReasonCompleted})
		}
		took := time.Since(start)
		runsTotal += took
		t.Logf("saturation: round %d: %d one-case EvalRuns at once, create -> all terminal: %s", round, n, took.Round(100*time.Millisecond))
		t.Logf("saturation: round %d: per EvalRun: %s; API writes: %s", round, cpuPerObject(cpu, readCPUTicks(), n), writes.perObject(n))

		jns := newNamespace(t, fmt.Sprintf("saturation-jobs-%d", round), nil)
		writes = watchNamespaceWrites(t, jns)
		cpu = readCPUTicks()
		start = time.Now()
		for i := range n {
			if err := k8s.Create(ctxFor(t, nsTimeout), bareJob(fmt.Sprintf("bare-%d", i), jns)); err != nil {
				t.Fatal(err)
			}
		}
		for i := range n {
			waitJobCompleteFast(t, jns, fmt.Sprintf("bare-%d", i))
		}
		took = time.Since(start)
		jobsTotal += took
		t.Logf("saturation: round %d: %d bare Jobs at once, create -> all Complete: %s", round, n, took.Round(100*time.Millisecond))
		t.Logf("saturation: round %d: per bare Job: %s; API writes: %s", round, cpuPerObject(cpu, readCPUTicks(), n), writes.perObject(n))
	}
	t.Logf("saturation: EvalRuns / bare Jobs (sum of both rounds) = %.2fx", float64(runsTotal)/float64(jobsTotal))
}
