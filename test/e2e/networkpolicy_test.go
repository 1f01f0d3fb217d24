//go:build e2e

package e2e

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
)

// networkPolicies runs hack/kube-network-policies.sh with cmd (install or uninstall).
func networkPolicies(t *testing.T, cmd string) {
	t.Helper()
	c := exec.Command(filepath.Join(repoRoot, "hack", "kube-network-policies.sh"), cmd)
	c.Dir = repoRoot
	c.Env = append(os.Environ(), "KUBECONFIG="+kubeconfigPath)
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("hack/kube-network-policies.sh %s: %v\n%s", cmd, err, out)
	}
}

// checksJudge passes the runner's answer "refused refused" and fails any other, quoting it.
const checksJudge = `p=$(cat); a=$(printf '%s' "$p" | sed -n 's|.*"candidate_answer":"\([a-z ]*\)".*|\1|p'); ` +
	`if [ "$a" = "refused refused" ]; then echo '{"score": 1}'; else echo "{\"score\": 0, \"misses\": [\"$a\"]}"; fi`

// 25. Under an enforcing NetworkPolicy implementation (kube-network-policies), a run's pod reaches neither a pod of
// another run nor any other pod of its namespace that its policy does not name, while a pod without a policy
// reaches both; the run still completes (its collector reaches the API server).
func TestRunNetworkPolicyEnforced(t *testing.T) {
	if missing := kernelLacks("CONFIG_NFT_QUEUE"); missing != "" {
		// kube-network-policies hands packets to user space with nftables' queue expression: without it its rules
		// fail to load ("netlink receive: no such file or directory") and nothing is enforced.
		t.Skipf("the node's kernel cannot run kube-network-policies: %s", missing)
	}
	networkPolicies(t, "install")
	t.Cleanup(func() { networkPolicies(t, "uninstall") })
	ns := newNamespace(t, "netpol", map[string]string{"pod-security.kubernetes.io/enforce": "restricted"})
	otherRun := listenerPodLabelled(t, ns, "other-run", map[string]string{podwire.LabelRun: "another-run"})
	plain := listenerPodLabelled(t, ns, "plain", nil)

	// Control: a pod under no policy reaches both.
	for _, ip := range []string{otherRun, plain} {
		if !probeFrom(t, ns, ip) {
			t.Fatalf("a pod without a NetworkPolicy cannot reach %s: the test proves nothing", ip)
		}
	}
	eval := "$schema: agentv-eval-v2\nevalcases:\n  - id: c1\n    input_messages: [{role: user, content: q}]\n" +
		"    execution:\n      evaluators:\n        - name: netpol\n          type: code_judge\n          script: " + fmt.Sprintf("%q", checksJudge) + "\n"
	probe := func(ip string) string {
		return `$(nc -w 3 ` + ip + ` 8080 </dev/null >/dev/null 2>&1 && echo reached || echo refused)`
	}
	command := `printf '{"id":"c1","text":"%s %s"}\n' "` + probe(otherRun) + `" "` + probe(plain) + `" > {OUTPUT_FILE}`
	run := sampleRun("netpol", ns).Inline(eval).Command(command).Obj()
	create(t, run)
	got := waitFinished(t, ns, run.Name, runTimeout)
	expectCondition(t, got, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionTrue, evalsv1alpha1.ReasonCompleted})
	expectDiff(t, "verdicts", map[string]evalsv1alpha1.Verdict{"c1": evalsv1alpha1.VerdictPass}, verdicts(got))
	if t.Failed() {
		for _, c := range got.Status.Cases {
			t.Logf("case %s: %+v", c.ID, c.Evaluators)
		}
	}
	var np networkingv1.NetworkPolicy
	if err := k8s.Get(ctxFor(t, time.Minute), client.ObjectKey{Namespace: ns, Name: run.Name + "-evalrun"}, &np); err != nil {
		t.Errorf("the run's NetworkPolicy: %v", err)
	} else if !metav1.IsControlledBy(&np, got) {
		t.Errorf("the NetworkPolicy is not the run's: %+v", np.OwnerReferences)
	}
}

// kernelLacks says why this machine's kernel (the local cluster's node) lacks option, from /proc/config.gz; "" when
// it has it built in or the configuration cannot be read (then the test runs and says what it finds).
func kernelLacks(option string) string {
	f, err := os.Open("/proc/config.gz")
	if err != nil {
		return ""
	}
	defer func() { _ = f.Close() }()
	z, err := gzip.NewReader(f)
	if err != nil {
		return ""
	}
	data, err := io.ReadAll(z)
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		switch {
		case line == option+"=y":
			return ""
		case line == "# "+option+" is not set" || line == option+"=m":
			if _, err := os.Stat("/lib/modules"); line == option+"=m" && err == nil {
				return ""
			}
			return line + " (/proc/config.gz), and no module to load"
		}
	}
	return ""
}

// listenerPodLabelled is listenerPod with a name and labels.
func listenerPodLabelled(t *testing.T, ns, name string, labels map[string]string) string {
	t.Helper()
	return startListener(t, ns, name, labels)
}

// probeFrom runs a pod under no NetworkPolicy that opens a TCP connection to ip:8080 and says whether it could.
func probeFrom(t *testing.T, ns, ip string) bool {
	t.Helper()
	ctx := ctxFor(t, 2*time.Minute)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "probe-", Namespace: ns},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{
				Name: "probe", Image: runnerImage, ImagePullPolicy: corev1.PullIfNotPresent,
				Command:         []string{"/bin/busybox", "sh", "-c", "nc -w 3 " + ip + " 8080 </dev/null"},
				SecurityContext: restrictedSecurity(),
			}},
		},
	}
	if err := k8s.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	var phase corev1.PodPhase
	err := wait.PollUntilContextCancel(ctx, 500*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		var p corev1.Pod
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(pod), &p); err != nil {
			return false, nil
		}
		phase = p.Status.Phase
		return phase == corev1.PodSucceeded || phase == corev1.PodFailed, nil
	})
	if err != nil {
		t.Fatalf("the probe pod did not end: %v", err)
	}
	return phase == corev1.PodSucceeded
}

func restrictedSecurity() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](65532), AllowPrivilegeEscalation: ptr.To(false),
		Capabilities:   &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}
