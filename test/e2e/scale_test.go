//go:build e2e

package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/layout"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
)

// TestScaleHundredThousandCases is the measurement, run on demand (EVALRUN_E2E_SCALE=1; it takes minutes):
// 100,000 cases in 10 shards, the eval file and the results in the bucket, the sample runner answering at once. It
// checks the merged outcome and logs the wall time from apply to Succeeded and the bytes the run keeps in etcd.
func TestScaleHundredThousandCases(t *testing.T) {
	if os.Getenv("EVALRUN_E2E_SCALE") == "" {
		t.Skip("a measurement run: set EVALRUN_E2E_SCALE=1")
	}
	t.Parallel()
	const cases, shards = 100000, 10
	ns := newNamespace(t, "scale", nil)
	endpoint, fromHost := startBucket(t, ns)
	text := testutil.DecisionEval(cases)
	if err := openBucket(t, fromHost).Put(ctxFor(t, 2*time.Minute), "evals/scale.yaml", strings.NewReader(text), "application/yaml"); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(text))
	bucket := evalsv1alpha1.S3Bucket{Endpoint: endpoint, Bucket: bucketName, CredentialsSecret: "evalrun-s3-credentials"}
	run := sampleRun("scale", ns).Shards(shards, 0).FromS3(bucket, "evals/scale.yaml", hex.EncodeToString(sum[:])).
		Storage(bucket).Resources(corev1.ResourceRequirements{}).Obj()
	start := time.Now()
	create(t, run)
	got := waitFinished(t, ns, run.Name, 15*time.Minute)
	elapsed := time.Since(start)

	expectCondition(t, got, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionTrue, evalsv1alpha1.ReasonCompleted})
	expectDiff(t, "summary", counts{Total: cases, Passed: cases}, summaryCounts(got))
	t.Logf("scale: %d cases, %d shards, %.1f MiB eval file: apply -> Succeeded %s", cases, shards, float64(len(text))/(1<<20), elapsed.Round(100*time.Millisecond))

	// What the run keeps in etcd: the EvalRun and every object it owns, as the API serves them.
	sizes := map[string]int{}
	add := func(kind string, obj any) {
		data, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		sizes[kind] += len(data)
	}
	ctx := ctxFor(t, time.Minute)
	live := &evalsv1alpha1.EvalRun{}
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(run), live); err != nil {
		t.Fatal(err)
	}
	add("EvalRun", live)
	sel := client.MatchingLabels{layout.LabelRun: run.Name}
	var cms corev1.ConfigMapList
	var jobs batchv1.JobList
	var roles rbacv1.RoleList
	for _, l := range []client.ObjectList{&cms, &jobs, &roles} {
		if err := k8s.List(ctx, l, client.InNamespace(ns), sel); err != nil {
			t.Fatal(err)
		}
	}
	for i := range cms.Items {
		add("ConfigMaps", &cms.Items[i])
	}
	for i := range jobs.Items {
		add("Job", &jobs.Items[i])
	}
	for i := range roles.Items {
		add("Role", &roles.Items[i])
	}
	total := 0
	for _, n := range sizes {
		total += n
	}
	t.Logf("scale: bytes in etcd for the run (JSON as served): total %d; %v; %d ConfigMaps; status.cases %d (of %d)",
		total, sizes, len(cms.Items), len(got.Status.Cases), cases)
	if r := got.Status.Results; r == nil || len(r.Objects) != shards || r.TotalCases != cases {
		t.Errorf("results reference %+v", got.Status.Results)
	}
}
