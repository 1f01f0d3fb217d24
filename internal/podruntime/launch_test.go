package podruntime

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/layout"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
	"github.com/google/go-cmp/cmp"
)

const testEval = `$schema: agentv-eval-v2
evalcases:
  - id: alpha
    input_messages:
      - role: user
        content: "What's $(id) ` + "`x`" + `?"
    expected_messages:
      - role: assistant
        content: A
    execution:
      evaluators:
        - name: judge
          type: code_judge
          script: cat >/dev/null; echo '{"score":1,"hits":["looks right"]}'
  - id: beta
    input_messages:
      - role: user
        content: second question
    expected_messages:
      - role: assistant
        content: B
  - id: gamma
    input_messages:
      - role: user
        content: third
  - id: delta
    input_messages:
      - role: user
        content: fourth
`

// fixture is a work volume, an eval file and a run configuration in a temporary directory.
type fixture struct {
	dir   string
	paths layout.Paths
	cfg   *layout.RunConfig
}

func newFixture(t *testing.T, template string) *fixture {
	t.Helper()
	dir := t.TempDir()
	evalPath := filepath.Join(dir, "eval.yaml")
	if err := os.WriteFile(evalPath, []byte(testEval), 0o644); err != nil {
		t.Fatal(err)
	}
	return &fixture{
		dir:   dir,
		paths: layout.In(filepath.Join(dir, "work")),
		cfg: &layout.RunConfig{
			RunName: "run", Namespace: "ns", EvalFile: evalPath,
			CaseIDs:         []string{"alpha", "beta", "gamma", "delta"},
			CommandTemplate: template, Batching: "Batched", KillGraceSeconds: 1,
			PassThreshold: "0.8", CodeJudgeTimeoutSeconds: 10, CodeJudgeWorkers: 2, AckTimeoutSeconds: 10,
		},
	}
}

// fakeCollector acknowledges the done marker as the sidecar would.
func (f *fixture) fakeCollector(t *testing.T, ack Ack) {
	t.Helper()
	go func() {
		if err := waitForFile(context.Background(), f.paths.Done(), 20*time.Second); err != nil {
			return
		}
		_ = writeJSONAtomic(f.paths.Ack(), ack)
	}()
}

func (f *fixture) launch(t *testing.T, ctx context.Context) (*RunnerRecord, error) {
	t.Helper()
	err := Launch(ctx, LaunchOptions{Config: f.cfg, Paths: f.paths, Stdout: io.Discard, Stderr: io.Discard, Log: io.Discard})
	var rec RunnerRecord
	if rerr := readJSON(f.paths.RunnerRecord(), &rec); rerr != nil {
		t.Fatalf("runner record: %v", rerr)
	}
	return &rec, err
}

func TestLaunchBatched(t *testing.T) {
	f := newFixture(t, `printf '{"id":"alpha","text":"A"}\n{"id":"beta","text":"B"}\n' > {OUTPUT_FILE}; echo "eval=$EVAL_FILE" >&2`)
	f.fakeCollector(t, Ack{Persisted: true})
	rec, err := f.launch(t, context.Background())
	if err != nil {
		t.Fatalf("Launch: %v", err)
	}
	if rec.Runner == nil || !rec.Runner.Succeeded() || rec.Attempt != 1 || rec.Invocations != 1 {
		t.Fatalf("runner record %+v, want one successful invocation in attempt 1", rec)
	}
	if want := "eval=" + f.cfg.EvalFile + "\n"; rec.Runner.StderrTail != want {
		t.Errorf("stderr tail %q, want %q (EVAL_FILE exported)", rec.Runner.StderrTail, want)
	}
	judges, err := readJudgeResults(f.paths.JudgeResults())
	if err != nil {
		t.Fatal(err)
	}
	got := judges["alpha"]["judge"]
	if got.Score != 1 || len(got.Hits) != 1 || got.Hits[0] != "looks right" {
		t.Errorf("code judge result for alpha = %+v, want score 1 with its hit", got)
	}
	if len(judges) != 1 {
		t.Errorf("code judges ran for %d cases, want only alpha (the only case with a code_judge)", len(judges))
	}
	var done DoneMarker
	if err := readJSON(f.paths.Done(), &done); err != nil || done.Attempt != 1 || done.JudgeError != "" {
		t.Errorf("done marker %+v (%v), want attempt 1 without judge error", done, err)
	}
}

func TestLaunchRunnerFailureIsNotInfra(t *testing.T) {
	f := newFixture(t, `echo broken >&2; exit 1 # {OUTPUT_FILE}`)
	f.fakeCollector(t, Ack{Persisted: true})
	rec, err := f.launch(t, context.Background())
	if err != nil {
		t.Fatalf("a runner exiting 1 made launch fail: %v", err)
	}
	if rec.Runner.ExitCode == nil || *rec.Runner.ExitCode != 1 || rec.Runner.StderrTail != "broken\n" {
		t.Errorf("runner outcome %+v, want exit 1 with its stderr", rec.Runner)
	}
}

func TestLaunchAck(t *testing.T) {
	t.Run("not persisted", func(t *testing.T) {
		f := newFixture(t, `: {OUTPUT_FILE}`)
		f.fakeCollector(t, Ack{Persisted: false, Reason: "apiserver unreachable"})
		_, err := f.launch(t, context.Background())
		if !errors.Is(err, ErrNotPersisted) || !strings.Contains(err.Error(), "apiserver unreachable") {
			t.Errorf("Launch error = %v, want ErrNotPersisted with the collector's reason", err)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		f := newFixture(t, `: {OUTPUT_FILE}`)
		f.cfg.AckTimeoutSeconds = 1
		_, err := f.launch(t, context.Background())
		if !errors.Is(err, ErrNotPersisted) || !strings.Contains(err.Error(), "did not appear within 1s") {
			t.Errorf("Launch error = %v, want ErrNotPersisted after the ack timeout", err)
		}
	})
	t.Run("unwritable work volume", func(t *testing.T) {
		f := newFixture(t, `: {OUTPUT_FILE}`)
		if err := os.WriteFile(filepath.Join(f.dir, "work"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		err := Launch(context.Background(), LaunchOptions{Config: f.cfg, Paths: f.paths, Log: io.Discard})
		if err == nil || !strings.Contains(err.Error(), "prepare the work volume") {
			t.Errorf("Launch error = %v, want a work volume error", err)
		}
	})
}

func TestLaunchHealthcheckFailure(t *testing.T) {
	marker := "runner-ran"
	f := newFixture(t, `touch `+marker+`; : {OUTPUT_FILE}`)
	f.cfg.WorkingDir = f.dir
	f.cfg.HealthcheckTemplate = `echo "model endpoint unreachable" >&2; exit 7`
	f.fakeCollector(t, Ack{Persisted: true})
	rec, err := f.launch(t, context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !rec.HealthcheckFailed || rec.Healthcheck == nil || *rec.Healthcheck.ExitCode != 7 || rec.Healthcheck.StderrTail != "model endpoint unreachable\n" {
		t.Errorf("record %+v, want a failed healthcheck with exit 7 and its stderr", rec)
	}
	if rec.Runner != nil {
		t.Errorf("runner ran after a failed healthcheck")
	}
	if _, err := os.Stat(filepath.Join(f.dir, marker)); err == nil {
		t.Errorf("runner command ran after a failed healthcheck")
	}
	outcome, msg := classify(rec, true, DoneMarker{}, emptyTail(), false, "Batched", 0)
	if outcome != layout.OutcomeHealthcheckFailed || !strings.Contains(msg, "exited with code 7: model endpoint unreachable") {
		t.Errorf("classified %s %q", outcome, msg)
	}
}

func TestLaunchNoShell(t *testing.T) {
	f := newFixture(t, `: {OUTPUT_FILE}`)
	f.fakeCollector(t, Ack{Persisted: true})
	err := Launch(context.Background(), LaunchOptions{Config: f.cfg, Paths: f.paths, Shell: "/nonexistent/bin/sh", Log: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	var rec RunnerRecord
	if err := readJSON(f.paths.RunnerRecord(), &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Runner == nil || !strings.Contains(rec.Runner.StartError, "the runner image has no /nonexistent/bin/sh") {
		t.Fatalf("runner outcome %+v, want a clear no-shell message", rec.Runner)
	}
	outcome, msg := classify(&rec, true, DoneMarker{}, emptyTail(), true, "Batched", 0)
	if outcome != layout.OutcomeRunnerFailed || !strings.Contains(msg, "needs a POSIX shell") {
		t.Errorf("classified %s %q, want RunnerFailed naming the missing shell", outcome, msg)
	}
}

func TestLaunchPerCase(t *testing.T) {
	f := newFixture(t, "")
	locks := filepath.Join(f.dir, "running")
	if err := os.Mkdir(locks, 0o755); err != nil {
		t.Fatal(err)
	}
	counts := filepath.Join(f.dir, "counts")
	// Each invocation records how many invocations run at the same time, and echoes its placeholders.
	f.cfg.CommandTemplate = `touch ` + locks + `/{EVAL_ID}; ls ` + locks + ` | wc -l >> ` + counts + `; sleep 0.3; ` +
		`printf '%s|%s|%s|%s' {EVAL_ID} {PROMPT} "$(cat {PROMPT_FILE})" {ATTEMPT} > {OUTPUT_FILE}; rm ` + locks + `/{EVAL_ID}; ` +
		`[ {EVAL_ID} != gamma ] || exit 4`
	f.cfg.Batching = "PerCase"
	f.cfg.Workers = 2
	f.fakeCollector(t, Ack{Persisted: true})
	rec, err := f.launch(t, context.Background())
	if err != nil {
		t.Fatal(err)
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
	out, err := os.ReadFile(f.paths.CaseOutput("alpha"))
	if err != nil {
		t.Fatal(err)
	}
	q := "What's $(id) `x`?"
	if diff := cmp.Diff("alpha|"+q+"|"+q+"|1", string(out)); diff != "" {
		t.Errorf("placeholders of alpha (-want +got):\n%s", diff)
	}
	if rec.Invocations != 4 || rec.FailedCases != 1 || len(rec.Cases) != 1 || rec.Cases[0].ID != "gamma" || *rec.Cases[0].ExitCode != 4 {
		t.Errorf("record %+v, want 4 invocations with gamma failing with exit 4", rec)
	}
}

func TestLaunchAttemptCountsEarlierRecords(t *testing.T) {
	f := newFixture(t, `: {OUTPUT_FILE}`)
	f.fakeCollector(t, Ack{Persisted: true})
	if _, err := f.launch(t, context.Background()); err != nil {
		t.Fatal(err)
	}
	f.fakeCollector(t, Ack{Persisted: true})
	rec, err := f.launch(t, context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rec.Attempt != 2 || len(rec.History) != 1 || rec.History[0].Attempt != 1 {
		t.Errorf("second attempt record: attempt %d, history %d", rec.Attempt, len(rec.History))
	}
}

func TestLaunchTimeout(t *testing.T) {
	f := newFixture(t, `sleep 100 # {OUTPUT_FILE}`)
	f.cfg.TimeoutSeconds = 1
	f.fakeCollector(t, Ack{Persisted: true})
	rec, err := f.launch(t, context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !rec.Runner.TimedOut || rec.Runner.ExitCode != nil {
		t.Errorf("runner outcome %+v, want a timeout without an exit code", rec.Runner)
	}
	outcome, _ := classify(rec, true, DoneMarker{}, emptyTail(), true, "Batched", 0)
	if outcome != layout.OutcomeRunnerTimedOut {
		t.Errorf("outcome %s, want RunnerTimedOut", outcome)
	}
}

func emptyTail() results.Tail { return results.Tail{} }
