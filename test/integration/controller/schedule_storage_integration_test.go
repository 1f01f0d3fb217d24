package controller_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/assess"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/objstore"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil/s3server"
)

// TestScheduleHistoryDeletesBucketObjects: a schedule's finished run beyond the history limit is deleted with the
// objects it stored in its bucket (a real S3 server, SeaweedFS on loopback), and only those: another run's objects
// under the same prefix stay.
func TestScheduleHistoryDeletesBucketObjects(t *testing.T) {
	requireEnv(t)
	srv := s3server.Start(t, s3server.Options{Buckets: []string{"evals"}})
	ns := newNamespace(t)
	ctx := context.Background()
	secret := srv.CredentialsSecret(ns, "s3-creds")
	if err := k8s.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
	bucket := srv.Bucket("evals", "results", "s3-creds")
	s := newSchedule("stored", ns, evalsv1alpha1.ConcurrencyAllow)
	s.Spec.Suspend = ptr.To(true)
	s.Spec.SuccessfulRunsHistoryLimit = ptr.To[int32](0)
	s.Spec.Template.Spec.Storage = &evalsv1alpha1.ResultsStorage{S3: bucket}
	if err := k8s.Create(ctx, s); err != nil {
		t.Fatal(err)
	}
	s = getSchedule(t, s)
	store := srv.Store(t, "evals", "results")
	// A run the schedule made an hour ago, finished, with its shard's objects; and an unrelated run's object.
	at := time.Now().Add(-time.Hour).Truncate(time.Minute)
	run := &evalsv1alpha1.EvalRun{
		ObjectMeta: metav1.ObjectMeta{Name: assess.ScheduledRunName("stored", at), Namespace: ns,
			Labels:          map[string]string{evalsv1alpha1.LabelSchedule: "stored"},
			Annotations:     map[string]string{evalsv1alpha1.AnnotationScheduledTime: at.UTC().Format(time.RFC3339)},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(s, evalsv1alpha1.GroupVersion.WithKind("EvalSchedule"))}},
		Spec: *s.Spec.Template.Spec.DeepCopy(),
	}
	if err := k8s.Create(ctx, run); err != nil {
		t.Fatal(err)
	}
	put := func(ref objstore.RunRef) string {
		key, err := ref.ShardResultsKey(0)
		if err != nil {
			t.Fatal(err)
		}
		if err := store.Put(ctx, key, strings.NewReader("results"), "application/gzip"); err != nil {
			t.Fatal(err)
		}
		return key
	}
	mine := put(objstore.RunRef{Namespace: ns, Name: run.Name, UID: string(run.UID)})
	other := put(objstore.RunRef{Namespace: ns, Name: "unrelated", UID: "0b6f2c9e-1d0a-4f4e-9c55-2f1a7c3b9d10"})
	eventually(t, "the run finished", func() error {
		cur := getRun(t, run)
		cur.Status.Conditions = []metav1.Condition{{Type: evalsv1alpha1.ConditionSucceeded, Status: metav1.ConditionTrue,
			Reason: evalsv1alpha1.ReasonCompleted, LastTransitionTime: metav1.Now()}}
		return k8s.Status().Update(ctx, cur)
	})

	pokeSchedule(t, s)
	eventually(t, "the run and its objects deleted", func() error {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(run), &evalsv1alpha1.EvalRun{}); err == nil {
			return fmt.Errorf("run %s still there", run.Name)
		}
		if ok, err := store.Exists(ctx, mine); err != nil || ok {
			return fmt.Errorf("object %s: exists %t, %v", mine, ok, err)
		}
		return nil
	})
	if ok, err := store.Exists(ctx, other); err != nil || !ok {
		t.Errorf("the unrelated run's object %s: exists %t, %v", other, ok, err)
	}
	waitEvent(t, s, "RunDeleted")
}
