package podruntime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"time"

	v1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/layout"
)

// LaunchOptions configure Launch.
type LaunchOptions struct {
	// Config is the run configuration (run.json).
	Config *layout.RunConfig
	// Paths is the work volume layout.
	Paths layout.Paths
	// Shell runs the templates (default DefaultShell).
	Shell string
	// Stdout and Stderr receive the runner's output as it is written (the container's own streams).
	Stdout, Stderr io.Writer
	// Log receives launch's own progress lines.
	Log io.Writer
}

// ErrNotPersisted is wrapped by Launch's error when the collector did not confirm that the results are safe.
var ErrNotPersisted = errors.New("results were not persisted")

// Launch runs one attempt of the runner: healthcheck, runner invocations, code judges, then the handshake with the
// collector. ctx ends when the container is asked to stop: the runner's process group is then stopped, and the
// handshake still completes if it can. It returns nil once the collector acknowledged that the results are
// persisted; a runner that failed is not an error (its outcome is in runner.json and, later, the EvalRun status).
func Launch(ctx context.Context, o LaunchOptions) error {
	cfg, p := o.Config, o.Paths
	for _, dir := range []string{p.OutputDir(), p.CaseOutputDir(), p.StateDir()} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("prepare the work volume: %w", err)
		}
	}
	// A done marker left by an earlier attempt in this pod must not be mistaken for this attempt's.
	if err := os.Remove(p.Done()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove the stale done marker: %w", err)
	}
	if err := os.Remove(p.Ack()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove the stale ack: %w", err)
	}
	rec := &RunnerRecord{Batching: cfg.Batching}
	var prev RunnerRecord
	if err := readJSON(p.RunnerRecord(), &prev); err == nil {
		rec.Attempt = prev.Attempt
		rec.History = append(prev.History, prev)
		rec.History[len(rec.History)-1].History = nil
	}
	rec.Attempt++

	l := &launcher{o: o, rec: rec}
	file, err := loadEvalFile(cfg)
	if err != nil {
		rec.Error = err.Error()
	} else {
		l.file = file
		l.cases = caseIndex(file)
		l.ids = cfg.CaseIDs
		if len(l.ids) == 0 {
			l.ids = file.CaseIDs()
		}
		l.run(ctx)
	}
	if err := writeJSONAtomic(p.RunnerRecord(), rec); err != nil {
		return fmt.Errorf("write the runner record: %w", err)
	}

	done := DoneMarker{Attempt: rec.Attempt}
	switch {
	case file == nil || rec.Error != "" || rec.HealthcheckFailed:
		// Nothing ran that could be judged.
	case ctx.Err() != nil:
		done.JudgeError = "the container was asked to terminate before the code judges ran"
	default:
		if err := runCodeJudges(ctx, cfg, file, l.ids, p, o.Shell, o.Log); err != nil {
			done.JudgeError = err.Error()
		}
	}
	if err := writeJSONAtomic(p.Done(), done); err != nil {
		return fmt.Errorf("write the done marker: %w", err)
	}
	logf(o.Log, "Waiting for the collector to persist the results\n")

	// The acknowledgement is awaited even after a termination signal: the kubelet's grace period bounds it.
	var ack Ack
	timeout := seconds(cfg.AckTimeoutSeconds, defaultAckTimeout)
	if err := waitForFile(context.Background(), p.Ack(), timeout); err != nil {
		return fmt.Errorf("%w: no acknowledgement from the collector: %v", ErrNotPersisted, err)
	}
	if err := readJSON(p.Ack(), &ack); err != nil {
		return fmt.Errorf("%w: unreadable acknowledgement: %v", ErrNotPersisted, err)
	}
	if !ack.Persisted {
		return fmt.Errorf("%w: the collector reported: %s", ErrNotPersisted, ack.Reason)
	}
	return nil
}

type launcher struct {
	o     LaunchOptions
	rec   *RunnerRecord
	file  *evalfile.File
	cases map[string]*evalfile.Case
	ids   []string
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
		KillGrace: seconds(l.o.Config.KillGraceSeconds, defaultKillGrace),
		Stdout:    l.o.Stdout,
		Stderr:    l.o.Stderr,
	}
}

func (l *launcher) run(ctx context.Context) {
	cfg, p := l.o.Config, l.o.Paths
	batchValues := map[string]string{PlaceholderEvalFile: cfg.EvalFile, PlaceholderOutputFile: p.BatchOutput()}
	if cfg.HealthcheckTemplate != "" {
		script, err := Render(cfg.HealthcheckTemplate, batchValues)
		if err != nil {
			l.rec.Error = "healthcheck: " + err.Error()
			return
		}
		logf(l.o.Log, "Running the healthcheck\n")
		out := Run(ctx, l.command(script, batchValues, seconds(cfg.HealthcheckTimeoutSeconds, defaultHealthcheckTimeout)))
		l.rec.Healthcheck = &out
		if !out.Succeeded() {
			l.rec.HealthcheckFailed = true
			return
		}
	}
	start := time.Now()
	defer func() { l.rec.DurationMs = time.Since(start).Milliseconds() }()
	timeout := seconds(cfg.TimeoutSeconds, 0)
	if cfg.Batching != string(v1alpha1.BatchingPerCase) {
		script, err := Render(cfg.CommandTemplate, batchValues)
		if err != nil {
			l.rec.Error = err.Error()
			return
		}
		logf(l.o.Log, "Running the runner\n")
		out := Run(ctx, l.command(script, batchValues, timeout))
		l.rec.Runner = &out
		l.rec.Invocations = 1
		return
	}
	l.runPerCase(ctx, timeout)
}

// runPerCase runs one invocation per case, at most Workers at a time, in case order.
func (l *launcher) runPerCase(ctx context.Context, timeout time.Duration) {
	cfg, p := l.o.Config, l.o.Paths
	if err := os.MkdirAll(p.CaseOutputDir(), 0o755); err != nil {
		l.rec.Error = fmt.Sprintf("prepare the case output directory: %v", err)
		return
	}
	if len(l.ids) > 0 {
		if err := os.MkdirAll(pathDir(p.CasePromptFile(l.ids[0])), 0o755); err != nil {
			l.rec.Error = fmt.Sprintf("prepare the prompt directory: %v", err)
			return
		}
	}
	n := workers(cfg.Workers, 1)
	logf(l.o.Log, "Running the runner once per case cases=%d workers=%d\n", len(l.ids), n)
	outcomes := make([]*Outcome, len(l.ids))
	next := make(chan int)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out := l.runCase(ctx, l.ids[i], timeout)
				outcomes[i] = &out
			}
		}()
	}
dispatch:
	for i := range l.ids {
		select {
		case next <- i:
		case <-ctx.Done():
			break dispatch
		}
	}
	close(next)
	wg.Wait()
	for i, out := range outcomes {
		if out == nil {
			continue // never started: the container was asked to terminate
		}
		l.rec.Invocations++
		if out.Succeeded() {
			continue
		}
		l.rec.FailedCases++
		if len(l.rec.Cases) < MaxRecordedCaseFailures {
			l.rec.Cases = append(l.rec.Cases, CaseOutcome{ID: l.ids[i], Outcome: *out})
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

func (l *launcher) runCase(ctx context.Context, id string, timeout time.Duration) Outcome {
	cfg, p := l.o.Config, l.o.Paths
	var question string
	if c := l.cases[id]; c != nil {
		question = c.Question()
	}
	promptFile := p.CasePromptFile(id)
	if err := os.WriteFile(promptFile, []byte(question), 0o644); err != nil {
		return Outcome{StartError: fmt.Sprintf("write the prompt file: %v", err)}
	}
	values := map[string]string{
		PlaceholderEvalFile:   cfg.EvalFile,
		PlaceholderOutputFile: p.CaseOutput(id),
		PlaceholderEvalID:     id,
		PlaceholderPrompt:     question,
		PlaceholderPromptFile: promptFile,
		PlaceholderAttempt:    strconv.Itoa(l.rec.Attempt),
	}
	script, err := Render(cfg.CommandTemplate, values)
	if err != nil {
		return Outcome{StartError: err.Error()}
	}
	return Run(ctx, l.command(script, values, timeout))
}

// caseIndex maps case ids to cases.
func caseIndex(f *evalfile.File) map[string]*evalfile.Case {
	m := make(map[string]*evalfile.Case, len(f.Cases))
	for _, c := range f.Cases {
		m[c.ID] = c
	}
	return m
}
