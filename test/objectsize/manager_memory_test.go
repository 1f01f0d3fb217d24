package objectsize

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/pod/collector"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
)

// BenchmarkManagerMemoryFinishedRuns measures the manager's memory (peak and settled resident set of the real
// manager binary) on a kube-apiserver holding finished EvalRuns whose status is at the full default budget, both
// field managers' applies done, against the same manager on an empty apiserver. The manager's cache drops the
// collected results (StripCollectedResults), so it should hold little per run whatever the status size.
// Runs: EVALRUN_MEMORY_RUNS (default 1000). Run it alone:
//
//	KUBEBUILDER_ASSETS=$PWD/bin/k8s/v1.37.2 go test -run '^$' -bench ManagerMemory -benchtime 1x ./test/objectsize/
func BenchmarkManagerMemoryFinishedRuns(b *testing.B) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		b.Skip("KUBEBUILDER_ASSETS is not set")
	}
	runs := 1000
	if v, err := strconv.Atoi(os.Getenv("EVALRUN_MEMORY_RUNS")); err == nil && v > 0 {
		runs = v
	}
	env, _, c := startEnv(b)
	dir := b.TempDir()
	kubeconfig := adminKubeconfig(b, env, dir)
	manager := filepath.Join(dir, "manager")
	if out, err := exec.Command("go", "build", "-o", manager, "../../cmd/manager").CombinedOutput(); err != nil {
		b.Fatalf("build the manager: %v\n%s", err, out)
	}
	for b.Loop() {
		empty := measureManager(b, manager, kubeconfig)
		ctx := context.Background()
		ns := fmt.Sprintf("memory-%d", time.Now().UnixNano())
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			b.Fatal(err)
		}
		now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		section := buildSection(b, shapes[1], evalsv1alpha1.DefaultStatusBudgetBytes, now)
		start := time.Now()
		var next atomic.Int64
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for range 4 {
			wg.Go(func() {
				for i := int(next.Add(1)) - 1; i < runs; i = int(next.Add(1)) - 1 {
					run := testutil.MakeEvalRun(fmt.Sprintf("run-%04d", i), ns).Obj()
					if err := c.Create(ctx, run); err != nil {
						errs <- err
						return
					}
					if err := collector.ApplyStatus(ctx, c, ns, run.Name, string(run.UID), section); err != nil {
						errs <- err
						return
					}
					applyManagerStatus(b, c, run, now)
					if (i+1)%100 == 0 {
						fmt.Fprintf(os.Stderr, "%d runs after %s\n", i+1, time.Since(start).Round(time.Second))
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			b.Fatal(err)
		}
		b.Logf("%d finished runs at the full status budget created in %s", runs, time.Since(start).Round(time.Second))
		full := measureManager(b, manager, kubeconfig)
		b.Logf("empty apiserver: peak RSS %.1f MiB, settled RSS %.1f MiB", empty.peak, empty.settled)
		b.Logf("%d finished runs: peak RSS %.1f MiB, settled RSS %.1f MiB; %.1f KiB per run settled, %.1f KiB per run at the peak",
			runs, full.peak, full.settled, (full.settled-empty.settled)*1024/float64(runs), (full.peak-empty.peak)*1024/float64(runs))
		b.ReportMetric(empty.settled, "empty-RSS-MiB")
		b.ReportMetric(full.peak, "peak-RSS-MiB")
		b.ReportMetric(full.settled, "settled-RSS-MiB")
		b.ReportMetric((full.settled-empty.settled)*1024/float64(runs), "settled-KiB/run")
	}
}

// adminKubeconfig writes a kubeconfig of a cluster administrator of env into dir.
func adminKubeconfig(tb testing.TB, env *envtest.Environment, dir string) string {
	tb.Helper()
	user, err := env.AddUser(envtest.User{Name: "memory-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	kc, err := user.KubeConfig()
	if err != nil {
		tb.Fatal(err)
	}
	path := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(path, kc, 0o600); err != nil {
		tb.Fatal(err)
	}
	return path
}

type memory struct{ peak, settled float64 }

// measureManager runs the manager until its resident set has settled (unchanged within 1 MiB for 10 s after its
// cache synced, at most 3 minutes) and returns its peak (VmHWM) and settled (VmRSS) resident set in MiB.
func measureManager(tb testing.TB, manager, kubeconfig string) memory {
	tb.Helper()
	cmd := exec.Command(manager, "--kubeconfig", kubeconfig, "--metrics-bind-address", "0", "--health-probe-bind-address", "0")
	cmd.Stdout, cmd.Stderr = nil, nil
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	deadline := time.Now().Add(3 * time.Minute)
	var last float64
	stableSince := time.Now()
	for time.Now().Before(deadline) {
		time.Sleep(500 * time.Millisecond)
		st, err := procStatus(cmd.Process.Pid)
		if err != nil {
			tb.Fatalf("the manager exited: %v", err)
		}
		rss, ok := st["VmRSS"]
		if !ok {
			tb.Fatal("the manager exited")
		}
		if d := rss - last; d > 1 || d < -1 {
			last, stableSince = rss, time.Now()
			continue
		}
		if time.Since(stableSince) >= 10*time.Second {
			return memory{peak: st["VmHWM"], settled: rss}
		}
	}
	tb.Fatal("the manager's memory did not settle within 3 minutes")
	return memory{}
}

// procStatus reads the Vm* lines of /proc/PID/status, in MiB.
func procStatus(pid int) (map[string]float64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	out := map[string]float64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || !strings.HasPrefix(k, "Vm") {
			continue
		}
		fields := strings.Fields(v)
		if len(fields) == 2 && fields[1] == "kB" {
			n, err := strconv.ParseFloat(fields[0], 64)
			if err == nil {
				out[k] = n / 1024
			}
		}
	}
	return out, sc.Err()
}
