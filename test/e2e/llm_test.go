//go:build e2e

package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
)

// judgeKey is the test key of test/e2e/testdata/judgeserver.yaml.
const judgeKey = "sk-e2e-judge-key-not-for-production"

// startJudgeServer runs the deterministic judge server (test/judgeserver) in namespace ns and returns its base URL
// for pods (the Service's cluster IP: the local cluster has no cluster DNS).
func startJudgeServer(t *testing.T, ns string) string {
	t.Helper()
	ctx := ctxFor(t, 3*time.Minute)
	if _, err := kubectl(ctx, t, "apply", "-n", ns, "-f", filepath.Join(repoRoot, "test", "e2e", "testdata", "judgeserver.yaml")); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		var pods corev1.PodList
		if err := k8s.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{"app.kubernetes.io/name": "judgeserver"}); err != nil {
			return false, nil
		}
		for _, p := range pods.Items {
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
					return true, nil
				}
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("the judge server did not become ready: %v", err)
	}
	svc := &corev1.Service{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "judgeserver"}, svc); err != nil {
		t.Fatal(err)
	}
	return "http://" + svc.Spec.ClusterIP + ":8080/v1"
}

// llmEval has llm_judge, rubric (type and inline), evaluator-less and malformed-reply cases; the judge server
// decides by the double-quoted keywords.
const llmEval = `evalcases:
  - id: capital-right
    expected_outcome: 'names "Paris"'
    input_messages: [{role: user, content: 'What is the capital of France?'}]
    evaluators: [{name: judge, type: llm_judge}]
  - id: capital-wrong
    expected_outcome: 'names "Paris"'
    input_messages: [{role: user, content: 'What is the capital of France?'}]
    evaluators: [{name: judge, type: llm_judge}]
  - id: rubric-type
    input_messages: [{role: user, content: Greet Ada.}]
    evaluators:
      - name: greeting
        type: rubric
        rubrics:
          - {id: hello, expected_outcome: 'says "hello"', required: true}
          - {id: name, expected_outcome: 'names "Ada"', required: false}
  - id: rubric-inline-missed
    input_messages: [{role: user, content: Greet Ada.}]
    rubrics: ['says "hello"']
  - id: no-evaluators
    expected_outcome: 'mentions "blue"'
    input_messages: [{role: user, content: 'What colour is the sky?'}]
` + llmEvalMalformedCase

// llmEvalMalformedCase is llmEval's last case, whose answer makes the judge server reply with invalid JSON.
const llmEvalMalformedCase = `  - id: malformed-reply
    expected_outcome: 'names "Paris"'
    input_messages: [{role: user, content: 'What is the capital of France?'}]
    evaluators: [{name: judge, type: llm_judge}]
`

// TestLLMJudges runs a run whose rubric and llm_judge cases are judged by the judge server through
// spec.judging.llm: the verdicts are in status, the run's token usage is in the summary, the API key's Secret is
// a volume of the pod mounted by the collector only, and the runner, which looks for it, finds nothing.
func TestLLMJudges(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "llm", nil)
	baseURL := startJudgeServer(t, ns)

	probe := `(ls -la /evalrun /evalrun/* 2>&1; cat /evalrun/llm-credentials/* 2>&1; env; ` +
		`grep -rs 'not-for-production' /evalrun /etc /tmp 2>&1) >&2; `
	answers := `{"id":"capital-right","text":"It is Paris."}` + "\n" +
		`{"id":"capital-wrong","text":"It is Lyon."}` + "\n" +
		`{"id":"rubric-type","text":"Hello, Ada!"}` + "\n" +
		`{"id":"rubric-inline-missed","text":"Hi Ada."}` + "\n" +
		`{"id":"no-evaluators","text":"The sky is blue."}` + "\n" +
		`{"id":"malformed-reply","text":"JUDGE-MALFORMED"}` + "\n"
	run := sampleRun("llm", ns).Inline(llmEval).Command(probe + "printf '%s' '" + answers + "' > {OUTPUT_FILE}").MinPassRate("0").Obj()
	run.Spec.Judging = &evalsv1alpha1.Judging{LLM: &evalsv1alpha1.LLMJudging{
		BaseURL: ptr.To(baseURL), Model: ptr.To("rules"), MaxConcurrentRequests: ptr.To[int32](2), TimeoutSeconds: ptr.To[int32](10),
		APIKeySecretRef: &evalsv1alpha1.SecretKeyRef{Name: "judge-api-key", Key: "token"},
	}}
	create(t, run)
	got := waitFinished(t, ns, run.Name, 5*time.Minute)

	verdicts := map[string]evalsv1alpha1.Verdict{}
	for _, c := range got.Status.Cases {
		verdicts[c.ID] = c.Verdict
	}
	want := map[string]evalsv1alpha1.Verdict{
		"capital-right": evalsv1alpha1.VerdictPass, "capital-wrong": evalsv1alpha1.VerdictFail,
		"rubric-type": evalsv1alpha1.VerdictPass, "rubric-inline-missed": evalsv1alpha1.VerdictFail,
		"no-evaluators": evalsv1alpha1.VerdictPass, "malformed-reply": evalsv1alpha1.VerdictError,
	}
	if diff := cmp.Diff(want, verdicts); diff != "" {
		t.Errorf("verdicts (-want +got):\n%s", diff)
	}
	for _, c := range got.Status.Cases {
		if c.ID == "malformed-reply" && !strings.Contains(c.Error, "the judge's reply is not valid") {
			t.Errorf("malformed-reply's error = %q", c.Error)
		}
	}
	s := got.Status.Summary
	// 5 cases answered at once, the malformed one asked 3 times.
	if s == nil || s.JudgeUsage == nil || s.JudgeUsage.Calls != 8 || s.JudgeUsage.TotalTokens <= 0 {
		t.Errorf("summary = %+v, want judgeUsage with 8 calls and their tokens", s)
	}

	// The Secret is a volume of the pod, mounted by the collector only.
	pods := runPods(t, ns, run.Name)
	if len(pods) == 0 {
		t.Fatal("no pod of the run")
	}
	for _, pod := range pods {
		volume := ""
		for _, v := range pod.Spec.Volumes {
			if v.Secret != nil && v.Secret.SecretName == "judge-api-key" {
				volume = v.Name
			}
		}
		if volume == "" {
			t.Fatalf("pod %s has no volume of the Secret judge-api-key", pod.Name)
		}
		mounted := []string{}
		for _, c := range append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...) {
			for _, m := range c.VolumeMounts {
				if m.Name == volume {
					mounted = append(mounted, c.Name)
				}
			}
			for _, e := range c.Env {
				if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && e.ValueFrom.SecretKeyRef.Name == "judge-api-key" {
					t.Errorf("container %s has the key in its environment", c.Name)
				}
			}
		}
		if diff := cmp.Diff([]string{podwire.ContainerCollector}, mounted); diff != "" {
			t.Errorf("pod %s: containers mounting the key (-want +got):\n%s", pod.Name, diff)
		}
		if logs := podLogs(t, ns, pod.Name, podwire.ContainerRunner); strings.Contains(logs, judgeKey) || !strings.Contains(logs, "llm-credentials") {
			t.Errorf("the runner's search for the key: %s", textbound.Head(logs, 2000))
		}
		if logs := podLogs(t, ns, pod.Name, podwire.ContainerCollector); strings.Contains(logs, judgeKey) {
			t.Errorf("the key is in the collector's logs: %s", textbound.Head(logs, 2000))
		}
	}
	raw, err := kubectl(ctxFor(t, time.Minute), t, "get", "evalrun", "-n", ns, run.Name, "-o", "yaml")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(raw, judgeKey) {
		t.Error("the key is in the EvalRun")
	}
}
