//go:build e2e

package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
)

// Every run ends, even when its user set no timeouts (issue 21): hostile runners that never exit or that fill
// their output volume.

// shortDefaultDeadline is the manager's --default-active-deadline-seconds while TestDefaultDeadlineEndsANeverEndingRun
// runs.
const shortDefaultDeadline = 30

// 25. A run that sets no timeouts at all (no activeDeadlineSeconds, no target.timeoutSeconds) and a runner that
// never exits: it ends DeadlineExceeded at the manager's default deadline, which status.activeDeadline records as
// the manager's. The manager is restarted with a 30 s default for this test and restored afterwards, so no other
// run gets it. Sequential: Go runs every sequential test before any parallel one, one at a time, so no other
// suite's run is created (or reconciled) while the short default is in force, and the restarts are tolerated as
// in TestManagerRestartMidRun.
func TestDefaultDeadlineEndsANeverEndingRun(t *testing.T) {
	withManagerArg(t, "--default-active-deadline-seconds", "30")
	ns := newNamespace(t, "deadline", nil)
	run := sampleRun("forever", ns).Inline(sampleEvalFile(t)).Command("touch {OUTPUT_FILE}; exec sleep 2147483647").Obj()
	if run.Spec.ActiveDeadlineSeconds != nil || run.Spec.Target.TimeoutSeconds != nil {
		t.Fatal("the run must set no timeouts")
	}
	start := time.Now()
	create(t, run)
	got := waitFinished(t, ns, run.Name, runTimeout)
	took := time.Since(start)
	t.Logf("fault: runner never exits, no timeouts -> terminal %s in %s", condition(got, evalsv1alpha1.ConditionSucceeded).Reason, took.Round(10*time.Millisecond))
	expectCondition(t, got, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionFalse, evalsv1alpha1.ReasonDeadlineExceeded})
	expectDiff(t, "status.activeDeadline",
		&evalsv1alpha1.ActiveDeadline{Seconds: shortDefaultDeadline, Source: evalsv1alpha1.DeadlineFromManagerDefault}, got.Status.ActiveDeadline)
	if took < shortDefaultDeadline*time.Second {
		t.Errorf("the run ended after %s, before the %d s deadline", took, shortDefaultDeadline)
	}
	var job batchv1.Job
	if err := k8s.Get(ctxFor(t, 30*time.Second), client.ObjectKey{Namespace: ns, Name: got.Status.JobName}, &job); err == nil {
		if d := ptr.Deref(job.Spec.ActiveDeadlineSeconds, 0); d != shortDefaultDeadline {
			t.Errorf("the Job's activeDeadlineSeconds = %d, want the manager's default %d", d, shortDefaultDeadline)
		}
	} else if !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
}

// 26. A runner that writes 48 MiB into its output volume, bounded at 32Mi by its ephemeral-storage limit, and
// keeps running: the kubelet evicts the pod (it measures emptyDir usage every volumeStatsAggPeriod, 10 s on the
// local cluster, and checks every 10 s), and the run ends StorageLimitExceeded with the one pod it had: no fresh
// attempt.
func TestRunnerFillingOutEndsWithoutRetry(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "fillout", nil)
	run := sampleRun("fillout", ns).Inline(sampleEvalFile(t)).
		Command("dd if=/dev/zero of={OUTPUT_FILE} bs=1048576 count=48 2>/dev/null; exec sleep 3600").Obj()
	run.Spec.Target.Resources = &corev1.ResourceRequirements{
		Limits: corev1.ResourceList{corev1.ResourceEphemeralStorage: resource.MustParse("32Mi")},
		// No request: the limit sizes the volume; nothing needs reserving at scheduling (and the local node's
		// ephemeral-storage capacity is a tmpfs's).
		Requests: corev1.ResourceList{corev1.ResourceEphemeralStorage: resource.MustParse("0")},
	}
	start := time.Now()
	create(t, run)
	got := waitFinished(t, ns, run.Name, runTimeout)
	t.Logf("fault: runner fills out past its sizeLimit -> terminal %s in %s", condition(got, evalsv1alpha1.ConditionSucceeded).Reason, time.Since(start).Round(10*time.Millisecond))
	expectCondition(t, got, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionFalse, evalsv1alpha1.ReasonStorageLimitExceeded})
	if c := succeeded(got); c == nil || !strings.Contains(c.Message, `"out"`) {
		t.Errorf("condition %+v does not name the output volume", c)
	}
	// Once the Job controller has acted on the failed pod (the Job failed, or the manager stopped it), count: one
	// pod, never replaced.
	err := wait.PollUntilContextCancel(ctxFor(t, time.Minute), pollInterval, true, func(ctx context.Context) (bool, error) {
		var job batchv1.Job
		err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: got.Status.JobName}, &job)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		for _, c := range job.Status.Conditions {
			if c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("the run's Job did not fail: %v", err)
	}
	pods := runPods(t, ns, run.Name)
	if len(pods) > 1 {
		names := make([]string, 0, len(pods))
		for _, p := range pods {
			names = append(names, p.Name)
		}
		t.Errorf("the run had pods %v, want exactly one (no fresh attempt)", names)
	}
	for _, p := range pods {
		if p.Status.Reason != "Evicted" {
			t.Errorf("pod %s: reason %q message %q, want the kubelet's eviction", p.Name, p.Status.Reason, p.Status.Message)
		}
	}
}

// withManagerArg restarts the deployed manager with flag=value and, at the end of the test, restores its args and
// waits until only managers with the original args are left.
func withManagerArg(t *testing.T, flag, value string) {
	t.Helper()
	ctx := ctxFor(t, 5*time.Minute)
	dep := managerDeployment(ctx, t)
	original := slices.Clone(dep.Spec.Template.Spec.Containers[0].Args)
	want := slices.DeleteFunc(slices.Clone(original), func(a string) bool { return strings.HasPrefix(a, flag+"=") })
	want = append(want, flag+"="+value)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		setManagerArgs(ctx, t, dep.Name, original)
		t.Logf("manager restored with args %v", original)
	})
	setManagerArgs(ctx, t, dep.Name, want)
	t.Logf("manager restarted with args %v", want)
}

// managerDeployment returns the Deployment of the manager (its first container is the manager).
func managerDeployment(ctx context.Context, t *testing.T) *appsv1.Deployment {
	t.Helper()
	var deps appsv1.DeploymentList
	if err := k8s.List(ctx, &deps, client.InNamespace(managerNamespace)); err != nil {
		t.Fatalf("listing the manager's Deployments: %v", err)
	}
	for i := range deps.Items {
		if c := deps.Items[i].Spec.Template.Spec.Containers; len(c) > 0 && c[0].Name == "manager" {
			return &deps.Items[i]
		}
	}
	t.Fatalf("no manager Deployment in %s", managerNamespace)
	return nil
}

// setManagerArgs sets the manager container's args and waits until every manager pod left runs with them, is
// not being deleted, and one is Ready: no manager with other args can reconcile a run afterwards.
func setManagerArgs(ctx context.Context, t *testing.T, name string, args []string) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var dep appsv1.Deployment
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: managerNamespace, Name: name}, &dep); err != nil {
			return err
		}
		dep.Spec.Template.Spec.Containers[0].Args = args
		return k8s.Update(ctx, &dep)
	})
	if err != nil {
		t.Fatalf("setting the manager's args: %v", err)
	}
	var dep appsv1.Deployment
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: managerNamespace, Name: name}, &dep); err != nil {
		t.Fatal(err)
	}
	sel, err := metav1.LabelSelectorAsSelector(dep.Spec.Selector)
	if err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextCancel(ctx, pollInterval, true, func(ctx context.Context) (bool, error) {
		var pods corev1.PodList
		if err := k8s.List(ctx, &pods, client.InNamespace(managerNamespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
			return false, nil
		}
		ready := false
		for _, p := range pods.Items {
			if p.DeletionTimestamp != nil || !slices.Equal(p.Spec.Containers[0].Args, args) {
				return false, nil
			}
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
					ready = true
				}
			}
		}
		return ready, nil
	})
	if err != nil {
		t.Fatalf("the manager did not come back with args %v: %v", args, err)
	}
}
