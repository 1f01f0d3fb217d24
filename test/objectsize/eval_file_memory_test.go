package objectsize

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/children"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil/s3server"
)

// maxEvalFileGrowthMiB is the most the manager's peak resident set may grow above its idle one while it pins and
// splits a large eval file from a bucket (issue 23): it streams the file and keeps only its case ids.
const maxEvalFileGrowthMiB = 64

// TestManagerStreamsALargeEvalFile runs the real manager binary against envtest's kube-apiserver and a real
// S3-compatible server (SeaweedFS) and has it pin and split, into 8 shards, a 128 MiB eval file from the bucket:
// its peak resident set (VmHWM) stays within maxEvalFileGrowthMiB of its idle one. The manager that downloaded
// and parsed the file whole grew by about 3.7 times the file's size. BenchmarkManagerMemoryLargeEvalFile measures
// the 256 MiB file of the issue.
func TestManagerStreamsALargeEvalFile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the manager and streams a 128 MiB eval file")
	}
	growth := measureEvalFilePinning(t, 128<<20)
	t.Logf("peak resident set growth while pinning a 128 MiB eval file: %.1f MiB", growth)
	if growth >= maxEvalFileGrowthMiB {
		t.Errorf("the manager's peak resident set grew by %.1f MiB pinning a 128 MiB eval file, want under %d MiB", growth, maxEvalFileGrowthMiB)
	}
}

// BenchmarkManagerMemoryLargeEvalFile reports the manager's peak resident set growth (VmHWM minus its idle VmRSS,
// in MiB) while it pins and splits a 256 MiB eval file from the bucket. EVALRUN_EVAL_FILE_MIB changes the size;
// EVALRUN_MANAGER runs a manager binary built elsewhere (an older commit's, to compare). Run it alone:
//
//	KUBEBUILDER_ASSETS=$PWD/bin/k8s/v1.37.2 EVALRUN_WEED=$(ls $PWD/bin/seaweedfs/*/weed) \
//	  go test -run '^$' -bench ManagerMemoryLargeEvalFile -benchtime 1x ./test/objectsize/
func BenchmarkManagerMemoryLargeEvalFile(b *testing.B) {
	size := int64(256 << 20)
	if v, err := strconv.Atoi(os.Getenv("EVALRUN_EVAL_FILE_MIB")); err == nil && v > 0 {
		size = int64(v) << 20
	}
	for b.Loop() {
		growth := measureEvalFilePinning(b, size)
		b.ReportMetric(growth, "peak-growth-MiB")
		b.ReportMetric(float64(size>>20), "file-MiB")
	}
}

// measureEvalFilePinning starts envtest, a bucket holding an eval file of about size bytes and the manager, waits
// for the manager's resident set to settle, creates an EvalRun of 8 shards from the bucket object, waits until its
// Job exists, and returns the manager's peak resident set minus its idle one, in MiB.
func measureEvalFilePinning(tb testing.TB, size int64) float64 {
	tb.Helper()
	s3server.Require(tb)
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		testutil.AssetMissing(tb, testutil.ErrNoAssets)
	}
	env, _, c := startEnv(tb)
	srv := s3server.Start(tb, s3server.Options{Buckets: []string{"evals"}})
	dir := tb.TempDir()
	kubeconfig := adminKubeconfig(tb, env, dir)
	manager := os.Getenv("EVALRUN_MANAGER")
	if manager == "" {
		manager = filepath.Join(dir, "manager")
		if out, err := exec.Command("go", "build", "-o", manager, "../../cmd/manager").CombinedOutput(); err != nil {
			tb.Fatalf("build the manager: %v\n%s", err, out)
		}
	}
	ctx := context.Background()
	ns := fmt.Sprintf("large-eval-%d", time.Now().UnixNano())
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		tb.Fatal(err)
	}
	if err := c.Create(ctx, srv.CredentialsSecret(ns, "s3-creds")); err != nil {
		tb.Fatal(err)
	}
	// The file is generated twice, streaming: once for its digest, once into the bucket; the test never holds it.
	h := sha256.New()
	if _, err := io.Copy(h, newEvalFileReader(size)); err != nil {
		tb.Fatal(err)
	}
	digest := hex.EncodeToString(h.Sum(nil))
	if err := srv.Store(tb, "evals", "").Put(ctx, "suites/large.yaml", newEvalFileReader(size), "application/yaml"); err != nil {
		tb.Fatal(err)
	}

	cmd := exec.Command(manager, "--kubeconfig", kubeconfig, "--metrics-bind-address", "0", "--health-probe-bind-address", "0")
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	idle := settledRSS(tb, cmd.Process.Pid)

	run := testutil.MakeEvalRun("large", ns).FromS3(srv.Bucket("evals", "", "s3-creds"), "suites/large.yaml", digest).Shards(8, 0).Obj()
	if err := c.Create(ctx, run); err != nil {
		tb.Fatal(err)
	}
	start := time.Now()
	deadline := start.Add(5 * time.Minute)
	for {
		if time.Now().After(deadline) {
			tb.Fatal("the run has no Job after 5 minutes")
		}
		if _, err := procStatus(cmd.Process.Pid); err != nil {
			tb.Fatalf("the manager exited: %v", err)
		}
		var cur evalsv1alpha1.EvalRun
		if err := c.Get(ctx, client.ObjectKeyFromObject(run), &cur); err != nil {
			tb.Fatal(err)
		}
		if cond := meta.FindStatusCondition(cur.Status.Conditions, evalsv1alpha1.ConditionSucceeded); cond != nil && cond.Status == metav1.ConditionFalse {
			tb.Fatalf("the run failed: %s: %s", cond.Reason, cond.Message)
		}
		var job batchv1.Job
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: children.NamesFor(run.Name).Job}, &job); err == nil {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	st, err := procStatus(cmd.Process.Pid)
	if err != nil {
		tb.Fatalf("the manager exited: %v", err)
	}
	tb.Logf("%d MiB eval file pinned in %s: idle RSS %.1f MiB, peak RSS %.1f MiB", size>>20,
		time.Since(start).Round(100*time.Millisecond), idle, st["VmHWM"])
	return st["VmHWM"] - idle
}

// settledRSS waits until the process's resident set is unchanged within 1 MiB for 5 s (at most 2 minutes) and
// returns it, in MiB.
func settledRSS(tb testing.TB, pid int) float64 {
	tb.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	var last float64
	stableSince := time.Now()
	for time.Now().Before(deadline) {
		time.Sleep(250 * time.Millisecond)
		st, err := procStatus(pid)
		if err != nil {
			tb.Fatalf("the manager exited: %v", err)
		}
		rss := st["VmRSS"]
		if d := rss - last; d > 1 || d < -1 {
			last, stableSince = rss, time.Now()
			continue
		}
		if time.Since(stableSince) >= 5*time.Second {
			return rss
		}
	}
	tb.Fatal("the manager's memory did not settle within 2 minutes")
	return 0
}

// evalFileReader yields a valid eval file of at least size bytes, generated as it is read: cases of about 2.5 KiB
// (a user message of 2 KiB and an expected outcome), judged by file-level evaluators, as a nightly suite's.
type evalFileReader struct {
	size, read int64
	next       int
	pending    []byte
}

func newEvalFileReader(size int64) *evalFileReader {
	return &evalFileReader{size: size, pending: []byte("$schema: agentv-eval-v2\ndescription: a large nightly suite\n" +
		"execution:\n  evaluators:\n    - {name: fast, type: latency, threshold: 1800}\n    - {name: cheap, type: cost, budget: 0.01}\n" +
		"evalcases:\n")}
}

// question is the user message of every case (about 2 KiB).
var question = strings.Repeat("Screen the applicant's record against the sanctions list and explain the decision. ", 25)

func (g *evalFileReader) Read(p []byte) (int, error) {
	for len(g.pending) == 0 {
		if g.read >= g.size {
			return 0, io.EOF
		}
		g.pending = fmt.Appendf(g.pending[:0], "  - id: case-%07d\n    input_messages:\n      - role: user\n        content: \"%s (row %d)\"\n"+
			"    expected_outcome: \"The decision for row %d is CLEAR, with the matching list entries cited.\"\n", g.next, question, g.next, g.next)
		g.next++
	}
	n := copy(p, g.pending)
	g.pending = g.pending[n:]
	g.read += int64(n)
	return n, nil
}
