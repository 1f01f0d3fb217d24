package evaluate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/jsonlresult"
	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// DefaultCodeJudgeTimeout bounds a code_judge script when ScriptRunner.Timeout is 0.
const DefaultCodeJudgeTimeout = 60 * time.Second

// Bounds on what is kept of a judge's output.
const (
	// maxJudgeStdout is how much of the end of stdout is kept for parsing.
	maxJudgeStdout = 1 << 20
	// maxStderrTail is how many bytes of the end of stderr a miss quotes.
	maxStderrTail = 2000
	// pipeGrace is how long Run waits for the output pipes after the script exits or is killed (a background
	// child may hold them open).
	pipeGrace = 2 * time.Second
)

// ScriptRunner runs code_judge scripts with /bin/sh -c, each in its own process group, with the payload on stdin.
// It implements CodeJudgeRunner. The zero value runs in the current directory with DefaultCodeJudgeTimeout.
type ScriptRunner struct {
	// Timeout bounds each script; the whole process group is killed when it expires. 0 is
	// DefaultCodeJudgeTimeout.
	Timeout time.Duration
	// Dir is the base directory: a relative cwd of an evaluator is resolved against it, and scripts without a
	// cwd run in it. "" is the current directory.
	Dir string
	// Shell runs the script as Shell -c <script>; "" is /bin/sh.
	Shell string
	// Env is the scripts' environment; nil inherits this process's.
	Env []string
	// Prefix, when set, is the command that runs each script: Prefix..., Shell, -c, script (the judge runner's
	// Landlock shim, internal/confine).
	Prefix []string
	// ExtraFiles are passed to every script's command from fd 3 on (the shim's ruleset).
	ExtraFiles []*os.File
	// TempDir is where an AgentV 4.42 code grader's large answer is written for it to read (output_path): a
	// directory of its own in it, removed when the grader returns. "" is os.TempDir().
	TempDir string
}

var (
	_ CodeJudgeRunner    = ScriptRunner{}
	_ CodeGrader42Runner = ScriptRunner{}
)

// Run runs the code_judge evaluator ev for case c. A script that cannot start, exits non-zero, times out or
// prints no JSON object with a numeric score yields score 0, verdict.VerdictError and a miss that says why, with the end
// of its stderr.
func (r ScriptRunner) Run(ctx context.Context, c *evalfile.Case, ev *evalfile.EvaluatorConfig, resp *jsonlresult.Response) verdict.EvaluatorResult {
	if ev.CodeJudge == nil {
		return JudgeFailure(fmt.Sprintf("evaluator %q is not a code_judge", ev.Name), "")
	}
	payload, err := CodeJudgePayload(c, ev, resp)
	if err != nil {
		return JudgeFailure(err.Error(), "")
	}
	return r.run(ctx, ev.CodeJudge, payload, false)
}

// Aggregate runs the code_judge aggregator of composite ev over its members' results. The script may set the
// verdict ("pass" or "fail") in its output.
func (r ScriptRunner) Aggregate(ctx context.Context, c *evalfile.Case, ev *evalfile.EvaluatorConfig,
	members []verdict.EvaluatorResult) verdict.EvaluatorResult {
	if ev.Composite == nil || ev.Composite.Script == nil {
		return JudgeFailure(fmt.Sprintf("evaluator %q has no code_judge aggregator", ev.Name), "")
	}
	payload, err := AggregatorPayload(members)
	if err != nil {
		return JudgeFailure("encoding the aggregator payload: "+err.Error(), "")
	}
	return r.run(ctx, ev.Composite.Script, payload, true)
}

// Grade42 runs an AgentV 4.42 code grader (ev's command, or the code-grader aggregator of composite ev) on in, and
// reads its reply with in.Reply. A large answer is written to a file of its own first (output_path) and removed
// after. A script that cannot start, times out, is killed, or whose reply is no result is an Error that says why.
func (r ScriptRunner) Grade42(ctx context.Context, c *evalfile.Case, ev *evalfile.EvaluatorConfig, in CodeGraderInput) verdict.EvaluatorResult {
	cfg := ev.CodeJudge
	if ev.Type == evalfile.TypeComposite && ev.Composite != nil {
		cfg = ev.Composite.Script
	}
	if cfg == nil {
		return JudgeFailure(fmt.Sprintf("grader %q has no command", ev.Name), "")
	}
	outputPath := ""
	if large := in.LargeOutput(); large != nil {
		dir, err := os.MkdirTemp(r.TempDir, "agentv-grader-")
		if err != nil {
			return JudgeFailure("writing the answer for output_path: "+err.Error(), "")
		}
		defer func() { _ = os.RemoveAll(dir) }()
		outputPath = filepath.Join(dir, "output.json")
		if err := os.WriteFile(outputPath, large, 0o644); err != nil {
			return JudgeFailure("writing the answer for output_path: "+err.Error(), "")
		}
	}
	x := r.execute(ctx, cfg, in.Stdin(outputPath))
	if x.failure != nil {
		return *x.failure
	}
	res, err := in.Reply(x.stdout, []byte(x.stderrTail), x.exitCode)
	if err != nil {
		return JudgeFailure(fmt.Sprintf("%s after %s", err, x.elapsed), x.stderrTail)
	}
	return res
}

func (r ScriptRunner) run(ctx context.Context, cfg *evalfile.CodeJudgeConfig, payload []byte, aggregator bool) verdict.EvaluatorResult {
	x := r.execute(ctx, cfg, payload)
	if x.failure != nil {
		return *x.failure
	}
	if x.exitCode != 0 {
		return JudgeFailure(fmt.Sprintf("the judge exited with status %d after %s", x.exitCode, x.elapsed), x.stderrTail)
	}
	out, perr := parseJudgeOutput(x.stdout)
	if perr != nil {
		return JudgeFailure("the judge's stdout has no result {score, hits, misses, reasoning}: "+perr.Error(), x.stderrTail)
	}
	res := verdict.EvaluatorResult{Score: verdict.ClampScore(out.score), Hits: out.hits, Misses: out.misses, Reasoning: out.reasoning}
	if aggregator {
		res.Verdict = out.verdict
	}
	return res
}

// scriptExit is how a script ended: its stdout (the end of it), the end of its stderr, its exit code and how long
// it ran; failure when it did not end by itself (it could not start, timed out, was cancelled or killed by a
// signal).
type scriptExit struct {
	stdout     []byte
	stderrTail string
	exitCode   int
	elapsed    time.Duration
	failure    *verdict.EvaluatorResult
}

// execute runs cfg's script with payload on stdin, in its own process group, within the timeout.
func (r ScriptRunner) execute(ctx context.Context, cfg *evalfile.CodeJudgeConfig, payload []byte) scriptExit {
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = DefaultCodeJudgeTimeout
	}
	shell := r.Shell
	if shell == "" {
		shell = "/bin/sh"
	}
	dir := r.Dir
	if cfg.Cwd != "" {
		dir = cfg.Cwd
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(r.Dir, dir)
		}
	}

	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	argv := append(append(slices.Clip(r.Prefix), shell), "-c", cfg.Script)
	cmd := exec.CommandContext(runCtx, argv[0], argv[1:]...)
	cmd.ExtraFiles = r.ExtraFiles
	cmd.Dir = dir
	cmd.Env = r.Env
	cmd.Stdin = bytes.NewReader(payload)
	stdout := &tailBuffer{max: maxJudgeStdout}
	stderr := &tailBuffer{max: 4 * maxStderrTail}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	ownProcessGroup(cmd)
	cmd.Cancel = func() error { return killGroup(cmd) }
	cmd.WaitDelay = pipeGrace

	start := time.Now()
	err := cmd.Run()
	// Reap anything the script left running in its group.
	_ = killGroup(cmd)
	x := scriptExit{stdout: stdout.Bytes(), elapsed: time.Since(start).Round(time.Millisecond),
		stderrTail: textbound.Tail(strings.TrimSpace(stderr.String()), maxStderrTail)}
	fail := func(why string) scriptExit {
		f := JudgeFailure(why, x.stderrTail)
		x.failure = &f
		return x
	}

	switch {
	case cmd.Process == nil:
		return fail(fmt.Sprintf("the judge could not start (%s -c %s in %q): %v", shell, excerpt(cfg.Script, 200), dirOrDot(dir), err))
	case errors.Is(runCtx.Err(), context.DeadlineExceeded) && ctx.Err() == nil:
		return fail(fmt.Sprintf("the judge timed out after %s and was killed", timeout))
	case ctx.Err() != nil:
		return fail("the judge was cancelled: " + ctx.Err().Error())
	}
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		if sig := terminatingSignal(exitErr); sig != "" {
			return fail(fmt.Sprintf("the judge was killed by signal %s after %s", sig, x.elapsed))
		}
		x.exitCode = exitErr.ExitCode()
		return x
	}
	if err != nil && !errors.Is(err, exec.ErrWaitDelay) {
		return fail("running the judge failed: " + err.Error())
	}
	return x
}

func dirOrDot(dir string) string {
	if dir == "" {
		return "."
	}
	return dir
}

// JudgeFailure is the result of a judge that produced no usable result: score 0, error, and a miss that says why.
func JudgeFailure(why, stderrTail string) verdict.EvaluatorResult {
	miss := why
	if stderrTail != "" {
		miss += "; stderr: " + stderrTail
	}
	return verdict.EvaluatorResult{Verdict: verdict.VerdictError, Misses: []string{miss}, Reasoning: why}
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	n := len(p)
	if len(p) >= t.max {
		t.buf = append(t.buf[:0], p[len(p)-t.max:]...)
		return n, nil
	}
	if over := len(t.buf) + len(p) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	t.buf = append(t.buf, p...)
	return n, nil
}

func (t *tailBuffer) Bytes() []byte  { return t.buf }
func (t *tailBuffer) String() string { return string(t.buf) }
