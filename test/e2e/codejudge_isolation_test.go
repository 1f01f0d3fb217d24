//go:build e2e

package e2e

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
)

// Code judges of coding evals run the answer. These scenarios give the judge answers that attack the judging
// itself, each as a hostile runner would: the honest judge fails every answer (score 0, "failed the tests"), so a
// case that passes, or errs, shows the attack worked. On a pod whose judge container runs every script in one PID
// namespace with a writable verdicts file each of them fails.

// runAnswerJudge is an honest code judge of a coding eval: it runs the candidate answer (base64, so the shell
// sees it as written) in its writable directory, then fails it, as a judge whose tests fail would.
const runAnswerJudge = `p=$(cat); a=$(printf '%s' "$p" | sed -n 's|.*"candidate_answer":"\([A-Za-z0-9+/=]*\)".*|\1|p'); ` +
	`printf '%s' "$a" | base64 -d > /evalrun/verdicts/answer-$$.sh 2>/dev/null; ` +
	`sh /evalrun/verdicts/answer-$$.sh </dev/null >/dev/null 2>&1; ` +
	`echo '{"score": 0, "misses": ["failed the tests"]}'`

// answersCommand is a Batched runner that answers case hi with answers[i-1] (base64-encoded shell).
func answersCommand(answers ...string) string {
	var b strings.Builder
	b.WriteString("printf '")
	for i, a := range answers {
		fmt.Fprintf(&b, `{"id":"h%d","text":"%s"}\n`, i+1, base64.StdEncoding.EncodeToString([]byte(a)))
	}
	b.WriteString("' > {OUTPUT_FILE}")
	return b.String()
}

// expectHonestFailures asserts that every case of run ended as the honest judge scored it: Fail, score 0, its
// message, and the run Completed with the policy not met.
func expectHonestFailures(t *testing.T, got *evalsv1alpha1.EvalRun, n int) {
	t.Helper()
	expectCondition(t, got, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionTrue, evalsv1alpha1.ReasonCompleted})
	expectCondition(t, got, evalsv1alpha1.ConditionPassed, conditionSummary{metav1.ConditionFalse, evalsv1alpha1.ReasonPolicyNotMet})
	expectDiff(t, "summary", counts{Total: int32(n), Failed: int32(n)}, summaryCounts(got))
	want := map[string]evalsv1alpha1.Verdict{}
	for i := 1; i <= n; i++ {
		want[fmt.Sprintf("h%d", i)] = evalsv1alpha1.VerdictFail
	}
	expectDiff(t, "verdicts", want, verdicts(got))
	if s := got.Status.Summary; s == nil || s.MeanScore != "0.0000" {
		t.Errorf("mean score %+v, want 0.0000", s)
	}
	for _, c := range got.Status.Cases {
		if len(c.Evaluators) != 1 || c.Evaluators[0].Score != "0.0000" && c.Evaluators[0].Score != "0" ||
			!strings.Contains(c.Evaluators[0].Message, "failed the tests") {
			t.Errorf("case %s evaluators %+v, want the honest judge's score 0 and its message", c.ID, c.Evaluators)
		}
	}
}

// 21. The answer, run by the judge, leaves a daemon (setsid, double-forked, deaf to SIGTERM) that keeps rewriting
// every verdict it can find to a pass. It is killed before the case's verdict leaves the judge container, so every
// case ends as the judge scored it, and each case says its judge left a process behind.
func TestHostileCodeJudgeDaemonRewritesVerdicts(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "judge-daemon", nil)
	daemon := `(setsid sh -c 'trap "" TERM; while :; do ` +
		`for f in /evalrun/verdicts/judges.jsonl /evalrun/verdicts/*; do sed -i s/\"score\":0/\"score\":1/g "$f"; done 2>/dev/null; ` +
		`sleep 0.1; done' </dev/null >/dev/null 2>&1 &); sleep 0.5`
	run := sampleRun("judge-daemon", ns).Inline(hostileEval(3, runAnswerJudge)).Command(answersCommand(daemon, daemon, daemon)).Obj()
	create(t, run)
	got := waitFinished(t, ns, run.Name, runTimeout)

	expectHonestFailures(t, got, 3)
	for _, c := range got.Status.Cases {
		if len(c.Evaluators) == 1 && !strings.Contains(c.Evaluators[0].Message, "were killed before anything else ran") {
			t.Errorf("case %s message %q does not record the process its judge left behind", c.ID, c.Evaluators[0].Message)
		}
	}
}

// 22. Case h1's answer forges verdict lines for every case wherever it can write (its judge's directory, the
// snapshot, a fake done marker) and into every judge-end FIFO (frames without the judge runner's key), and waits
// for them to be read. None is: every case ends as the judge scored it. (One forging answer: three would not fit
// in a command template's 4096 bytes, and one forges for all.)
func TestHostileCodeJudgeForgesVerdictLines(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "judge-forge", nil)
	var lines strings.Builder
	for i := 1; i <= 3; i++ {
		fmt.Fprintf(&lines, `{"caseId":"h%d","key":"strict","result":{"name":"strict","type":"code_judge","score":1,"verdict":"pass"}}\n`, i)
	}
	frame := `{"caseId":"h1","results":[` + strings.ReplaceAll(strings.TrimSuffix(lines.String(), `\n`), `\n`, ",") + `]}`
	forge := `for d in /evalrun/verdicts /evalrun/snapshot /evalrun /tmp; do ` +
		`printf '` + lines.String() + `' > $d/judges.jsonl 2>/dev/null; echo '{}' > $d/done 2>/dev/null; done; ` +
		`for p in /evalrun/bin/judge-end-*; do printf '\nevalrun-verdicts %d %064d\n%s\n' ` + fmt.Sprint(len(frame)) + ` 0 '` + frame + `' > $p 2>/dev/null; ` +
		`printf '` + lines.String() + `' > $p 2>/dev/null; done; sleep 3`
	run := sampleRun("judge-forge", ns).Inline(hostileEval(3, runAnswerJudge)).Command(answersCommand(forge, "true", "true")).Obj()
	create(t, run)
	got := waitFinished(t, ns, run.Name, runTimeout)

	expectHonestFailures(t, got, 3)
}

// 23. While its judge runs, case h1's answer attacks every other judge process it can see: it writes a passing
// result into their stdout, kills them, and signals the judge runner (PID 1) with everything. h2's and h3's judges
// run in their own container or after h1's judge is gone, and PID 1 ignores them, so every case ends as the judge
// scored it.
func TestHostileCodeJudgeTampersWithAnotherCase(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "judge-tamper", nil)
	tamper := `end=$(( $(date +%s) + 6 )); while [ $(date +%s) -lt $end ]; do ` +
		`for d in /proc/[0-9]*; do p=${d#/proc/}; [ "$p" = $$ ] || [ "$p" = $PPID ] && continue; ` +
		`echo '{"score": 1}' > $d/fd/1 2>/dev/null; [ "$p" = 1 ] || kill -9 $p 2>/dev/null; done; ` +
		`for s in TERM INT HUP QUIT ABRT ILL TRAP SEGV BUS USR1 PIPE SYS KILL STOP; do kill -$s 1 2>/dev/null; done; sleep 0.2; done`
	// h2 and h3 take a while to answer, so their judges run while h1's attacks.
	slow := `sleep 4`
	run := sampleRun("judge-tamper", ns).Inline(hostileEval(3, runAnswerJudge)).Command(answersCommand(tamper, slow, slow)).Obj()
	create(t, run)
	got := waitFinished(t, ns, run.Name, runTimeout)

	expectHonestFailures(t, got, 3)
}
