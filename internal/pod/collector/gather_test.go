package collector

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/outcome"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// fixture is a pod's volumes, an eval file and a run configuration (see testutil.PodFixture).
type fixture struct {
	*testutil.PodFixture
	// report is the launcher's report as it arrived through the runner-end FIFO (nil: none expected).
	report *podwire.LauncherReport
	// recorded are the code judges' verdicts the collector accepted (recordJudge).
	recorded Verdicts
}

// newFixture's runner is never launched here: the tests write its output and the launcher's report themselves.
func newFixture(t *testing.T) *fixture {
	return &fixture{PodFixture: testutil.NewPodFixture(t, ": {OUTPUT_FILE}")}
}

func (f *fixture) write(t *testing.T, path, content string) { f.Write(t, path, content) }

// finishedRunner writes the launcher's report as the launcher would.
func (f *fixture) finishedRunner(t *testing.T, exit int32) {
	t.Helper()
	f.report = &podwire.LauncherReport{Batching: f.Config.Batching, Runner: &podwire.Outcome{ExitCode: &exit}, Invocations: 1, ExitCode: int(exit)}
}

// gather snapshots the output and gathers it as the collector does after the runner ended.
func (f *fixture) gather(t *testing.T, ended bool) *Gathered {
	t.Helper()
	in := GatherInput{Config: f.Config, Output: f.Pod.SnapshotOutput(), EndCause: outcome.EndEnded, PodName: "pod-1", Now: time.Now(),
		Snapshot: TakeSnapshot(f.Config, f.Pod.Output(), f.Pod.SnapshotOutput()), Launcher: f.report}
	if !ended {
		in.EndCause, in.EndReason = outcome.EndPodStopped, "the pod was stopped before the runner ended"
	}
	in.JudgeResults = f.recorded
	g, err := Gather(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// recordJudge records a code judge's result as the collector accepts it from a judge container.
func (f *fixture) recordJudge(t *testing.T, id, key string, r verdict.EvaluatorResult) {
	t.Helper()
	if f.recorded == nil {
		f.recorded = Verdicts{}
	}
	if f.recorded[id] == nil {
		f.recorded[id] = map[string]verdict.EvaluatorResult{}
	}
	f.recorded[id][key] = r
}

func caseVerdicts(cs []evalsv1alpha1.CaseResult) map[string]evalsv1alpha1.Verdict {
	m := map[string]evalsv1alpha1.Verdict{}
	for _, c := range cs {
		m[c.ID] = c.Verdict
	}
	return m
}

func TestGatherBatched(t *testing.T) {
	tests := []struct {
		name        string
		output      string // "" : no output file
		exit        int32
		judge       *verdict.EvaluatorResult
		wantOutcome evalsv1alpha1.CollectionOutcome
		wantMsg     string
		wantCases   map[string]evalsv1alpha1.Verdict
		wantMissing []string
		wantSummary evalsv1alpha1.RunSummary
	}{
		{
			name:        "all present, code judge passed",
			output:      `{"id":"alpha","text":"A"}` + "\n" + `{"id":"beta","text":"B"}` + "\n" + `{"id":"gamma","text":"C"}` + "\n" + `{"id":"delta","text":"D"}` + "\n",
			judge:       &verdict.EvaluatorResult{Name: "judge", Type: "code_judge", Score: 1, Hits: []string{"ok"}},
			wantOutcome: evalsv1alpha1.OutcomeCompleted,
			wantMsg:     "collected the results of all 4 cases",
			wantCases:   map[string]evalsv1alpha1.Verdict{"alpha": evalsv1alpha1.VerdictPass, "beta": evalsv1alpha1.VerdictSkipped, "gamma": evalsv1alpha1.VerdictSkipped, "delta": evalsv1alpha1.VerdictSkipped},
			wantSummary: evalsv1alpha1.RunSummary{Total: 4, Passed: 1, Skipped: 3, PassRate: "0.2500", MeanScore: "1.0000", MedianScore: "1.0000", MinScore: "1.0000", MaxScore: "1.0000", Histogram: []int32{0, 0, 0, 0, 1}},
		},
		{
			name:        "code judge never recorded is an error",
			output:      `{"id":"alpha","text":"A"}` + "\n" + `{"id":"beta","text":"B"}` + "\n" + `{"id":"gamma","text":"C"}` + "\n" + `{"id":"delta","text":"D"}` + "\n",
			wantOutcome: evalsv1alpha1.OutcomeCompleted,
			wantCases:   map[string]evalsv1alpha1.Verdict{"alpha": evalsv1alpha1.VerdictError, "beta": evalsv1alpha1.VerdictSkipped, "gamma": evalsv1alpha1.VerdictSkipped, "delta": evalsv1alpha1.VerdictSkipped},
			wantSummary: evalsv1alpha1.RunSummary{Total: 4, Errored: 1, Skipped: 3, PassRate: "0.0000"},
		},
		{
			name:        "missing and invalid lines",
			output:      `{"id":"beta","text":"B"}` + "\n" + `not json` + "\n" + `{"id":"zzz","text":"?"}` + "\n",
			wantOutcome: evalsv1alpha1.OutcomeInvalidOutput,
			wantMsg:     "1 invalid output lines (first: line 2",
			wantCases:   map[string]evalsv1alpha1.Verdict{"beta": evalsv1alpha1.VerdictSkipped},
			wantMissing: []string{"alpha", "gamma", "delta"},
			wantSummary: evalsv1alpha1.RunSummary{Total: 4, Errored: 3, Skipped: 1, Missing: 3, ParseErrors: 1, Unexpected: 1, PassRate: "0.0000"},
		},
		{
			name:        "no output file",
			wantOutcome: evalsv1alpha1.OutcomeMissingResults,
			wantMsg:     "the runner wrote no output file",
			wantCases:   map[string]evalsv1alpha1.Verdict{},
			wantMissing: []string{"alpha", "beta", "gamma", "delta"},
			wantSummary: evalsv1alpha1.RunSummary{Total: 4, Errored: 4, Missing: 4, PassRate: "0.0000"},
		},
		{
			name:        "runner exited 2",
			output:      `{"id":"beta","text":"B"}` + "\n",
			exit:        2,
			wantOutcome: evalsv1alpha1.OutcomeRunnerFailed,
			wantMsg:     "the launcher reports that the runner exited with code 2",
			wantCases:   map[string]evalsv1alpha1.Verdict{"beta": evalsv1alpha1.VerdictSkipped},
			wantMissing: []string{"alpha", "gamma", "delta"},
			wantSummary: evalsv1alpha1.RunSummary{Total: 4, Errored: 3, Skipped: 1, Missing: 3, PassRate: "0.0000"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.Config.ResultConfigMaps = []string{"run-results-0", "run-results-1"}
			if tc.output != "" {
				f.write(t, f.Pod.Output().BatchOutput(), tc.output)
			}
			f.finishedRunner(t, tc.exit)
			if tc.judge != nil {
				f.recordJudge(t, "alpha", "judge", *tc.judge)
			}
			g := f.gather(t, true)
			s := g.Output.Section
			if g.Outcome != tc.wantOutcome || !strings.Contains(s.Collection.Message, tc.wantMsg) {
				t.Errorf("outcome %s %q, want %s containing %q", g.Outcome, s.Collection.Message, tc.wantOutcome, tc.wantMsg)
			}
			if diff := cmp.Diff(tc.wantCases, caseVerdicts(s.Cases)); diff != "" {
				t.Errorf("case verdicts (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantMissing, s.MissingIDs); diff != "" {
				t.Errorf("missing ids (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantSummary, *s.Summary); diff != "" {
				t.Errorf("summary (-want +got):\n%s", diff)
			}
			if s.Collection.PodName != "pod-1" || !s.Collection.RunnerFinished || s.Collection.CollectedAt == nil {
				t.Errorf("collection %+v", s.Collection)
			}
			if int(s.Results.TotalCases) != 4 {
				t.Errorf("results hold %d cases, want every requested case (4)", s.Results.TotalCases)
			}
		})
	}
}

// The collector judges the tests of an AgentV 4.42 suite with AgentV 4.42's graders (its Judge is given them).
func TestGatherJudgesAgentV442Suites(t *testing.T) {
	f := newFixture(t)
	f.write(t, f.Config.EvalFile, "tests:\n"+
		"  - id: alpha\n    input: Say A.\n    assertions:\n      - {type: contains, value: A}\n"+
		"  - id: beta\n    input: Say B.\n    assertions:\n      - {type: contains, value: B}\n")
	f.Config.CaseIDs = []string{"alpha", "beta"}
	f.write(t, f.Pod.Output().BatchOutput(), `{"id":"alpha","text":"A"}`+"\n"+`{"id":"beta","text":"A"}`+"\n")
	f.finishedRunner(t, 0)
	g := f.gather(t, true)
	want := map[string]evalsv1alpha1.Verdict{"alpha": evalsv1alpha1.VerdictPass, "beta": evalsv1alpha1.VerdictFail}
	if diff := cmp.Diff(want, caseVerdicts(g.Output.Section.Cases)); diff != "" {
		t.Errorf("case verdicts (-want +got):\n%s", diff)
	}
}

func TestGatherPartialOutputWithoutDone(t *testing.T) {
	f := newFixture(t)
	// The runner was killed mid-write: the last line is cut.
	f.write(t, f.Pod.Output().BatchOutput(), `{"id":"beta","text":"B"}`+"\n"+`{"id":"gamma","te`)
	g := f.gather(t, false)
	c := g.Output.Section.Collection
	if c.RunnerFinished || g.Outcome != evalsv1alpha1.OutcomeRunnerFailed || !strings.Contains(c.Message, "did not finish") {
		t.Errorf("collection %+v, outcome %s; want an unfinished runner", c, g.Outcome)
	}
	if diff := cmp.Diff(map[string]evalsv1alpha1.Verdict{"beta": evalsv1alpha1.VerdictSkipped}, caseVerdicts(g.Output.Section.Cases)); diff != "" {
		t.Errorf("the partial output's valid record was lost (-want +got):\n%s", diff)
	}
	if g.Summary.ParseErrors != 1 {
		t.Errorf("parse errors %d, want the cut line counted", g.Summary.ParseErrors)
	}
}

func TestGatherPerCase(t *testing.T) {
	f := newFixture(t)
	f.Config.Batching = "PerCase"
	f.Config.ResultConfigMaps = []string{"run-results-0"}
	f.write(t, f.Pod.Output().CaseOutput("alpha"), `{"text":"A"}`)
	f.write(t, f.Pod.Output().CaseOutput("beta"), "plain text answer")
	exit := int32(4)
	rec := podwire.LauncherReport{Batching: "PerCase", Invocations: 4, FailedCases: 1,
		Runner: &podwire.Outcome{ExitCode: &exit, StderrTail: "gamma crashed\n"},
		Cases:  []podwire.CaseOutcome{{ID: "gamma", Outcome: podwire.Outcome{ExitCode: &exit, StderrTail: "gamma crashed\n"}}}}
	f.report = &rec
	g := f.gather(t, true)
	if g.Outcome != evalsv1alpha1.OutcomeRunnerFailed || !strings.Contains(g.Message, "1 of 4 runner invocations failed; the first exited with code 4: gamma crashed") {
		t.Errorf("outcome %s %q", g.Outcome, g.Message)
	}
	if diff := cmp.Diff([]string{"gamma", "delta"}, g.Output.Section.MissingIDs); diff != "" {
		t.Errorf("missing ids (-want +got):\n%s", diff)
	}
	if g.Output.Section.Collection.OutputSHA256 == "" {
		t.Errorf("no output digest")
	}
	lines := decodeAll(t, g)
	if !strings.Contains(lines["gamma"], "the runner invocation for this case exited with code 4: gamma crashed") {
		t.Errorf("gamma's stored result does not say why it has no output: %s", lines["gamma"])
	}
	if !strings.Contains(lines["beta"], `"answer":"plain text answer"`) {
		t.Errorf("beta's stored result: %s", lines["beta"])
	}
}

// A hostile runner turns its outputs into links to the collector's secrets, FIFOs and directories, and forges a
// launcher report and verdict files. The collector must judge only regular files beneath the output directory,
// never block, and never let a forged file improve the outcome.
func TestGatherHostileOutputs(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(secret, []byte("eyJhbGciOiJSUzI1NiJ9.secret-token"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Run("batch output is a symlink to the token", func(t *testing.T) {
		f := newFixture(t)
		f.finishedRunner(t, 0)
		if err := os.Symlink(secret, f.Pod.Output().BatchOutput()); err != nil {
			t.Fatal(err)
		}
		g := f.gather(t, true)
		if g.Outcome != evalsv1alpha1.OutcomeInvalidOutput || !strings.Contains(g.Message, "symbolic link") {
			t.Errorf("outcome %s %q, want InvalidOutput naming the symlink", g.Outcome, g.Message)
		}
		assertNoSecret(t, g, "secret-token")
	})
	t.Run("batch output is a FIFO", func(t *testing.T) {
		f := newFixture(t)
		f.finishedRunner(t, 0)
		if err := unix.Mkfifo(f.Pod.Output().BatchOutput(), 0o644); err != nil {
			t.Fatal(err)
		}
		g := f.gather(t, true)
		if g.Outcome != evalsv1alpha1.OutcomeInvalidOutput || !strings.Contains(g.Message, "FIFO") {
			t.Errorf("outcome %s %q, want InvalidOutput naming the FIFO", g.Outcome, g.Message)
		}
	})
	t.Run("per-case outputs: symlinks to the token and /proc/self/environ, a directory, a FIFO", func(t *testing.T) {
		f := newFixture(t)
		f.Config.Batching = "PerCase"
		f.Config.ResultConfigMaps = []string{"run-results-0"}
		out := f.Pod.Output()
		f.write(t, out.CaseOutput("delta"), "honest answer")
		for id, target := range map[string]string{"alpha": secret, "beta": "/proc/self/environ"} {
			if err := os.Symlink(target, out.CaseOutput(id)); err != nil {
				t.Fatal(err)
			}
		}
		if err := unix.Mkfifo(out.CaseOutput("gamma"), 0o644); err != nil {
			t.Fatal(err)
		}
		g := f.gather(t, true)
		want := map[string]evalsv1alpha1.Verdict{"alpha": evalsv1alpha1.VerdictError, "beta": evalsv1alpha1.VerdictError, "gamma": evalsv1alpha1.VerdictError, "delta": evalsv1alpha1.VerdictSkipped}
		if diff := cmp.Diff(want, caseVerdicts(g.Output.Section.Cases)); diff != "" {
			t.Errorf("verdicts (-want +got):\n%s", diff)
		}
		lines := decodeAll(t, g)
		if !strings.Contains(lines["alpha"], "symbolic link") || !strings.Contains(lines["gamma"], "FIFO") {
			t.Errorf("stored results do not say why: alpha %s; gamma %s", lines["alpha"], lines["gamma"])
		}
		assertNoSecret(t, g, "secret-token")
		assertNoSecret(t, g, "PATH=")
	})
	// truncate -s: an output whose apparent size is far above what it stores.
	sparse := func(t *testing.T, fx *fixture, path string, size int64, head string) {
		t.Helper()
		fx.write(t, path, head)
		if err := os.Truncate(path, size); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("batch output with a 10 GiB hole is refused before any copy", func(t *testing.T) {
		f := newFixture(t)
		f.finishedRunner(t, 0)
		sparse(t, f, f.Pod.Output().BatchOutput(), 10<<30, `{"id":"alpha","text":"A"}`+"\n")
		g := f.gather(t, true)
		if g.Outcome != evalsv1alpha1.OutcomeInvalidOutput || !strings.Contains(g.Message, "larger than the limit") {
			t.Errorf("outcome %s %q, want InvalidOutput saying the output is larger than the limit", g.Outcome, g.Message)
		}
		if _, err := os.Stat(f.Pod.SnapshotOutput().BatchOutput()); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("the snapshot holds a copy of the refused output (%v)", err)
		}
	})
	t.Run("sparse outputs within their bounds are copied as stored, not written out in full", func(t *testing.T) {
		f := newFixture(t)
		f.finishedRunner(t, 0)
		f.Config.MaxOutputBytes = 256 << 20
		sparse(t, f, f.Pod.Output().BatchOutput(), 256<<20, `{"id":"alpha","text":"A"}`+"\n")
		snap := TakeSnapshot(f.Config, f.Pod.Output(), f.Pod.SnapshotOutput())
		if snap.OutputErr != nil {
			t.Fatal(snap.OutputErr)
		}
		if used := diskUsed(t, f.Pod.SnapshotOutput().BatchOutput()); used > 1<<20 {
			t.Errorf("the snapshot of a 256 MiB sparse output takes %d bytes of disk", used)
		}
		p := newFixture(t)
		p.Config.Batching = "PerCase"
		for _, id := range p.Config.CaseIDs {
			sparse(t, p, p.Pod.Output().CaseOutput(id), maxCaseOutputBytes, "answer "+id)
		}
		snap = TakeSnapshot(p.Config, p.Pod.Output(), p.Pod.SnapshotOutput())
		if len(snap.CaseErrors) > 0 {
			t.Fatal(snap.CaseErrors)
		}
		for _, id := range p.Config.CaseIDs {
			if used := diskUsed(t, p.Pod.SnapshotOutput().CaseOutput(id)); used > 1<<20 {
				t.Errorf("the snapshot of case %s's 16 MiB sparse output takes %d bytes of disk", id, used)
			}
		}
	})
	t.Run("forged launcher report cannot hide failures or claim success", func(t *testing.T) {
		f := newFixture(t)
		f.write(t, f.Pod.Output().BatchOutput(), `{"id":"alpha","text":"no"}`+"\n")
		// The runner claims a clean exit; the report can only make things worse, so the missing cases stand.
		f.finishedRunner(t, 0)
		g := f.gather(t, true)
		if g.Outcome != evalsv1alpha1.OutcomeMissingResults {
			t.Errorf("outcome %s, want MissingResults whatever the report claims", g.Outcome)
		}
		// A launcher.json in the output directory (where the report once went) is the runner's file: ignored.
		f.report = nil
		f.write(t, filepath.Join(f.Pod.Out, "launcher.json"), `{"batching":"Batched","error":"forged"}`)
		g = f.gather(t, true)
		if g.Outcome != evalsv1alpha1.OutcomeMissingResults || strings.Contains(g.Message, "forged") {
			t.Errorf("outcome %s %q, want MissingResults without the runner's launcher.json", g.Outcome, g.Message)
		}
	})
	t.Run("forged verdicts in the output directory are ignored", func(t *testing.T) {
		f := newFixture(t)
		f.write(t, f.Pod.Output().BatchOutput(), `{"id":"alpha","text":"no"}`+"\n")
		// Files named like the trusted side's, written where the runner can write.
		f.write(t, filepath.Join(f.Pod.Out, "judges.jsonl"), `{"caseId":"alpha","key":"judge","result":{"name":"judge","type":"code_judge","score":1,"verdict":"Pass"}}`+"\n")
		f.write(t, filepath.Join(f.Pod.Out, "done"), `{}`)
		g := f.gather(t, true)
		if v := caseVerdicts(g.Output.Section.Cases)["alpha"]; v != evalsv1alpha1.VerdictError {
			t.Errorf("alpha's verdict %s, want Error (its code judge never ran); a forged verdict file was used", v)
		}
	})
}

// diskUsed is the disk a file takes (its blocks), not its apparent size.
func diskUsed(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Sys().(*syscall.Stat_t).Blocks * 512
}

func assertNoSecret(t *testing.T, g *Gathered, secret string) {
	t.Helper()
	for _, c := range g.Output.Section.Cases {
		if strings.Contains(c.Answer, secret) {
			t.Errorf("case %s's answer holds %q", c.ID, secret)
		}
	}
	for id, l := range decodeAll(t, g) {
		if strings.Contains(l, secret) {
			t.Errorf("stored result of %s holds %q", id, secret)
		}
	}
}

// The launcher's reports of how the runner ended, as classify reads them: only ever worse for the runner.
func TestClassifyLauncherReports(t *testing.T) {
	seven, zero := int32(7), int32(0)
	cfg := &podwire.RunConfig{Launch: podwire.Launch{Batching: "Batched"}}
	ended := GatherInput{Config: cfg, EndCause: outcome.EndEnded}
	tests := []struct {
		name     string
		rep      *podwire.LauncherReport
		noOutput bool
		want     evalsv1alpha1.CollectionOutcome
		wantMsg  string
	}{
		{"failed healthcheck", &podwire.LauncherReport{HealthcheckFailed: true,
			Healthcheck: &podwire.Outcome{ExitCode: &seven, StderrTail: "model endpoint unreachable\n"}}, false,
			evalsv1alpha1.OutcomeHealthcheckFailed, "exited with code 7: model endpoint unreachable"},
		{"no shell", &podwire.LauncherReport{Runner: &podwire.Outcome{StartError: "the runner image has no /bin/sh: command templates run with /bin/sh -c, so the image needs a POSIX shell"}}, true,
			evalsv1alpha1.OutcomeRunnerFailed, "needs a POSIX shell"},
		{"timeout", &podwire.LauncherReport{Runner: &podwire.Outcome{TimedOut: true, DurationMs: 1000}}, true,
			evalsv1alpha1.OutcomeRunnerTimedOut, "timed out after 1s"},
		{"a claimed success with no output is still missing results", &podwire.LauncherReport{Runner: &podwire.Outcome{ExitCode: &zero}}, true,
			evalsv1alpha1.OutcomeMissingResults, "no output file"},
		{"stopped by the cost budget", &podwire.LauncherReport{Runner: &podwire.Outcome{Terminated: true},
			CostBudget: &podwire.CostBudgetStop{CostNanoUSD: 1_200_000_000, MaxCostNanoUSD: 1_000_000_000, Cases: 3}}, false,
			evalsv1alpha1.OutcomeCostBudgetExceeded, "the cost its records reported (1.2 USD over 3 cases) passed the cost budget (1 USD"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			outcome, msg := classify(tc.rep, ended, results.Tail{}, tc.noOutput, 0)
			if outcome != tc.want || !strings.Contains(msg, tc.wantMsg) {
				t.Errorf("classified %s %q, want %s containing %q", outcome, msg, tc.want, tc.wantMsg)
			}
		})
	}
}

// The typed apply configuration carries every field of the collector's section: nothing the results builder
// produces is dropped on the way to the API server.
func TestStatusApplyCarriesTheWholeSection(t *testing.T) {
	f := newFixture(t)
	f.write(t, f.Pod.Output().BatchOutput(), `{"id":"beta","text":"B","token_usage":{"input":3,"output":4}}`+"\n"+`not json`+"\n"+`{"id":"zzz","text":"?"}`+"\n")
	f.finishedRunner(t, 3)
	f.recordJudge(t, "alpha", "judge", verdict.EvaluatorResult{Name: "judge", Type: "code_judge", Score: 1})
	g := f.gather(t, true)
	sec := g.Output.Section
	if sec.Summary == nil || len(sec.Cases) == 0 || len(sec.MissingIDs) == 0 || len(sec.ParseErrors) == 0 || len(sec.UnexpectedIDs) == 0 ||
		sec.Results == nil || sec.Collection == nil || sec.Collection.Launcher == nil || len(sec.Conditions) == 0 {
		t.Fatalf("the section does not exercise every field: %+v", sec)
	}
	ac := statusApply("ns", "run", "uid-1", &sec)
	want, err := json.Marshal(sec)
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(ac.Status)
	if err != nil {
		t.Fatal(err)
	}
	if !jsonEqual(t, want, got) {
		t.Errorf("apply configuration status differs from the section:\n got %s\nwant %s", got, want)
	}
	if ac.UID == nil || *ac.UID != "uid-1" || *ac.Name != "run" || *ac.Namespace != "ns" {
		t.Errorf("apply configuration metadata %+v", ac.ObjectMetaApplyConfiguration)
	}
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatal(err)
	}
	return cmp.Equal(x, y)
}

// How the wait for the runner ended, and whether the launcher's report arrived, are typed facts: the outcome is
// decided on them, never on message text, and a missing report or survivors only ever make it worse.
func TestClassifyEndCauses(t *testing.T) {
	zero := int32(0)
	cfg := &podwire.RunConfig{Launch: podwire.Launch{Batching: "Batched"}}
	clean := &podwire.LauncherReport{Runner: &podwire.Outcome{ExitCode: &zero}, Invocations: 1}
	tests := []struct {
		name    string
		in      GatherInput
		want    evalsv1alpha1.CollectionOutcome
		wantMsg string
	}{
		{"deadline, whatever the text says", GatherInput{EndCause: outcome.EndDeadline, EndReason: "anything"},
			evalsv1alpha1.OutcomeRunnerTimedOut, "anything"},
		{"a text that once meant a timeout is not one", GatherInput{EndCause: outcome.EndPodStopped, EndReason: "the runner container did not end within 9s"},
			evalsv1alpha1.OutcomeRunnerFailed, "did not finish"},
		{"survivors reported while the FIFO stays open", GatherInput{EndCause: outcome.EndNotStopped, Launcher: &podwire.LauncherReport{Survivors: 2}},
			evalsv1alpha1.OutcomeRunnerNotStopped, "2 processes of the runner that survived SIGKILL"},
		{"survivors in the final report", GatherInput{EndCause: outcome.EndEnded, Launcher: &podwire.LauncherReport{Runner: &podwire.Outcome{ExitCode: &zero}, Survivors: 1}},
			evalsv1alpha1.OutcomeRunnerNotStopped, "1 process of the runner"},
		{"the report did not arrive", GatherInput{EndCause: outcome.EndEnded, LauncherMissing: errors.New("the stream does not end with the launcher's report")},
			evalsv1alpha1.OutcomeRunnerFailed, "the launcher's report did not arrive"},
		{"leftovers killed are said", GatherInput{EndCause: outcome.EndEnded, Launcher: &podwire.LauncherReport{Runner: &podwire.Outcome{ExitCode: &zero}, Invocations: 1, Leftovers: 3}},
			evalsv1alpha1.OutcomeCompleted, "the launcher killed 3 processes the runner left behind"},
		{"a clean report", GatherInput{EndCause: outcome.EndEnded, Launcher: clean},
			evalsv1alpha1.OutcomeCompleted, "collected the results of all 0 cases"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.in.Config = cfg
			outcome, msg := classify(tc.in.Launcher, tc.in, results.Tail{}, false, 0)
			if outcome != tc.want || !strings.Contains(msg, tc.wantMsg) {
				t.Errorf("classified %s %q, want %s containing %q", outcome, msg, tc.want, tc.wantMsg)
			}
		})
	}
}

// The status records whether the report arrived, and the survivors.
func TestLauncherStatusDelivery(t *testing.T) {
	if got := launcherStatus(nil, nil); got != nil {
		t.Errorf("no report expected: %+v, want nil", got)
	}
	if got := launcherStatus(nil, errors.New("x")); got == nil || ptr.Deref(got.Delivery, "") != evalsv1alpha1.LauncherReportMissing {
		t.Errorf("missing report: %+v, want delivery Missing", got)
	}
	stop := launcherStatus(&podwire.LauncherReport{CostBudget: &podwire.CostBudgetStop{CostNanoUSD: 1_500_000_001, MaxCostNanoUSD: 1_000_000_000, Cases: 2}}, nil)
	if diff := cmp.Diff(&evalsv1alpha1.CostBudgetStop{CostUSD: "1.500000001", MaxCostUSD: "1", Cases: 2}, stop.CostBudget); diff != "" {
		t.Errorf("costBudget (-want +got):\n%s", diff)
	}
	got := launcherStatus(&podwire.LauncherReport{Leftovers: 2, Survivors: 1}, nil)
	if ptr.Deref(got.Delivery, "") != evalsv1alpha1.LauncherReportDelivered || got.Leftovers != 2 || ptr.Deref(got.Survivors, 0) != 1 {
		t.Errorf("report: %+v", got)
	}
}

// The report's payload is hostile data: bounded lists, no negative counts.
func TestDecodeLauncherReport(t *testing.T) {
	if _, err := decodeLauncherReport([]byte(`{"batching": [}`)); err == nil {
		t.Error("garbage decoded")
	}
	r, err := decodeLauncherReport([]byte(`{"leftovers":-5,"survivors":-1}`))
	if err != nil || r.Leftovers != 0 || r.Survivors != 0 {
		t.Errorf("%+v %v, want counts clamped at 0", r, err)
	}
}

// TestGatherTrial: in a run with trials, every stored result of a pod (missing ones too) carries the pod's trial,
// omitted for trial 1 (as before trials), whatever the runner's output says.
func TestGatherTrial(t *testing.T) {
	for _, tc := range []struct {
		trials, trial int32
		want          int
	}{{trials: 0, trial: 1, want: 0}, {trials: 3, trial: 1, want: 0}, {trials: 3, trial: 2, want: 2}, {trials: 3, trial: 3, want: 3}} {
		f := newFixture(t)
		f.Config.ResultConfigMaps = []string{"run-results-0"}
		f.Config.Trials, f.Config.Trial = tc.trials, tc.trial
		// A runner cannot choose its trial: a "trial" field of its record is not read.
		f.write(t, f.Pod.Output().BatchOutput(), `{"id":"alpha","text":"A","trial":7}`+"\n"+`{"id":"beta","text":"B"}`+"\n")
		f.finishedRunner(t, 0)
		g := f.gather(t, true)
		var trials []int
		for _, ch := range g.Output.Chunks {
			if err := results.EachLine(ch.Data, func(l *results.Line, raw []byte) error {
				trials = append(trials, l.Trial)
				if (l.Trial == 0) != !strings.Contains(string(raw), `"trial"`) {
					t.Errorf("trial %d stored as %s", l.Trial, raw)
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		}
		want := []int{tc.want, tc.want, tc.want, tc.want}
		if diff := cmp.Diff(want, trials); diff != "" {
			t.Errorf("trial %d of %d: the stored results' trials (-want +got):\n%s", tc.trial, tc.trials, diff)
		}
	}
}
