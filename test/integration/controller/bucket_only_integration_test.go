package controller_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/children"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/objstore"
	"github.com/evalrun-operator/evalrun-operator/internal/pod/collector"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil/s3server"
)

// collectorEnded is the pod status of a shard whose runner exited 0 and whose collector ended with the
// termination message of what it gathered (persisted: whether it stored it).
func collectorEnded(t *testing.T, g *collector.Gathered, persisted bool, persistError string) func(*corev1.PodStatus) {
	t.Helper()
	s := g.Summary
	msg, err := json.Marshal(podwire.TerminationMessage{Outcome: string(g.Outcome), Message: g.Message, RunnerFinished: true,
		Persisted: persisted, PersistError: persistError, Total: s.Total, Passed: s.Passed, Failed: s.Failed, Errored: s.Errored, Missing: s.Missing})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	return func(st *corev1.PodStatus) {
		runnerTerminated(0, "Completed", now)(st)
		st.Phase = corev1.PodSucceeded
		st.InitContainerStatuses = []corev1.ContainerStatus{{Name: podwire.ContainerCollector, State: corev1.ContainerState{
			Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", Message: string(msg),
				StartedAt: metav1.NewTime(now.Add(-2 * time.Second)), FinishedAt: metav1.NewTime(now)}}}}
	}
}

// TestBucketOnlyRunReadsItsCollectionsFromTheBucket: a run of 9 cases in 3 shards with statusFrom: Bucket (a real
// S3 server, SeaweedFS on loopback). The manager creates no Role, RoleBinding, shard or result ConfigMap and the
// pod has no token. Each shard's collector stores its collection only in the bucket; shard 2's pod ends (its
// termination message says stored) before its objects are there, and the run waits for them. The manager then
// reads each collection once, merges the shards as for statusFrom Pod, and the run ends Completed with all 9
// results. A second run whose shard 1 could not store its collection ends that shard CollectorFailed, saying why.
func TestBucketOnlyRunReadsItsCollectionsFromTheBucket(t *testing.T) {
	requireEnv(t)
	ctx := context.Background()
	srv := s3server.Start(t, s3server.Options{Buckets: []string{"evals"}})
	ns := newNamespace(t)
	if err := k8s.Create(ctx, srv.CredentialsSecret(ns, "s3-creds")); err != nil {
		t.Fatal(err)
	}
	store := srv.Store(t, "evals", "bucket-only")
	spec := func(name string) *testutil.EvalRunWrapper {
		w := testutil.MakeEvalRun(name, ns).Inline(testutil.DecisionEval(9)).Shards(3, 0)
		w.Spec.Storage = &evalsv1alpha1.ResultsStorage{S3: srv.Bucket("evals", "bucket-only", "s3-creds"), StatusFrom: ptr.To(evalsv1alpha1.StatusFromBucket)}
		return w
	}
	run := createRun(t, spec("nightly"))
	job := waitJob(t, run)

	expectNoPodAPIAccess(t, run, job)

	readsBefore := metricValue("evalrun_bucket_reads_total", "what", "Collection")
	bytesBefore := metricValue("evalrun_bucket_read_bytes_total", "what", "Collection") + metricValue("evalrun_bucket_read_bytes_total", "what", "Results")
	var indexes []string
	for i := range 3 {
		pod := startShardPod(t, job, i)
		out := shardOutput(9, 3, i)
		if i < 2 {
			g := collectShardInto(t, run, i, pod.Name, out, store)
			updatePodStatus(t, pod, collectorEnded(t, g, true, ""))
			indexes = append(indexes, strconv.Itoa(i))
			continue
		}
		// Shard 2's pod ends before its objects are readable: the manager waits for them.
		updatePodStatus(t, pod, func(s *corev1.PodStatus) { s.Phase = corev1.PodRunning })
		indexes = append(indexes, "2")
		updateJobStatus(t, job, func(s *batchv1.JobStatus) {
			s.StartTime = ptr.To(metav1.Now())
			s.CompletedIndexes = strings.Join(indexes, ",")
		})
		// Its termination message, with what a collection of its cases gives (counted as the collector counts).
		g := collectShardInto(t, run, i, pod.Name, out, nil)
		ref := objstore.RunRef{Namespace: ns, Name: run.Name, UID: string(run.UID)}
		summaryKey, err := ref.ShardSummaryKey(2)
		if err != nil {
			t.Fatal(err)
		}
		if err := store.Delete(ctx, summaryKey); err != nil {
			t.Fatal(err)
		}
		updatePodStatus(t, pod, collectorEnded(t, g, true, ""))
		eventually(t, "the run waits for shard 2's collection", func() error {
			if c := meta.FindStatusCondition(getRun(t, run).Status.Conditions, evalsv1alpha1.ConditionSucceeded); c == nil || c.Status != metav1.ConditionUnknown {
				return fmt.Errorf("Succeeded %+v", c)
			}
			return nil
		})
		collectShardInto(t, run, i, pod.Name, out, store)
	}
	done := waitReason(t, run, metav1.ConditionTrue, evalsv1alpha1.ReasonCompleted)
	if s := done.Status.Summary; s == nil || s.Total != 9 || s.Passed != 9 {
		t.Fatalf("summary %+v; want 9 passed", done.Status.Summary)
	}
	if sh := done.Status.Sharding; sh == nil || sh.Succeeded != 3 {
		t.Errorf("sharding %+v; want 3 succeeded", sh)
	}
	if refs := done.Status.Results; refs == nil || len(refs.Objects) != 3 {
		t.Errorf("results %+v; want 3 objects", refs)
	}
	reads := metricValue("evalrun_bucket_reads_total", "what", "Collection") - readsBefore
	read := metricValue("evalrun_bucket_read_bytes_total", "what", "Collection") + metricValue("evalrun_bucket_read_bytes_total", "what", "Results") - bytesBefore
	t.Logf("the manager read %v collections (%v bytes with the results objects) for 3 shards", reads, read)
	// Each collection once, plus the reads of shard 2's before it was there (at most one per reconcile).
	if reads < 3 {
		t.Errorf("the manager read %v collections from the bucket, want at least 3", reads)
	}

	expectFailedStoreEndsCollectorFailed(t, spec("broken"), store)

}

// expectNoPodAPIAccess checks a bucket-only run's least privilege: no Role or RoleBinding, no token, no ConfigMap
// for the pods to write, and the pods' ServiceAccount cannot even read the run.
func expectNoPodAPIAccess(t *testing.T, run *evalsv1alpha1.EvalRun, job *batchv1.Job) {
	t.Helper()
	ctx := context.Background()
	ns := run.Namespace
	names := children.NamesFor(run.Name)
	for _, obj := range []client.Object{&rbacv1.Role{}, &rbacv1.RoleBinding{}} {
		name := names.Role
		if _, ok := obj.(*rbacv1.RoleBinding); ok {
			name = names.RoleBinding
		}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj); !apierrors.IsNotFound(err) {
			t.Errorf("%T %s: %v; want none", obj, name, err)
		}
	}
	for _, v := range job.Spec.Template.Spec.Volumes {
		if v.Projected != nil {
			t.Errorf("the pod has a projected volume %s (a token)", v.Name)
		}
	}
	var cms corev1.ConfigMapList
	if err := k8s.List(ctx, &cms, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, cm := range cms.Items {
		if cm.Name != names.EvalConfigMap && cm.Name != "kube-root-ca.crt" {
			t.Errorf("ConfigMap %s exists; the run should have none but its pinned eval file", cm.Name)
		}
	}
	// Nor can the pods' ServiceAccount write anything of the run.
	sa := collectorClient(t, run)
	if err := sa.Get(ctx, client.ObjectKeyFromObject(run), &evalsv1alpha1.EvalRun{}); !apierrors.IsForbidden(err) {
		t.Errorf("the pod's ServiceAccount reading its EvalRun: %v, want Forbidden", err)
	}

}

// expectFailedStoreEndsCollectorFailed: a shard whose collector could not store its collection fails
// CollectorFailed with the collector's error; the other shards' results stay.
func expectFailedStoreEndsCollectorFailed(t *testing.T, w *testutil.EvalRunWrapper, store *objstore.Store) {
	t.Helper()
	second := createRun(t, w)
	job := waitJob(t, second)
	for i := range 3 {
		pod := startShardPod(t, job, i)
		out := shardOutput(9, 3, i)
		if i == 1 {
			g := collectShardInto(t, second, i, pod.Name, out, nil)
			updatePodStatus(t, pod, collectorEnded(t, g, false, "PUT summary.json: 503 Service Unavailable"))
			continue
		}
		g := collectShardInto(t, second, i, pod.Name, out, store)
		updatePodStatus(t, pod, collectorEnded(t, g, true, ""))
	}
	updateJobStatus(t, job, func(s *batchv1.JobStatus) { s.StartTime = ptr.To(metav1.Now()); s.CompletedIndexes = "0-2" })
	failed := waitReason(t, second, metav1.ConditionFalse, evalsv1alpha1.ReasonCollectorFailed)
	if !strings.Contains(meta.FindStatusCondition(failed.Status.Conditions, evalsv1alpha1.ConditionSucceeded).Message, "503 Service Unavailable") {
		t.Errorf("message %q; want the collector's error", meta.FindStatusCondition(failed.Status.Conditions, evalsv1alpha1.ConditionSucceeded).Message)
	}
	if s := failed.Status.Summary; s == nil || s.Passed != 6 || s.Missing != 3 {
		t.Errorf("summary %+v; want 6 passed and shard 1's 3 missing", s)
	}
}

// shardOutput is the runner's output for shard i of cases decision cases in shards shards: every case answered
// right.
func shardOutput(cases, shards, i int) string {
	lo, hi := podwire.ShardRange(cases, shards, i)
	var out strings.Builder
	for n := lo; n < hi; n++ {
		out.WriteString(testutil.DecisionLine(n, "CLEAR"))
	}
	return out.String()
}
