//go:build e2e

package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/assess"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
)

// The measurements of issues 14 and 23, run on demand (EVALRUN_E2E_SCALE=1; they take minutes each and are not part
// of make test): they check the outcome and log what the closing notes quote.

// TestScaleHundredThousandCases: 100,000 cases in 10 shards, the eval file and the results in the bucket, the sample
// runner answering at once.
func TestScaleHundredThousandCases(t *testing.T) {
	scaleOnly(t)
	measureShardedRun(t, "scale", 100000, 10, 0, true)
}

// TestScaleThousandShards: 100,000 cases in 1,000 shards, 50 pods at a time (the node holds 110 pods, the other
// tests' included), once with the results in the bucket and once in ConfigMaps (the eval file is in the bucket
// both times: 100,000 cases do not fit a ConfigMap).
func TestScaleThousandShards(t *testing.T) {
	scaleOnly(t)
	parallelism := int32(50)
	if v := os.Getenv("EVALRUN_E2E_SCALE_PARALLELISM"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("EVALRUN_E2E_SCALE_PARALLELISM: %v", err)
		}
		parallelism = int32(n)
	}
	t.Run("bucket", func(t *testing.T) { measureShardedRun(t, "shards-bucket", 100000, 1000, parallelism, true) })
	t.Run("configmaps", func(t *testing.T) { measureShardedRun(t, "shards-cm", 100000, 1000, parallelism, false) })
}

// TestScaleThousandRuns: 1,000 one-case EvalRuns (EVALRUN_E2E_SCALE_RUNS to diagnose with fewer), every one ending
// Completed. The node holds 110 pods. With
// EVALRUN_E2E_SCALE_QUEUE=<pods> all 1,000 are applied at once into a Kueue LocalQueue whose ClusterQueue admits that
// many pods at a time (make kueue); without it they are applied as a sliding window: at most
// EVALRUN_E2E_SCALE_WINDOW (80) runs are not terminal at a time, the next applied as soon as one ends. It logs the
// time until every run is terminal and the manager's peak resident set.
func TestScaleThousandRuns(t *testing.T) {
	scaleOnly(t)
	runs, window, queue := 1000, 80, 0
	for name, v := range map[string]*int{"EVALRUN_E2E_SCALE_RUNS": &runs, "EVALRUN_E2E_SCALE_WINDOW": &window, "EVALRUN_E2E_SCALE_QUEUE": &queue} {
		if s := os.Getenv(name); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n <= 0 {
				t.Fatalf("%s=%q: want a positive number", name, s)
			}
			*v = n
		}
	}
	var ns string
	if queue > 0 {
		ns, _ = kueueNamespace(t, "runs", queue)
		window = runs
	} else {
		ns = newNamespace(t, "runs", nil)
	}
	text := testutil.DecisionEval(1)
	mem := watchManagerMemory(t)
	start := time.Now()
	var applied time.Duration
	created, terminal, seen := 0, 0, 0
	reasons := map[string]int{}
	ctx := ctxFor(t, 120*time.Minute)
	for terminal < runs {
		var list evalsv1alpha1.EvalRunList
		if err := k8s.List(ctx, &list, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		terminal, seen = 0, 0
		clear(reasons)
		for i := range list.Items {
			if len(list.Items[i].Status.Conditions) > 0 {
				seen++ // the manager reconciled it at least once
			}
			if c := succeeded(&list.Items[i]); c != nil && c.Status != metav1.ConditionUnknown {
				terminal++
				reasons[string(c.Status)+"/"+c.Reason]++
			}
		}
		// The next runs are created by 16 clients at once, as a GitOps sync or a script applying many would.
		batch := min(runs, terminal+window) - created
		var wg sync.WaitGroup
		for i := range 16 {
			wg.Go(func() {
				for j := i; j < batch; j += 16 {
					w := sampleRun(fmt.Sprintf("one-%04d", created+j), ns).Inline(text).Resources(corev1.ResourceRequirements{})
					if queue > 0 {
						w = w.Queue(localQueue)
					}
					if err := k8s.Create(ctx, w.Obj()); err != nil {
						t.Errorf("creating EvalRun one-%04d: %v", created+j, err)
					}
				}
			})
		}
		wg.Wait()
		if t.Failed() {
			t.FailNow()
		}
		if created += max(batch, 0); created == runs && applied == 0 {
			applied = time.Since(start)
		}
		if terminal < runs {
			select {
			case <-ctx.Done():
				t.Fatalf("%d of %d runs terminal after %s: %v", terminal, runs, time.Since(start).Round(time.Second), reasons)
			case <-time.After(5 * time.Second):
			}
			if n := time.Since(start) / time.Minute; n > 0 && time.Since(start)%time.Minute < 5*time.Second {
				t.Logf("scale: after %d min %d of %d runs have a status, %d terminal %v; manager %s", n, seen, runs, terminal, reasons, mem())
			}
		}
	}
	how := fmt.Sprintf("at most %d not terminal at once", window)
	if queue > 0 {
		how = fmt.Sprintf("all applied at once in %s, into a Kueue queue of %d pods", applied.Round(100*time.Millisecond), queue)
	}
	t.Logf("scale: %d one-case EvalRuns (%s): every run terminal after %s; outcomes %v; manager %s",
		runs, how, time.Since(start).Round(100*time.Millisecond), reasons, mem())
	if reasons["True/"+evalsv1alpha1.ReasonCompleted] != runs {
		t.Errorf("outcomes %v, want all %d True/%s", reasons, runs, evalsv1alpha1.ReasonCompleted)
	}
}

// scaleWait is how long a measurement waits for its run: EVALRUN_E2E_SCALE_WAIT (a Go duration), 45 minutes by
// default. 1,000 shards took about 20 minutes on the 2-core machine (about 50 pods finished a minute, once the
// succeeded shards' pods were released; 12 to 20 before, with every finished pod kept on the node).
func scaleWait(t *testing.T) time.Duration {
	t.Helper()
	s := os.Getenv("EVALRUN_E2E_SCALE_WAIT")
	if s == "" {
		return 45 * time.Minute
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		t.Fatalf("EVALRUN_E2E_SCALE_WAIT=%q: want a positive duration", s)
	}
	return d
}

// scaleOnly skips a measurement unless EVALRUN_E2E_SCALE is set.
func scaleOnly(t *testing.T) {
	t.Helper()
	if os.Getenv("EVALRUN_E2E_SCALE") == "" {
		t.Skip("a measurement run: set EVALRUN_E2E_SCALE=1")
	}
}

// measureShardedRun runs cases decision cases in shards shards (parallelism pods at once, 0: the default), the eval
// file in the bucket and the results there too when bucketResults. It checks the merged outcome and logs the wall
// time from apply to Succeeded, the EvalRun's writes (watch events), the manager's peak resident set over the run
// and the bytes the run keeps in etcd.
func measureShardedRun(t *testing.T, name string, cases int, shards, parallelism int32, bucketResults bool) {
	ns := newNamespace(t, name, nil)
	endpoint, fromHost := startBucket(t, ns)
	text := testutil.DecisionEval(cases)
	if err := openBucket(t, fromHost).Put(ctxFor(t, 2*time.Minute), "evals/scale.yaml", strings.NewReader(text), "application/yaml"); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(text))
	bucket := evalsv1alpha1.S3Bucket{Endpoint: endpoint, Bucket: bucketName, CredentialsSecret: "evalrun-s3-credentials"}
	w := sampleRun(name, ns).Shards(shards, parallelism).FromS3(bucket, "evals/scale.yaml", hex.EncodeToString(sum[:])).
		Resources(corev1.ResourceRequirements{})
	if bucketResults {
		w = w.Storage(bucket)
	}
	run := w.Obj()
	mem := watchManagerMemory(t)
	writes := countWrites(t, ns, run.Name)
	start := time.Now()
	create(t, run)
	t.Cleanup(func() {
		if t.Failed() { // what the run got to, for the notes of a run that ran out of time
			t.Logf("scale: after %s: EvalRun writes %d; manager %s", time.Since(start).Round(time.Second), writes(), mem())
		}
	})
	got := waitFinished(t, ns, run.Name, scaleWait(t))
	elapsed := time.Since(start)

	expectCondition(t, got, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionTrue, evalsv1alpha1.ReasonCompleted})
	expectDiff(t, "summary", counts{Total: int32(cases), Passed: int32(cases)}, summaryCounts(got))
	t.Logf("scale: %d cases, %d shards (parallelism %d), %.1f MiB eval file, results in %s: apply -> Succeeded %s; "+
		"EvalRun writes %d; manager %s", cases, shards, parallelism, float64(len(text))/(1<<20), map[bool]string{true: "the bucket", false: "ConfigMaps"}[bucketResults],
		elapsed.Round(100*time.Millisecond), writes(), mem())
	logBytesInEtcd(t, got, cases)
	// The pods of succeeded shards past the first KeptShardPods are released; the last ones by the reconcile
	// that decided the run.
	left := 0
	err := wait.PollUntilContextCancel(ctxFor(t, time.Minute), time.Second, true, func(context.Context) (bool, error) {
		left = len(runPods(t, ns, run.Name))
		return left <= assess.KeptShardPods, nil
	})
	t.Logf("scale: %d pods of the run left (every shard succeeded; the first %d keep their pods)", left, min(int(shards), assess.KeptShardPods))
	if err != nil {
		t.Errorf("%d pods of the run left after it succeeded, want at most %d", left, assess.KeptShardPods)
	}
	if r := got.Status.Results; r == nil || r.TotalCases != int32(cases) || (bucketResults && len(r.Objects) != int(shards)) {
		t.Errorf("results reference %+v", got.Status.Results)
	}
}

// logBytesInEtcd logs what the run keeps in etcd: the EvalRun and every object it owns, as the API serves them.
func logBytesInEtcd(t *testing.T, run *evalsv1alpha1.EvalRun, cases int) {
	t.Helper()
	sizes := map[string]int{}
	add := func(kind string, obj any) {
		data, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		sizes[kind] += len(data)
	}
	ctx := ctxFor(t, time.Minute)
	add("EvalRun", run)
	sel := client.MatchingLabels{podwire.LabelRun: run.Name}
	var cms corev1.ConfigMapList
	var jobs batchv1.JobList
	var roles rbacv1.RoleList
	for _, l := range []client.ObjectList{&cms, &jobs, &roles} {
		if err := k8s.List(ctx, l, client.InNamespace(run.Namespace), sel); err != nil {
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
		total, sizes, len(cms.Items), len(run.Status.Cases), cases)
}

// countWrites watches the EvalRun name in namespace from now on and returns a function that says how many times
// it was written (every MODIFIED event: the manager's and the collectors' status writes and the finalizer's).
func countWrites(t *testing.T, namespace, name string) func() int64 {
	t.Helper()
	var n atomic.Int64
	watchNamed(t, &evalsv1alpha1.EvalRunList{}, namespace, name, func(ev watch.Event) {
		if ev.Type == watch.Modified {
			n.Add(1)
		}
	})
	return n.Load
}

// watchManagerMemory resets the manager process's peak resident set (VmHWM, through /proc/PID/clear_refs: the
// tests run as root on the node) and returns a function that reports its peak since then and its resident set now.
// When the manager's process is not found on this host it says so instead of failing the measurement.
func watchManagerMemory(t *testing.T) func() string {
	t.Helper()
	pid := managerPID()
	if pid == "" {
		return func() string { return "memory: manager process not found on this host" }
	}
	if err := os.WriteFile("/proc/"+pid+"/clear_refs", []byte("5"), 0); err != nil {
		t.Logf("resetting the manager's VmHWM: %v (the peak is then since the manager started)", err)
	}
	before := procStatus(pid)
	return func() string {
		now := procStatus(pid)
		return fmt.Sprintf("pid %s RSS before %d MiB, peak %d MiB, after %d MiB", pid, before["VmRSS"]/1024, now["VmHWM"]/1024, now["VmRSS"]/1024)
	}
}

// managerPID finds the manager's process on this host (the node): the one whose command line starts with
// /manager and names a collector image (Kueue's manager is a /manager too); "" when there is none.
func managerPID() string {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		cmd, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		// Kueue's manager is a /manager too: the operator's is the one given a collector image.
		args := strings.Split(string(cmd), "\x00")
		if len(args) > 0 && args[0] == "/manager" && slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--collector-image") }) {
			return e.Name()
		}
	}
	return ""
}

// procStatus reads the kB fields of /proc/PID/status.
func procStatus(pid string) map[string]int64 {
	out := map[string]int64{}
	data, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return out
	}
	for _, l := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok || !strings.HasSuffix(v, " kB") {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(v, " kB")), 10, 64)
		if err == nil {
			out[k] = n
		}
	}
	return out
}
