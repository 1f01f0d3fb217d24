//go:build e2e

package e2e

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
)

// The launcher's facts cannot be suppressed: its report reaches the collector through the runner-end FIFO, after
// every runner process is gone, not through a path the runner can take first; a runner that blocks that path,
// leaves daemons behind or plants special files where the launcher writes changes nothing the run reports.

// blockReportPaths takes, as a directory, every path where a launcher report was once written or could be.
const blockReportPaths = `mkdir -p /evalrun/out/launcher.json /evalrun/out/launcher.json.tmp /evalrun/out/report.json 2>/dev/null; `

// 17. Block the launcher's report and exit 7: RunnerFailed with exit code 7, and the launcher's report of it
// arrived anyway.
func TestHostileBlocksLauncherReportExits7(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "noreport", nil)
	cmd := `printf '{"id":"h1","text":"yes"}\n{"id":"h2","text":"yes"}\n' > {OUTPUT_FILE}; ` + blockReportPaths + `exit 7`
	run := sampleRun("noreport", ns).Inline(hostileEval(2, "")).Command(cmd).Obj()
	create(t, run)
	got := waitFinished(t, ns, run.Name, runTimeout)

	expectCondition(t, got, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionFalse, evalsv1alpha1.ReasonRunnerFailed})
	if r := got.Status.Runner; r == nil || r.ExitCode == nil || *r.ExitCode != 7 {
		t.Errorf("status.runner %+v, want the kubelet's exit code 7", got.Status.Runner)
	}
	l := launcherOf(got)
	if l == nil || ptr.Deref(l.Delivery, "") != evalsv1alpha1.LauncherReportDelivered || l.ExitCode == nil || *l.ExitCode != 7 {
		t.Errorf("status.collection.launcher %+v, want the launcher's report (delivered) of exit code 7", l)
	}
}

// 18. Block the launcher's report and run past timeoutSeconds: RunnerTimedOut (not RunnerFailed), the launcher's
// report of the timeout delivered.
func TestHostileBlocksLauncherReportTimesOut(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "noreport-timeout", nil)
	cmd := `printf '{"id":"h1","text":"yes"}\n{"id":"h2","text":"yes"}\n' > {OUTPUT_FILE}; ` + blockReportPaths + `sleep 300`
	run := sampleRun("noreport-timeout", ns).Inline(hostileEval(2, "")).Command(cmd).Obj()
	run.Spec.Target.TimeoutSeconds = ptr.To[int32](5)
	create(t, run)
	got := waitFinished(t, ns, run.Name, runTimeout)

	expectCondition(t, got, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionFalse, evalsv1alpha1.ReasonRunnerTimedOut})
	if l := launcherOf(got); l == nil || !l.TimedOut || ptr.Deref(l.Delivery, "") != evalsv1alpha1.LauncherReportDelivered {
		t.Errorf("status.collection.launcher %+v, want the delivered report of the timeout", l)
	}
	if r := got.Status.Runner; r == nil || r.ExitCode == nil || *r.ExitCode != 124 {
		t.Errorf("status.runner %+v, want the launcher's timeout exit code 124", got.Status.Runner)
	}
}

// 19. Answer, then leave a daemon that ignores SIGTERM (and HUP, INT), double-forks out of the runner's session
// and keeps blocking the report's old path: it is killed before anything is collected, the run completes, and
// the run says so (the launcher's leftover count and the condition message).
func TestHostileDaemonIgnoresSIGTERM(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "daemon", nil)
	daemon := `trap "" TERM HUP INT; ( trap "" TERM HUP INT; while :; do mkdir -p /evalrun/out/launcher.json; sleep 0.2; done ) & exit 0`
	cmd := `printf '{"id":"h1","text":"yes"}\n{"id":"h2","text":"yes"}\n' > {OUTPUT_FILE}; ` +
		`( setsid sh -c '` + daemon + `' </dev/null >/dev/null 2>&1 & ); sleep 1; exit 0`
	run := sampleRun("daemon", ns).Inline(hostileEval(2, "")).Command(cmd).Obj()
	create(t, run)
	got := waitFinished(t, ns, run.Name, runTimeout)

	expectCondition(t, got, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionTrue, evalsv1alpha1.ReasonCompleted})
	l := launcherOf(got)
	if l == nil || ptr.Deref(l.Delivery, "") != evalsv1alpha1.LauncherReportDelivered || l.Leftovers < 1 || ptr.Deref(l.Survivors, 0) != 0 {
		t.Errorf("status.collection.launcher %+v, want the daemon counted as a killed leftover, no survivors", l)
	}
	if c := succeeded(got); c == nil || !strings.Contains(c.Message, "the runner left behind") {
		t.Errorf("condition %+v does not say that the launcher killed what the runner left behind", c)
	}
}

// 20. A PerCase runner plants a FIFO where the next case's prompt file goes (an open for writing would block the
// launcher for ever, past every timeout): the launcher replaces it, every case runs, and the run ends within its
// timeouts.
func TestHostilePerCasePromptFIFO(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "promptfifo", nil)
	cmd := `[ {EVAL_ID} != h1 ] || { mkfifo "${PROMPT_FILE%/*}/h2.txt"; mkfifo "${PROMPT_FILE%/*}/h3.txt"; }; ` +
		`grep -q 'Is the sky blue' {PROMPT_FILE} && echo yes > {OUTPUT_FILE}`
	run := sampleRun("promptfifo", ns).Inline(hostileEval(3, "")).Command(cmd).PerCase(1).Obj()
	run.Spec.Target.TimeoutSeconds = ptr.To[int32](20)
	create(t, run)
	got := waitFinished(t, ns, run.Name, runTimeout)

	expectCondition(t, got, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionTrue, evalsv1alpha1.ReasonCompleted})
	expectDiff(t, "summary", counts{Total: 3, Skipped: 3}, summaryCounts(got))
	if l := launcherOf(got); l == nil || l.Invocations != 3 || l.FailedInvocations != 0 {
		t.Errorf("status.collection.launcher %+v, want 3 invocations, none failed", l)
	}
}

func launcherOf(run *evalsv1alpha1.EvalRun) *evalsv1alpha1.LauncherReport {
	if c := run.Status.Collection; c != nil {
		return c.Launcher
	}
	return nil
}
