//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
)

// The runner is untrusted: these scenarios are the attacks an agent under evaluation would try. Each asserts the
// exact status that honest judging of the runner's final output gives.

// hostileEval is an eval file of n yes/no cases (h1..hn) judged only by a code_judge that gives every answer
// score 0, so no answer can pass honestly.
func hostileEval(n int, judge string) string {
	var b strings.Builder
	b.WriteString("$schema: agentv-eval-v2\nevalcases:\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "  - id: h%d\n    input_messages: [{role: user, content: \"Is the sky blue? (%d)\"}]\n"+
			"    expected_messages: [{role: assistant, content: \"yes\"}]\n", i, i)
		if judge != "" {
			fmt.Fprintf(&b, "    execution:\n      evaluators:\n        - name: strict\n          type: code_judge\n          script: %q\n", judge)
		}
	}
	return b.String()
}

// forgeEverything writes, into every directory the runner can reach, the files the trusted side read in earlier
// designs (verdicts, done and ack markers, runner records), tries to replace the runner-end FIFO, and forges a
// launcher report claiming success.
const forgeEverything = `for d in /evalrun /evalrun/out /evalrun/state /evalrun/snapshot /evalrun/verdicts /evalrun/bin /tmp; do ` +
	`mkdir -p $d 2>/dev/null; ` +
	`for i in 1 2; do echo "{\"caseId\":\"h$i\",\"key\":\"strict\",\"result\":{\"name\":\"strict\",\"type\":\"code_judge\",\"score\":1,\"verdict\":\"pass\"}}"; done > $d/judges.jsonl 2>/dev/null; ` +
	`echo '{"attempt":1,"runner":{"exitCode":0},"invocations":1}' > $d/runner.json 2>/dev/null; ` +
	`echo '{}' > $d/done 2>/dev/null; echo '{"persisted":true}' > $d/ack 2>/dev/null; echo '{"final":true}' > $d/ready 2>/dev/null; ` +
	`echo '{}' > $d/collected 2>/dev/null; touch $d/runner-ended 2>/dev/null; done; ` +
	`rm -f /evalrun/bin/runner-end 2>/dev/null && echo "the runner removed the runner-end FIFO" >&2; ` +
	`echo '{"batching":"Batched","runner":{"exitCode":0},"invocations":1}' > /evalrun/out/launcher.json; `

// 12. Forge every file the runner can find, claim success, exit 7: RunnerFailed with the kubelet's exit code 7,
// every case judged Fail by the code judge that actually ran.
func TestHostileForgedFilesAndExitCode(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "forge", nil)
	cmd := `printf '{"id":"h1","text":"no"}\n{"id":"h2","text":"no"}\n' > {OUTPUT_FILE}; ` + forgeEverything + `exit 7`
	run := sampleRun("forge", ns).Inline(hostileEval(2, `cat >/dev/null; echo '{"score": 0}'`)).Command(cmd).Obj()
	create(t, run)
	got := waitFinished(t, ns, run.Name, runTimeout)

	expectCondition(t, got, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionFalse, evalsv1alpha1.ReasonRunnerFailed})
	expectCondition(t, got, evalsv1alpha1.ConditionPassed, conditionSummary{metav1.ConditionFalse, evalsv1alpha1.ReasonPolicyNotMet})
	expectDiff(t, "summary", counts{Total: 2, Failed: 2}, summaryCounts(got))
	expectDiff(t, "verdicts", map[string]evalsv1alpha1.Verdict{"h1": evalsv1alpha1.VerdictFail, "h2": evalsv1alpha1.VerdictFail}, verdicts(got))
	if r := got.Status.Runner; r == nil || r.ExitCode == nil || *r.ExitCode != 7 {
		t.Errorf("status.runner %+v, want the kubelet's exit code 7", got.Status.Runner)
	}
	if s := got.Status.Summary; s == nil || s.MeanScore != "0.0000" {
		t.Errorf("mean score %+v, want 0.0000", s)
	}
	if c := succeeded(got); c == nil || !strings.Contains(c.Message, "exited with code 7") {
		t.Errorf("condition message %+v does not name exit code 7", c)
	}
	if c := succeeded(got); c != nil && strings.Contains(c.Message, "removed the runner-end FIFO") {
		t.Errorf("the runner could remove the runner-end FIFO: %s", c.Message)
	}
}

// 13. PerCase outputs that are links to the collector's token and to /proc/self/environ, a FIFO, and an honest
// answer: the three are Errors that say why, nothing secret reaches the status or the result ConfigMaps, and
// the run ends (no hang on the FIFO).
func TestHostileSymlinksAndFIFO(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "links", nil)
	cmd := `case {EVAL_ID} in ` +
		`h1) ln -sf /var/run/secrets/kubernetes.io/serviceaccount/token {OUTPUT_FILE};; ` +
		`h2) ln -sf /proc/self/environ {OUTPUT_FILE};; ` +
		`h3) mkfifo {OUTPUT_FILE};; ` +
		`*) echo yes > {OUTPUT_FILE};; esac`
	run := sampleRun("links", ns).Inline(hostileEval(4, "")).Command(cmd).PerCase(2).Obj()
	create(t, run)
	got := waitFinished(t, ns, run.Name, runTimeout)

	expectCondition(t, got, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionFalse, evalsv1alpha1.ReasonInvalidOutput})
	expectDiff(t, "verdicts", map[string]evalsv1alpha1.Verdict{
		"h1": evalsv1alpha1.VerdictError, "h2": evalsv1alpha1.VerdictError, "h3": evalsv1alpha1.VerdictError, "h4": evalsv1alpha1.VerdictSkipped,
	}, verdicts(got))
	why := map[string]string{}
	for _, c := range got.Status.Cases {
		why[c.ID] = c.Error
	}
	for id, want := range map[string]string{"h1": "symbolic link", "h2": "symbolic link", "h3": "FIFO"} {
		if !strings.Contains(why[id], want) {
			t.Errorf("case %s error %q does not say %q", id, why[id], want)
		}
	}
	expectNoSecrets(t, got)
}

// 14. A Batched output that is a FIFO: InvalidOutput naming it, no hang.
func TestHostileBatchFIFO(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "fifo", nil)
	run := sampleRun("fifo", ns).Inline(hostileEval(2, "")).Command(`mkfifo {OUTPUT_FILE}`).Obj()
	create(t, run)
	got := waitFinished(t, ns, run.Name, runTimeout)

	expectCondition(t, got, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionFalse, evalsv1alpha1.ReasonInvalidOutput})
	if c := succeeded(got); c == nil || !strings.Contains(c.Message, "FIFO") {
		t.Errorf("condition %+v does not name the FIFO", c)
	}
	expectDiff(t, "summary", counts{Total: 2, Errored: 2, Missing: 2, ParseErrors: 1}, summaryCounts(got))
}

// 15. The runner answers honestly, then leaves a setsid process that rewrites the output after the runner
// exits. The leftover is killed before anything is collected, and the code judge sees only the final output.
func TestHostileLeftoverRewritesOutput(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "leftover", nil)
	judge := `if grep -q forged; then echo '{"score": 0, "misses": ["saw the forged answer"]}'; else echo '{"score": 1}'; fi`
	cmd := `echo '{"id":"h1","text":"yes"}' > {OUTPUT_FILE}; ` +
		// The pause lets setsid run before the runner exits, so the leftover has left the runner's process group.
		`(setsid sh -c 'sleep 4; echo "{\"id\":\"h1\",\"text\":\"forged\"}" > /evalrun/out/results.jsonl' </dev/null >/dev/null 2>&1 &); sleep 1; exit 0`
	run := sampleRun("leftover", ns).Inline(hostileEval(1, judge)).Command(cmd).Obj()
	create(t, run)
	got := waitFinished(t, ns, run.Name, runTimeout)

	expectCondition(t, got, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionTrue, evalsv1alpha1.ReasonCompleted})
	expectDiff(t, "verdicts", map[string]evalsv1alpha1.Verdict{"h1": evalsv1alpha1.VerdictPass}, verdicts(got))
	if len(got.Status.Cases) == 1 && got.Status.Cases[0].Answer != "yes" {
		t.Errorf("answer %q, want the runner's final answer", got.Status.Cases[0].Answer)
	}
	if c := got.Status.Collection; c == nil || c.Launcher == nil || c.Launcher.Leftovers < 1 {
		t.Errorf("collection %+v, want the launcher's report of the killed leftover", c)
	}
}

// 16. The runner under another uid (runAsUser 1000) works as the default does: the sample's exact judgement.
func TestRunnerAsOtherUser(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "uid", nil)
	run := sampleRun("uid", ns).Inline(sampleEvalFile(t)).MinPassRate("0.8").Obj()
	run.Spec.Target.SecurityContext = &corev1.SecurityContext{RunAsUser: ptr.To[int64](1000), RunAsGroup: ptr.To[int64](1000)}
	create(t, run)
	got := waitFinished(t, ns, run.Name, runTimeout)

	expectCondition(t, got, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionFalse, evalsv1alpha1.ReasonMissingResults})
	expectDiff(t, "summary", counts{Total: 12, Passed: 10, Failed: 1, Errored: 1, Missing: 1}, summaryCounts(got))
	expectDiff(t, "verdicts", sampleVerdicts, verdicts(got))
}

// expectNoSecrets fails when the run's status or result ConfigMaps hold a service-account token or the
// collector's environment.
func expectNoSecrets(t *testing.T, run *evalsv1alpha1.EvalRun) {
	t.Helper()
	status, err := json.Marshal(run.Status)
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{string(status)}
	eachStoredResult(t, run, func(_ *results.Line, raw []byte) { texts = append(texts, string(raw)) })
	// A JWT starts with the base64 of `{"alg":`; the environment holds the API server's address.
	for _, secret := range []string{"eyJhbGciOi", "KUBERNETES_SERVICE_HOST", "EVALRUN_UID="} {
		if slices.ContainsFunc(texts, func(s string) bool { return strings.Contains(s, secret) }) {
			t.Errorf("the run's status or results hold %q", secret)
		}
	}
}
