//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/objstore"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
	"github.com/evalrun-operator/evalrun-operator/internal/stored"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
)

// bucketLines reads the stored results of a run whose results are in the test bucket, from this host (fromHost:
// the run's spec names the in-cluster endpoint), as the product reads them (stored.EachLine), and returns each
// case's verdict and score (missing cases included), which run answered it and its error, by case id.
func bucketLines(t *testing.T, run *evalsv1alpha1.EvalRun, fromHost string) (scores, answeredBy, errs map[string]string) {
	t.Helper()
	viaHost := run.DeepCopy()
	viaHost.Spec.Storage.S3.Endpoint = fromHost
	scores, answeredBy, errs = map[string]string{}, map[string]string{}, map[string]string{}
	msg, err := stored.EachLine(ctxFor(t, time.Minute), k8s, viaHost, func(l *results.Line) error {
		scores[l.ID] = fmt.Sprintf("%s %.4f missing=%v", l.Verdict, l.Score, l.Missing)
		answeredBy[l.ID], errs[l.ID] = l.AnsweredBy, l.Error
		return nil
	})
	if msg != "" || err != nil {
		t.Fatalf("reading the stored results of EvalRun %s from the bucket: %s %v", run.Name, msg, err)
	}
	return scores, answeredBy, errs
}

// bucketObjects lists the objects of the store under the namespace's keys, by key.
func bucketObjects(t *testing.T, store *objstore.Store, ns string) map[string]objstore.ObjectInfo {
	t.Helper()
	objects, err := store.List(ctxFor(t, time.Minute), ns+"/")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]objstore.ObjectInfo{}
	for _, o := range objects {
		out[o.Key] = o
	}
	return out
}

// shardKeys are the keys of every shard's records, results and collection of a run in the bucket.
func shardKeys(run *evalsv1alpha1.EvalRun, shards int) []string {
	var keys []string
	for i := range shards {
		for _, name := range []string{"records.jsonl.gz", "results.jsonl.gz", "summary.json"} {
			keys = append(keys, fmt.Sprintf("%s/%s/%s/shards/%d/%s", run.Namespace, run.Name, run.UID, i, name))
		}
	}
	return keys
}

// pinnedConfig is the run configuration (run.json) the manager pinned for the run.
func pinnedConfig(t *testing.T, ns, pinned string) podwire.RunConfig {
	t.Helper()
	cm := &corev1.ConfigMap{}
	if err := k8s.Get(ctxFor(t, time.Minute), client.ObjectKey{Namespace: ns, Name: pinned}, cm); err != nil {
		t.Fatal(err)
	}
	var cfg podwire.RunConfig
	if err := json.Unmarshal([]byte(cm.Data[podwire.RunConfigKey]), &cfg); err != nil {
		t.Fatalf("run.json of ConfigMap %s: %v", pinned, err)
	}
	return cfg
}

// TestRejudgeShardedBucketRun: re-judging both sides of a comparison of sharded runs whose results and records are
// in a bucket (SeaweedFS in the cluster). Run a (the baseline) and run b (whose runner flips case-002) run the
// sample in 3 shards of 4; the sample runner answers case-011 wrongly and never answers case-012 (both in shard 2).
// a2 and b2 judge their kept records again with an added evaluator and a changed threshold, b2 comparing itself
// with a2. The re-judges run no runner container; each shard's collector reads its source shard's records object
// from the bucket; a2's verdicts and scores are those of a fresh 3-shard bucket run of the same eval file and
// judging; case-012 is missing because a kept no record of it; every judged case says which run answered it; every
// object the re-judges write is under their own run's keys, and the sources' objects are untouched. b2's
// comparison with a2 finds case-002 newly failing (Regressed). A re-judge whose bucket prefix or endpoint is not
// the source's is refused (RejudgeSourceInvalid) before any pod.
func TestRejudgeShardedBucketRun(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "rejudge-bucket", nil)
	endpoint, fromHost := startBucket(t, ns)
	bucket := evalsv1alpha1.S3Bucket{Endpoint: endpoint, Bucket: bucketName, CredentialsSecret: "evalrun-s3-credentials", Prefix: ptr.To("rejudge")}
	host, err := objstore.Open(objstore.Config{Endpoint: fromHost, Bucket: bucketName, Prefix: "rejudge", PathStyle: true,
		AccessKeyID: bucketAccessKey, SecretAccessKey: objstore.Secret(bucketSecretKey)})
	if err != nil {
		t.Fatal(err)
	}
	eval := sampleEvalFile(t)
	inBucket := func(name string) *testutil.EvalRunWrapper { return sampleRun(name, ns).Storage(bucket) }
	create(t, inBucket("a").Inline(eval).Shards(3, 0).Obj())
	create(t, inBucket("b").Inline(eval).Shards(3, 0).Command(sampleCommand+" --flip-case case-002").Obj())
	a := waitFinished(t, ns, "a", runTimeout)
	b := waitFinished(t, ns, "b", runTimeout)
	for _, src := range []*evalsv1alpha1.EvalRun{a, b} {
		expectCondition(t, src, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionFalse, evalsv1alpha1.ReasonMissingResults})
		if r := src.Status.Records; r == nil || r.Where != evalsv1alpha1.RecordsInBucket || r.Kept != 11 || r.NotKept != 0 {
			t.Fatalf("EvalRun %s's status.records %+v: want 11 kept in the bucket", src.Name, src.Status.Records)
		}
	}
	before := bucketObjects(t, host, ns)
	for _, key := range shardKeys(a, 3) {
		if _, ok := before[key]; !ok {
			t.Errorf("the source's object %s is not in the bucket", key)
		}
	}

	// Another prefix, or the same bucket through another endpoint: refused before any pod.
	elsewhere, otherEndpoint := bucket, bucket
	elsewhere.Prefix, otherEndpoint.Endpoint = ptr.To("elsewhere"), fromHost
	for name, s3 := range map[string]evalsv1alpha1.S3Bucket{"other-prefix": elsewhere, "other-endpoint": otherEndpoint} {
		create(t, sampleRun(name, ns).Inline(eval).Storage(s3).Rejudge("a").Obj())
	}
	for name, want := range map[string]string{"other-prefix": `(prefix "elsewhere")`, "other-endpoint": "at " + fromHost + " "} {
		got := waitFinished(t, ns, name, runTimeout)
		expectCondition(t, got, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionFalse, evalsv1alpha1.ReasonRejudgeSourceInvalid})
		if c := succeeded(got); !strings.Contains(c.Message, "EvalRun a kept its records in bucket "+bucketName) || !strings.Contains(c.Message, want) {
			t.Errorf("%s: message %q, want the source's bucket and this run's %s", name, c.Message, want)
		}
		if pods := runPods(t, ns, name); len(pods) != 0 {
			t.Errorf("%s: a refused re-judge has %d pods", name, len(pods))
		}
	}

	// The new judging: an added evaluator and another threshold. a2 and b2 set no sharding: they take their
	// sources' 3 shards.
	judged := strings.ReplaceAll(eval, "      evaluators:\n", extraEvaluator)
	// judging.image unset: the re-judges' and the fresh run's code judges all run in the manager's judge image (a
	// re-judge has no target, and needs none to choose it).
	judging := &evalsv1alpha1.Judging{PassThreshold: "0.5"}
	a2 := inBucket("a2").Inline(judged).Rejudge("a").Obj()
	b2 := inBucket("b2").Inline(judged).Rejudge("b").Baseline("a2", 0, "").Obj()
	fresh := inBucket("fresh").Inline(judged).Shards(3, 0).Obj()
	// A run that ends failed (MissingResults: case-012 has no answer) has its Job deleted, pods and all: the
	// re-judges' pods are looked at while they exist.
	pods := watchPods(t, ns, "a2", "b2")
	for _, run := range []*evalsv1alpha1.EvalRun{a2, b2, fresh} {
		run.Spec.Judging = judging.DeepCopy()
		create(t, run)
	}
	gotA2 := waitFinished(t, ns, "a2", runTimeout)
	gotFresh := waitFinished(t, ns, "fresh", runTimeout)
	gotB2 := waitRun(t, ns, "b2", runTimeout, "a decided Regressed condition", func(run *evalsv1alpha1.EvalRun) bool {
		c := meta.FindStatusCondition(run.Status.Conditions, evalsv1alpha1.ConditionRegressed)
		return c != nil && c.Reason != evalsv1alpha1.ReasonBaselinePending
	})
	for _, run := range []*evalsv1alpha1.EvalRun{gotA2, gotB2, gotFresh} {
		expectCondition(t, run, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionFalse, evalsv1alpha1.ReasonMissingResults})
	}

	seen := pods()
	for _, rj := range []*evalsv1alpha1.EvalRun{gotA2, gotB2} {
		expectRejudgedFromBucket(t, rj, strings.TrimSuffix(rj.Name, "2"), seen[rj.Name])
	}

	// a2 judges as a fresh run of the same eval file and judging would.
	rejudged, answeredBy, errs := bucketLines(t, gotA2, fromHost)
	freshScores, _, _ := bucketLines(t, gotFresh, fromHost)
	expectDiff(t, "verdicts and scores of the re-judge against a fresh run", freshScores, rejudged)
	expectDiff(t, "the re-judge's summary against a fresh run's", summaryCounts(gotFresh), summaryCounts(gotA2))
	expectDiff(t, "summary", counts{Total: 12, Passed: 10, Failed: 1, Errored: 1, Missing: 1}, summaryCounts(gotA2))
	if v := verdicts(gotA2)["case-011"]; v != evalsv1alpha1.VerdictFail {
		t.Errorf("case-011, answered wrongly: verdict %q, want Fail", v)
	}
	expectDiff(t, "missing ids", []string{"case-012"}, gotA2.Status.MissingIDs)
	if e := errs["case-012"]; !strings.Contains(e, "not judged: EvalRun a kept no record of this case") {
		t.Errorf("case-012's stored error %q: want that a kept no record of it", e)
	}
	for id, by := range answeredBy {
		if want := map[bool]string{true: "", false: "a"}[id == "case-012"]; by != want {
			t.Errorf("case %s: answeredBy %q in the stored results, want %q", id, by, want)
		}
	}
	for _, c := range gotA2.Status.Cases {
		if ptr.Deref(c.AnsweredBy, "") != "a" {
			t.Errorf("case %s: answeredBy %v in the status, want a", c.ID, c.AnsweredBy)
		}
	}

	// What the re-judges wrote is under their own keys; the sources' objects are as they were.
	after := bucketObjects(t, host, ns)
	var added []string
	for key := range after {
		if _, ok := before[key]; !ok {
			added = append(added, key)
		}
	}
	want := append(append(shardKeys(gotA2, 3), shardKeys(gotB2, 3)...), shardKeys(gotFresh, 3)...)
	slices.Sort(want)
	slices.Sort(added)
	expectDiff(t, "objects written after the sources finished", want, added)
	for key, o := range before {
		if got, ok := after[key]; !ok || got.ETag != o.ETag || got.Size != o.Size {
			t.Errorf("the source's object %s changed: %+v, was %+v", key, got, o)
		}
	}
	for _, rj := range []*evalsv1alpha1.EvalRun{gotA2, gotB2} {
		prefix := fmt.Sprintf("s3://%s/rejudge/%s/%s/%s/shards/", bucketName, ns, rj.Name, rj.UID)
		if r := rj.Status.Results; r == nil || len(r.Objects) != 3 || len(r.ConfigMaps) != 0 {
			t.Errorf("%s: results reference %+v, want 3 objects and no ConfigMaps", rj.Name, rj.Status.Results)
		} else {
			for _, o := range r.Objects {
				if !strings.HasPrefix(o, prefix) {
					t.Errorf("%s: results object %s is not under %s", rj.Name, o, prefix)
				}
			}
		}
	}

	// Both sides judged again with the same judge: b2 against a2, the same eval file, case-002 newly failing; the
	// comparison names the judge image the baseline's code judges ran in (the manager's, as the kubelet ran it).
	if j := gotA2.Status.JudgeImage; j == nil || j.Source != evalsv1alpha1.JudgeImageSourceDefault || j.ImageID == nil {
		t.Errorf("a2: status.judgeImage %+v, want the manager's judge image (source Default) with the imageID that ran", j)
	}
	expectCondition(t, gotB2, evalsv1alpha1.ConditionRegressed, conditionSummary{metav1.ConditionTrue, evalsv1alpha1.ReasonRegressed})
	if c := gotB2.Status.Baseline; c == nil {
		t.Error("b2 has no status.baseline")
	} else {
		expectDiff(t, "b2 against a2", evalsv1alpha1.BaselineComparison{
			RunName: "a2", RunUID: string(gotA2.UID), EvalFile: evalsv1alpha1.EvalFileSame, SharedCases: 12,
			NewlyFailing: []string{"case-002"}, NewlyFailingCount: 1, BaselineJudgeImage: gotA2.Status.JudgeImage,
			MeanScore: c.MeanScore, BaselineMeanScore: c.BaselineMeanScore, MeanScoreDelta: c.MeanScoreDelta,
			Test: evalsv1alpha1.BaselineTestCount,
		}, *c)
		if c.MeanScoreDelta == "" || c.MeanScoreDelta[0] != '-' {
			t.Errorf("b2 against a2: mean score delta %q, want a drop", c.MeanScoreDelta)
		}
	}
}

// expectRejudgedFromBucket checks a re-judge of the 3-shard run from: its run.json reads the source's records from
// the bucket, and its pods (containers by pod, as watchPods saw them) were one per shard, none with a runner.
func expectRejudgedFromBucket(t *testing.T, rj *evalsv1alpha1.EvalRun, from string, pods map[string][]string) {
	t.Helper()
	cfg := pinnedConfig(t, rj.Namespace, rj.Status.EvalConfigMapName)
	if r := cfg.Rejudge; r == nil || r.From != from || !r.InBucket || len(r.ConfigMaps) != 0 || cfg.Shards != 3 {
		t.Errorf("%s: run.json has %d shards and rejudge %+v; want 3, the records of %s in the bucket", rj.Name, cfg.Shards, cfg.Rejudge, from)
	}
	if len(pods) < 3 {
		t.Errorf("%s had %d pods %v, want one per shard of %s (3)", rj.Name, len(pods), pods, from)
	}
	for pod, containers := range pods {
		if slices.Contains(containers, podwire.ContainerRunner) {
			t.Errorf("pod %s of %s has a runner container: %v", pod, rj.Name, containers)
		}
	}
}

// watchPods records, until the test ends or the returned function is called, the containers of every pod of the
// named runs, polling each second; the function returns them by run, then by pod.
func watchPods(t *testing.T, namespace string, runs ...string) func() map[string]map[string][]string {
	t.Helper()
	var mu sync.Mutex
	seen := map[string]map[string][]string{}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			for _, run := range runs {
				var list corev1.PodList
				if err := k8s.List(context.Background(), &list, client.InNamespace(namespace), client.MatchingLabels{podwire.LabelRun: run}); err != nil {
					continue
				}
				mu.Lock()
				for _, pod := range list.Items {
					if seen[run] == nil {
						seen[run] = map[string][]string{}
					}
					var names []string
					for _, c := range pod.Spec.Containers {
						names = append(names, c.Name)
					}
					seen[run][pod.Name] = names
				}
				mu.Unlock()
			}
			select {
			case <-stop:
				return
			case <-time.After(time.Second):
			}
		}
	}()
	var once sync.Once
	finish := func() map[string]map[string][]string {
		once.Do(func() { close(stop); <-done })
		mu.Lock()
		defer mu.Unlock()
		return seen
	}
	t.Cleanup(func() { finish() })
	return finish
}
