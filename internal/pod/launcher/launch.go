package launcher

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	"golang.org/x/sys/unix"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/jsonlresult"
	"github.com/evalrun-operator/evalrun-operator/internal/pod/reaper"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/safefile"
	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
)

// Options configure Launch.
type Options struct {
	// Config is the runner side's run configuration (written by install next to the runner's eval file); the
	// runner container never mounts run.json.
	Config *podwire.RunnerConfig
	// Pod is the pod's directory layout: the output tree and the runner-end FIFO.
	Pod podwire.Pod
	// Shell runs the templates (default DefaultShell).
	Shell string
	// Stdout and Stderr receive the runner's output as it is written (the container's own streams).
	Stdout, Stderr io.Writer
	// Log receives launch's own progress lines.
	Log io.Writer
	// TerminationLog, when set, receives a one-line description of how the runner ended (the container's
	// termination message, shown by kubectl describe).
	TerminationLog string
	// CostPoll is how often a Batched runner's output is read for its cost budget (default DefaultCostPoll).
	CostPoll time.Duration
}

// DefaultCostPoll is how often the launcher reads a Batched runner's output for its cost budget.
const DefaultCostPoll = time.Second

// Exit codes of the launcher besides the runner's own: the runner container's exit code as the kubelet reports it
// is the launcher's, so these say what happened when the runner's command did not decide it.
const (
	// ExitTimedOut: an invocation ran past target.timeoutSeconds and was killed (as timeout(1) exits).
	ExitTimedOut = 124
	// ExitHealthcheckFailed: the healthcheck failed; the runner never ran.
	ExitHealthcheckFailed = 125
	// ExitLaunchFailed: the runner could not be started (bad template, no shell, unreadable eval file, no
	// collector).
	ExitLaunchFailed = 126
	// ExitTerminated: the container was asked to stop before the runner ended.
	ExitTerminated = 143
	// ExitNotStopped: processes of the runner survived SIGKILL for the kill grace (uninterruptible sleep); the
	// launcher exits only once they are gone.
	ExitNotStopped = 122
	// ExitCostBudgetExceeded: the cost the runner's records reported passed its budget and the launcher stopped it.
	ExitCostBudgetExceeded = 121
)

// Launch runs the runner: healthcheck, then the runner invocations, then it kills every process the runner left
// behind and writes its report into the output directory. It holds the runner-end FIFO's write end from before
// the first invocation until after the last leftover process is gone, so the collector starts reading the output
// only once nothing of the runner can change it. ctx ends when the container is asked to stop: the runner's
// process group is then stopped. It returns the container's exit code: the runner's (Batched), the first failed
// invocation's (PerCase), or one of the Exit constants.
func Launch(ctx context.Context, o Options) int {
	cfg, out := o.Config, o.Pod.Output()
	if cfg.NothingToRun {
		// A trial of a resumed run whose every case of the shard has its result carried: no runner. The collector
		// knows it from the same run configuration and does not wait for one.
		podwire.Logf(o.Log, "Nothing to run: every case of this pod's shard has its result for this trial carried\n")
		if o.TerminationLog != "" {
			_ = os.WriteFile(o.TerminationLog, []byte(NothingToRunSummary), 0o644)
		}
		return 0
	}
	rep := &podwire.LauncherReport{Batching: cfg.Batching}
	fd, err := podwire.HoldRunnerEnd(ctx, o.Pod.RunnerEnd(), podwire.Seconds(cfg.CollectorStartSeconds))
	if err != nil {
		// Without the collector nothing would be collected: do not run the runner at all.
		rep.Error = err.Error()
		return finishLaunch(o, rep, -1)
	}
	// Output files are readable by the collector, which runs as another user, unless the runner says otherwise.
	unix.Umask(0o022)
	for _, dir := range []string{out.Root, out.CaseOutputDir(), filepath.Dir(out.CasePromptFile("x"))} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			rep.Error = fmt.Sprintf("prepare the output directory: %v", err)
			return finishLaunch(o, rep, fd)
		}
	}
	l := &launcher{o: o, rec: rep}
	file, err := podwire.LoadRunnerEvalFile(cfg)
	if err != nil {
		rep.Error = err.Error()
	} else {
		l.file = file
		l.ids = cfg.CaseIDs
		if len(l.ids) == 0 {
			l.ids = file.CaseIDs()
		}
		l.run(ctx)
	}
	return finishLaunch(o, rep, fd)
}

// NothingToRunSummary is the runner container's termination message when its pod had no case to run.
const NothingToRunSummary = "nothing to run: every case of the pod's shard has its result for this trial carried from the resumed run"

// kill is reaper.KillLeftovers; tests stand in processes that survive SIGKILL.
var kill = reaper.KillLeftovers

// reportWriteTimeout bounds how long the launcher waits for the collector to take its report.
const reportWriteTimeout = 30 * time.Second

// finishLaunch kills what the runner left behind, writes the report into the runner-end FIFO as the frame that
// ends its stream, releases the FIFO and returns the exit code. The FIFO is released only once no other process
// is left: when some survive the kill grace (a process in uninterruptible sleep ignores SIGKILL until it wakes),
// the launcher says so first (a FrameStuck the collector acts on at once), then keeps killing until they are
// gone.
func finishLaunch(o Options, rep *podwire.LauncherReport, fd int) int {
	grace := podwire.Seconds(o.Config.KillGraceSeconds)
	rep.Leftovers, rep.Survivors = kill(grace)
	if rep.Leftovers > 0 {
		podwire.Logf(o.Log, "Killed processes the runner left behind count=%d\n", rep.Leftovers)
	}
	code, summary := launchExit(rep)
	rep.ExitCode = code
	if rep.Survivors > 0 {
		podwire.Logf(o.Log, "Processes the runner left behind survived SIGKILL count=%d grace=%s\n", rep.Survivors, grace)
		sendReport(o, fd, podwire.FrameStuck, rep)
		for survivors := rep.Survivors; survivors > 0; {
			_, survivors = kill(max(grace, time.Second))
		}
	}
	if o.TerminationLog != "" {
		_ = os.WriteFile(o.TerminationLog, []byte(textbound.Head(summary, 1024)), 0o644)
	}
	podwire.Logf(o.Log, "Runner ended exitCode=%d summary=%q\n", code, summary)
	sendReport(o, fd, podwire.FrameEnd, rep)
	if fd >= 0 {
		_ = unix.Close(fd)
	}
	return code
}

// sendReport writes the report as a frame of kind into the runner-end FIFO; without the FIFO (fd < 0) there is
// no collector to read it. A report that does not arrive is a failure the collector records.
func sendReport(o Options, fd int, kind string, rep *podwire.LauncherReport) {
	if fd < 0 {
		return
	}
	data, err := json.Marshal(rep)
	if err == nil {
		err = podwire.WriteRunnerEnd(fd, podwire.EncodeFrame(kind, data), reportWriteTimeout)
	}
	if err != nil {
		podwire.Logf(o.Log, "Cannot send the launcher report error=%q\n", err.Error())
	}
}

// launchExit is the container's exit code and a one-line summary for a report.
func launchExit(rep *podwire.LauncherReport) (int, string) {
	switch {
	case rep.Survivors > 0:
		return ExitNotStopped, fmt.Sprintf("%d processes the runner left behind survived SIGKILL for the kill grace", rep.Survivors)
	case rep.Error != "":
		return ExitLaunchFailed, "the runner could not be started: " + rep.Error
	case rep.HealthcheckFailed:
		msg := "the healthcheck failed"
		if h := rep.Healthcheck; h != nil {
			msg = "the healthcheck " + h.Describe()
		}
		return ExitHealthcheckFailed, msg
	case rep.CostBudget != nil:
		return ExitCostBudgetExceeded, CostBudgetMessage(rep.CostBudget)
	}
	o := rep.Runner
	if o == nil {
		return ExitTerminated, "the runner did not start: the container was asked to stop"
	}
	what := "the runner"
	if rep.FailedCases > 0 {
		what = fmt.Sprintf("%d of %d runner invocations failed; the first", rep.FailedCases, rep.Invocations)
	}
	for _, c := range rep.Cases {
		if c.TimedOut {
			return ExitTimedOut, what + " " + o.Describe()
		}
	}
	switch {
	case o.TimedOut:
		return ExitTimedOut, what + " " + o.Describe()
	case o.Terminated:
		return ExitTerminated, what + " " + o.Describe()
	case o.StartError != "":
		return ExitLaunchFailed, what + " " + o.Describe()
	case o.Signal != "":
		if n := unix.SignalNum(o.Signal); n > 0 {
			return 128 + int(n), what + " " + o.Describe()
		}
		return 128, what + " " + o.Describe()
	case o.ExitCode != nil && *o.ExitCode != 0:
		return int(*o.ExitCode), what + " " + o.Describe()
	case rep.FailedCases > 0:
		return 1, what + " " + o.Describe()
	}
	return 0, fmt.Sprintf("the runner ended normally (%d invocations)", rep.Invocations)
}

type launcher struct {
	o    Options
	rec  *podwire.LauncherReport
	file *evalfile.File
	ids  []string
	// cost is the cost budget's tally, nil without a budget; out is the output directory it reads.
	cost *costTally
	out  *safefile.Dir
}

func (l *launcher) env(extra map[string]string) []string {
	env := os.Environ()
	for k, v := range extra {
		if k == PlaceholderPrompt {
			continue // prompts can be large; they are in {PROMPT} and {PROMPT_FILE}
		}
		env = append(env, k+"="+v)
	}
	return env
}

func (l *launcher) command(script string, values map[string]string, timeout time.Duration) Command {
	return Command{
		Script:    script,
		Shell:     l.o.Shell,
		Dir:       l.o.Config.WorkingDir,
		Env:       l.env(values),
		Timeout:   timeout,
		KillGrace: podwire.Seconds(l.o.Config.KillGraceSeconds),
		Stdout:    l.o.Stdout,
		Stderr:    l.o.Stderr,
	}
}

func (l *launcher) run(ctx context.Context) {
	cfg, p := l.o.Config, l.o.Pod.Output()
	hcValues := map[string]string{PlaceholderEvalFile: cfg.EvalFile, PlaceholderOutputFile: p.BatchOutput()}
	if cfg.HealthcheckTemplate != "" {
		script, err := Render(cfg.HealthcheckTemplate, hcValues)
		if err != nil {
			l.rec.Error = "healthcheck: " + err.Error()
			return
		}
		podwire.Logf(l.o.Log, "Running the healthcheck\n")
		out := Run(ctx, l.command(script, hcValues, podwire.Seconds(cfg.HealthcheckTimeoutSeconds)))
		l.rec.Healthcheck = &out
		if !out.Succeeded() {
			l.rec.HealthcheckFailed = true
			return
		}
	}
	if b := cfg.MaxCostNanoUSD; b != nil {
		dir, err := safefile.OpenDir(p.Root)
		if err != nil {
			l.rec.Error = fmt.Sprintf("open the output directory for the cost budget: %v", err)
			return
		}
		defer func() { _ = dir.Close() }() // read-only: nothing to lose
		l.cost, l.out = newCostTally(max(*b, 0), l.ids), dir
	}
	start := time.Now()
	defer func() { l.rec.DurationMs = time.Since(start).Milliseconds() }()
	timeout := podwire.Seconds(cfg.TimeoutSeconds)
	if cfg.Batching != podwire.BatchingPerCase {
		// The runner also gets its trial, which the healthcheck does not.
		batchValues := map[string]string{PlaceholderEvalFile: cfg.EvalFile, PlaceholderOutputFile: p.BatchOutput(),
			PlaceholderAttempt: strconv.Itoa(cfg.Attempt())}
		script, err := Render(cfg.CommandTemplate, batchValues)
		if err != nil {
			l.rec.Error = err.Error()
			return
		}
		podwire.Logf(l.o.Log, "Running the runner\n")
		runCtx, stopped := l.watchBatchCost(ctx)
		out := Run(runCtx, l.command(script, batchValues, timeout))
		if stopped() {
			l.rec.CostBudget = l.cost.stop()
		}
		l.rec.Runner = &out
		l.rec.Invocations = 1
		return
	}
	l.runPerCase(ctx, timeout)
}

// watchBatchCost tails the Batched output for the cost budget while the runner runs: the context it returns ends
// when the sum passes the budget (or ctx ends). stopped ends the tail and reports whether the budget stopped the
// runner. Without a budget it returns ctx and a stopped that reports false.
func (l *launcher) watchBatchCost(ctx context.Context) (context.Context, func() bool) {
	if l.cost == nil {
		return ctx, func() bool { return false }
	}
	runCtx, cancel := context.WithCancel(ctx)
	poll := l.o.CostPoll
	if poll <= 0 {
		poll = DefaultCostPoll
	}
	tail := newBatchTail(l.out, podwire.BatchOutputName, jsonlresult.DefaultMaxLineBytes, l.cost)
	var passed bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer tail.close()
		tick := time.NewTicker(poll)
		defer tick.Stop()
		for {
			select {
			case <-runCtx.Done():
				return
			case <-tick.C:
			}
			if tail.poll() {
				passed = true
				podwire.Logf(l.o.Log, "Stopping the runner: %s\n", CostBudgetMessage(l.cost.stop()))
				cancel()
				return
			}
		}
	}()
	return runCtx, func() bool {
		cancel()
		<-done
		return passed
	}
}

// CostBudgetMessage says in one line why the launcher stopped the runner for its cost budget.
func CostBudgetMessage(s *podwire.CostBudgetStop) string {
	return fmt.Sprintf("the cost its records reported (%s USD over %d cases) passed the cost budget (%s USD), so the launcher stopped the runner",
		jsonlresult.FormatNanoUSD(s.CostNanoUSD), s.Cases, jsonlresult.FormatNanoUSD(s.MaxCostNanoUSD))
}

// runPerCase runs one invocation per case, at most Workers at a time, in case order.
func (l *launcher) runPerCase(ctx context.Context, timeout time.Duration) {
	cfg := l.o.Config
	n := int(cfg.Workers)
	podwire.Logf(l.o.Log, "Running the runner once per case cases=%d workers=%d\n", len(l.ids), n)
	outcomes := make([]*podwire.Outcome, len(l.ids))
	// runCtx also ends once the cost budget is passed: no other case starts, and running ones are stopped.
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu         sync.Mutex
		costPassed bool
		stopped    = make([]bool, len(l.ids)) // stopped by the cost budget, not failed
	)
	var g errgroup.Group
	g.SetLimit(n)
	for i := range l.ids {
		if runCtx.Err() != nil {
			break // the container was asked to terminate, or the budget is spent: start no other case
		}
		g.Go(func() error {
			if runCtx.Err() != nil {
				return nil // it was asked to while this case waited for a worker
			}
			out := l.runCase(runCtx, l.ids[i], timeout)
			mu.Lock()
			defer mu.Unlock()
			outcomes[i] = &out
			if out.Terminated && costPassed && ctx.Err() == nil {
				stopped[i] = true
			}
			if l.cost != nil && !costPassed && l.cost.addCase(l.out, l.ids[i]) {
				costPassed = true
				podwire.Logf(l.o.Log, "Stopping the runner: %s\n", CostBudgetMessage(l.cost.stop()))
				cancel()
			}
			return nil
		})
	}
	_ = g.Wait() // runCase reports through its outcome; no task fails
	// Every case's wall time, by position: the latency evaluator judges these, not the runner's claims.
	durations := make([]int64, len(outcomes))
	for i, out := range outcomes {
		durations[i] = -1
		if out != nil {
			durations[i] = out.DurationMs
		}
	}
	l.rec.CaseDurations = podwire.EncodeCaseDurations(durations)
	if costPassed {
		for i, out := range outcomes {
			if out == nil || stopped[i] {
				// A case the budget kept from starting or stopped: the budget ended the runner.
				l.rec.CostBudget = l.cost.stop()
				break
			}
		}
	}
	for i, out := range outcomes {
		if out == nil {
			continue // never started: the container was asked to terminate, or the budget was spent
		}
		l.rec.Invocations++
		if out.Succeeded() || stopped[i] {
			continue
		}
		l.rec.FailedCases++
		if len(l.rec.Cases) < podwire.MaxRecordedCaseFailures {
			l.rec.Cases = append(l.rec.Cases, podwire.CaseOutcome{ID: l.ids[i], Outcome: *out})
		}
		if l.rec.Runner == nil {
			first := *out
			l.rec.Runner = &first
		}
	}
	if l.rec.Runner == nil && len(outcomes) > 0 && outcomes[len(outcomes)-1] != nil {
		last := *outcomes[len(outcomes)-1]
		l.rec.Runner = &last
	}
}

func (l *launcher) runCase(ctx context.Context, id string, timeout time.Duration) podwire.Outcome {
	cfg, p := l.o.Config, l.o.Pod.Output()
	var question string
	if c := l.file.Case(id); c != nil {
		question = c.Question()
	}
	promptFile := p.CasePromptFile(id)
	// The prompts directory is the runner's: whatever it planted at the prompt file's path (a FIFO would block
	// an open for writing for ever) is replaced, never opened.
	if err := writeFresh(filepath.Dir(promptFile), filepath.Base(promptFile), []byte(question)); err != nil {
		return podwire.Outcome{StartError: fmt.Sprintf("write the prompt file: %v", err)}
	}
	values := map[string]string{
		PlaceholderEvalFile:   cfg.EvalFile,
		PlaceholderOutputFile: p.CaseOutput(id),
		PlaceholderEvalID:     id,
		PlaceholderPrompt:     question,
		PlaceholderPromptFile: promptFile,
		PlaceholderAttempt:    strconv.Itoa(cfg.Attempt()),
	}
	script, err := Render(cfg.CommandTemplate, values)
	if err != nil {
		return podwire.Outcome{StartError: err.Error()}
	}
	return Run(ctx, l.command(script, values, timeout))
}
