//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
)

// Scenarios that only touch their own namespace run in parallel (after the sequential ones: the happy path, whose
// timings should not be skewed, and the manager restart, which disturbs every run in flight).

// The sample's expected judgement: case-011 fails (the runner misses structuring), case-012 is missing (the
// runner cannot screen a row without an amount), the other ten pass.
var sampleVerdicts = map[string]evalsv1alpha1.Verdict{
	"case-001": evalsv1alpha1.VerdictPass, "case-002": evalsv1alpha1.VerdictPass, "case-003": evalsv1alpha1.VerdictPass,
	"case-004": evalsv1alpha1.VerdictPass, "case-005": evalsv1alpha1.VerdictPass, "case-006": evalsv1alpha1.VerdictPass,
	"case-007": evalsv1alpha1.VerdictPass, "case-008": evalsv1alpha1.VerdictPass, "case-009": evalsv1alpha1.VerdictPass,
	"case-010": evalsv1alpha1.VerdictPass, "case-011": evalsv1alpha1.VerdictFail,
}

// counts is the part of the summary the tests compare exactly.
type counts struct {
	Total, Passed, Failed, Errored, Skipped, Missing, ParseErrors, Unexpected int32
}

func summaryCounts(run *evalsv1alpha1.EvalRun) counts {
	s := run.Status.Summary
	if s == nil {
		return counts{}
	}
	return counts{s.Total, s.Passed, s.Failed, s.Errored, s.Skipped, s.Missing, s.ParseErrors, s.Unexpected}
}

func verdicts(run *evalsv1alpha1.EvalRun) map[string]evalsv1alpha1.Verdict {
	m := map[string]evalsv1alpha1.Verdict{}
	for _, c := range run.Status.Cases {
		m[c.ID] = c.Verdict
	}
	return m
}

// firstN returns the verdicts of the sample's first n cases (all pass).
func firstN(n int) map[string]evalsv1alpha1.Verdict {
	m := map[string]evalsv1alpha1.Verdict{}
	for i := 1; i <= n; i++ {
		m[fmt.Sprintf("case-%03d", i)] = evalsv1alpha1.VerdictPass
	}
	return m
}

// sampleIDsAfter lists the sample's case ids after the first n.
func sampleIDsAfter(n int) []string {
	var ids []string
	for i := n + 1; i <= 12; i++ {
		ids = append(ids, fmt.Sprintf("case-%03d", i))
	}
	return ids
}

type conditionSummary struct {
	Status metav1.ConditionStatus
	Reason string
}

func condition(run *evalsv1alpha1.EvalRun, typ string) conditionSummary {
	for _, c := range run.Status.Conditions {
		if c.Type == typ {
			return conditionSummary{c.Status, c.Reason}
		}
	}
	return conditionSummary{}
}

func expectCondition(t *testing.T, run *evalsv1alpha1.EvalRun, typ string, want conditionSummary) {
	t.Helper()
	if diff := cmp.Diff(want, condition(run, typ)); diff != "" {
		t.Errorf("condition %s mismatch (-want +got):\n%s\nall conditions:%s", typ, diff, describeConditions(run.Status.Conditions))
	}
}

func expectDiff(t *testing.T, what string, want, got any) {
	t.Helper()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", what, diff)
	}
}

// 1. Happy path: the sample run.
func TestHappyPath(t *testing.T) {
	ns := newNamespace(t, "happy", nil)
	run := sampleRun("screening", ns).Inline(sampleEvalFile(t)).MinPassRate("0.8").
		Healthcheck("/app/screening-runner --healthcheck").HealthcheckTimeout(30).Obj()
	created := time.Now()
	create(t, run)
	got := waitFinished(t, ns, run.Name, runTimeout)
	observed := time.Now()

	// One id is missing from the output, so the run reports MissingResults; the 10 passing cases of 12 meet the
	// 0.8 pass rate.
	expectCondition(t, got, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionFalse, evalsv1alpha1.ReasonMissingResults})
	expectCondition(t, got, evalsv1alpha1.ConditionPassed, conditionSummary{metav1.ConditionTrue, evalsv1alpha1.ReasonPolicyMet})
	expectDiff(t, "summary", counts{Total: 12, Passed: 10, Failed: 1, Errored: 1, Missing: 1}, summaryCounts(got))
	expectDiff(t, "verdicts", sampleVerdicts, verdicts(got))
	expectDiff(t, "missing ids", []string{"case-012"}, got.Status.MissingIDs)
	expectDiff(t, "parse errors", []evalsv1alpha1.ParseError(nil), got.Status.ParseErrors)
	for _, c := range got.Status.Cases {
		if c.ID == "case-011" {
			var names []string
			for _, e := range c.Evaluators {
				names = append(names, e.Name+"="+string(e.Verdict))
			}
			expectDiff(t, "case-011 evaluators", []string{"decision=Fail", "trajectory=Fail", "decision-check=Fail"}, names)
		}
	}
	if got.Status.EvalFileSHA256 == "" || got.Status.JobName == "" {
		t.Errorf("status lacks evalFileSHA256 (%q) or jobName (%q)", got.Status.EvalFileSHA256, got.Status.JobName)
	}
	expectPrinterColumns(t, ns, run.Name, map[string]string{
		"Succeeded": "False", "Reason": "MissingResults", "Passed": "True", "Total": "12", "Failed": "1", "Missing": "1",
	})
	reportTimings(t, ns, got, created, observed)
}

// expectPrinterColumns reads the run through the Table API, as `kubectl get` does.
func expectPrinterColumns(t *testing.T, ns, name string, want map[string]string) {
	t.Helper()
	ctx := ctxFor(t, 30*time.Second)
	var table metav1.Table
	err := clientset.RESTClient().Get().AbsPath("/apis", evalsv1alpha1.GroupVersion.Group, evalsv1alpha1.GroupVersion.Version, "namespaces", ns, "evalruns", name).
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").Do(ctx).Into(&table)
	if err != nil {
		t.Fatalf("reading the run as a Table: %v", err)
	}
	var names []string
	for _, c := range table.ColumnDefinitions {
		names = append(names, c.Name)
	}
	expectDiff(t, "printer columns", []string{"Name", "Succeeded", "Reason", "Passed", "Total", "Failed", "Missing", "Score", "Regressed", "Queue", "Admission", "Position", "ClusterQueue", "Age"}, names)
	if len(table.Rows) != 1 {
		t.Fatalf("Table has %d rows, want 1", len(table.Rows))
	}
	got := map[string]string{}
	for i, c := range table.ColumnDefinitions {
		if _, ok := want[c.Name]; ok && i < len(table.Rows[0].Cells) {
			got[c.Name] = fmt.Sprint(table.Rows[0].Cells[i])
		}
	}
	expectDiff(t, "printer column values", want, got)
}

// reportTimings logs where the time of a run went: scheduling, runner, and from the runner's exit to the
// terminal status (the pod overhead of collection and reporting).
func reportTimings(t *testing.T, ns string, run *evalsv1alpha1.EvalRun, created, observed time.Time) {
	t.Helper()
	pods := runPods(t, ns, run.Name)
	if len(pods) == 0 {
		t.Logf("timings: no pod left to read (ttlSecondsAfterFinished?)")
		return
	}
	pod := pods[0]
	runner := containerStatus(&pod, podwire.ContainerRunner)
	cond := succeeded(run)
	if runner == nil || runner.State.Terminated == nil || cond == nil {
		t.Logf("timings: runner not terminated or no Succeeded condition")
		return
	}
	term := runner.State.Terminated
	t.Logf("timings: create->runner start %s, runner ran %s, runner exit->Succeeded condition %s, create->observed terminal %s",
		term.StartedAt.Sub(created).Round(time.Second), term.FinishedAt.Sub(term.StartedAt.Time),
		cond.LastTransitionTime.Sub(term.FinishedAt.Time), observed.Sub(created).Round(10*time.Millisecond))
	if c := run.Status.Collection; c != nil && c.CollectedAt != nil {
		t.Logf("timings: runner exit->collector status write %s (second resolution)", c.CollectedAt.Sub(term.FinishedAt.Time))
	}
}

// 2. An invalid JSONL line and a duplicate id: InvalidOutput with line numbers; valid cases still recorded.
func TestInvalidOutput(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "invalid", nil)
	run := sampleRun("invalid", ns).Inline(sampleEvalFile(t)).Command(sampleCommand + " --invalid-line").Obj()
	create(t, run)
	got := waitFinished(t, ns, run.Name, runTimeout)

	expectCondition(t, got, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionFalse, evalsv1alpha1.ReasonInvalidOutput})
	var lines []int64
	for _, e := range got.Status.ParseErrors {
		lines = append(lines, e.Line)
	}
	// Line 1 is case-001, line 2 is not JSON, line 3 repeats case-001 (the first record wins).
	expectDiff(t, "parse error lines", []int64{2, 3}, lines)
	if len(got.Status.ParseErrors) == 2 && !strings.Contains(got.Status.ParseErrors[1].Message, "case-001") {
		t.Errorf("the duplicate's message %q does not name case-001", got.Status.ParseErrors[1].Message)
	}
	expectDiff(t, "summary", counts{Total: 12, Passed: 10, Failed: 1, Errored: 1, Missing: 1, ParseErrors: 2}, summaryCounts(got))
	expectDiff(t, "verdicts", sampleVerdicts, verdicts(got))
}

// 3. The runner exits 1 after three records: RunnerFailed with the stderr excerpt, partial results kept.
func TestRunnerFailed(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "failed", nil)
	run := sampleRun("failed", ns).Inline(sampleEvalFile(t)).Command(sampleCommand + " --fail-after 3").Obj()
	create(t, run)
	got := waitFinished(t, ns, run.Name, runTimeout)

	expectCondition(t, got, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionFalse, evalsv1alpha1.ReasonRunnerFailed})
	c := succeeded(got)
	stderr := ""
	if col := got.Status.Collection; col != nil && col.Launcher != nil {
		stderr = col.Launcher.StderrTail
	}
	if !strings.Contains(c.Message+stderr, "simulated failure after 3 records") {
		t.Errorf("neither the condition message %q nor the launcher's stderr tail %q carries the runner's stderr", c.Message, stderr)
	}
	if r := got.Status.Runner; r == nil || r.ExitCode == nil || *r.ExitCode != 1 {
		t.Errorf("runner = %+v, want the kubelet's exit code 1", got.Status.Runner)
	}
	expectDiff(t, "summary", counts{Total: 12, Passed: 3, Errored: 9, Missing: 9}, summaryCounts(got))
	expectDiff(t, "verdicts", firstN(3), verdicts(got))
	expectDiff(t, "missing ids", sampleIDsAfter(3), got.Status.MissingIDs)
}

// 4. The runner exceeds its memory limit: RunnerOOMKilled, partial results kept.
func TestRunnerOOMKilled(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "oom", nil)
	run := sampleRun("oom", ns).Inline(sampleEvalFile(t)).Command(sampleCommand + " --oom-after 2").MemoryLimit("48Mi").Obj()
	create(t, run)
	got := waitFinished(t, ns, run.Name, runTimeout)

	expectCondition(t, got, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionFalse, evalsv1alpha1.ReasonRunnerOOMKilled})
	expectDiff(t, "verdicts", firstN(2), verdicts(got))
	expectDiff(t, "summary", counts{Total: 12, Passed: 2, Errored: 10, Missing: 10}, summaryCounts(got))
}

// 5. activeDeadlineSeconds exceeded while the runner hangs: DeadlineExceeded.
func TestDeadlineExceeded(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "deadline", nil)
	run := sampleRun("deadline", ns).Inline(sampleEvalFile(t)).Command(sampleCommand + " --hang-after 2").ActiveDeadline(15).Obj()
	create(t, run)
	got := waitFinished(t, ns, run.Name, runTimeout)

	expectCondition(t, got, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionFalse, evalsv1alpha1.ReasonDeadlineExceeded})
}

// 6. An image that does not exist: ImagePullFailed within a bounded time. The name is on localhost, so the pull
// attempt never leaves the machine.
func TestImagePullFailed(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "pull", nil)
	run := sampleRun("pull", ns).Inline(sampleEvalFile(t)).Image("localhost/evalrun/does-not-exist:dev").Obj()
	create(t, run)
	got := waitFinished(t, ns, run.Name, 3*time.Minute)

	expectCondition(t, got, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionFalse, evalsv1alpha1.ReasonImagePullFailed})
}

// 7. The collector is SIGKILLed while it collects: the kubelet restarts it and the run completes with every result.
func TestCollectorKilledDuringCollection(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "collector", nil)
	evalText := generatedEvalFile(3000)
	createEvalConfigMap(t, ns, "eval", evalText)
	run := sampleRun("collector", ns).FromConfigMap("eval", "eval.yaml").Obj()
	create(t, run)

	// The collector notes the runner's end in its snapshot volume (an emptyDir on this host) before it copies and
	// judges the output: it is collecting from then on.
	pod := waitPod(t, ns, run.Name)
	doneMarker := filepath.Join(kubeletRoot, "pods", string(pod.UID), "volumes", "kubernetes.io~empty-dir",
		podwire.PodIn("").RunnerEnded())
	ctx := ctxFor(t, runTimeout)
	if err := wait.PollUntilContextCancel(ctx, 20*time.Millisecond, true, func(context.Context) (bool, error) {
		_, err := os.Stat(doneMarker)
		return err == nil, nil
	}); err != nil {
		t.Fatalf("done marker %s did not appear: %v", doneMarker, err)
	}
	pid, err := collectorPID(string(pod.UID))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("killing the collector (pid %d): %v", pid, err)
	}
	t.Logf("killed the collector (pid %d) after the done marker appeared", pid)

	got := waitFinished(t, ns, run.Name, runTimeout)
	expectCondition(t, got, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionTrue, evalsv1alpha1.ReasonCompleted})
	expectDiff(t, "summary", counts{Total: 3000, Passed: 3000}, summaryCounts(got))
	var fresh corev1.Pod
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(&pod), &fresh); err == nil {
		if st := containerStatus(&fresh, podwire.ContainerCollector); st == nil || st.RestartCount < 1 {
			t.Errorf("collector restart count = %+v, want at least 1", st)
		}
	}
	expectAllResultsInConfigMaps(t, got, 3000)
}

// waitPod waits until the run's pod exists and returns it.
func waitPod(t *testing.T, ns, run string) corev1.Pod {
	t.Helper()
	var pod corev1.Pod
	ctx := ctxFor(t, runTimeout)
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(context.Context) (bool, error) {
		pods := runPods(t, ns, run)
		if len(pods) == 0 || pods[0].UID == "" {
			return false, nil
		}
		pod = pods[0]
		return true, nil
	})
	if err != nil {
		t.Fatalf("no pod for run %s: %v", run, err)
	}
	return pod
}

// collectorPID finds the `collector collect` process of the pod with the given UID on this host: a process whose
// command line is the collector's collect mode and whose cgroup path names the pod.
func collectorPID(podUID string) (int, error) {
	procs, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		return 0, err
	}
	podCgroup := "pod" + podUID
	for _, p := range procs {
		cmd, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		args := strings.Split(strings.TrimRight(string(cmd), "\x00"), "\x00")
		if len(args) < 2 || filepath.Base(args[0]) != "collector" || args[1] != "collect" {
			continue
		}
		cg, err := os.ReadFile(filepath.Join(filepath.Dir(p), "cgroup"))
		if err != nil || !strings.Contains(string(cg), podCgroup) {
			continue
		}
		var pid int
		if _, err := fmt.Sscanf(filepath.Base(filepath.Dir(p)), "%d", &pid); err == nil {
			return pid, nil
		}
	}
	return 0, fmt.Errorf("no `collector collect` process in a cgroup of pod %s", podUID)
}

// 8. The manager restarts mid-run: no duplicate Job, the run completes.
func TestManagerRestartMidRun(t *testing.T) {
	ns := newNamespace(t, "restart", nil)
	run := sampleRun("restart", ns).Inline(sampleEvalFile(t)).Command(sampleCommand + " --delay-ms 700").MinPassRate("0.8").Obj()
	create(t, run)
	waitPod(t, ns, run.Name)

	ctx := ctxFor(t, 3*time.Minute)
	var pods corev1.PodList
	if err := k8s.List(ctx, &pods, client.InNamespace(managerNamespace)); err != nil || len(pods.Items) == 0 {
		t.Fatalf("listing manager pods: %v (%d)", err, len(pods.Items))
	}
	old := map[types.UID]bool{}
	for i := range pods.Items {
		old[pods.Items[i].UID] = true
		if err := k8s.Delete(ctx, &pods.Items[i], client.GracePeriodSeconds(0)); err != nil {
			t.Fatalf("deleting manager pod %s: %v", pods.Items[i].Name, err)
		}
	}
	// A new manager pod becomes Ready.
	if err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		if err := k8s.List(ctx, &pods, client.InNamespace(managerNamespace)); err != nil {
			return false, nil
		}
		for _, p := range pods.Items {
			if old[p.UID] || p.DeletionTimestamp != nil {
				continue
			}
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
					return true, nil
				}
			}
		}
		return false, nil
	}); err != nil {
		t.Fatalf("no new manager pod became Ready: %v", err)
	}

	got := waitFinished(t, ns, run.Name, runTimeout)
	expectCondition(t, got, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionFalse, evalsv1alpha1.ReasonMissingResults})
	expectDiff(t, "summary", counts{Total: 12, Passed: 10, Failed: 1, Errored: 1, Missing: 1}, summaryCounts(got))
	var jobs batchv1.JobList
	if err := k8s.List(ctx, &jobs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(jobs.Items) != 1 {
		t.Errorf("%d Jobs in the namespace, want exactly 1", len(jobs.Items))
	}
}

// 9. A namespace enforcing the restricted Pod Security profile admits the run's pod and the run passes.
func TestRestrictedNamespace(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "restricted", map[string]string{
		"pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/enforce-version": "latest",
	})
	run := sampleRun("restricted", ns).Inline(sampleEvalFile(t)).MinPassRate("0.8").Obj()
	create(t, run)
	got := waitFinished(t, ns, run.Name, runTimeout)

	expectCondition(t, got, evalsv1alpha1.ConditionPassed, conditionSummary{metav1.ConditionTrue, evalsv1alpha1.ReasonPolicyMet})
	expectDiff(t, "summary", counts{Total: 12, Passed: 10, Failed: 1, Errored: 1, Missing: 1}, summaryCounts(got))
	if len(runPods(t, ns, run.Name)) != 1 {
		t.Errorf("want exactly one pod admitted in the restricted namespace")
	}
}

// 10. The runner container has no API token, and the collector's token cannot patch another EvalRun.
func TestTokenIsolation(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "token", nil)
	// The runner refuses to run when a service-account mount is visible, so a leaked token fails the run.
	check := `if [ -e /var/run/secrets/kubernetes.io/serviceaccount ]; then echo "service account mount visible to the runner" >&2; exit 3; fi; `
	run := sampleRun("token", ns).Inline(sampleEvalFile(t)).Command(check + sampleCommand).MinPassRate("0.8").Obj()
	other := sampleRun("other", ns).Inline(sampleEvalFile(t)).MinPassRate("0.8").Obj()
	create(t, run)
	create(t, other)
	got := waitFinished(t, ns, run.Name, runTimeout)
	expectDiff(t, "summary", counts{Total: 12, Passed: 10, Failed: 1, Errored: 1, Missing: 1}, summaryCounts(got))

	pods := runPods(t, ns, run.Name)
	if len(pods) == 0 {
		t.Fatal("the run's pod is gone")
	}
	pod := pods[0]
	if pod.Spec.AutomountServiceAccountToken == nil || *pod.Spec.AutomountServiceAccountToken {
		t.Errorf("pod automountServiceAccountToken = %v, want false", pod.Spec.AutomountServiceAccountToken)
	}
	for _, c := range pod.Spec.Containers {
		if c.Name != podwire.ContainerRunner {
			continue
		}
		for _, m := range c.VolumeMounts {
			if strings.HasPrefix(m.MountPath, "/var/run/secrets") {
				t.Errorf("runner mounts %s at %s", m.Name, m.MountPath)
			}
		}
	}

	// A token for the collector's ServiceAccount, as the pod gets it.
	ctx := ctxFor(t, time.Minute)
	sa := pod.Spec.ServiceAccountName
	tr, err := clientset.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptrInt64(600)},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("requesting a token for %s: %v", sa, err)
	}
	cfg := rest.AnonymousClientConfig(restConfig)
	cfg.BearerToken = tr.Status.Token
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	patch := []byte(`{"status":{"summary":{"total":1,"passed":1,"failed":0,"errored":0,"skipped":0,"missing":0,"parseErrors":0,"unexpected":0}}}`)
	_, err = dyn.Resource(evalRunResource).Namespace(ns).Patch(ctx, other.Name, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
	if !isForbidden(err) {
		t.Errorf("patching another EvalRun's status with the collector's token: err = %v, want Forbidden", err)
	}
	_, err = dyn.Resource(evalRunResource).Namespace(ns).Patch(ctx, other.Name, types.MergePatchType, []byte(`{"metadata":{"labels":{"x":"y"}}}`), metav1.PatchOptions{})
	if !isForbidden(err) {
		t.Errorf("patching another EvalRun with the collector's token: err = %v, want Forbidden", err)
	}
	// The same token may read its own run: the Forbidden above is about the object, not a broken token.
	if _, err := dyn.Resource(evalRunResource).Namespace(ns).Get(ctx, run.Name, metav1.GetOptions{}); err != nil {
		t.Errorf("the collector's token cannot read its own EvalRun: %v", err)
	}
	waitFinished(t, ns, other.Name, runTimeout)
}

func ptrInt64(v int64) *int64 { return &v }

// 11. 5,000 cases: the status stays within its budget with ResultsTruncated, every result is in the ConfigMaps.
func TestLargeRunTruncated(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "large", nil)
	const n = 5000
	createEvalConfigMap(t, ns, "eval", generatedEvalFile(n))
	run := sampleRun("large", ns).FromConfigMap("eval", "eval.yaml").Obj()
	create(t, run)
	got := waitFinished(t, ns, run.Name, 6*time.Minute)

	expectCondition(t, got, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionTrue, evalsv1alpha1.ReasonCompleted})
	expectCondition(t, got, evalsv1alpha1.ConditionResultsTruncated, conditionSummary{metav1.ConditionTrue, evalsv1alpha1.ReasonStatusBudgetExceeded})
	expectDiff(t, "summary", counts{Total: n, Passed: n}, summaryCounts(got))
	status, err := json.Marshal(got.Status)
	if err != nil {
		t.Fatal(err)
	}
	const budget = evalsv1alpha1.DefaultStatusBudgetBytes
	if len(status) > budget+16*1024 {
		t.Errorf("status is %d bytes, over the %d-byte budget (plus the manager's fields)", len(status), budget)
	}
	if ref := got.Status.Results; ref == nil || int(ref.OmittedCases)+len(got.Status.Cases) != n {
		t.Errorf("status.results = %+v with %d cases in status; want omitted + listed = %d", got.Status.Results, len(got.Status.Cases), n)
	}
	expectAllResultsInConfigMaps(t, got, n)
}

// expectAllResultsInConfigMaps reads every result ConfigMap named in status and checks it holds each requested id
// exactly once.
func expectAllResultsInConfigMaps(t *testing.T, run *evalsv1alpha1.EvalRun, n int) {
	t.Helper()
	ref := run.Status.Results
	if ref == nil || len(ref.ConfigMaps) == 0 {
		t.Fatalf("status.results names no ConfigMaps: %+v", ref)
	}
	seen := map[string]int{}
	eachStoredResult(t, run, func(l *results.Line, _ []byte) { seen[l.ID]++ })
	if len(seen) != n {
		t.Errorf("the result ConfigMaps hold %d distinct ids, want %d", len(seen), n)
	}
	var dups []string
	for id, c := range seen {
		if c != 1 {
			dups = append(dups, id)
		}
	}
	sort.Strings(dups)
	if len(dups) > 0 {
		t.Errorf("ids stored more than once: %v", dups[:min(len(dups), 10)])
	}
	if int(ref.TotalCases) != n {
		t.Errorf("status.results.totalCases = %d, want %d", ref.TotalCases, n)
	}
}

// generatedEvalFile is an eval file of n CLEAR cases judged by field_accuracy on the decision (file-level
// evaluators), compact enough for a ConfigMap.
func generatedEvalFile(n int) string {
	var b strings.Builder
	b.WriteString("$schema: agentv-eval-v2\ndescription: generated screening cases\nexecution:\n  evaluators:\n")
	b.WriteString("    - {name: decision, type: field_accuracy, fields: [{path: decision, match: exact, required: true}]}\n")
	b.WriteString("evalcases:\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "  - {id: g%05d, input_messages: [{role: user, content: {row: {amount: %d}}}], expected_messages: [{role: assistant, content: {decision: CLEAR}}]}\n", i, 100+i%5000)
	}
	return b.String()
}

func createEvalConfigMap(t *testing.T, ns, name, text string) {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Data: map[string]string{"eval.yaml": text}}
	if err := k8s.Create(ctxFor(t, 30*time.Second), cm); err != nil {
		t.Fatalf("creating ConfigMap %s (%d bytes): %v", name, len(text), err)
	}
}

// 12. PerCase mode with 3 workers and a healthcheck.
func TestPerCaseWorkers(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "percase", nil)
	run := sampleRun("percase", ns).Inline(sampleEvalFile(t)).
		Command("/app/screening-runner --eval {EVAL_FILE} --case {EVAL_ID} --output {OUTPUT_FILE}").
		PerCase(3).Healthcheck("/app/screening-runner --healthcheck").HealthcheckTimeout(30).MinPassRate("0.8").Obj()
	create(t, run)
	got := waitFinished(t, ns, run.Name, runTimeout)

	// case-012's invocation exits 3 (its row cannot be screened) and writes nothing: the case is missing and the
	// run reports the failed invocation; the other cases are judged as in Batched mode.
	expectCondition(t, got, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionFalse, evalsv1alpha1.ReasonRunnerFailed})
	if c := succeeded(got); !strings.Contains(c.Message, "cannot screen case-012") {
		t.Errorf("Succeeded message %q does not carry case-012's stderr", c.Message)
	}
	expectDiff(t, "verdicts", sampleVerdicts, verdicts(got))
	expectDiff(t, "missing ids", []string{"case-012"}, got.Status.MissingIDs)
	expectDiff(t, "summary", counts{Total: 12, Passed: 10, Failed: 1, Errored: 1, Missing: 1}, summaryCounts(got))
	expectCondition(t, got, evalsv1alpha1.ConditionPassed, conditionSummary{metav1.ConditionTrue, evalsv1alpha1.ReasonPolicyMet})
}
