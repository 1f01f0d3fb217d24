//go:build e2e

package e2e

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
)

// managerRestarts returns each manager pod's restarts (its containers' restart counts) and whether one was
// OOMKilled, by pod UID.
func managerRestarts(t *testing.T) (map[types.UID]int32, bool) {
	t.Helper()
	var pods corev1.PodList
	if err := k8s.List(ctxFor(t, 30*time.Second), &pods, client.InNamespace(managerNamespace)); err != nil || len(pods.Items) == 0 {
		t.Fatalf("listing manager pods: %v (%d)", err, len(pods.Items))
	}
	out, oom := map[types.UID]int32{}, false
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		for _, c := range p.Status.ContainerStatuses {
			out[p.UID] += c.RestartCount
			if term := c.LastTerminationState.Terminated; term != nil && term.Reason == "OOMKilled" {
				oom = true
			}
		}
	}
	return out, oom
}

// Issue 37's alias bomb (a 100 KB anchored string, 20 aliases to it in a message list, 1,500 cases aliasing the
// list: 160 KB inline, 3 GB expanded) got the manager (256Mi) OOMKilled on every reconcile. It ends
// InvalidEvalFile naming the expansion bound, the manager does not restart, and an ordinary run applied right
// after it completes on time.
func TestAliasBombInline(t *testing.T) {
	ns := newNamespace(t, "aliasbomb", nil)
	before, _ := managerRestarts(t)

	bomb := string(testutil.AliasBomb(100_000, 20, 1500))
	run := sampleRun("bomb", ns).Inline(bomb).Obj()
	start := time.Now()
	create(t, run)
	got := waitFinished(t, ns, run.Name, time.Minute)
	t.Logf("alias bomb (%d bytes inline) ended in %s", len(bomb), time.Since(start).Round(time.Millisecond))
	expectCondition(t, got, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionFalse, evalsv1alpha1.ReasonInvalidEvalFile})
	if c := succeeded(got); c == nil || !strings.Contains(c.Message, "expands the file by more than 16 MiB") || !strings.Contains(c.Message, "alias *m") {
		t.Errorf("InvalidEvalFile message %+v does not name the alias and the expansion bound", c)
	}
	if got.Status.JobName != "" {
		t.Errorf("the alias bomb got a Job %s", got.Status.JobName)
	}

	start = time.Now()
	ordinary := sampleRun("after-bomb", ns).Inline(sampleEvalFile(t)).MinPassRate("0.8").Obj()
	create(t, ordinary)
	done := waitFinished(t, ns, ordinary.Name, runTimeout)
	t.Logf("ordinary run after the bomb: apply to %s in %s", succeeded(done).Reason, time.Since(start).Round(time.Millisecond))
	// The sample as TestHappyPath runs it: its runner leaves one case out (MissingResults), 10 of 12 pass.
	expectCondition(t, done, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionFalse, evalsv1alpha1.ReasonMissingResults})
	expectCondition(t, done, evalsv1alpha1.ConditionPassed, conditionSummary{metav1.ConditionTrue, evalsv1alpha1.ReasonPolicyMet})
	expectDiff(t, "verdicts", sampleVerdicts, verdicts(done))

	after, oom := managerRestarts(t)
	for uid, n := range after {
		if was, ok := before[uid]; !ok || n != was {
			t.Errorf("the manager restarted (pod %s: %d restarts, %d before; present before: %v)", uid, n, was, ok)
		}
	}
	if len(after) != len(before) {
		t.Errorf("manager pods changed: %d before, %d after", len(before), len(after))
	}
	if oom {
		t.Errorf("a manager container was OOMKilled")
	}
}
