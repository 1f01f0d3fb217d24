package controller

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/children"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/kueue"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/options"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// fullBudgetRun is a finished EvalRun whose collector filled the status budget: 2,000 cases with 200-byte
// answers and evaluator messages (about 512 KiB), plus missing ids and parse errors.
func fullBudgetRun(i int) *evalsv1alpha1.EvalRun {
	run := testutil.UnitRun()
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
			reportRetained(b, func(i int) any {
				var obj any = fullBudgetRun(i)
				if tc.strip {
					obj, _ = StripCollectedResults(obj)
				}
				return obj
			})
		})
	}
}

// queuedWorkload is the Workload Kueue makes for run i's Job, as the informer decodes it: unstructured, with the
// Job's pod template copied into spec.podSets and the admission's pod set assignment.
func queuedWorkload(tb testing.TB, i int) *unstructured.Unstructured {
	tb.Helper()
	run := testutil.UnitRun()
	run.Name = fmt.Sprintf("run-%d", i)
	job := children.BuildJob(run, children.BuildRunConfig(run, testutil.CaseIDs(1), nil, children.JudgeLoad{}, options.Options{}), options.Options{})
	template, err := k8sruntime.DefaultUnstructuredConverter.ToUnstructured(&job.Spec.Template)
	if err != nil {
		tb.Fatal(err)
	}
	wl := kueue.NewWorkload()
	wl.SetName("job-" + run.Name + "-abcde")
	wl.SetNamespace(run.Namespace)
	wl.SetLabels(map[string]string{kueue.JobUIDLabel: "0b7c6a3e-2f1d-4f65-9a8e-" + fmt.Sprintf("%012d", i)})
	wl.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "kueue", Operation: metav1.ManagedFieldsOperationApply,
		FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:podSets":{}},"f:status":{"f:conditions":{}}}`)}})
	wl.Object["spec"] = map[string]any{"queueName": "evals", "priority": int64(0), "active": true,
		"podSets": []any{map[string]any{"name": "main", "count": int64(1), "template": template}}}
	wl.Object["status"] = map[string]any{
		"admission": map[string]any{"clusterQueue": "evals", "podSetAssignments": []any{map[string]any{
			"name": "main", "count": int64(1), "flavors": map[string]any{"cpu": "default", "memory": "default", "pods": "default"},
			"resourceUsage": map[string]any{"cpu": "50m", "memory": "64Mi", "pods": "1"}}}},
		"conditions": []any{
			map[string]any{"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved", "message": "Quota reserved in ClusterQueue evals", "lastTransitionTime": "2026-11-27T11:10:56Z"},
			map[string]any{"type": "Admitted", "status": "True", "reason": "Admitted", "message": "The workload is admitted", "lastTransitionTime": "2026-11-27T11:10:56Z"},
		},
	}
	return wl
}

// queuedJob is run i's Job as the API server returns it, and the pod it made.
func queuedJob(i int) (*batchv1.Job, *corev1.Pod) {
	run := testutil.UnitRun()
	run.Name = fmt.Sprintf("run-%d", i)
	job := children.BuildJob(run, children.BuildRunConfig(run, testutil.CaseIDs(1), nil, children.JudgeLoad{}, options.Options{}), options.Options{})
	pod := &corev1.Pod{ObjectMeta: job.Spec.Template.ObjectMeta, Spec: *job.Spec.Template.Spec.DeepCopy()}
	pod.Name, pod.Namespace, pod.Spec.NodeName = job.Name+"-0-abcde", job.Namespace, "node-1"
	for _, c := range append(pod.Spec.InitContainers, pod.Spec.Containers...) {
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{Name: c.Name, Image: c.Image,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}}})
	}
	return job, pod
}

// BenchmarkCachedChildrenHeap reports the heap one run's Job, pod and Kueue Workload hold in the manager's cache,
// whole (as cached before the transforms of CacheByObject and StripCachedDefault) and stripped: with a thousand
// runs, a thousand of each.
func BenchmarkCachedChildrenHeap(b *testing.B) {
	kinds := []struct {
		name  string
		make  func(tb testing.TB, i int) any
		strip func(any) (any, error)
	}{
		{"workload", func(tb testing.TB, i int) any { return queuedWorkload(tb, i) }, StripCachedDefault},
		{"job", func(_ testing.TB, i int) any { j, _ := queuedJob(i); return j }, StripCachedJob},
		{"pod", func(_ testing.TB, i int) any { _, p := queuedJob(i); return p }, StripCachedPod},
	}
	for _, kind := range kinds {
		for _, strip := range []bool{false, true} {
			name := kind.name + "/whole"
			if strip {
				name = kind.name + "/stripped"
			}
			b.Run(name, func(b *testing.B) {
				reportRetained(b, func(i int) any {
					obj := kind.make(b, i) // what the informer decodes afresh
					if strip {
						obj, _ = kind.strip(obj)
					}
					return obj
				})
			})
		}
	}
}

// reportRetained reports the heap that 200 objects made by cached(i), as the cache would hold them, retain per
// object ("retained-bytes/run").
func reportRetained(b *testing.B, cached func(i int) any) {
	b.Helper()
	const runs = 200
	var retained uint64
	for b.Loop() {
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		cache := make([]any, runs)
		for i := range cache {
			cache[i] = cached(i)
		}
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		retained = (after.HeapAlloc - min(after.HeapAlloc, before.HeapAlloc)) / runs
		runtime.KeepAlive(cache)
	}
	b.ReportMetric(float64(retained), "retained-bytes/run")
}
