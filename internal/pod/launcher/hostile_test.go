package launcher

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/pod/reaper"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
)

// A runner takes every path where the launcher once wrote or could write its report (a directory, a FIFO, a
// symlink) and exits 7: the report still arrives, through the runner-end FIFO, with the runner's exit code.
func TestLaunchReportCannotBeBlocked(t *testing.T) {
	f := newFixture(t, "")
	out := f.Pod.Output().Root
	f.Config.CommandTemplate = `mkdir ` + out + `/launcher.json; mkfifo ` + out + `/report.json; ln -s /dev/zero ` + out + `/launcher.tmp; ` +
		`printf '{"id":"alpha","text":"A"}\n' > {OUTPUT_FILE}; exit 7`
	code, rep := f.launch(t, context.Background())
	if code != 7 || rep.ExitCode != 7 {
		t.Fatalf("exit code %d, report's %d; want 7", code, rep.ExitCode)
	}
	if rep.Runner == nil || rep.Runner.ExitCode == nil || *rep.Runner.ExitCode != 7 {
		t.Errorf("report %+v, want the runner's exit code 7", rep.Runner)
	}
}

// A runner that writes into the runner-end FIFO itself (junk, then a forged report claiming success) cannot
// replace the launcher's report, which follows it.
func TestLaunchForgedFramesPrecedeTheReport(t *testing.T) {
	f := newFixture(t, "")
	forged := string(podwire.EncodeFrame(podwire.FrameEnd, []byte(`{"batching":"Batched","invocations":1,"exitCode":0}`)))
	script := filepath.Join(f.Dir, "forge.sh")
	if err := os.WriteFile(script, []byte("head -c 100000 /dev/zero > "+f.Pod.RunnerEnd()+"\nprintf '%s' '"+forged+"' > "+f.Pod.RunnerEnd()+"\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	f.Config.CommandTemplate = "sh " + script
	code, rep := f.launch(t, context.Background())
	if code != 3 || rep.Runner == nil || rep.Runner.ExitCode == nil || *rep.Runner.ExitCode != 3 {
		t.Fatalf("exit code %d, report %+v; want the launcher's report of exit code 3", code, rep.Runner)
	}
}

// A daemon that ignores SIGTERM and double-forks out of the runner's process group is killed before the FIFO
// closes, and the report counts it.
func TestLaunchKillsADaemonThatIgnoresSIGTERM(t *testing.T) {
	f := newFixture(t, "")
	pidFile := filepath.Join(f.Dir, "daemon.pid")
	f.Config.CommandTemplate = `( setsid sh -c 'trap "" TERM HUP; echo $$ > ` + pidFile + `; while :; do sleep 1; done' & ) ; ` +
		`while [ ! -s ` + pidFile + ` ]; do sleep 0.05; done; printf '{"id":"alpha","text":"A"}\n' > {OUTPUT_FILE}`
	start := time.Now()
	code, rep := f.launch(t, context.Background())
	if code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
	if rep.Leftovers < 1 || rep.Survivors != 0 {
		t.Errorf("leftovers %d, survivors %d; want the daemon counted and killed", rep.Leftovers, rep.Survivors)
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("/proc/" + strings.TrimSpace(string(data))); err == nil {
		if stat, _ := os.ReadFile("/proc/" + strings.TrimSpace(string(data)) + "/stat"); !strings.Contains(string(stat), ") Z ") {
			t.Errorf("the daemon %s is still alive after Launch returned", strings.TrimSpace(string(data)))
		}
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Launch took %s", d)
	}
}

// Processes that survive SIGKILL for the grace (uninterruptible sleep, stood in for here): the launcher says
// so at once (a stuck frame, the FIFO still open), keeps killing until they are gone, and only then reports its
// end and closes the FIFO; its exit code says so too.
func TestLaunchSurvivorsAreReportedBeforeTheFIFOCloses(t *testing.T) {
	f := newFixture(t, `printf '{"id":"alpha","text":"A"}\n' > {OUTPUT_FILE}`)
	release := make(chan struct{})
	calls := 0
	kill = func(time.Duration) (int, int) {
		calls++
		if calls == 1 {
			return 2, 1
		}
		<-release
		return 0, 0
	}
	t.Cleanup(func() { kill = reaper.KillLeftovers })
	w := podwire.WatchRunnerEnd(f.Pod.RunnerEnd(), false)
	done := make(chan int, 1)
	go func() {
		done <- Launch(context.Background(), Options{Config: f.Config.RunnerConfig(f.Config.EvalFile), Pod: f.Pod, Stdout: io.Discard, Stderr: io.Discard, Log: io.Discard})
	}()
	select {
	case p := <-w.Stuck:
		if !strings.Contains(string(p), `"survivors":1`) {
			t.Errorf("stuck report %s, want survivors 1", p)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no stuck report while processes survive")
	}
	select {
	case <-w.Ended:
		t.Fatal("the runner-end FIFO closed while processes survive")
	case <-time.After(200 * time.Millisecond):
	}
	close(release)
	code := <-done
	rep := reportOf(t, w, code)
	if code != ExitNotStopped || rep.Survivors != 1 || rep.Leftovers != 2 {
		t.Errorf("exit code %d, report survivors %d leftovers %d; want %d, 1, 2", code, rep.Survivors, rep.Leftovers, ExitNotStopped)
	}
}

// reaper.KillLeftovers counts what is still alive at its deadline.
func TestKillLeftoversCountsSurvivors(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()
	if _, survived := reaper.KillLeftovers(0); survived != 1 {
		t.Errorf("survivors %d at a zero grace, want 1 (the child was not killed yet)", survived)
	}
	killed, survived := reaper.KillLeftovers(5 * time.Second)
	if killed != 1 || survived != 0 {
		t.Errorf("killed %d, survivors %d; want 1, 0", killed, survived)
	}
}

// A PerCase runner plants a FIFO (and a symlink, and a directory) where the next cases' prompt files go: the
// launcher never opens them (an open for writing would block on the FIFO for ever) and every case still runs.
func TestLaunchPerCasePlantedPromptFiles(t *testing.T) {
	f := newFixture(t, "")
	prompts := filepath.Dir(f.Pod.Output().CasePromptFile("x"))
	target := filepath.Join(f.Dir, "target")
	if err := os.WriteFile(target, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.Config.Batching = "PerCase"
	f.Config.Workers = 1
	f.Config.TimeoutSeconds = 5
	f.Config.CommandTemplate = `[ {EVAL_ID} != alpha ] || { mkfifo ` + prompts + `/beta.txt; ln -s ` + target + ` ` + prompts + `/gamma.txt; mkdir ` + prompts + `/delta.txt; }; ` +
		`cat {PROMPT_FILE} > {OUTPUT_FILE}`
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	code, rep := f.launch(t, ctx)
	if d := time.Since(start); d > 20*time.Second {
		t.Fatalf("Launch took %s", d)
	}
	if rep.Invocations != 4 {
		t.Errorf("invocations %d, want 4", rep.Invocations)
	}
	for _, id := range []string{"beta", "gamma"} {
		fi, err := os.Lstat(f.Pod.Output().CasePromptFile(id))
		if err != nil || !fi.Mode().IsRegular() {
			t.Errorf("prompt file of %s: %v %v, want a regular file", id, fi, err)
		}
		if _, err := os.Stat(f.Pod.Output().CaseOutput(id)); err != nil {
			t.Errorf("case %s did not run: %v", id, err)
		}
	}
	if data, _ := os.ReadFile(target); string(data) != "keep" {
		t.Errorf("the symlink's target was written: %q", data)
	}
	// delta's prompt path is a directory: that case cannot start (the run fails), but nothing blocks.
	if code == 0 || rep.FailedCases != 1 || len(rep.Cases) != 1 || rep.Cases[0].ID != "delta" || !strings.Contains(rep.Cases[0].StartError, "prompt file") {
		t.Errorf("exit code %d, report cases %+v; want delta failed on its prompt file", code, rep.Cases)
	}
}
