package controller_test

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
)

// TestScaleManyRuns creates EVALRUN_SCALE_RUNS EvalRuns at once (1000 for the figure) and reports the
// time until every Job exists and the manager's API writes per run. It measures; it asserts only that every
// Job appears and that no run costs more writes than the fixed set of creates and one status write.
//
//	EVALRUN_SCALE_RUNS=1000 KUBEBUILDER_ASSETS=$PWD/bin/k8s/v1.37.2 go test ./internal/manager/controller -run TestScaleManyRuns -v
func TestScaleManyRuns(t *testing.T) {
	requireEnv(t)
	n, _ := strconv.Atoi(os.Getenv("EVALRUN_SCALE_RUNS"))
	if n <= 0 {
		t.Skip("set EVALRUN_SCALE_RUNS (for example 1000) to run the scale measurement")
	}
	ctx := context.Background()
	ns := newNamespace(t)
	reconcilesBefore := reconciles()

	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	next := make(chan int)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := k8s.Create(ctx, testutil.MakeEvalRun(fmt.Sprintf("run-%04d", i), ns).Obj()); err != nil {
					errs <- err
				}
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("creating EvalRuns: %v", err)
	}
	created := time.Since(start)

	deadline := time.Now().Add(10 * time.Minute)
	for {
		var jobs batchv1.JobList
		if err := k8s.List(ctx, &jobs, client.InNamespace(ns), client.HasLabels{podwire.LabelRun}); err != nil {
			t.Fatal(err)
		}
		if len(jobs.Items) == n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d Jobs exist after 10 minutes", len(jobs.Items), n)
		}
		time.Sleep(100 * time.Millisecond)
	}
	allJobs := time.Since(start)
	settle(t, reconcilesBefore)
	settled := time.Since(start)

	counts := writes.in(ns)
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	t.Logf("%d EvalRuns created in %s; every Job existed after %s; controller idle after %s", n, created.Round(time.Millisecond),
		allJobs.Round(time.Millisecond), settled.Round(time.Millisecond))
	t.Logf("reconciles: %.0f (%.2f per run)", reconciles()-reconcilesBefore, (reconciles()-reconcilesBefore)/float64(n))
	for _, k := range keys {
		t.Logf("  %-26s %6d  %.2f per run", k, counts[k], float64(counts[k])/float64(n))
	}
	perRun := float64(total(counts)) / float64(n)
	t.Logf("manager API writes per run: %.2f (status writes %.2f)", perRun, float64(counts["apply EvalRun/status"])/float64(n))
	// Six creates (eval and result ConfigMaps, ServiceAccount, Role, RoleBinding, Job) and one status write.
	if perRun > 7 {
		t.Errorf("%.2f manager writes per run, want at most 7 until the Job exists", perRun)
	}
}
