package controller_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/children"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/objstore"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil/s3server"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// TestBucketResumeWritesNoPerCaseConfigMap: a run of 100,000 cases whose eval file and results are in a bucket (a
// real S3 server, SeaweedFS on loopback) is resumed with NotPassed. The 99,990 passing results are carried into an
// object under the resumed run's own prefix, never into a ConfigMap (there were at most 64 of those: a carry that
// did not fit ended ResumeSourceInvalid); only the 10 failing cases run; and no ConfigMap of the resumed run holds
// per-case data.
func TestBucketResumeWritesNoPerCaseConfigMap(t *testing.T) {
	requireEnv(t)
	const cases, failing = 100_000, 10
	srv := s3server.Start(t, s3server.Options{Buckets: []string{"evals"}})
	ns := newNamespace(t)
	ctx := context.Background()
	secret := srv.CredentialsSecret(ns, "s3-creds")
	if err := k8s.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
	bucket := srv.Bucket("evals", "nightly", "s3-creds")
	store := srv.Store(t, "evals", "nightly")
	evalText := testutil.DecisionEval(cases)
	sum := sha256.Sum256([]byte(evalText))
	digest := hex.EncodeToString(sum[:])
	if err := store.Put(ctx, "suites/decisions.yaml", strings.NewReader(evalText), "application/yaml"); err != nil {
		t.Fatal(err)
	}
	spec := func(name string) *testutil.EvalRunWrapper {
		w := testutil.MakeEvalRun(name, ns)
		w.Spec.EvalFile = evalsv1alpha1.EvalFileSource{S3: &evalsv1alpha1.S3Object{S3Bucket: bucket, Key: "suites/decisions.yaml", SHA256: digest}}
		w.Spec.Storage = &evalsv1alpha1.ResultsStorage{S3: bucket}
		return w
	}

	// The earlier run, finished, with its 100,000 results in its bucket object: every 10,000th case failed.
	first := createRun(t, spec("first").Suspend(true))
	ref := objstore.RunRef{Namespace: ns, Name: first.Name, UID: string(first.UID)}
	key, err := ref.ShardResultsKey(0)
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	for i := range cases {
		l := results.Line{CaseResult: verdict.CaseResult{ID: testutil.CaseID(i), Score: 1, Verdict: verdict.VerdictPass}}
		if i%(cases/failing) == 0 {
			l.Score, l.Verdict = 0, verdict.VerdictFail
		}
		b, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = zw.Write(append(b, '\n'))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := store.Put(ctx, key, &gz, "application/gzip"); err != nil {
		t.Fatal(err)
	}
	// Once the manager has prepared it and said so (Queued: suspended), it is marked finished, so no write of its
	// preparation follows.
	waitJob(t, first)
	waitReason(t, first, metav1.ConditionUnknown, evalsv1alpha1.ReasonQueued)
	eventually(t, "the earlier run finished with its results in the bucket", func() error {
		cur := getRun(t, first)
		cur.Status.EvalFileSHA256 = digest
		cur.Status.Results = &evalsv1alpha1.ResultsReference{Objects: []string{store.URI(key)}}
		cur.Status.Conditions = []metav1.Condition{{Type: evalsv1alpha1.ConditionSucceeded, Status: metav1.ConditionFalse,
			Reason: evalsv1alpha1.ReasonCompleted, Message: "done", LastTransitionTime: metav1.Now()}}
		return k8s.Status().Update(ctx, cur)
	})

	second := createRun(t, spec("second").Resume("first", evalsv1alpha1.ResumeNotPassed))
	defer func() {
		if t.Failed() {
			t.Logf("first: %+v\nsecond: %+v", getRun(t, first).Status.Conditions, getRun(t, second).Status.Conditions)
		}
	}()
	job := waitJob(t, second)
	if got := job.Annotations[podwire.AnnotationCases]; got != fmt.Sprint(failing) {
		t.Fatalf("the resumed run runs %s cases, want %d", got, failing)
	}
	eventually(t, "the resumed run's status says what it carried", func() error {
		if r := getRun(t, second).Status.Resume; r == nil || r.Ran != failing || r.Carried != cases-failing {
			return fmt.Errorf("resume status %+v; want %d run, %d carried", r, failing, cases-failing)
		}
		return nil
	})

	// The carried results are in the resumed run's own object, named by its run.json; no ConfigMap carries them.
	pinned := &corev1.ConfigMap{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: children.NamesFor(second.Name).EvalConfigMap}, pinned); err != nil {
		t.Fatal(err)
	}
	cfg, err := children.RunConfigFrom(pinned)
	if err != nil {
		t.Fatal(err)
	}
	carriedKey, err := objstore.RunRef{Namespace: ns, Name: second.Name, UID: string(second.UID)}.CarriedResultsKey()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cfg.CarriedObjects, []string{store.URI(carriedKey)}) || len(cfg.CarriedConfigMaps) != 0 {
		t.Fatalf("run.json carries objects %v and ConfigMaps %v; want only %s", cfg.CarriedObjects, cfg.CarriedConfigMaps, store.URI(carriedKey))
	}
	body, err := store.Get(ctx, carriedKey)
	if err != nil {
		t.Fatalf("the carried object: %v", err)
	}
	var carried bytes.Buffer
	_, err = carried.ReadFrom(body)
	_ = body.Close()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := results.EachLine(carried.Bytes(), func(l *results.Line, _ []byte) error {
		if l.CarriedFrom != "first" || l.Verdict != verdict.VerdictPass {
			return fmt.Errorf("carried %s: from %q, %s", l.ID, l.CarriedFrom, l.Verdict)
		}
		n++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n != cases-failing {
		t.Fatalf("the carried object holds %d results, want %d", n, cases-failing)
	}
	var cms corev1.ConfigMapList
	if err := k8s.List(ctx, &cms, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	names := children.NamesFor(second.Name)
	for _, cm := range cms.Items {
		if !metav1.IsControlledBy(&cm, second) {
			continue
		}
		if _, perCase := cm.BinaryData[podwire.ResultsKey]; perCase || strings.HasPrefix(cm.Name, strings.TrimSuffix(names.CarriedConfigMap(0), "0")) {
			t.Errorf("ConfigMap %s of the resumed run holds per-case results", cm.Name)
		}
	}
}
