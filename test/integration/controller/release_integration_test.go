package controller_test

import (
	"context"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
)

// TestSucceededOnePodRunReleasesItsPod: once a one-pod run is decided succeeded, its pod is kept until the Job
// counted it, then deleted (--release-succeeded-pods, which the suite's manager runs with); the run's status
// stands without it.
func TestSucceededOnePodRunReleasesItsPod(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	run := createRun(t, testutil.MakeEvalRun("released", ns))
	job := waitJob(t, run)
	pod := createJobPod(t, job, job.Name+"-x7k2p") // the pod collectorApply records
	updatePodStatus(t, pod, func(s *corev1.PodStatus) { s.Phase = corev1.PodRunning })
	waitReason(t, run, metav1.ConditionUnknown, evalsv1alpha1.ReasonRunning)
	collectorApply(t, k8s, run, evalsv1alpha1.OutcomeCompleted, &evalsv1alpha1.RunSummary{Total: 2, Passed: 2, MeanScore: "1.0000"})
	finished := time.Now()
	updatePodStatus(t, pod, func(s *corev1.PodStatus) {
		runnerTerminated(0, "Completed", finished)(s)
		s.ContainerStatuses = append(s.ContainerStatuses, corev1.ContainerStatus{Name: podwire.ContainerCollector, Image: "collector:dev",
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed",
				StartedAt: metav1.NewTime(finished.Add(-time.Second)), FinishedAt: metav1.NewTime(finished)}}})
		s.Phase = corev1.PodSucceeded
	})
	decided := waitReason(t, run, metav1.ConditionTrue, evalsv1alpha1.ReasonCompleted)

	// Decided, but the Job has not counted the pod: it stays.
	poke(t, run)
	time.Sleep(time.Second)
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(pod), &corev1.Pod{}); err != nil {
		t.Fatalf("the pod went before the Job counted it: %v", err)
	}
	updateJobStatus(t, job, func(s *batchv1.JobStatus) { s.CompletedIndexes = "0" })
	completeJob(t, job)
	waitPodGone(t, pod)

	got := getRun(t, run)
	if c := meta.FindStatusCondition(got.Status.Conditions, evalsv1alpha1.ConditionSucceeded); c == nil || c.Status != metav1.ConditionTrue || c.Reason != evalsv1alpha1.ReasonCompleted {
		t.Errorf("after the release Succeeded is %+v, want True/Completed as decided", c)
	}
	if got.Status.Runner == nil || decided.Status.Runner == nil || got.Status.Runner.PodName != decided.Status.Runner.PodName {
		t.Errorf("runner status %+v after the release, want the decided one %+v", got.Status.Runner, decided.Status.Runner)
	}
}
