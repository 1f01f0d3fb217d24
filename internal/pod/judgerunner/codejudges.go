package judgerunner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/bundle"
	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/evaluate"
	"github.com/evalrun-operator/evalrun-operator/internal/evaluate/grade42"
	"github.com/evalrun-operator/evalrun-operator/internal/jsonlresult"
	"github.com/evalrun-operator/evalrun-operator/internal/pipeline"
	"github.com/evalrun-operator/evalrun-operator/internal/pod/confine"
	"github.com/evalrun-operator/evalrun-operator/internal/pod/reaper"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// ReapTimeout bounds the killing and reaping of what one code_judge script left behind.
const ReapTimeout = 2 * time.Second

// sender is where the verdicts go (the judge-end FIFO).
type sender interface{ Send(v any) error }

// runCodeJudges judges this container's share of the code-judged cases that have output in the snapshot, one
// case at a time: after every script, every other process of the container is killed and reaped
// (isolatedRunner), and only then is the case's frame sent, so no process of a judge is alive while a verdict is
// reported, and none outlives its script. Cases without output are not judged here: the collector reports them.
// It returns the end frame.
func runCodeJudges(ctx context.Context, o Options, out sender) podwire.JudgeFrame {
	end := &podwire.JudgeEnd{}
	frame := podwire.JudgeFrame{End: end}
	fail := func(err error) podwire.JudgeFrame {
		end.Error = err.Error()
		podwire.Logf(o.Log, "Code judges did not run error=%q\n", end.Error)
		return frame
	}
	cfg := o.Config
	var m podwire.SnapshotMarker
	if err := podwire.ReadJSON(o.Pod.SnapshotReady(), &m); err != nil {
		return fail(fmt.Errorf("unreadable snapshot marker: %w", err))
	}
	if !m.Final {
		return fail(fmt.Errorf("the runner's output was not final (%s)", m.Reason))
	}
	threshold, err := verdict.ParseThreshold(cfg.PassThreshold)
	if err != nil {
		return fail(err)
	}
	file, err := podwire.LoadEvalFile(cfg)
	if err != nil {
		return fail(err)
	}
	ids := cfg.CaseIDs
	if len(ids) == 0 {
		ids = file.CaseIDs()
	}
	share := podwire.Partition(podwire.CodeJudgedCases(file, ids), int(cfg.JudgeContainers), o.Index)
	// A 4.42 code grader's input shows files as the collector's prompts show them.
	judge := &evaluate.Judge{Threshold: threshold, InputFiles: evaluate.InputFiles(cfg.InputFiles), Grader42: grade42.Graders{}}
	// In the runner's image (judging.image naming it) scripts run in the runner's working directory, as they did
	// before the judge image; another image need not have that directory: its own working directory then.
	dir := ""
	if cfg.CodeJudgeImageSource == string(evalsv1alpha1.JudgeImageSourceTarget) {
		dir = cfg.WorkingDir
	}
	if b := cfg.Bundle; b != nil {
		// A bundle's scripts run where `collector check --bundle` runs them: in the eval file's directory.
		judge.Bundle, dir = bundle.Dir{Root: b.Dir, EvalFile: b.EvalFile}, b.EvalDir()
	}
	isolated := &isolatedRunner{inner: evaluate.ScriptRunner{
		Timeout: podwire.Seconds(cfg.CodeJudgeTimeoutSeconds),
		Dir:     dir,
		Shell:   o.Shell,
		// An AgentV 4.42 code grader's large answer (output_path) is written where its script may read it: the
		// container's last scratch directory (its /dev/shm), emptied after each case.
		TempDir: lastOf(o.Scratch),
	}, log: o.Log}
	judge.CodeJudges = isolated
	var policies *casePolicies
	if o.Confine != nil {
		if policies, err = newCasePolicies(o.Confine, cfg, file, o.Scratch); err != nil {
			return fail(fmt.Errorf("confining the scripts: %w", err))
		}
		isolated.inner.Prefix = []string{o.Confine.Shim, confine.ShimMode, "--"}
		end.LandlockABI = confine.ABI()
	}
	podwire.Logf(o.Log, "Running code judges one case at a time judge=%d cases=%d\n", o.Index, len(share))
	var sendErr error
	judgeOne := func(c *evalfile.Case, resp *jsonlresult.Response) error {
		isolated.leftovers = 0
		var results map[string]verdict.EvaluatorResult
		if policies == nil {
			results = judge.RunCodeJudges(ctx, c, resp)
		} else {
			results = confinedCase(ctx, judge, isolated, policies.forCase(c), c, resp)
		}
		// Nothing of the case's scripts is alive now (isolatedRunner): what they wrote goes too.
		for _, dir := range o.Scratch {
			if err := clearDir(dir); err != nil {
				podwire.Logf(o.Log, "Cannot empty a scratch directory dir=%q error=%q\n", dir, err.Error())
			}
		}
		f := podwire.JudgeFrame{CaseID: c.ID, Leftovers: isolated.leftovers}
		for key, r := range results {
			f.Results = append(f.Results, podwire.JudgeLine{CaseID: c.ID, Key: key, Result: r})
		}
		if err := out.Send(f); err != nil {
			sendErr = err
			return err
		}
		end.Judged++
		return nil
	}
	snapshot := o.Pod.SnapshotOutput()
	src := pipeline.SourceFor(pipeline.Output{Batching: evalsv1alpha1.BatchingMode(cfg.Batching), BatchPath: snapshot.BatchOutput(),
		ReadCase: func(id string) ([]byte, error) {
			return pipeline.ReadBounded(snapshot.CaseOutput(id), jsonlresult.DefaultMaxSingleBytes)
		}})
	// A case without usable output is not judged here: the collector reports it as an error.
	err = pipeline.Responses(src, share, func(resp *jsonlresult.Response) error { return judgeOne(file.Case(resp.ID), resp) })
	if err != nil && sendErr == nil {
		end.Error = "code judges: " + err.Error()
	}
	if sendErr != nil {
		end.Error = "reporting verdicts: " + sendErr.Error()
	}
	_, _ = reaper.KillLeftovers(ReapTimeout)
	end.Survivors = len(reaper.Remaining())
	return frame
}

// lastOf is the last of dirs ("" when none).
func lastOf(dirs []string) string {
	if len(dirs) == 0 {
		return ""
	}
	return dirs[len(dirs)-1]
}

// confinedCase runs case c's code judges, each script through the shim under the case's Landlock ruleset. A
// ruleset that cannot be built runs no script: every code judge of the case is an Error that says why.
func confinedCase(ctx context.Context, judge *evaluate.Judge, isolated *isolatedRunner, pol confine.Policy,
	c *evalfile.Case, resp *jsonlresult.Response) map[string]verdict.EvaluatorResult {
	rs, err := confine.Build(pol)
	if err != nil {
		why := "the judge's Landlock ruleset could not be built, no script ran: " + err.Error()
		out := map[string]verdict.EvaluatorResult{}
		for _, key := range podwire.Invocations(c) {
			out[key] = verdict.EvaluatorResult{Verdict: verdict.VerdictError, Misses: []string{why}, Reasoning: why}
		}
		return out
	}
	defer func() { _ = rs.Close() }()
	isolated.inner.ExtraFiles = []*os.File{rs.File()}
	defer func() { isolated.inner.ExtraFiles = nil }()
	return judge.RunCodeJudges(ctx, c, resp)
}

// isolatedRunner runs each code_judge script, then kills and reaps every other process of the container (as its
// PID 1, whatever session or group they moved to) before it returns the script's result: nothing a script
// started is alive when the next script starts or a verdict is sent. A script that left processes behind gets a
// miss that says so; one whose processes could not all be killed is an Error.
type isolatedRunner struct {
	inner evaluate.ScriptRunner
	log   io.Writer
	// leftovers counts the processes killed since the case started.
	leftovers int
}

func (r *isolatedRunner) Run(ctx context.Context, c *evalfile.Case, ev *evalfile.EvaluatorConfig, resp *jsonlresult.Response) verdict.EvaluatorResult {
	return r.reap(c, ev, r.inner.Run(ctx, c, ev, resp))
}

func (r *isolatedRunner) Aggregate(ctx context.Context, c *evalfile.Case, ev *evalfile.EvaluatorConfig,
	members []verdict.EvaluatorResult) verdict.EvaluatorResult {
	return r.reap(c, ev, r.inner.Aggregate(ctx, c, ev, members))
}

var _ evaluate.CodeGrader42Runner = (*isolatedRunner)(nil)

func (r *isolatedRunner) Grade42(ctx context.Context, c *evalfile.Case, ev *evalfile.EvaluatorConfig,
	in evaluate.CodeGraderInput) verdict.EvaluatorResult {
	return r.reap(c, ev, r.inner.Grade42(ctx, c, ev, in))
}

func (r *isolatedRunner) reap(c *evalfile.Case, ev *evalfile.EvaluatorConfig, res verdict.EvaluatorResult) verdict.EvaluatorResult {
	n, _ := reaper.KillLeftovers(ReapTimeout)
	if n > 0 {
		r.leftovers += n
		podwire.Logf(r.log, "Killed processes a code judge left behind case=%q evaluator=%q count=%d\n", c.ID, ev.Name, n)
		res.Misses = append(res.Misses, fmt.Sprintf("the judge left %d processes running after it returned; they were killed before anything else ran", n))
	}
	if left := len(reaper.Remaining()); left > 0 {
		why := fmt.Sprintf("%d processes the judge left behind could not be killed within %s", left, ReapTimeout)
		return verdict.EvaluatorResult{Verdict: verdict.VerdictError, Misses: []string{why}, Reasoning: why}
	}
	return res
}

// clearDir removes everything in dir, whatever its type or mode (the scripts run as this process's uid, so it
// owns whatever they made and may make it writable again).
func clearDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		if cerr := os.Chmod(dir, 0o700); cerr != nil {
			return err
		}
		if entries, err = os.ReadDir(dir); err != nil {
			return err
		}
	}
	var errs []error
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if e.IsDir() {
			_ = os.Chmod(p, 0o700)
			if err := clearDir(p); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
