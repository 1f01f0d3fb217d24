//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/objstore"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
)

// The test bucket's credentials, as test/e2e/testdata/seaweedfs.yaml sets them (test credentials only).
const (
	bucketAccessKey = "evalrun-e2e"
	bucketSecretKey = "evalrun-e2e-secret-not-for-production"
	bucketName      = "evalruns"
)

// startBucket runs SeaweedFS (a real S3-compatible server) in namespace ns, creates the bucket through its S3 API
// and returns the endpoint pods use (the Service's cluster IP: the local cluster has no cluster DNS) and the one
// this host uses (the pod's IP on the local bridge).
func startBucket(t *testing.T, ns string) (inCluster, fromHost string) {
	t.Helper()
	ctx := ctxFor(t, 3*time.Minute)
	if _, err := kubectl(ctx, t, "apply", "-n", ns, "-f", filepath.Join(repoRoot, "test", "e2e", "testdata", "seaweedfs.yaml")); err != nil {
		t.Fatal(err)
	}
	var podIP string
	err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		var pods corev1.PodList
		if err := k8s.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{"app.kubernetes.io/name": "seaweedfs"}); err != nil {
			return false, nil
		}
		for _, p := range pods.Items {
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
					podIP = p.Status.PodIP
					return true, nil
				}
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("SeaweedFS did not become ready: %v", err)
	}
	// The first upload of the admin identity creates the bucket (from this host, to the pod on the local bridge).
	store := openBucket(t, "http://"+podIP+":8333")
	if err := store.Put(ctx, "bootstrap", strings.NewReader("bucket created by the e2e test"), "text/plain"); err != nil {
		t.Fatalf("creating the bucket: %v", err)
	}
	svc := &corev1.Service{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "seaweedfs"}, svc); err != nil {
		t.Fatal(err)
	}
	return "http://" + svc.Spec.ClusterIP + ":8333", "http://" + podIP + ":8333"
}

func openBucket(t *testing.T, endpoint string) *objstore.Store {
	t.Helper()
	store, err := objstore.Open(objstore.Config{Endpoint: endpoint, Bucket: bucketName, PathStyle: true,
		AccessKeyID: bucketAccessKey, SecretAccessKey: objstore.Secret(bucketSecretKey)})
	if err != nil {
		t.Fatal(err)
	}
	return store
}

// TestResultsInBucket runs the sample in 2 shards with its eval file and its results in a bucket of SeaweedFS running
// in the cluster (a run expecting another sha256 fails before any pod): each
// shard's results and collection are objects at their deterministic keys, the status references them and holds the
// merged picture, no result ConfigMap exists, and the runner, which tries, cannot read the bucket's credentials
// (they are mounted into the collector only).
func TestResultsInBucket(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "bucket", nil)
	endpoint, fromHost := startBucket(t, ns)

	// A hostile runner looks for the credentials everywhere it can before it answers.
	probe := `(ls -la /evalrun /evalrun/* 2>&1; cat /evalrun/bucket-credentials/* 2>&1; env; ` +
		`find / -name 'secretAccessKey' 2>/dev/null; grep -rs 'not-for-production' /evalrun /etc /tmp 2>&1) >&2; `
	// The eval file is an object of the bucket too.
	evalText := sampleEvalFile(t)
	host := openBucket(t, fromHost)
	if err := host.Put(ctxFor(t, time.Minute), "evals/screening.yaml", strings.NewReader(evalText), "application/yaml"); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(evalText))
	bucket := evalsv1alpha1.S3Bucket{Endpoint: endpoint, Bucket: bucketName, CredentialsSecret: "evalrun-s3-credentials"}
	results := bucket
	results.Prefix = ptr.To("nightly")
	run := sampleRun("bucket", ns).Shards(2, 0).Command(probe+sampleCommand).
		FromS3(bucket, "evals/screening.yaml", hex.EncodeToString(sum[:])).Storage(results).Obj()
	create(t, run)

	// The same object with another expected sha256 fails before any pod, naming both digests.
	wrong := run.DeepCopy()
	wrong.ObjectMeta = metav1.ObjectMeta{Name: "wrong-digest", Namespace: ns}
	wrong.Spec.EvalFile.S3.SHA256 = strings.Repeat("0", 64)
	create(t, wrong)
	bad := waitFinished(t, ns, wrong.Name, runTimeout)
	expectCondition(t, bad, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionFalse, evalsv1alpha1.ReasonInvalidEvalFile})
	if c := succeeded(bad); !strings.Contains(c.Message, strings.Repeat("0", 64)) || !strings.Contains(c.Message, hex.EncodeToString(sum[:])) {
		t.Errorf("InvalidEvalFile message %q does not name both digests", c.Message)
	}
	if pods := runPods(t, ns, wrong.Name); len(pods) != 0 {
		t.Errorf("a run whose eval file did not verify has %d pods", len(pods))
	}

	got := waitFinished(t, ns, run.Name, runTimeout)
	if got.Status.EvalFileSHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("evalFileSHA256 %s, want the object's", got.Status.EvalFileSHA256)
	}
	pinned := &corev1.ConfigMap{}
	if err := k8s.Get(ctxFor(t, time.Minute), client.ObjectKey{Namespace: ns, Name: got.Status.EvalConfigMapName}, pinned); err != nil {
		t.Fatal(err)
	}
	if _, ok := pinned.Data[podwire.EvalFileKey]; ok {
		t.Errorf("the eval file of a bucket object was copied into ConfigMap %s", pinned.Name)
	}

	expectCondition(t, got, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionFalse, evalsv1alpha1.ReasonMissingResults})
	expectDiff(t, "summary", counts{Total: 12, Passed: 10, Failed: 1, Errored: 1, Missing: 1}, summaryCounts(got))
	expectDiff(t, "verdicts", sampleVerdicts, verdicts(got))
	expectDiff(t, "missing ids", []string{"case-012"}, got.Status.MissingIDs)

	prefix := fmt.Sprintf("%s/%s/%s/shards/", ns, run.Name, got.UID)
	want := []string{
		fmt.Sprintf("s3://%s/nightly/%s0/results.jsonl.gz", bucketName, prefix),
		fmt.Sprintf("s3://%s/nightly/%s1/results.jsonl.gz", bucketName, prefix),
	}
	if r := got.Status.Results; r == nil {
		t.Errorf("no results reference")
	} else {
		expectDiff(t, "results objects", want, r.Objects)
		expectDiff(t, "result ConfigMaps", []string(nil), r.ConfigMaps)
	}
	// The objects are there, at their deterministic keys: each shard's kept records, results and summary.
	store, err := objstore.Open(objstore.Config{Endpoint: fromHost, Bucket: bucketName, Prefix: "nightly", PathStyle: true,
		AccessKeyID: bucketAccessKey, SecretAccessKey: objstore.Secret(bucketSecretKey)})
	if err != nil {
		t.Fatal(err)
	}
	objects, err := store.List(ctxFor(t, time.Minute), prefix)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, o := range objects {
		keys = append(keys, strings.TrimPrefix(o.Key, prefix))
	}
	expectDiff(t, "objects", []string{"0/records.jsonl.gz", "0/results.jsonl.gz", "0/summary.json", "1/records.jsonl.gz", "1/results.jsonl.gz",
		"1/summary.json"}, keys)

	// No per-case data in etcd beyond the status: no result ConfigMaps at all, and shard ConfigMaps without cases.
	var cms corev1.ConfigMapList
	if err := k8s.List(ctxFor(t, time.Minute), &cms, client.InNamespace(ns), client.MatchingLabels{podwire.LabelRun: run.Name}); err != nil {
		t.Fatal(err)
	}
	for _, cm := range cms.Items {
		if _, ok := cm.BinaryData[podwire.ResultsKey]; ok || strings.Contains(cm.Name, "-results-") {
			t.Errorf("ConfigMap %s holds results", cm.Name)
		}
		if raw, ok := cm.Data[podwire.ShardSectionKey]; ok {
			// The section's own fields: a count named "cases" (status.cost.runner.cases) is not a list of cases.
			var section map[string]json.RawMessage
			if err := json.Unmarshal([]byte(raw), &section); err != nil {
				t.Errorf("shard ConfigMap %s: %v", cm.Name, err)
			}
			if cases, ok := section["cases"]; ok && string(cases) != "null" && string(cases) != "[]" {
				t.Errorf("shard ConfigMap %s holds cases: %.200s", cm.Name, cases)
			}
		}
	}

	expectCredentialsOnlyInCollector(t, ns, run.Name)
}

// expectCredentialsOnlyInCollector checks that the run's pods mount the results bucket's credentials into the
// collector only and the eval file's into install only, and that the runner's probe of its filesystem and environment found nothing of them.
func expectCredentialsOnlyInCollector(t *testing.T, ns, run string) {
	t.Helper()
	for _, pod := range runPods(t, ns, run) {
		for _, c := range append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...) {
			results, eval := false, false
			for _, m := range c.VolumeMounts {
				results = results || m.Name == podwire.VolumeBucketCredentials
				eval = eval || m.Name == podwire.VolumeEvalCredentials
			}
			if results != (c.Name == podwire.ContainerCollector) || eval != (c.Name == podwire.ContainerInstall) {
				t.Errorf("pod %s: container %s mounts the results bucket's credentials: %t, the eval file's: %t", pod.Name, c.Name, results, eval)
			}
		}
		logs := podLogs(t, ns, pod.Name, podwire.ContainerRunner)
		if strings.Contains(logs, bucketSecretKey) || !strings.Contains(logs, "bucket-credentials") {
			t.Errorf("pod %s: the runner's probe (%s) read the secret, or did not run", pod.Name, textbound.Head(logs, 400))
		}
		if !bytes.Contains([]byte(logs), []byte("No such file or directory")) {
			t.Errorf("pod %s: the runner's probe found %q", pod.Name, textbound.Head(logs, 400))
		}
	}
}
