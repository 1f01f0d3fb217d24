package collect

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/assess"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
)

// collectorPod is a pod of shard index created at created, whose collector is in state (nil: not started).
func collectorPod(name string, index int, created time.Time, state *corev1.ContainerState) corev1.Pod {
	p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(created),
		Annotations: map[string]string{podwire.AnnotationJobCompletionIndex: strconv.Itoa(index)}}}
	if state != nil {
		p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: podwire.ContainerCollector, State: *state}}
	}
	return p
}

func collectorEnded(t *testing.T, m podwire.TerminationMessage, at time.Time) *corev1.ContainerState {
	t.Helper()
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return &corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Message: string(data), FinishedAt: metav1.NewTime(at)}}
}

// TestEndedCollectors: of each shard, the newest pod whose collector ended with a readable termination message
// tells what became of the shard's collection; a running collector, an empty or unreadable message, or a
// collector that restarted and runs again tell nothing.
func TestEndedCollectors(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 11, 0, 0, 0, time.UTC)
	stored := podwire.TerminationMessage{Outcome: string(evalsv1alpha1.OutcomeCompleted), Persisted: true, Total: 3, Passed: 3}
	failed := podwire.TerminationMessage{Outcome: string(evalsv1alpha1.OutcomeCompleted), PersistError: "bucket down"}
	running := &corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	garbage := &corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Message: "panic: oops"}}
	restarted := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	pods := []corev1.Pod{
		collectorPod("s0-old", 0, t0, collectorEnded(t, failed, t0.Add(time.Minute))),
		collectorPod("s0-new", 0, t0.Add(2*time.Minute), collectorEnded(t, stored, t0.Add(3*time.Minute))),
		collectorPod("s1", 1, t0, running),
		collectorPod("s2", 2, t0, garbage),
		collectorPod("s3-old", 3, t0, collectorEnded(t, stored, t0.Add(time.Minute))),
		collectorPod("s3-new", 3, t0.Add(2*time.Minute), nil), // the replacement has not started: the old one's stands
		collectorPod("s4", 4, t0, &restarted),
		collectorPod("s5", 5, t0, collectorEnded(t, failed, t0.Add(time.Minute))),
	}
	pods[6].Status.InitContainerStatuses[0].LastTerminationState = *collectorEnded(t, stored, t0)
	got := EndedCollectors(pods, 6)
	want := map[int]EndedCollector{
		0: {Pod: "s0-new", FinishedAt: t0.Add(3 * time.Minute), Message: stored},
		3: {Pod: "s3-old", FinishedAt: t0.Add(time.Minute), Message: stored},
		5: {Pod: "s5", FinishedAt: t0.Add(time.Minute), Message: failed},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("EndedCollectors (-want +got):\n%s", diff)
	}
}

// TestUnstoredCollection: a collection that did not reach the bucket is the collector's failure, for that pod,
// at its end, saying why; the classification then ends the shard CollectorFailed.
func TestUnstoredCollection(t *testing.T) {
	at := time.Date(2026, 11, 27, 11, 0, 0, 500, time.UTC)
	e := EndedCollector{Pod: "p-0", FinishedAt: at, Message: podwire.TerminationMessage{Outcome: string(evalsv1alpha1.OutcomeCompleted), RunnerFinished: true}}
	s := UnstoredCollection(e, "PUT summary.json: 503 "+strings.Repeat("x", 4096))
	c := s.Collection
	if c == nil || c.Outcome != evalsv1alpha1.OutcomeCollectorFailed || c.PodName != "p-0" || !c.RunnerFinished ||
		!c.CollectedAt.Time.Equal(at.Truncate(time.Second)) {
		t.Fatalf("collection %+v", c)
	}
	if !strings.HasPrefix(c.Message, "the collector could not store the results in the bucket: PUT summary.json: 503") || len(c.Message) > results.MaxCollectionMessageBytes {
		t.Errorf("message %q (%d bytes)", c.Message, len(c.Message))
	}
	a, ok := assess.FromCollection(c, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p-0"}})
	if !ok || a.State != assess.StateFailed || a.Reason != evalsv1alpha1.ReasonCollectorFailed {
		t.Errorf("classified %v %+v; want Failed CollectorFailed", ok, a)
	}
}
