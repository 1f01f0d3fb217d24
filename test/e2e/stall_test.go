//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/options"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/objstore"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
)

// TestHungBucketDelaysOnlyTheRunsNamingIt: 17 runs (more than the manager's 16 workers) name an eval file on an
// endpoint that accepts TCP and never answers (the judge server's black hole, a pod of the cluster). Meanwhile
// three ordinary runs and an every-minute schedule in another namespace (six cases the sample runner answers right)
// complete on time, and each hung run ends
// BucketUnavailable, naming the endpoint, once its deadline (counted from its creation) has passed.
func TestHungBucketDelaysOnlyTheRunsNamingIt(t *testing.T) {
	t.Parallel()
	hungNS := newNamespace(t, "hung-bucket", nil)
	fineNS := newNamespace(t, "beside-hung-bucket", nil)
	ctx := ctxFor(t, 2*scheduleTimeout)
	endpoint := strings.TrimSuffix(strings.Replace(startJudgeServer(t, hungNS), ":8080", ":9000", 1), "/v1")
	creds := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s3-creds", Namespace: hungNS}, StringData: map[string]string{
		objstore.AccessKeyIDFile: "id", objstore.SecretAccessKeyFile: "secret"}}
	if err := k8s.Create(ctx, creds); err != nil {
		t.Fatal(err)
	}
	const deadline = 60
	var hung []*evalsv1alpha1.EvalRun
	for i := range options.DefaultMaxConcurrentReconciles + 1 {
		run := sampleRun(fmt.Sprintf("hung-%d", i), hungNS).ActiveDeadline(deadline).
			FromS3(evalsv1alpha1.S3Bucket{Endpoint: endpoint, Bucket: "evals", CredentialsSecret: "s3-creds"}, "suite.yaml", strings.Repeat("ab", 32)).Obj()
		create(t, run)
		hung = append(hung, run)
	}
	time.Sleep(3 * time.Second) // every hung run's reconcile is waiting on the black hole

	schedule := &evalsv1alpha1.EvalSchedule{
		ObjectMeta: metav1.ObjectMeta{Name: "beside", Namespace: fineNS},
		Spec: evalsv1alpha1.EvalScheduleSpec{Schedule: "* * * * *", ConcurrencyPolicy: evalsv1alpha1.ConcurrencyForbid,
			Template: evalsv1alpha1.EvalRunTemplate{Spec: sampleRun("template", fineNS).Inline(testutil.DecisionEval(6)).Obj().Spec}},
	}
	if err := k8s.Create(ctx, schedule); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = k8s.Patch(ctx, schedule, client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"suspend":true}}`)))
	})
	var wg sync.WaitGroup
	for i := range 3 {
		name := fmt.Sprintf("fine-%d", i)
		create(t, sampleRun(name, fineNS).Inline(testutil.DecisionEval(6)).Obj())
		wg.Go(func() {
			run := waitFinished(t, fineNS, name, runTimeout)
			expectCondition(t, run, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionTrue, evalsv1alpha1.ReasonCompleted})
			t.Logf("ordinary run %s: created to Succeeded in %s", name, succeeded(run).LastTransitionTime.Sub(run.CreationTimestamp.Time))
		})
	}
	wg.Go(func() {
		run := waitScheduledRun(t, fineNS, "beside", nil)
		at, err := time.Parse(time.RFC3339, run.Annotations[evalsv1alpha1.AnnotationScheduledTime])
		if err != nil {
			t.Errorf("scheduled run %s: %v", run.Name, err)
			return
		}
		if late := run.CreationTimestamp.Sub(at); late > 30*time.Second {
			t.Errorf("the scheduled run %s was created %s after its time", run.Name, late)
		}
		run = waitFinished(t, fineNS, run.Name, runTimeout)
		expectCondition(t, run, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionTrue, evalsv1alpha1.ReasonCompleted})
	})
	wg.Wait()

	for _, run := range hung {
		done := waitFinished(t, hungNS, run.Name, deadline*time.Second+runTimeout)
		c := succeeded(done)
		if c.Status != metav1.ConditionFalse || c.Reason != evalsv1alpha1.ReasonBucketUnavailable || !strings.Contains(c.Message, endpoint) {
			t.Errorf("run %s ended %s/%s: %q; want False/BucketUnavailable naming %s", run.Name, c.Status, c.Reason, c.Message, endpoint)
		}
		took := c.LastTransitionTime.Sub(done.CreationTimestamp.Time)
		if took < deadline*time.Second || took > deadline*time.Second+time.Minute {
			t.Errorf("run %s ended %s after its creation; want its %ds deadline and at most a minute more", run.Name, took, deadline)
		}
		if done.Status.JobName != "" {
			t.Errorf("run %s has a Job (%s)", run.Name, done.Status.JobName)
		}
		t.Logf("run %s ended %s after its creation: %s", run.Name, took, c.Message)
	}
}
