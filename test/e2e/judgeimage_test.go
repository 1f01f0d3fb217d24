//go:build e2e

package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
)

const (
	// hostileRunnerImage is test/hostilerunner (hack/images.sh hostile-runner): its /bin/sh, python3, node and bun
	// print {"score": 1} whatever they are asked to run, and it answers every case wrongly.
	hostileRunnerImage = "localhost/evalrun/hostile-runner:dev"
	// judgeImage is the manager's --judge-image on the local cluster (hack/images.sh judge).
	judgeImage = "localhost/evalrun/judge:dev"
	// zeroJudge is an honest code judge that fails every answer, run by python3: in the runner's image above it
	// would pass every case.
	zeroJudge = `python3 -c 'import json; print(json.dumps({"score": 0, "misses": ["the honest judge failed it"]}))'`
)

// The runner's image is what the evaluated team controls. With spec.judging.image unset, a runner image whose
// python3 and sh print a passing verdict changes no verdict: the code judges run in the manager's judge image, the
// judge container's imageID is that image's, and status.judgeImage says so (source Default). Naming the runner's
// image in spec.judging.image is explicit: the same run then passes every case (the attack is real), and the status
// says source Target with a Warning event.
func TestJudgeImageDefault(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "judge-image", nil)
	hostile := func(name string) *evalsv1alpha1.EvalRun {
		return sampleRun(name, ns).Inline(hostileEval(2, zeroJudge)).Image(hostileRunnerImage).
			Command("runner --eval {EVAL_FILE} --output {OUTPUT_FILE}").MinPassRate("0.5").Obj() // /bin/sh answers
	}
	def := hostile("default")
	target := hostile("target")
	target.Spec.Judging = &evalsv1alpha1.Judging{Image: hostileRunnerImage}
	create(t, def)
	create(t, target)

	got := waitFinished(t, ns, def.Name, runTimeout)
	expectCondition(t, got, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionTrue, evalsv1alpha1.ReasonCompleted})
	expectCondition(t, got, evalsv1alpha1.ConditionPassed, conditionSummary{metav1.ConditionFalse, evalsv1alpha1.ReasonPolicyNotMet})
	expectDiff(t, "verdicts with judging.image unset", map[string]evalsv1alpha1.Verdict{"h1": evalsv1alpha1.VerdictFail, "h2": evalsv1alpha1.VerdictFail},
		verdicts(got))
	for _, c := range got.Status.Cases {
		if len(c.Evaluators) != 1 || !strings.Contains(c.Evaluators[0].Message, "the honest judge failed it") {
			t.Errorf("case %s evaluators %+v, want the honest judge's message", c.ID, c.Evaluators)
		}
	}
	j := got.Status.JudgeImage
	if j == nil || j.Image != judgeImage || j.Source != evalsv1alpha1.JudgeImageSourceDefault {
		t.Fatalf("status.judgeImage %+v, want %s from Default", j, judgeImage)
	}
	// The kubelet's word: the judge containers ran the judge image, whatever the runner's image holds.
	judgeID := ""
	for _, p := range runPods(t, ns, def.Name) {
		for _, s := range p.Status.ContainerStatuses {
			if strings.HasPrefix(s.Name, "judge") {
				if !strings.HasPrefix(s.Image, judgeImage) && !strings.HasPrefix(s.Image, "docker.io/"+judgeImage) {
					t.Errorf("pod %s container %s ran image %s, want %s", p.Name, s.Name, s.Image, judgeImage)
				}
				judgeID = s.ImageID
			}
			if s.Name == "runner" && s.ImageID == judgeID {
				t.Errorf("the runner and the judge ran the same image %s", s.ImageID)
			}
		}
	}
	if judgeID == "" || ptr.Deref(j.ImageID, "") != judgeID {
		t.Errorf("status.judgeImage.imageID %q, want the judge container's imageID %q", ptr.Deref(j.ImageID, ""), judgeID)
	}
	if !strings.Contains(judgeID, "sha256:") {
		t.Errorf("judge imageID %q is not a digest", judgeID)
	}

	// The control: the same run judged in the runner's own image, named explicitly, passes every case.
	got = waitFinished(t, ns, target.Name, runTimeout)
	expectDiff(t, "verdicts with judging.image the runner's image", map[string]evalsv1alpha1.Verdict{"h1": evalsv1alpha1.VerdictPass, "h2": evalsv1alpha1.VerdictPass},
		verdicts(got))
	if j := got.Status.JudgeImage; j == nil || j.Image != hostileRunnerImage || j.Source != evalsv1alpha1.JudgeImageSourceTarget {
		t.Errorf("status.judgeImage %+v, want %s from Target", j, hostileRunnerImage)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		events, err := clientset.CoreV1().Events(ns).List(ctxFor(t, time.Minute), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(events.Items, func(e corev1.Event) bool {
			return e.InvolvedObject.Name == target.Name && e.Reason == "JudgeImageIsTarget" && e.Type == corev1.EventTypeWarning
		}) {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("no Warning event JudgeImageIsTarget for the run judged in the runner's image")
			break
		}
		time.Sleep(2 * time.Second)
	}
}

// The judge image holds what AgentV's code judges run: sh and coreutils, python3, node, bun and `uv run`. Each
// case's code judge is one of them, run in the judge container of a run with judging.image unset, and each checks
// what it ran (the interpreter's own answer) before it scores 1.
func TestJudgeImageTools(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "judge-tools", nil)
	judges := []string{
		`sh -c 'test "$(printf "%s" abc | wc -c | tr -d " ")" = 3 && echo "{\"score\": 1}"'`,
		`python3 -c 'import json, sys; json.load(sys.stdin); print(json.dumps({"score": 1, "hits": [sys.version.split()[0]]}))'`,
		`node -e 'let s = ""; process.stdin.on("data", d => s += d).on("end", () => { JSON.parse(s); console.log(JSON.stringify({score: 1, hits: [process.version]})) })'`,
		`cd /evalrun/verdicts && printf 'const p: {candidate_answer: string} = JSON.parse(await Bun.stdin.text());\n` +
			`console.log(JSON.stringify({score: p.candidate_answer === "yes" ? 1 : 0, hits: ["bun " + Bun.version]}));\n' > j.ts && bun run j.ts`,
		`cd /evalrun/verdicts && printf 'import json, sys\njson.load(sys.stdin)\nprint(json.dumps({"score": 1, "hits": ["uv run"]}))\n' > j.py && uv run j.py`,
	}
	var b strings.Builder
	b.WriteString("$schema: agentv-eval-v2\nevalcases:\n")
	for i, judge := range judges {
		fmt.Fprintf(&b, "  - id: t%d\n    input_messages: [{role: user, content: \"say yes (%d)\"}]\n"+
			"    expected_messages: [{role: assistant, content: \"yes\"}]\n"+
			"    execution:\n      evaluators:\n        - name: tool\n          type: code_judge\n          script: %q\n", i+1, i+1, judge)
	}
	var answers strings.Builder
	answers.WriteString("printf '")
	for i := range judges {
		fmt.Fprintf(&answers, `{"id":"t%d","text":"yes"}\n`, i+1)
	}
	answers.WriteString("' > {OUTPUT_FILE}")
	run := sampleRun("tools", ns).Inline(b.String()).Command(answers.String()).Obj()
	create(t, run)
	got := waitFinished(t, ns, run.Name, runTimeout)
	want := map[string]evalsv1alpha1.Verdict{}
	for i := range judges {
		want[fmt.Sprintf("t%d", i+1)] = evalsv1alpha1.VerdictPass
	}
	if diff := cmp.Diff(want, verdicts(got)); diff != "" {
		for _, c := range got.Status.Cases {
			t.Logf("case %s: %+v", c.ID, c.Evaluators)
		}
		t.Errorf("verdicts (-want +got):\n%s", diff)
	}
	if j := got.Status.JudgeImage; j == nil || j.Image != judgeImage || j.Source != evalsv1alpha1.JudgeImageSourceDefault {
		t.Errorf("status.judgeImage %+v, want %s from Default", j, judgeImage)
	}
}
