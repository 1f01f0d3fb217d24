package controller_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/assess"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/children"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/options"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/pod/collector"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
	"github.com/evalrun-operator/evalrun-operator/internal/statusapply"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
)

// createRun creates the run built by w in namespace ns and returns it as stored.
func createRun(t *testing.T, w *testutil.EvalRunWrapper) *evalsv1alpha1.EvalRun {
	t.Helper()
	run := w.Obj()
	if err := k8s.Create(context.Background(), run); err != nil {
		t.Fatalf("creating EvalRun %s: %v", run.Name, err)
	}
	return run
}

// startPod creates the pod the Job controller would create from the Job's template and marks the Job started.
// runningPod waits for run's Job, starts its pod and marks it running, and waits for the run to say Running.
// It returns the run as it was while Pending.
func runningPod(t *testing.T, run *evalsv1alpha1.EvalRun) (*evalsv1alpha1.EvalRun, *batchv1.Job, *corev1.Pod) {
	t.Helper()
	job := waitJob(t, run)
	run = waitReason(t, run, metav1.ConditionUnknown, evalsv1alpha1.ReasonPending)
	pod := startPod(t, job)
	updatePodStatus(t, pod, func(s *corev1.PodStatus) { s.Phase = corev1.PodRunning })
	waitReason(t, run, metav1.ConditionUnknown, evalsv1alpha1.ReasonRunning)
	return run, job, pod
}

// settledRunningRun creates a run named name in a new namespace, starts its pod, waits until the status says the
// pod is running (a change within the Running state, written within options.ProgressStatusInterval) and the
// controller is idle.
func settledRunningRun(t *testing.T, name string) (string, *evalsv1alpha1.EvalRun, *batchv1.Job, *corev1.Pod) {
	t.Helper()
	ns := newNamespace(t)
	run, job, pod := runningPod(t, createRun(t, testutil.MakeEvalRun(name, ns)))
	eventually(t, "the pod's progress is written", func() error {
		if c := meta.FindStatusCondition(getRun(t, run).Status.Conditions, evalsv1alpha1.ConditionSucceeded); c.Message != "pod "+pod.Name+" is running" {
			return fmt.Errorf("message %q", c.Message)
		}
		return nil
	})
	settle(t, 0)
	return ns, run, job, pod
}

func startPod(t *testing.T, job *batchv1.Job) *corev1.Pod {
	t.Helper()
	ctx := context.Background()
	labels := map[string]string{"batch.kubernetes.io/job-name": job.Name, "batch.kubernetes.io/controller-uid": string(job.UID)}
	for k, v := range job.Spec.Template.Labels {
		labels[k] = v
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: job.Name + "-x7k2p", Namespace: job.Namespace, Labels: labels,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(job, batchv1.SchemeGroupVersion.WithKind("Job"))},
		},
		Spec: *job.Spec.Template.Spec.DeepCopy(),
	}
	if err := k8s.Create(ctx, pod); err != nil {
		t.Fatalf("creating pod: %v", err)
	}
	updateJobStatus(t, job, func(s *batchv1.JobStatus) {
		s.StartTime = ptr.To(metav1.Now())
		s.Active = 1
	})
	return pod
}

// updatePodStatus changes the pod's status as the kubelet would.
func updatePodStatus(t *testing.T, pod *corev1.Pod, mutate func(*corev1.PodStatus)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur := &corev1.Pod{}
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(pod), cur); err != nil {
			return err
		}
		mutate(&cur.Status)
		return k8s.Status().Update(context.Background(), cur)
	})
	if err != nil {
		t.Fatalf("updating the status of pod %s: %v", pod.Name, err)
	}
}

// updateJobStatus changes the Job's status as the Job controller would.
func updateJobStatus(t *testing.T, job *batchv1.Job, mutate func(*batchv1.JobStatus)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur := &batchv1.Job{}
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(job), cur); err != nil {
			return err
		}
		mutate(&cur.Status)
		return k8s.Status().Update(context.Background(), cur)
	})
	if err != nil {
		t.Fatalf("updating the status of Job %s: %v", job.Name, err)
	}
}

func jobCondition(t batchv1.JobConditionType, reason, msg string) batchv1.JobCondition {
	now := metav1.Now()
	return batchv1.JobCondition{Type: t, Status: corev1.ConditionTrue, Reason: reason, Message: msg, LastProbeTime: now, LastTransitionTime: now}
}

// completeJob marks the Job complete, as the Job controller does after its pod succeeded.
func completeJob(t *testing.T, job *batchv1.Job) {
	updateJobStatus(t, job, func(s *batchv1.JobStatus) {
		s.Active, s.Succeeded = 0, 1
		s.Conditions = append(s.Conditions,
			jobCondition(batchv1.JobSuccessCriteriaMet, batchv1.JobReasonCompletionsReached, "Reached expected number of succeeded pods"),
			jobCondition(batchv1.JobComplete, batchv1.JobReasonCompletionsReached, "Reached expected number of succeeded pods"))
		s.CompletionTime = ptr.To(metav1.Now())
	})
}

// failJob marks the Job failed with reason, as the Job controller does.
func failJob(t *testing.T, job *batchv1.Job, reason, msg string) {
	updateJobStatus(t, job, func(s *batchv1.JobStatus) {
		s.Active, s.Failed = 0, 1
		s.Conditions = append(s.Conditions, jobCondition(batchv1.JobFailureTarget, reason, msg), jobCondition(batchv1.JobFailed, reason, msg))
	})
}

func runnerTerminated(code int32, reason string, finished time.Time) func(*corev1.PodStatus) {
	return func(s *corev1.PodStatus) {
		s.ContainerStatuses = []corev1.ContainerStatus{{Name: podwire.ContainerRunner, Image: "runner:dev", State: corev1.ContainerState{
			Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: reason, StartedAt: metav1.NewTime(finished.Add(-time.Second)), FinishedAt: metav1.NewTime(finished)}}}}
	}
}

// collectorApply writes the collector's part of the status in-process, with the collector's own code.
func collectorApply(t *testing.T, c client.Client, run *evalsv1alpha1.EvalRun, outcome evalsv1alpha1.CollectionOutcome, sum *evalsv1alpha1.RunSummary) {
	t.Helper()
	section := results.Section{
		Summary: sum,
		Cases:   []evalsv1alpha1.CaseResult{{ID: "case-001", Verdict: evalsv1alpha1.VerdictPass, Score: "1.0000"}},
		Collection: &evalsv1alpha1.CollectionStatus{
			RunnerFinished: true, Outcome: outcome, Message: string(outcome) + " reported by the collector",
			Launcher: &evalsv1alpha1.LauncherReport{ExitCode: ptr.To[int32](0), Invocations: 1, StderrTail: "stderr tail"},
			PodName:  children.NamesFor(run.Name).Job + "-x7k2p",
		},
		Conditions: []metav1.Condition{{Type: evalsv1alpha1.ConditionResultsTruncated, Status: metav1.ConditionFalse,
			Reason: evalsv1alpha1.ReasonAllResultsInStatus, Message: "every result fits", LastTransitionTime: metav1.Now()}},
	}
	if err := collector.ApplyStatus(context.Background(), c, run.Namespace, run.Name, string(run.UID), section); err != nil {
		t.Fatalf("collector status apply: %v", err)
	}
}

func TestChildrenCreatedOnceWithOwnerReferences(t *testing.T) {
	requireEnv(t)
	ctx := context.Background()
	ns := newNamespace(t)
	run := createRun(t, testutil.MakeEvalRun("screen", ns))
	job := waitJob(t, run)
	got := waitReason(t, run, metav1.ConditionUnknown, evalsv1alpha1.ReasonPending)

	names := children.NamesFor(run.Name)
	isOwned := func(obj client.Object) {
		t.Helper()
		if !metav1.IsControlledBy(obj, got) {
			t.Errorf("%T %s is not controlled by the EvalRun: %v", obj, obj.GetName(), obj.GetOwnerReferences())
		}
		if obj.GetLabels()[podwire.LabelRun] != names.RunLabel {
			t.Errorf("%T %s has labels %v, want %s=%s", obj, obj.GetName(), obj.GetLabels(), podwire.LabelRun, names.RunLabel)
		}
	}
	isOwned(job)
	evalCM := &corev1.ConfigMap{}
	for _, o := range []struct {
		name string
		obj  client.Object
	}{
		{names.EvalConfigMap, evalCM}, {names.ServiceAccount, &corev1.ServiceAccount{}}, {names.Role, &rbacv1.Role{}},
		{names.RoleBinding, &rbacv1.RoleBinding{}}, {names.ResultConfigMap(0), &corev1.ConfigMap{}},
		{names.NetworkPolicy, &networkingv1.NetworkPolicy{}},
	} {
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: o.name}, o.obj); err != nil {
			t.Fatalf("child %s: %v", o.name, err)
		}
		isOwned(o.obj)
	}
	if evalCM.Data[podwire.EvalFileKey] != testutil.ScreeningEval {
		t.Errorf("pinned eval.yaml differs from the inline eval file")
	}
	cfg, err := children.RunConfigFrom(evalCM)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"case-001", "case-002"}, cfg.CaseIDs); diff != "" {
		t.Errorf("run.json caseIds (-want +got):\n%s", diff)
	}
	wantStatus := evalsv1alpha1.EvalRunStatus{
		ObservedGeneration: 1, JobName: job.Name, EvalFileSHA256: children.EvalSHA256([]byte(testutil.ScreeningEval)),
		EvalConfigMapName: names.EvalConfigMap, EvalFileView: ptr.To(evalsv1alpha1.EvalFileViewInputs), StartTime: &job.CreationTimestamp,
		Attempt:        &evalsv1alpha1.Attempt{Number: 1, Trigger: evalsv1alpha1.AttemptCreated, SpecSHA256: assess.SpecSHA256(&got.Spec), Generation: 1},
		ActiveDeadline: &evalsv1alpha1.ActiveDeadline{Seconds: options.DefaultActiveDeadlineSeconds, Source: evalsv1alpha1.DeadlineFromManagerDefault},
	}
	// The manager's fields, as it applies them; its conditions are checked below.
	gotStatus := statusapply.Manager(&got.Status)
	gotStatus.Conditions = nil
	if diff := cmp.Diff(statusapply.Manager(&wantStatus), gotStatus); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"Queued=False/Pending", "Reconciling=True/Pending", "Stalled=False/Pending", "Succeeded=Unknown/Pending"},
		conditionSummary(got.Status.Conditions)); diff != "" {
		t.Errorf("conditions (-want +got):\n%s", diff)
	}

	// Once: more reconciles write nothing.
	settle(t, 0)
	before := writes.in(ns)
	// ConfigMaps: the pinned eval file, the results and the kept records (docs/rejudge.md).
	wantWrites := map[string]int{"create ConfigMap": 3, "create ServiceAccount": 1, "create Role": 1, "create RoleBinding": 1,
		"create NetworkPolicy": 1, "create Job": 1, "apply EvalRun/status": 1}
	if diff := cmp.Diff(wantWrites, before); diff != "" {
		t.Errorf("manager writes (-want +got):\n%s", diff)
	}
	poke(t, run)
	poke(t, run)
	if diff := cmp.Diff(before, writes.in(ns)); diff != "" {
		t.Errorf("reconciles of an unchanged run wrote (-before +after):\n%s", diff)
	}
}

func TestEvalFileFromConfigMapAppliedLater(t *testing.T) {
	requireEnv(t)
	ctx := context.Background()
	ns := newNamespace(t)
	run := createRun(t, testutil.MakeEvalRun("later", ns).FromConfigMap("evals", "screening.yaml"))
	got := waitReason(t, run, metav1.ConditionUnknown, evalsv1alpha1.ReasonPending)
	if c := meta.FindStatusCondition(got.Status.Conditions, evalsv1alpha1.ConditionSucceeded); !strings.Contains(c.Message, "waiting for ConfigMap evals") {
		t.Errorf("Pending message %q does not say what is missing", c.Message)
	}
	if got.Status.JobName != "" {
		t.Errorf("jobName = %q before the eval file exists", got.Status.JobName)
	}
	src := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "evals", Namespace: ns}, Data: map[string]string{"screening.yaml": testutil.ScreeningEval}}
	if err := k8s.Create(ctx, src); err != nil {
		t.Fatal(err)
	}
	waitJob(t, run)
	// The run keeps its pinned copy when the source changes.
	src.Data["screening.yaml"] = strings.Replace(testutil.ScreeningEval, "case-002", "case-009", 1)
	if err := k8s.Update(ctx, src); err != nil {
		t.Fatal(err)
	}
	poke(t, run)
	got = getRun(t, run)
	if want := children.EvalSHA256([]byte(testutil.ScreeningEval)); got.Status.EvalFileSHA256 != want {
		t.Errorf("evalFileSHA256 = %s, want the pinned %s", got.Status.EvalFileSHA256, want)
	}
}

// TestUnresolvedLLMEndpointFailsBeforeAnyPod: spec.judging.llm that resolves to no base URL or model (this manager
// has no --llm-base-url/--llm-model) ends the run with InvalidEvalFile, saying what to set.
func TestUnresolvedLLMEndpointFailsBeforeAnyPod(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	run := createRun(t, testutil.MakeEvalRun("llm-unresolved", ns).Inline(testutil.ScreeningEval).LLM(evalsv1alpha1.LLMJudging{}))
	got := waitReason(t, run, metav1.ConditionFalse, evalsv1alpha1.ReasonInvalidEvalFile)
	msg := meta.FindStatusCondition(got.Status.Conditions, evalsv1alpha1.ConditionSucceeded).Message
	if !strings.Contains(msg, "set spec.judging.llm.baseURL") || !strings.Contains(msg, "spec.judging.llm.model") {
		t.Errorf("Succeeded message %q does not say what to set", msg)
	}
}

func TestInvalidEvalFileFailsBeforeAnyPod(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	run := createRun(t, testutil.MakeEvalRun("invalid", ns).Inline("$schema: agentv-eval-v2\nevalcases:\n  - id: a\n"))
	got := waitReason(t, run, metav1.ConditionFalse, evalsv1alpha1.ReasonInvalidEvalFile)
	if diff := cmp.Diff([]string{"Passed=False/NoResults", "Queued=False/InvalidEvalFile", "Reconciling=False/InvalidEvalFile",
		"Stalled=True/InvalidEvalFile", "Succeeded=False/InvalidEvalFile"}, conditionSummary(got.Status.Conditions)); diff != "" {
		t.Errorf("conditions (-want +got):\n%s", diff)
	}
	msg := meta.FindStatusCondition(got.Status.Conditions, evalsv1alpha1.ConditionStalled).Message
	if !strings.HasPrefix(msg, "invalid eval file:") || !strings.Contains(msg, "evalcases[0]") {
		t.Errorf("Stalled message %q does not carry the validation problems", msg)
	}
	settle(t, 0)
	poke(t, run)
	var jobs batchv1.JobList
	var cms corev1.ConfigMapList
	var sas corev1.ServiceAccountList
	for _, l := range []client.ObjectList{&jobs, &cms, &sas} {
		if err := k8s.List(context.Background(), l, client.InNamespace(ns), client.HasLabels{podwire.LabelRun}); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(jobs.Items) + len(cms.Items) + len(sas.Items); n != 0 {
		t.Errorf("an invalid run created %d children", n)
	}
	if diff := cmp.Diff(map[string]int{"apply EvalRun/status": 1}, writes.in(ns)); diff != "" {
		t.Errorf("manager writes (-want +got):\n%s", diff)
	}
}

func TestSuspendAndResume(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	run := createRun(t, testutil.MakeEvalRun("paused", ns).Suspend(true))
	job := waitJob(t, run)
	if !ptr.Deref(job.Spec.Suspend, false) {
		t.Fatalf("Job created with suspend=%v, want true", job.Spec.Suspend)
	}
	got := waitReason(t, run, metav1.ConditionUnknown, evalsv1alpha1.ReasonQueued)
	if c := meta.FindStatusCondition(got.Status.Conditions, evalsv1alpha1.ConditionQueued); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("Queued condition = %+v, want True", c)
	}
	setSuspend := func(v bool) {
		t.Helper()
		patch := fmt.Sprintf(`{"spec":{"suspend":%t}}`, v)
		if err := k8s.Patch(context.Background(), run.DeepCopy(), client.RawPatch("application/merge-patch+json", []byte(patch))); err != nil {
			t.Fatalf("setting spec.suspend=%t: %v", v, err)
		}
	}
	wantJobSuspend := func(v bool) {
		t.Helper()
		eventually(t, fmt.Sprintf("Job suspend=%t", v), func() error {
			j := &batchv1.Job{}
			if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(job), j); err != nil {
				return err
			}
			if ptr.Deref(j.Spec.Suspend, false) != v {
				return fmt.Errorf("Job suspend is %v", j.Spec.Suspend)
			}
			return nil
		})
	}
	setSuspend(false)
	wantJobSuspend(false)
	waitReason(t, run, metav1.ConditionUnknown, evalsv1alpha1.ReasonPending)
	setSuspend(true)
	wantJobSuspend(true)
	waitReason(t, run, metav1.ConditionUnknown, evalsv1alpha1.ReasonQueued)
}

func TestKueueOwnsSuspension(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	run := createRun(t, testutil.MakeEvalRun("queued", ns).Queue("team-a").Label("kueue.x-k8s.io/priority-class", "nightly"))
	job := waitJob(t, run)
	if job.Labels[podwire.LabelKueueQueue] != "team-a" || !ptr.Deref(job.Spec.Suspend, false) {
		t.Fatalf("Job labels %v suspend %v; want the Kueue label and suspended", job.Labels, job.Spec.Suspend)
	}
	// Kueue reads the workload's priority class from the Job's labels, which it inherits from the EvalRun.
	if job.Labels["kueue.x-k8s.io/priority-class"] != "nightly" || job.Spec.Template.Labels["kueue.x-k8s.io/priority-class"] != "nightly" {
		t.Errorf("Job labels %v, pod template labels %v; want the run's kueue.x-k8s.io/priority-class on both", job.Labels, job.Spec.Template.Labels)
	}
	got := waitReason(t, run, metav1.ConditionUnknown, evalsv1alpha1.ReasonQueued)
	if c := meta.FindStatusCondition(got.Status.Conditions, evalsv1alpha1.ConditionSucceeded); !strings.Contains(c.Message, "Kueue") {
		t.Errorf("Queued message %q does not mention Kueue", c.Message)
	}
	// envtest has no Kueue CRDs: the manager started and works without them, and shows the queue's name only.
	if q := got.Status.Queue; q == nil || *q != (evalsv1alpha1.QueueStatus{Name: "team-a"}) {
		t.Errorf("status.queue %+v without Kueue installed; want the queue's name only", q)
	}
	// Kueue admits the Job; the manager leaves spec.suspend alone from then on, whatever spec.suspend says.
	if err := k8s.Patch(context.Background(), job.DeepCopy(), client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"suspend":false}}`))); err != nil {
		t.Fatal(err)
	}
	waitReason(t, run, metav1.ConditionUnknown, evalsv1alpha1.ReasonPending)
	if err := k8s.Patch(context.Background(), run.DeepCopy(), client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"suspend":true}}`))); err != nil {
		t.Fatal(err)
	}
	settle(t, 0)
	poke(t, run)
	cur := &batchv1.Job{}
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(job), cur); err != nil {
		t.Fatal(err)
	}
	if ptr.Deref(cur.Spec.Suspend, true) {
		t.Errorf("the manager changed a Kueue Job's suspend to %v", cur.Spec.Suspend)
	}
	if n := writes.in(ns)["patch Job"]; n != 0 {
		t.Errorf("the manager patched a Kueue Job %d times", n)
	}
}

// TestFailureReasons drives a run to each outcome by writing Job, pod and collector status the way the Job
// controller, the kubelet and the collector do.
func TestFailureReasons(t *testing.T) {
	requireEnv(t)
	past := time.Now().Add(-10 * time.Minute)
	cases := []struct {
		name     string
		reason   string
		status   metav1.ConditionStatus
		drive    func(t *testing.T, run *evalsv1alpha1.EvalRun, job *batchv1.Job, pod *corev1.Pod)
		stopsJob bool
	}{
		{
			name: "completed", reason: evalsv1alpha1.ReasonCompleted, status: metav1.ConditionTrue,
			drive: func(t *testing.T, run *evalsv1alpha1.EvalRun, job *batchv1.Job, pod *corev1.Pod) {
				collectorApply(t, k8s, run, evalsv1alpha1.OutcomeCompleted, &evalsv1alpha1.RunSummary{Total: 2, Passed: 2, MeanScore: "1.0000"})
				completeJob(t, job)
			},
		},
		{
			name: "runner failed", reason: evalsv1alpha1.ReasonRunnerFailed, status: metav1.ConditionFalse,
			drive: func(t *testing.T, run *evalsv1alpha1.EvalRun, job *batchv1.Job, pod *corev1.Pod) {
				collectorApply(t, k8s, run, evalsv1alpha1.OutcomeRunnerFailed, &evalsv1alpha1.RunSummary{Total: 2, Passed: 1, Missing: 1})
				completeJob(t, job)
			},
		},
		{
			name: "runner timed out", reason: evalsv1alpha1.ReasonRunnerTimedOut, status: metav1.ConditionFalse,
			drive: func(t *testing.T, run *evalsv1alpha1.EvalRun, job *batchv1.Job, pod *corev1.Pod) {
				collectorApply(t, k8s, run, evalsv1alpha1.OutcomeRunnerTimedOut, &evalsv1alpha1.RunSummary{Total: 2, Missing: 2})
				completeJob(t, job)
			},
		},
		{
			name: "healthcheck failed", reason: evalsv1alpha1.ReasonHealthcheckFailed, status: metav1.ConditionFalse,
			drive: func(t *testing.T, run *evalsv1alpha1.EvalRun, job *batchv1.Job, pod *corev1.Pod) {
				collectorApply(t, k8s, run, evalsv1alpha1.OutcomeHealthcheckFailed, &evalsv1alpha1.RunSummary{Total: 2, Missing: 2})
				completeJob(t, job)
			},
		},
		{
			name: "missing results", reason: evalsv1alpha1.ReasonMissingResults, status: metav1.ConditionFalse,
			drive: func(t *testing.T, run *evalsv1alpha1.EvalRun, job *batchv1.Job, pod *corev1.Pod) {
				collectorApply(t, k8s, run, evalsv1alpha1.OutcomeMissingResults, &evalsv1alpha1.RunSummary{Total: 2, Passed: 1, Missing: 1})
				completeJob(t, job)
			},
		},
		{
			name: "invalid output", reason: evalsv1alpha1.ReasonInvalidOutput, status: metav1.ConditionFalse,
			drive: func(t *testing.T, run *evalsv1alpha1.EvalRun, job *batchv1.Job, pod *corev1.Pod) {
				collectorApply(t, k8s, run, evalsv1alpha1.OutcomeInvalidOutput, &evalsv1alpha1.RunSummary{Total: 2, Passed: 1, ParseErrors: 1})
				completeJob(t, job)
			},
		},
		{
			name: "collector termination message when its status write never landed", reason: evalsv1alpha1.ReasonInvalidOutput, status: metav1.ConditionFalse,
			drive: func(t *testing.T, run *evalsv1alpha1.EvalRun, job *batchv1.Job, pod *corev1.Pod) {
				msg, err := json.Marshal(podwire.TerminationMessage{Outcome: string(evalsv1alpha1.OutcomeInvalidOutput), Message: "line 2: not JSON", Total: 2})
				if err != nil {
					t.Fatal(err)
				}
				// The Job completes first: with the Job still active, the collector's end alone would end the run
				// and delete the Job (see "collector failed").
				completeJob(t, job)
				waitReason(t, run, metav1.ConditionUnknown, evalsv1alpha1.ReasonCollecting)
				updatePodStatus(t, pod, func(s *corev1.PodStatus) {
					s.Phase = corev1.PodSucceeded
					runnerTerminated(0, "Completed", time.Now())(s)
					s.InitContainerStatuses = append(s.InitContainerStatuses, corev1.ContainerStatus{Name: podwire.ContainerCollector, Image: "collector:dev", State: corev1.ContainerState{
						Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", Message: string(msg), FinishedAt: metav1.Now()}}})
				})
			},
		},
		{
			name: "runner OOM-killed", reason: evalsv1alpha1.ReasonRunnerOOMKilled, status: metav1.ConditionFalse,
			drive: func(t *testing.T, run *evalsv1alpha1.EvalRun, job *batchv1.Job, pod *corev1.Pod) {
				updatePodStatus(t, pod, func(s *corev1.PodStatus) {
					s.Phase = corev1.PodFailed
					runnerTerminated(137, "OOMKilled", time.Now())(s)
				})
				failJob(t, job, batchv1.JobReasonBackoffLimitExceeded, "Job has reached the specified backoff limit")
			},
		},
		{
			name: "deadline exceeded", reason: evalsv1alpha1.ReasonDeadlineExceeded, status: metav1.ConditionFalse,
			drive: func(t *testing.T, run *evalsv1alpha1.EvalRun, job *batchv1.Job, pod *corev1.Pod) {
				failJob(t, job, batchv1.JobReasonDeadlineExceeded, "Job was active longer than specified deadline")
			},
		},
		{
			// The collector is a regular container: once it ended without recording results, nothing will; the run
			// ends at once, without waiting for the Job, and the Job (its runner still running) is stopped.
			name: "collector failed", reason: evalsv1alpha1.ReasonCollectorFailed, status: metav1.ConditionFalse,
			drive: func(t *testing.T, run *evalsv1alpha1.EvalRun, job *batchv1.Job, pod *corev1.Pod) {
				updatePodStatus(t, pod, func(s *corev1.PodStatus) {
					s.Phase = corev1.PodFailed
					s.InitContainerStatuses = append(s.InitContainerStatuses, corev1.ContainerStatus{Name: podwire.ContainerCollector, Image: "collector:dev", State: corev1.ContainerState{
						Terminated: &corev1.ContainerStateTerminated{ExitCode: 2, Reason: "Error", Message: "panic: boom", FinishedAt: metav1.Now()}}})
				})
				failJob(t, job, batchv1.JobReasonBackoffLimitExceeded, "Job has reached the specified backoff limit")
			},
		},
		{
			// The kubelet evicts a pod whose emptyDir outgrew its sizeLimit (no DisruptionTarget), then the Job fails
			// its index (backoffLimitPerIndex 0): the eviction, not the runner's exit code, says why.
			name: "storage limit exceeded", reason: evalsv1alpha1.ReasonStorageLimitExceeded, status: metav1.ConditionFalse,
			drive: func(t *testing.T, run *evalsv1alpha1.EvalRun, job *batchv1.Job, pod *corev1.Pod) {
				updatePodStatus(t, pod, func(s *corev1.PodStatus) {
					runnerTerminated(137, "Error", time.Now())(s)
					s.Phase, s.Reason, s.Message = corev1.PodFailed, "Evicted", `Usage of EmptyDir volume "out" exceeds the limit "32Mi". `
				})
				failJob(t, job, batchv1.JobReasonFailedIndexes, "Job has failed indexes")
			},
		},
		{
			// The fourth disruption of the index: the Job would replace the pod again; the manager stops it.
			name: "disruption limit exceeded", reason: evalsv1alpha1.ReasonDisruptionLimitExceeded, status: metav1.ConditionFalse, stopsJob: true,
			drive: func(t *testing.T, run *evalsv1alpha1.EvalRun, job *batchv1.Job, pod *corev1.Pod) {
				patch := client.MergeFrom(pod.DeepCopy())
				pod.Annotations = map[string]string{batchv1.JobIndexIgnoredFailureCountAnnotation: "3"}
				if err := k8s.Patch(context.Background(), pod, patch); err != nil {
					t.Fatal(err)
				}
				updatePodStatus(t, pod, func(s *corev1.PodStatus) {
					s.Conditions = append(s.Conditions, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
						Reason: "EvictionByEvictionAPI", Message: "Eviction API: evicting", LastTransitionTime: metav1.Now()})
				})
			},
		},
		{
			name: "image pull failed", reason: evalsv1alpha1.ReasonImagePullFailed, status: metav1.ConditionFalse, stopsJob: true,
			drive: func(t *testing.T, run *evalsv1alpha1.EvalRun, job *batchv1.Job, pod *corev1.Pod) {
				updatePodStatus(t, pod, func(s *corev1.PodStatus) {
					s.ContainerStatuses = []corev1.ContainerStatus{{Name: podwire.ContainerRunner, Image: "no such image", State: corev1.ContainerState{
						Waiting: &corev1.ContainerStateWaiting{Reason: "InvalidImageName", Message: `couldn't parse image name "no such image"`}}}}
				})
			},
		},
		{
			name: "unschedulable", reason: evalsv1alpha1.ReasonUnschedulable, status: metav1.ConditionFalse, stopsJob: true,
			drive: func(t *testing.T, run *evalsv1alpha1.EvalRun, job *batchv1.Job, pod *corev1.Pod) {
				updatePodStatus(t, pod, func(s *corev1.PodStatus) {
					s.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
						Message: "0/1 nodes are available: 1 Insufficient memory.", LastTransitionTime: metav1.NewTime(past)}}
				})
			},
		},
		{
			name: "results not reported", reason: evalsv1alpha1.ReasonResultsNotReported, status: metav1.ConditionFalse, stopsJob: true,
			drive: func(t *testing.T, run *evalsv1alpha1.EvalRun, job *batchv1.Job, pod *corev1.Pod) {
				updatePodStatus(t, pod, func(s *corev1.PodStatus) {
					s.Phase = corev1.PodRunning
					runnerTerminated(0, "Completed", time.Now())(s)
				})
				// The manager waits for the results deadline without polling; move its clock past the deadline.
				waitReason(t, run, metav1.ConditionUnknown, evalsv1alpha1.ReasonCollecting)
				clk.advance(6 * time.Minute)
				t.Cleanup(func() { clk.advance(-6 * time.Minute) })
				poke(t, run)
			},
		},
		{
			name: "cancelled", reason: evalsv1alpha1.ReasonCancelled, status: metav1.ConditionFalse,
			drive: func(t *testing.T, run *evalsv1alpha1.EvalRun, job *batchv1.Job, pod *corev1.Pod) {
				if err := k8s.Delete(context.Background(), job, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
					t.Fatal(err)
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns := newNamespace(t)
			run := createRun(t, testutil.MakeEvalRun("run", ns))
			run, job, pod := runningPod(t, run)

			tc.drive(t, run, job, pod)
			got := waitReason(t, run, tc.status, tc.reason)

			stalled := meta.FindStatusCondition(got.Status.Conditions, evalsv1alpha1.ConditionStalled)
			reconciling := meta.FindStatusCondition(got.Status.Conditions, evalsv1alpha1.ConditionReconciling)
			if reconciling == nil || reconciling.Status != metav1.ConditionFalse {
				t.Errorf("Reconciling = %+v, want False once finished", reconciling)
			}
			wantStalled := metav1.ConditionTrue
			if tc.status == metav1.ConditionTrue {
				wantStalled = metav1.ConditionFalse
			}
			if stalled == nil || stalled.Status != wantStalled || stalled.Reason != tc.reason {
				t.Errorf("Stalled = %+v, want %s/%s", stalled, wantStalled, tc.reason)
			}
			if got.Status.CompletionTime == nil || meta.FindStatusCondition(got.Status.Conditions, evalsv1alpha1.ConditionPassed) == nil {
				t.Errorf("a finished run has completionTime %v and conditions %v", got.Status.CompletionTime, conditionSummary(got.Status.Conditions))
			}
			if tc.stopsJob {
				eventually(t, "the failed run's Job is deleted", func() error {
					j := &batchv1.Job{}
					err := k8s.Get(context.Background(), client.ObjectKeyFromObject(job), j)
					if apierrors.IsNotFound(err) || (err == nil && !j.DeletionTimestamp.IsZero()) {
						return nil
					}
					return fmt.Errorf("the Job still exists (err %v)", err)
				})
			}
			// A finished run stays finished, and further reconciles write nothing.
			settle(t, 0)
			before := writes.in(run.Namespace)
			poke(t, run)
			if diff := cmp.Diff(before, writes.in(run.Namespace)); diff != "" {
				t.Errorf("reconciles of a finished run wrote (-before +after):\n%s", diff)
			}
			waitReason(t, run, tc.status, tc.reason)
		})
	}
}

// TestDefaultDeadlineOnTheJob: a run that sets no deadline gets the manager's default on its Job, recorded in
// status.activeDeadline with its source; one that sets it gets its own.
func TestDefaultDeadlineOnTheJob(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	cases := []struct {
		name string
		w    *testutil.EvalRunWrapper
		want evalsv1alpha1.ActiveDeadline
	}{
		{name: "unset", w: testutil.MakeEvalRun("nodeadline", ns),
			want: evalsv1alpha1.ActiveDeadline{Seconds: options.DefaultActiveDeadlineSeconds, Source: evalsv1alpha1.DeadlineFromManagerDefault}},
		{name: "set", w: testutil.MakeEvalRun("deadline", ns).ActiveDeadline(1800),
			want: evalsv1alpha1.ActiveDeadline{Seconds: 1800, Source: evalsv1alpha1.DeadlineFromSpec}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			run := createRun(t, tc.w)
			job := waitJob(t, run)
			if got := ptr.Deref(job.Spec.ActiveDeadlineSeconds, 0); got != tc.want.Seconds {
				t.Errorf("the Job's activeDeadlineSeconds = %d, want %d", got, tc.want.Seconds)
			}
			eventually(t, "status.activeDeadline", func() error {
				got := getRun(t, run).Status.ActiveDeadline
				if got == nil || *got != tc.want {
					return fmt.Errorf("status.activeDeadline = %+v, want %+v", got, tc.want)
				}
				return nil
			})
		})
	}
}

// TestCollectorAndManagerStatusMerge checks that the collector's server-side apply and the manager's never
// remove each other's fields, and that each field has exactly one owner.
func TestCollectorAndManagerStatusMerge(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	run := createRun(t, testutil.MakeEvalRun("merge", ns))
	run, job, pod := runningPod(t, run)

	collectorApply(t, k8s, run, evalsv1alpha1.OutcomeCompleted, &evalsv1alpha1.RunSummary{Total: 2, Passed: 2, MeanScore: "1.0000"})
	// The manager writes after the collector: the runner container ended with exit code 0 and this pod's results
	// are recorded, so the run is decided without waiting for the Job; the Job completing later changes nothing.
	updatePodStatus(t, pod, runnerTerminated(0, "Completed", time.Now()))
	waitReason(t, run, metav1.ConditionTrue, evalsv1alpha1.ReasonCompleted)
	completeJob(t, job)
	poke(t, run)
	got := waitReason(t, run, metav1.ConditionTrue, evalsv1alpha1.ReasonCompleted)

	if diff := cmp.Diff([]string{"Passed=True/PolicyMet", "Queued=False/Completed", "Reconciling=False/Completed",
		"ResultsTruncated=False/AllResultsInStatus", "Stalled=False/Completed", "Succeeded=True/Completed"},
		conditionSummary(got.Status.Conditions)); diff != "" {
		t.Errorf("conditions (-want +got):\n%s", diff)
	}
	if got.Status.Summary == nil || got.Status.Summary.Passed != 2 || len(got.Status.Cases) != 1 || got.Status.Collection == nil {
		t.Errorf("the collector's fields were lost: summary %+v cases %d collection %+v", got.Status.Summary, len(got.Status.Cases), got.Status.Collection)
	}
	owners := map[string]string{}
	for _, mf := range got.ManagedFields {
		if mf.Subresource != "status" || mf.FieldsV1 == nil {
			continue
		}
		var fields map[string]any
		if err := json.Unmarshal(mf.FieldsV1.GetRawBytes(), &fields); err != nil {
			t.Fatal(err)
		}
		status, _ := fields["f:status"].(map[string]any)
		for f := range status {
			if prev, ok := owners[f]; ok && f != "f:conditions" {
				t.Errorf("status field %s owned by both %s and %s", f, prev, mf.Manager)
			}
			owners[f] = mf.Manager
		}
	}
	want := map[string]string{
		"f:summary": statusapply.FieldManagerCollector, "f:cases": statusapply.FieldManagerCollector, "f:collection": statusapply.FieldManagerCollector,
		"f:jobName": statusapply.FieldManagerManager, "f:evalFileSHA256": statusapply.FieldManagerManager, "f:runner": statusapply.FieldManagerManager,
		"f:observedGeneration": statusapply.FieldManagerManager, "f:completionTime": statusapply.FieldManagerManager,
	}
	for f, m := range want {
		if owners[f] != m {
			t.Errorf("status field %s is owned by %q, want %q", f, owners[f], m)
		}
	}
}

// TestCollectorIdentityIsConfinedToItsRun impersonates the collector's ServiceAccount.
func TestCollectorIdentityIsConfinedToItsRun(t *testing.T) {
	requireEnv(t)
	ctx := context.Background()
	ns := newNamespace(t)
	mine := createRun(t, testutil.MakeEvalRun("mine", ns))
	other := createRun(t, testutil.MakeEvalRun("other", ns))
	waitJob(t, mine)
	waitJob(t, other)
	mine, other = getRun(t, mine), getRun(t, other)

	cfg := *restCfg
	cfg.Impersonate.UserName = fmt.Sprintf("system:serviceaccount:%s:%s", ns, children.NamesFor(mine.Name).ServiceAccount)
	cfg.Impersonate.Groups = []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}
	sa, err := client.New(&cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}

	// Allowed: its own run and its own result ConfigMap.
	if err := sa.Get(ctx, client.ObjectKeyFromObject(mine), &evalsv1alpha1.EvalRun{}); err != nil {
		t.Errorf("reading its own EvalRun: %v", err)
	}
	collectorApply(t, sa, mine, evalsv1alpha1.OutcomeCompleted, &evalsv1alpha1.RunSummary{Total: 2, Passed: 2})
	resultCM := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: children.NamesFor(mine.Name).ResultConfigMap(0)}}
	if err := sa.Patch(ctx, resultCM, client.RawPatch("application/merge-patch+json", []byte(`{"binaryData":{"results.jsonl.gz":"H4sIAAAAAAAA/wMAAAAAAAAAAAA="}}`))); err != nil {
		t.Errorf("patching its own result ConfigMap: %v", err)
	}

	// Denied: anything else.
	denied := map[string]error{
		"patch another run's status": func() error {
			section := results.Section{Summary: &evalsv1alpha1.RunSummary{Total: 1}}
			return collector.ApplyStatus(ctx, sa, other.Namespace, other.Name, string(other.UID), section)
		}(),
		"read another run":   sa.Get(ctx, client.ObjectKeyFromObject(other), &evalsv1alpha1.EvalRun{}),
		"create a ConfigMap": sa.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mine-results-99"}}),
		"patch another run's result ConfigMap": sa.Patch(ctx,
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: children.NamesFor(other.Name).ResultConfigMap(0)}},
			client.RawPatch("application/merge-patch+json", []byte(`{"data":{"x":"y"}}`))),
		"list EvalRuns":                  sa.List(ctx, &evalsv1alpha1.EvalRunList{}, client.InNamespace(ns)),
		"read the pinned eval ConfigMap": sa.Get(ctx, client.ObjectKey{Namespace: ns, Name: children.NamesFor(mine.Name).EvalConfigMap}, &corev1.ConfigMap{}),
		"list Secrets":                   sa.List(ctx, &corev1.SecretList{}, client.InNamespace(ns)),
	}
	for what, err := range denied {
		if !apierrors.IsForbidden(err) {
			t.Errorf("%s: got %v, want Forbidden", what, err)
		}
	}
}

// codeJudgeEval is ScreeningEval with a code_judge on its second case.
var codeJudgeEval = testutil.ScreeningEval + `    evaluators:
      - name: decision-check
        type: code_judge
        script: ./check.sh
`

// TestCodeJudgesGetAJudgeContainer checks that a real API server accepts the pod with a judge container in the
// manager's judge image (never the runner's: spec.judging.image is unset), that run.json tells the collector to
// wait for it, and that the status names the judge image and its source.
func TestCodeJudgesGetAJudgeContainer(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	run := createRun(t, testutil.MakeEvalRun("judged", ns).Inline(codeJudgeEval))
	job := waitJob(t, run)
	got := waitReason(t, run, metav1.ConditionUnknown, evalsv1alpha1.ReasonPending)

	var names []string
	var judge *corev1.Container
	for i, c := range job.Spec.Template.Spec.Containers {
		names = append(names, c.Name)
		if c.Name == podwire.ContainerJudge {
			judge = &job.Spec.Template.Spec.Containers[i]
		}
	}
	if diff := cmp.Diff([]string{podwire.ContainerRunner, podwire.ContainerCollector, podwire.ContainerJudge}, names); diff != "" {
		t.Fatalf("containers (-want +got):\n%s", diff)
	}
	if judge.Image != options.DefaultJudgeImage || ptr.Deref(judge.SecurityContext.RunAsUser, 0) != podwire.JudgeUser {
		t.Errorf("judge container image %q uid %v, want %q and %d", judge.Image, judge.SecurityContext.RunAsUser, options.DefaultJudgeImage, podwire.JudgeUser)
	}
	want := &evalsv1alpha1.JudgeImageStatus{Image: options.DefaultJudgeImage, Source: evalsv1alpha1.JudgeImageSourceDefault}
	if diff := cmp.Diff(want, got.Status.JudgeImage); diff != "" {
		t.Errorf("status.judgeImage (-want +got):\n%s", diff)
	}
	evalCM := &corev1.ConfigMap{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: children.NamesFor(run.Name).EvalConfigMap}, evalCM); err != nil {
		t.Fatal(err)
	}
	cfg, err := children.RunConfigFrom(evalCM)
	if err != nil {
		t.Fatal(err)
	}
	// One case with a code judge, the default 2 workers and 60s timeout: one judge container, one round (60s plus
	// 4s to reap) plus the 60s margin.
	if !cfg.CodeJudges || cfg.JudgeContainers != 1 || cfg.JudgeDeadlineSeconds != 124 {
		t.Errorf("run.json codeJudges=%v judgeContainers=%d judgeDeadlineSeconds=%d, want true, 1 and 124", cfg.CodeJudges, cfg.JudgeContainers, cfg.JudgeDeadlineSeconds)
	}
}

// TestManagerRestartCreatesNoDuplicateJob restarts the manager mid-run.
func TestManagerRestartCreatesNoDuplicateJob(t *testing.T) {
	requireEnv(t)
	// The pod's progress is written within the progress interval: written, nothing is left for the restarted
	// manager to write.
	ns, run, job, _ := settledRunningRun(t, "restart")
	before := writes.in(ns)

	mgr.stop()
	var err error
	if mgr, err = startManager(); err != nil {
		t.Fatalf("restarting the manager: %v", err)
	}
	poke(t, run)
	if diff := cmp.Diff(before, writes.in(ns)); diff != "" {
		t.Errorf("the restarted manager wrote (-before +after):\n%s", diff)
	}
	var jobs batchv1.JobList
	if err := k8s.List(context.Background(), &jobs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(jobs.Items) != 1 || jobs.Items[0].UID != job.UID {
		t.Fatalf("after the restart there are %d Jobs, want the original one", len(jobs.Items))
	}
	collectorApply(t, k8s, run, evalsv1alpha1.OutcomeCompleted, &evalsv1alpha1.RunSummary{Total: 2, Passed: 2, MeanScore: "1.0000"})
	completeJob(t, job)
	waitReason(t, run, metav1.ConditionTrue, evalsv1alpha1.ReasonCompleted)
}

// TestOnePodProgressIsBatched: a change of a one-pod run's progress within one state (the runner container's
// image, once the kubelet reports it) waits for the progress interval and is then written once; a change of
// state (the run's end) is written at once. Without the batching, the image would be written by the reconcile
// the pod's update brings.
func TestOnePodProgressIsBatched(t *testing.T) {
	requireEnv(t)
	ns, run, job, pod := settledRunningRun(t, "progress")
	before := writes.in(ns)["apply EvalRun/status"]
	updatePodStatus(t, pod, func(s *corev1.PodStatus) {
		s.ContainerStatuses = []corev1.ContainerStatus{{Name: podwire.ContainerRunner, Image: "runner", ImageID: "sha256:5eed",
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}}}
	})
	settle(t, 0)
	if got := writes.in(ns)["apply EvalRun/status"]; got != before {
		t.Errorf("the runner's image was written at once: %d status writes, want %d until the progress interval passed", got, before)
	}
	eventually(t, "the runner's image is written", func() error {
		if r := getRun(t, run).Status.Runner; r == nil || ptr.Deref(r.ImageID, "") != "sha256:5eed" {
			return fmt.Errorf("status.runner %+v", r)
		}
		return nil
	})
	if got := writes.in(ns)["apply EvalRun/status"]; got != before+1 {
		t.Errorf("%d status writes for the runner's image, want 1", got-before)
	}
	collectorApply(t, k8s, run, evalsv1alpha1.OutcomeCompleted, &evalsv1alpha1.RunSummary{Total: 2, Passed: 2, MeanScore: "1.0000"})
	completeJob(t, job)
	waitReason(t, run, metav1.ConditionTrue, evalsv1alpha1.ReasonCompleted)
}

// TestAgentV442SuiteRuns: an AgentV 4.42 suite (tests, assertions) is accepted and run like an agentv-eval-v2 file:
// its eval file pinned with its tests as the run's cases, its Job created, and a judge container for its code grader.
func TestAgentV442SuiteRuns(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	suite := "tests:\n  - id: greet\n    input: Say hello\n    criteria: says hello\n    assertions:\n" +
		"      - type: contains\n        value: hello\n" +
		"  - id: check\n    input: Say hi\n    criteria: says hi\n    assertions:\n" +
		"      - {name: keyword, type: code-grader, command: [python3, check.py]}\n"
	run := createRun(t, testutil.MakeEvalRun("suite442", ns).Inline(suite))
	job := waitJob(t, run)
	waitReason(t, run, metav1.ConditionUnknown, evalsv1alpha1.ReasonPending)
	var names []string
	for _, c := range job.Spec.Template.Spec.Containers {
		names = append(names, c.Name)
	}
	if diff := cmp.Diff([]string{podwire.ContainerRunner, podwire.ContainerCollector, podwire.ContainerJudge}, names); diff != "" {
		t.Errorf("containers (-want +got):\n%s", diff)
	}
	evalCM := &corev1.ConfigMap{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: children.NamesFor(run.Name).EvalConfigMap}, evalCM); err != nil {
		t.Fatal(err)
	}
	if evalCM.Data[podwire.EvalFileKey] != suite {
		t.Errorf("the pinned eval file is not the suite:\n%s", evalCM.Data[podwire.EvalFileKey])
	}
	cfg, err := children.RunConfigFrom(evalCM)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"greet", "check"}, cfg.CaseIDs); diff != "" || !cfg.CodeJudges {
		t.Errorf("run.json codeJudges=%v, case ids (-want +got):\n%s", cfg.CodeJudges, diff)
	}
}
