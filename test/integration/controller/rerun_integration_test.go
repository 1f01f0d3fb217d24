package controller_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/assess"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
)

// gitopsApply server-side applies the run's manifest (metadata and spec, as it would be in Git) with a GitOps
// tool's field manager and --force-conflicts, as Argo CD (ServerSideApply=true) and Flux do.
func gitopsApply(t *testing.T, manager string, run *evalsv1alpha1.EvalRun) error {
	t.Helper()
	manifest := map[string]any{
		"apiVersion": evalsv1alpha1.GroupVersion.String(), "kind": "EvalRun",
		"metadata": map[string]any{"name": run.Name, "namespace": run.Namespace, "annotations": run.Annotations},
		"spec":     run.Spec,
	}
	data, err := json.Marshal(manifest)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		t.Fatal(err)
	}
	return k8s.Apply(context.Background(), client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(manager), client.ForceOwnership)
}

// waitAttempt waits for the run's status to describe attempt number, and returns the run.
func waitAttempt(t *testing.T, run *evalsv1alpha1.EvalRun, number int32) *evalsv1alpha1.EvalRun {
	t.Helper()
	var got *evalsv1alpha1.EvalRun
	eventually(t, fmt.Sprintf("attempt %d", number), func() error {
		got = getRun(t, run)
		if a := got.Status.Attempt; a == nil || a.Number != number || got.Status.JobName == "" {
			return fmt.Errorf("attempt %+v, job %q", got.Status.Attempt, got.Status.JobName)
		}
		return nil
	})
	return got
}

// TestGitOpsRerun applies a run the way Argo CD and Flux do (server-side apply, their field managers,
// --force-conflicts): re-applying the same manifest does nothing; a new image tag applied to the finished run
// starts attempt 2 under the same name (a new Job, the first attempt's outcome kept in previousAttempts); the
// same change applied while attempt 2 runs is rejected, saying why; a new value of the rerun annotation applied
// by another tool starts attempt 3 with the same spec.
func TestGitOpsRerun(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	manifest := testutil.MakeEvalRun("nightly", ns).Inline(testutil.DecisionEval(3)).Image("runner:v1").Obj()
	if err := gitopsApply(t, "argocd-controller", manifest); err != nil {
		t.Fatal(err)
	}
	run := getRun(t, manifest)
	finishShards(t, run, func(string) string { return "CLEAR" })
	first := waitReason(t, run, metav1.ConditionTrue, evalsv1alpha1.ReasonCompleted)
	job1 := waitJob(t, run)

	// The same manifest again (Argo CD's periodic sync): nothing starts.
	if err := gitopsApply(t, "argocd-controller", manifest); err != nil {
		t.Fatal(err)
	}
	poke(t, run)
	if got := getRun(t, run); got.Status.Attempt == nil || got.Status.Attempt.Number != 1 || len(got.Status.PreviousAttempts) != 0 {
		t.Fatalf("re-applying the same manifest changed the attempt: %+v, %+v", got.Status.Attempt, got.Status.PreviousAttempts)
	}

	// A new image tag in Git.
	manifest.Spec.Target.Image = "runner:v2"
	if err := gitopsApply(t, "argocd-controller", manifest); err != nil {
		t.Fatalf("applying a new image to the finished run: %v", err)
	}
	second := waitAttempt(t, run, 2)
	if a := second.Status.Attempt; a.Trigger != evalsv1alpha1.AttemptSpecChanged {
		t.Errorf("attempt 2 trigger %s", a.Trigger)
	}
	want := []evalsv1alpha1.AttemptRecord{{Number: 1, Trigger: evalsv1alpha1.AttemptCreated, StartTime: first.Status.StartTime,
		EvalFileSHA256: &first.Status.EvalFileSHA256, RunOutcome: evalsv1alpha1.RunOutcome{
			CompletionTime: first.Status.CompletionTime, Succeeded: metav1.ConditionTrue, Reason: evalsv1alpha1.ReasonCompleted,
			Passed: ptr.To(metav1.ConditionTrue), Summary: first.Status.Summary}}}
	if diff := cmp.Diff(want, second.Status.PreviousAttempts); diff != "" {
		t.Errorf("previousAttempts (-want +got):\n%s", diff)
	}
	if second.Status.Summary != nil || second.Status.Results != nil {
		t.Errorf("attempt 2 shows attempt 1's results: summary %+v, results %+v", second.Status.Summary, second.Status.Results)
	}
	job2 := waitJob(t, run)
	if job2.UID == job1.UID || job2.Spec.Template.Spec.Containers[0].Image != "runner:v2" {
		t.Errorf("attempt 2's Job %s (image %s) is not new", job2.UID, job2.Spec.Template.Spec.Containers[0].Image)
	}
	// envtest runs no garbage collector: delete attempt 1's pods as it would.
	if err := k8s.DeleteAllOf(context.Background(), &corev1.Pod{}, client.InNamespace(ns),
		client.MatchingLabels{"batch.kubernetes.io/controller-uid": string(job1.UID)}, client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}

	// While attempt 2 runs, the spec is held still.
	manifest.Spec.Target.Image = "runner:v3"
	if err := gitopsApply(t, "argocd-controller", manifest); err == nil || !strings.Contains(err.Error(), "immutable except suspend while the run is in progress") {
		t.Fatalf("applying a new image during attempt 2 = %v; want the immutability error", err)
	}
	manifest.Spec.Target.Image = "runner:v2"
	finishShards(t, run, func(id string) string {
		if id == "case-001" {
			return "REVIEW"
		}
		return "CLEAR"
	})
	waitReason(t, run, metav1.ConditionTrue, evalsv1alpha1.ReasonCompleted)

	// Tonight's run again: Flux applies the same spec with a new rerun annotation.
	manifest.Annotations = map[string]string{assess.AnnotationRerun: "2026-11-26"}
	if err := gitopsApply(t, "kustomize-controller", manifest); err != nil {
		t.Fatalf("applying the rerun annotation: %v", err)
	}
	third := waitAttempt(t, run, 3)
	if a := third.Status.Attempt; a.Trigger != evalsv1alpha1.AttemptRerun || a.Rerun == nil || *a.Rerun != "2026-11-26" {
		t.Errorf("attempt 3 %+v", a)
	}
	if p := third.Status.PreviousAttempts; len(p) != 2 || p[0].Number != 2 || p[1].Number != 1 || p[0].Summary == nil || p[0].Summary.Failed != 1 {
		t.Errorf("previousAttempts %+v", third.Status.PreviousAttempts)
	}
	waitEvent(t, run, "AttemptStarted")
}
