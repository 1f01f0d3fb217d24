//go:build e2e

package e2e

import (
	"context"
	"net/netip"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// restrictedContext meets the Pod Security "restricted" profile.
func restrictedContext() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		RunAsNonRoot:             ptr.To(true),
		AllowPrivilegeEscalation: ptr.To(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

// TestClusterSmoke checks the cluster itself, independent of the operator: a Job whose pod has a native sidecar
// completes, the pod gets an address in the pod range, and it reaches the API server through the kubernetes
// Service (kube-proxy's rules) and nothing outside the machine.
func TestClusterSmoke(t *testing.T) {
	ns := newNamespace(t, "smoke", map[string]string{"pod-security.kubernetes.io/enforce": "restricted"})
	ctx := ctxFor(t, 2*time.Minute)
	// The main container connects to the API server's Service address (nc exits 0 once connected), and checks that
	// the pod has no default route: nothing outside the machine is reachable.
	script := `set -e
echo | nc -w 3 "$KUBERNETES_SERVICE_HOST" "$KUBERNETES_SERVICE_PORT"
if ip route 2>/dev/null | grep -q '^default'; then echo "pod has a default route" >&2; exit 4; fi
echo smoke-ok`
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "smoke", Namespace: ns},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr.To[int32](0),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy:                 corev1.RestartPolicyNever,
				AutomountServiceAccountToken:  ptr.To(false),
				TerminationGracePeriodSeconds: ptr.To[int64](5),
				InitContainers: []corev1.Container{{
					Name: "sidecar", Image: runnerImage, ImagePullPolicy: corev1.PullIfNotPresent,
					RestartPolicy:   ptr.To(corev1.ContainerRestartPolicyAlways),
					Command:         []string{"sh", "-c", "trap 'exit 0' TERM; while :; do sleep 1; done"},
					SecurityContext: restrictedContext(),
				}},
				Containers: []corev1.Container{{
					Name: "main", Image: runnerImage, ImagePullPolicy: corev1.PullIfNotPresent,
					Command: []string{"sh", "-c", script}, SecurityContext: restrictedContext(),
				}},
			}},
		},
	}
	start := time.Now()
	if err := k8s.Create(ctx, job); err != nil {
		t.Fatalf("creating Job: %v", err)
	}
	err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(job), job); err != nil {
			return false, err
		}
		for _, c := range job.Status.Conditions {
			if c.Status == corev1.ConditionTrue && (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("Job did not finish: %v", err)
	}
	t.Logf("Job with a native sidecar finished in %s", time.Since(start).Round(10*time.Millisecond))
	if job.Status.Succeeded != 1 {
		t.Fatalf("Job succeeded=%d failed=%d, want 1 success", job.Status.Succeeded, job.Status.Failed)
	}
	var pods corev1.PodList
	if err := k8s.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{"job-name": "smoke"}); err != nil || len(pods.Items) != 1 {
		t.Fatalf("listing the Job's pod: %v (%d pods)", err, len(pods.Items))
	}
	ip, err := netip.ParseAddr(pods.Items[0].Status.PodIP)
	if err != nil || !netip.MustParsePrefix("10.204.0.0/24").Contains(ip) {
		t.Errorf("pod IP %q is not in the pod range 10.204.0.0/24", pods.Items[0].Status.PodIP)
	}
	logs, err := clientset.CoreV1().Pods(ns).GetLogs(pods.Items[0].Name, &corev1.PodLogOptions{Container: "main"}).DoRaw(ctx)
	if err != nil || string(logs) != "smoke-ok\n" {
		t.Errorf("main container log = %q (%v), want %q", logs, err, "smoke-ok\n")
	}
}
