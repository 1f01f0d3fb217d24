//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
	n := envCount(t, "EVALRUN_E2E_SATURATION_RUNS", 30)
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

// TestOneCaseRunsRate measures, as a figure, the rate of many one-case runs against bare Jobs: N one-case EvalRuns
// (EVALRUN_E2E_RATE_RUNS, 1,000), then N bare Jobs with the same runner image, command and resources, each kept
// to a sliding window of W not yet ended (EVALRUN_E2E_RATE_WINDOW, 80: the node holds 110 pods), the next created as
// soon as one ends. Each side has a namespace of its own, deleted and gone before the other starts, so neither
// runs beside the other's finished pods. Ends are counted from a watch (no listing of a thousand objects), and
// every run must end Completed. It logs runs per minute, the ratio, and per run the node's CPU and API writes.
func TestOneCaseRunsRate(t *testing.T) {
	scaleOnly(t)
	n, window := envCount(t, "EVALRUN_E2E_RATE_RUNS", 1000), envCount(t, "EVALRUN_E2E_RATE_WINDOW", 80)
	eval := "$schema: agentv-eval-v2\nevalcases:\n  - id: one\n    input_messages: [{role: user, content: hi}]\n" +
		"    expected_messages: [{role: assistant, content: hi}]\n"
	runs := measureRate(t, "rate-runs", n, window, &evalsv1alpha1.EvalRunList{},
		func(ns string, i int) client.Object {
			return sampleRun(fmt.Sprintf("one-%04d", i), ns).Inline(eval).Command(fmt.Sprintf(latencyCommand, "{OUTPUT_FILE}")).Obj()
		},
		func(o client.Object) (bool, string) {
			r, ok := o.(*evalsv1alpha1.EvalRun)
			if !ok {
				return false, ""
			}
			if c := succeeded(r); c != nil && c.Status != metav1.ConditionUnknown {
				return true, string(c.Status) + "/" + c.Reason
			}
			return false, ""
		}, "True/"+evalsv1alpha1.ReasonCompleted)
	jobs := measureRate(t, "rate-jobs", n, window, &batchv1.JobList{},
		func(ns string, i int) client.Object { return bareJob(fmt.Sprintf("bare-%04d", i), ns) },
		func(o client.Object) (bool, string) {
			j, ok := o.(*batchv1.Job)
			if !ok {
				return false, ""
			}
			for _, c := range j.Status.Conditions {
				if c.Status == corev1.ConditionTrue && (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) {
					return true, string(c.Type)
				}
			}
			return false, ""
		}, string(batchv1.JobComplete))
	t.Logf("rate: %d one-case EvalRuns at %.1f a minute, %d bare Jobs at %.1f a minute (%d at a time): %.2f of the bare Jobs' rate",
		n, runs, n, jobs, window, runs/jobs)
}

// envCount is the positive number in the environment variable name, def when it is unset.
func envCount(t *testing.T, name string, def int) int {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	v, err := strconv.Atoi(s)
	if err != nil || v <= 0 {
		t.Fatalf("%s=%q: want a positive number", name, s)
	}
	return v
}

// measureRate creates n objects (newObject) in a namespace of its own, at most window of them not ended (ended, from a
// watch of list's kind) at a time, waits for all to end with the outcome want, logs the rate, the node's CPU and
// the API writes per object, deletes the namespace and waits until it is gone. It returns objects per minute.
func measureRate(t *testing.T, prefix string, n, window int, list client.ObjectList, newObject func(ns string, i int) client.Object,
	ended func(client.Object) (bool, string), want string) float64 {
	t.Helper()
	ns := newNamespace(t, prefix, nil)
	var mu sync.Mutex
	outcomes := map[string]string{}
	changed := make(chan struct{}, 1)
	watchAll(t, list, ns, func(ev watch.Event) {
		o, ok := ev.Object.(client.Object)
		if !ok || (ev.Type != watch.Added && ev.Type != watch.Modified) {
			return
		}
		if done, outcome := ended(o); done {
			mu.Lock()
			if _, seen := outcomes[o.GetName()]; !seen {
				outcomes[o.GetName()] = outcome
			}
			mu.Unlock()
			select {
			case changed <- struct{}{}:
			default:
			}
		}
	})
	writes := watchNamespaceWrites(t, ns)
	cpu := readCPUTicks()
	ctx := ctxFor(t, 120*time.Minute)
	start := time.Now()
	created, lastLog := 0, start
	for {
		mu.Lock()
		done := len(outcomes)
		mu.Unlock()
		if done == n {
			break
		}
		for ; created < n && created-done < window; created++ {
			if err := k8s.Create(ctx, newObject(ns, created)); err != nil {
				t.Fatalf("creating %s %d: %v", prefix, created, err)
			}
		}
		if time.Since(lastLog) > time.Minute {
			lastLog = time.Now()
			t.Logf("rate: %s: %d of %d ended after %s", prefix, done, n, time.Since(start).Round(time.Second))
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: %d of %d ended after %s", prefix, done, n, time.Since(start).Round(time.Second))
		case <-changed:
		case <-time.After(time.Second):
		}
	}
	took := time.Since(start)
	perMinute := float64(n) / took.Minutes()
	byOutcome := map[string]int{}
	for _, o := range outcomes {
		byOutcome[o]++
	}
	if byOutcome[want] != n {
		t.Errorf("%s: outcomes %v, want all %d %s", prefix, byOutcome, n, want)
	}
	t.Logf("rate: %s: %d in %s, %.1f a minute; per object: %s; API writes: %s", prefix, n, took.Round(time.Second), perMinute,
		cpuPerObject(cpu, readCPUTicks(), n), writes.perObject(n))
	// Gone before the other side starts: its finished pods and its garbage collection are not the other's cost.
	gone := time.Now()
	if err := k8s.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextCancel(ctx, 2*time.Second, true, func(ctx context.Context) (bool, error) {
		err := k8s.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	}); err != nil {
		t.Fatalf("namespace %s not gone: %v", ns, err)
	}
	t.Logf("rate: %s: namespace deleted in %s", prefix, time.Since(gone).Round(time.Second))
	return perMinute
}
