//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/pod/confine"
)

// reportingJudge is an honest code judge that runs the candidate answer (base64) and fails it, quoting what the
// answer printed (lower-case letters, digits, dashes and spaces only) in its miss.
const reportingJudge = `p=$(cat); a=$(printf '%s' "$p" | sed -n 's|.*"candidate_answer":"\([A-Za-z0-9+/=]*\)".*|\1|p'); ` +
	`printf '%s' "$a" | base64 -d > /evalrun/verdicts/answer-$$.sh 2>/dev/null; ` +
	`out=$(sh /evalrun/verdicts/answer-$$.sh </dev/null 2>/dev/null | tr -cd 'a-z0-9 -'); ` +
	`echo "{\"score\": 0, \"misses\": [\"reached:$out\"]}"`

// secretsEval is hostileEval with a distinct expected answer per case (secret-h<i>).
func secretsEval(n int, judge string) string {
	var b strings.Builder
	b.WriteString("$schema: agentv-eval-v2\nevalcases:\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "  - id: h%d\n    input_messages: [{role: user, content: \"q%d\"}]\n"+
			"    expected_messages: [{role: assistant, content: \"secret-h%d\"}]\n"+
			"    execution:\n      evaluators:\n        - name: strict\n          type: code_judge\n          script: %q\n", i, i, i, judge)
	}
	return b.String()
}

// 24. A sharded run whose answers are code its code judge runs. Each answer looks for the answer key in every
// directory of the judge container (the eval ConfigMap, the shard's eval file, the snapshot, the image), and
// opens TCP connections to another pod of the cluster and to the API server, printing what it reached. Under the
// judge runner's Landlock ruleset it reaches nothing: every case's miss reads "reached:secret-h0" (its own canary)
// and nothing more.
func TestHostileCodeJudgeConfined(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "judge-confine", map[string]string{"pod-security.kubernetes.io/enforce": "restricted"})
	target := listenerPod(t, ns)
	// secret-h0 is the answer's own canary, in its writable directory: finding it shows the search works.
	answer := `echo secret-h0 > /evalrun/verdicts/canary; ` +
		`for d in /evalrun/verdicts /evalrun-eval /evalrun /etc /app /tmp /var /dev/shm; do grep -rho 'secret-h[0-9][0-9]*' $d 2>/dev/null; done | sort -u | tr '\n' ' '; ` +
		`nc -w 3 ` + target + ` 8080 </dev/null >/dev/null 2>&1 && printf ' tcp-pod'; ` +
		`nc -w 3 $KUBERNETES_SERVICE_HOST $KUBERNETES_SERVICE_PORT </dev/null >/dev/null 2>&1 && printf ' tcp-apiserver'; ` +
		`kill -0 1 2>/dev/null && printf ' signal-pid1'; true`
	run := sampleRun("judge-confine", ns).Inline(secretsEval(4, reportingJudge)).
		Command(answersCommand(answer, answer, answer, answer)).Shards(2, 2).Obj()
	create(t, run)
	got := waitFinished(t, ns, run.Name, runTimeout)

	expectCondition(t, got, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionTrue, evalsv1alpha1.ReasonCompleted})
	want := map[string]evalsv1alpha1.Verdict{"h1": evalsv1alpha1.VerdictFail, "h2": evalsv1alpha1.VerdictFail,
		"h3": evalsv1alpha1.VerdictFail, "h4": evalsv1alpha1.VerdictFail}
	expectDiff(t, "verdicts", want, verdicts(got))
	for _, c := range got.Status.Cases {
		if len(c.Evaluators) != 1 || strings.TrimSpace(c.Evaluators[0].Message) != "reached:secret-h0" {
			t.Errorf("case %s: the answer its judge ran reached something: %+v", c.ID, c.Evaluators)
		}
	}
	// The run says so: the node's kernel (this machine's) has Landlock ABI 6 or above.
	if confine.ABI() >= 6 {
		expectCondition(t, got, evalsv1alpha1.ConditionCodeJudgesConfined,
			conditionSummary{metav1.ConditionTrue, evalsv1alpha1.ReasonLandlockConfined})
	} else {
		t.Logf("this machine's Landlock ABI is %d: the run's CodeJudgesConfined condition is not checked", confine.ABI())
	}
}

// listenerPod starts a pod that accepts TCP connections on port 8080 and returns its IP once it is ready.
func listenerPod(t *testing.T, ns string) string { return startListener(t, ns, "listener", nil) }

// startListener starts a pod called name with labels that accepts TCP connections on port 8080 (busybox httpd in
// the runner image) and returns its IP once it is ready.
func startListener(t *testing.T, ns, name string, labels map[string]string) string {
	t.Helper()
	ctx := ctxFor(t, 2*time.Minute)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name: "httpd", Image: runnerImage, ImagePullPolicy: corev1.PullIfNotPresent,
				Command:         []string{"/bin/busybox", "httpd", "-f", "-p", "8080", "-h", "/app"},
				SecurityContext: restrictedSecurity(),
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(8080)}},
					PeriodSeconds: 1},
			}},
		},
	}
	if err := k8s.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	var ip string
	err := wait.PollUntilContextCancel(ctx, 500*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		var p corev1.Pod
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(pod), &p); err != nil {
			return false, nil
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue && p.Status.PodIP != "" {
				ip = p.Status.PodIP
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("the listener pod %s did not become ready: %v", name, err)
	}
	return ip
}
