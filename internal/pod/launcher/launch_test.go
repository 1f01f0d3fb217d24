package launcher

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/evalrun-operator/evalrun-operator/internal/pod/reaper"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
	"github.com/google/go-cmp/cmp"
)

// fixture is a pod layout, an eval file and a run configuration in a temporary directory.
type fixture struct{ *testutil.PodFixture }

func newFixture(t *testing.T, template string) *fixture {
	return &fixture{testutil.NewPodFixture(t, template)}
}

// launch runs Launch with a collector reading the runner-end FIFO, as the collector container does. It returns
// the exit code and the launcher's report, and fails the test unless the FIFO reached end-of-file by the time
// Launch returned.
func (f *fixture) launch(t *testing.T, ctx context.Context) (int, *podwire.LauncherReport) {
	t.Helper()
	w := podwire.WatchRunnerEnd(f.Pod.RunnerEnd(), false)
	code := Launch(ctx, Options{Config: f.Config.RunnerConfig(f.Config.EvalFile), Pod: f.Pod, Stdout: io.Discard, Stderr: io.Discard, Log: io.Discard})
	return code, reportOf(t, w, code)
}

// reportOf waits for the runner-end FIFO's end-of-file and returns the launcher's report that ends its stream;
// it fails the test unless the report carries the launcher's exit code.
func reportOf(t *testing.T, w *podwire.RunnerEndWatch, code int) *podwire.LauncherReport {
	t.Helper()
	select {
	case <-w.Ended:
	case err := <-w.Failed:
		t.Fatalf("runner-end FIFO: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the runner-end FIFO did not reach end-of-file after Launch returned")
	}
	kind, payload, err := w.Final()
	if err != nil || kind != podwire.FrameEnd {
		t.Fatalf("the runner-end FIFO does not end with the launcher's report: %q, %v", kind, err)
	}
	var rep podwire.LauncherReport
	if err := json.Unmarshal(payload, &rep); err != nil {
		t.Fatalf("launcher report: %v", err)
	}
	if rep.ExitCode != code {
		t.Errorf("report's exit code %d, Launch returned %d", rep.ExitCode, code)
	}
	return &rep
}

func TestLaunchBatched(t *testing.T) {
	f := newFixture(t, `printf '{"id":"alpha","text":"A"}\n{"id":"beta","text":"B"}\n' > {OUTPUT_FILE}; echo "eval=$EVAL_FILE" >&2`)
	code, rep := f.launch(t, context.Background())
	if code != 0 {
		t.Fatalf("exit code %d, want 0", code)
	}
	if rep.Runner == nil || !rep.Runner.Succeeded() || rep.Invocations != 1 {
		t.Fatalf("report %+v, want one successful invocation", rep)
	}
	if want := "eval=" + f.Config.EvalFile + "\n"; rep.Runner.StderrTail != want {
		t.Errorf("stderr tail %q, want %q (EVAL_FILE exported)", rep.Runner.StderrTail, want)
	}
	if _, err := os.Stat(f.Pod.Output().BatchOutput()); err != nil {
		t.Errorf("output: %v", err)
	}
}

func TestLaunchRunnerExitCodeIsTheContainers(t *testing.T) {
	f := newFixture(t, `echo broken >&2; exit 7 # {OUTPUT_FILE}`)
	code, rep := f.launch(t, context.Background())
	if code != 7 {
		t.Errorf("exit code %d, want the runner's 7", code)
	}
	if rep.Runner.ExitCode == nil || *rep.Runner.ExitCode != 7 || rep.Runner.StderrTail != "broken\n" {
		t.Errorf("runner outcome %+v, want exit 7 with its stderr", rep.Runner)
	}
}

func TestLaunchWithoutCollector(t *testing.T) {
	marker := "runner-ran"
	f := newFixture(t, `touch `+marker+`; : {OUTPUT_FILE}`)
	f.Config.WorkingDir = f.Dir
	f.Config.CollectorStartSeconds = 1
	code := Launch(context.Background(), Options{Config: f.Config.RunnerConfig(f.Config.EvalFile), Pod: f.Pod, Log: io.Discard})
	if code != ExitLaunchFailed {
		t.Errorf("exit code %d, want %d", code, ExitLaunchFailed)
	}
	if _, err := os.Stat(filepath.Join(f.Dir, marker)); err == nil {
		t.Errorf("the runner ran although no collector would collect its output")
	}
}

func TestLaunchHealthcheckFailure(t *testing.T) {
	marker := "runner-ran"
	f := newFixture(t, `touch `+marker+`; : {OUTPUT_FILE}`)
	f.Config.WorkingDir = f.Dir
	f.Config.HealthcheckTemplate = `echo "model endpoint unreachable" >&2; exit 7`
	code, rep := f.launch(t, context.Background())
	if code != ExitHealthcheckFailed {
		t.Errorf("exit code %d, want %d", code, ExitHealthcheckFailed)
	}
	if !rep.HealthcheckFailed || rep.Healthcheck == nil || *rep.Healthcheck.ExitCode != 7 || rep.Healthcheck.StderrTail != "model endpoint unreachable\n" {
		t.Errorf("report %+v, want a failed healthcheck with exit 7 and its stderr", rep)
	}
	if rep.Runner != nil {
		t.Errorf("runner ran after a failed healthcheck")
	}
	if _, err := os.Stat(filepath.Join(f.Dir, marker)); err == nil {
		t.Errorf("runner command ran after a failed healthcheck")
	}
}

func TestLaunchNoShell(t *testing.T) {
	f := newFixture(t, `: {OUTPUT_FILE}`)
	w := podwire.WatchRunnerEnd(f.Pod.RunnerEnd(), false)
	code := Launch(context.Background(), Options{Config: f.Config.RunnerConfig(f.Config.EvalFile), Pod: f.Pod, Shell: "/nonexistent/bin/sh", Log: io.Discard})
	rep := reportOf(t, w, code)
	if code != ExitLaunchFailed {
		t.Errorf("exit code %d, want %d", code, ExitLaunchFailed)
	}
	if rep.Runner == nil || !strings.Contains(rep.Runner.StartError, "the runner image has no /nonexistent/bin/sh") {
		t.Fatalf("runner outcome %+v, want a clear no-shell message", rep.Runner)
	}
}

func TestLaunchPerCase(t *testing.T) {
	f := newFixture(t, "")
	locks := filepath.Join(f.Dir, "running")
	if err := os.Mkdir(locks, 0o755); err != nil {
		t.Fatal(err)
	}
	counts := filepath.Join(f.Dir, "counts")
	// Each invocation records how many invocations run at the same time, and echoes its placeholders.
	f.Config.CommandTemplate = `touch ` + locks + `/{EVAL_ID}; ls ` + locks + ` | wc -l >> ` + counts + `; sleep 0.3; ` +
		`printf '%s|%s|%s|%s' {EVAL_ID} {PROMPT} "$(cat "$PROMPT_FILE")" {ATTEMPT} > {OUTPUT_FILE}; rm ` + locks + `/{EVAL_ID}; ` +
		`[ {EVAL_ID} != gamma ] || exit 4`
	f.Config.Batching = "PerCase"
	f.Config.Workers = 2
	code, rep := f.launch(t, context.Background())
	if code != 4 {
		t.Errorf("exit code %d, want the first failed invocation's 4", code)
	}
	data, err := os.ReadFile(counts)
	if err != nil {
		t.Fatal(err)
	}
	maxSeen := 0
	for _, l := range strings.Fields(string(data)) {
		n, _ := strconv.Atoi(l)
		maxSeen = max(maxSeen, n)
	}
	if maxSeen > 2 {
		t.Errorf("%d invocations ran at once, want at most 2 workers", maxSeen)
	}
	if maxSeen < 2 {
		t.Errorf("invocations never overlapped (max %d); the workers do not run in parallel", maxSeen)
	}
	out, err := os.ReadFile(f.Pod.Output().CaseOutput("alpha"))
	if err != nil {
		t.Fatal(err)
	}
	q := "What's $(id) `x`?"
	if diff := cmp.Diff("alpha|"+q+"|"+q+"|1", string(out)); diff != "" {
		t.Errorf("placeholders of alpha (-want +got):\n%s", diff)
	}
	if rep.Invocations != 4 || rep.FailedCases != 1 || len(rep.Cases) != 1 || rep.Cases[0].ID != "gamma" || *rep.Cases[0].ExitCode != 4 {
		t.Errorf("report %+v, want 4 invocations with gamma failing with exit 4", rep)
	}
	// Every case's wall time, by position, failed or not: each slept 0.3 s.
	durations, err := podwire.DecodeCaseDurations(rep.CaseDurations, 4)
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range durations {
		if d < 300 || d > rep.DurationMs {
			t.Errorf("case %d's measured duration %d ms, want at least the 300 it slept and at most the run's %d", i, d, rep.DurationMs)
		}
	}
}

// TestLaunchPerCaseTerminated: once the container is asked to terminate (the context ends) while a case runs, no
// other case starts; the report counts only the invocation that ran.
func TestLaunchPerCaseTerminated(t *testing.T) {
	f := newFixture(t, `sleep 0.5; echo done > {OUTPUT_FILE}`)
	f.Config.Batching = "PerCase"
	f.Config.Workers = 1
	ctx, cancel := context.WithCancel(context.Background())
	started, running := filepath.Join(f.Dir, "started"), filepath.Join(f.Dir, "running")
	if err := unix.Mkfifo(running, 0o600); err != nil {
		t.Fatal(err)
	}
	f.Config.CommandTemplate = `echo {EVAL_ID} >> ` + started + `; echo {EVAL_ID} > ` + running + `; ` + f.Config.CommandTemplate
	go func() {
		// Ask once the first case has started: its write into the FIFO waits for this reader.
		if _, err := os.ReadFile(running); err == nil {
			cancel()
		}
	}()
	_, rep := f.launch(t, ctx)
	data, err := os.ReadFile(started)
	if err != nil {
		t.Fatal(err)
	}
	if ids := strings.Fields(string(data)); len(ids) != 1 || rep.Invocations != 1 {
		t.Errorf("cases started %q, report's invocations %d; want one case started and counted", ids, rep.Invocations)
	}
}

func TestLaunchTimeout(t *testing.T) {
	f := newFixture(t, `sleep 100 # {OUTPUT_FILE}`)
	f.Config.TimeoutSeconds = 1
	code, rep := f.launch(t, context.Background())
	if code != ExitTimedOut {
		t.Errorf("exit code %d, want %d", code, ExitTimedOut)
	}
	if !rep.Runner.TimedOut || rep.Runner.ExitCode != nil {
		t.Errorf("runner outcome %+v, want a timeout without an exit code", rep.Runner)
	}
}

// A hostile runner leaves a process behind that escaped its process group (setsid, double fork) and would
// rewrite the output after the runner "ended", and another that holds the runner-end FIFO open. Neither may
// survive Launch, and the FIFO must not reach end-of-file while they live. (Until the launcher ends, anything
// the runner's processes write is the runner's answer; the leftover here waits longer than the launcher's
// output drain so that its rewrite would come after.)
func TestLaunchKillsLeftovers(t *testing.T) {
	if err := reaper.BecomeSubreaper(); err != nil {
		t.Skip(err)
	}
	f := newFixture(t, "")
	late := filepath.Join(f.Dir, "late")
	f.Config.CommandTemplate = `echo '{"id":"alpha","text":"A"}' > {OUTPUT_FILE}; ` +
		`(setsid sh -c 'sleep 5; echo "{\"id\":\"alpha\",\"text\":\"forged\"}" > ` + f.Pod.Output().BatchOutput() + `; touch ` + late + `' &) ; ` +
		`(sh -c 'exec 3>` + f.Pod.RunnerEnd() + `; sleep 30' &) ; exit 0`
	code, rep := f.launch(t, context.Background())
	if code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
	if rep.Leftovers < 1 {
		t.Errorf("leftovers %d, want the setsid process the runner left behind counted", rep.Leftovers)
	}
	if left := reaper.ChildrenOf(os.Getpid()); len(left) > 0 {
		t.Fatalf("processes %v the runner left behind outlived Launch", left)
	}
	if _, err := os.Stat(late); err == nil {
		t.Fatal("a process the runner left behind survived Launch and rewrote the output")
	}
	data, err := os.ReadFile(f.Pod.Output().BatchOutput())
	if err != nil || strings.Contains(string(data), "forged") {
		t.Errorf("output %q (%v), want the runner's own answer", data, err)
	}
}

// TestLaunchBatchedTrial: a Batched runner gets its pod's trial as {ATTEMPT} and $ATTEMPT (1 in a run of one
// trial); the healthcheck does not.
func TestLaunchBatchedTrial(t *testing.T) {
	for _, tc := range []struct {
		trials, trial int32
		want          string
	}{{trials: 0, trial: 1, want: "1 1"}, {trials: 3, trial: 2, want: "2 2"}, {trials: 100, trial: 100, want: "100 100"}} {
		f := newFixture(t, `printf '%s %s' {ATTEMPT} "$ATTEMPT" > {OUTPUT_FILE}`)
		f.Config.Trials, f.Config.Trial = tc.trials, tc.trial
		if code, rep := f.launch(t, context.Background()); code != 0 {
			t.Fatalf("trial %d of %d: exit code %d, report %+v", tc.trial, tc.trials, code, rep)
		}
		out, err := os.ReadFile(f.Pod.Output().BatchOutput())
		if err != nil {
			t.Fatal(err)
		}
		if string(out) != tc.want {
			t.Errorf("trial %d of %d: the runner wrote %q, want %q", tc.trial, tc.trials, out, tc.want)
		}
	}
	f := newFixture(t, `: {OUTPUT_FILE}`)
	f.Config.Trials, f.Config.Trial = 3, 2
	f.Config.HealthcheckTemplate, f.Config.HealthcheckTimeoutSeconds = `echo {ATTEMPT}`, 5
	code, rep := f.launch(t, context.Background())
	if code != ExitLaunchFailed || !strings.Contains(rep.Error, "{ATTEMPT}, which this mode does not provide") {
		t.Errorf("a healthcheck with {ATTEMPT}: exit code %d, error %q; want it refused", code, rep.Error)
	}
}

// TestLaunchNothingToRun: a pod with no case to run (a trial of a resumed run whose shard's cases are all carried)
// starts neither the healthcheck nor the runner, does not wait for the collector (nobody opens the runner-end
// FIFO), and exits 0 with a termination message that says why.
func TestLaunchNothingToRun(t *testing.T) {
	f := newFixture(t, `touch {OUTPUT_FILE}`)
	f.Config.HealthcheckTemplate, f.Config.HealthcheckTimeoutSeconds = `touch `+f.Pod.Output().Root+`/healthcheck`, 5
	f.Config.NothingToRun, f.Config.CaseIDs = true, []string{}
	termLog := filepath.Join(t.TempDir(), "termination-log")
	rc := f.Config.RunnerConfig(f.Config.EvalFile)
	rc.CollectorStartSeconds = 3600 // a wait for the collector would outlast the test
	code := Launch(context.Background(), Options{Config: rc, Pod: f.Pod, Stdout: io.Discard, Stderr: io.Discard, Log: io.Discard,
		TerminationLog: termLog})
	if code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
	for _, path := range []string{f.Pod.Output().BatchOutput(), f.Pod.Output().Root + "/healthcheck"} {
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("%s exists (%v): something ran", path, err)
		}
	}
	if msg, err := os.ReadFile(termLog); err != nil || string(msg) != NothingToRunSummary {
		t.Errorf("termination message %q (%v), want %q", msg, err, NothingToRunSummary)
	}
}
