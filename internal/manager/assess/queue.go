package assess

import (
	"fmt"
	"time"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
)

// How often a run waiting in a Kueue queue looks at its position again.
const (
	// QueuePositionRecheck is how often a waiting run at one of the first positionsPerStep positions looks again:
	// the workloads ahead of it are admitted without its own Workload changing. It is also how long one read of a
	// LocalQueue's pending workloads serves every run waiting in it.
	QueuePositionRecheck = 10 * time.Second
	// positionsPerStep and maxPositionRecheck scale the recheck with the position (PositionRecheck).
	positionsPerStep   = 10
	maxPositionRecheck = 5 * time.Minute
)

// KueueWaitMessage says why a run's Job in queue name is suspended, in Kueue's words where its Workload (q) has
// any: waiting for quota, evicted (preempted) and waiting again, or admitted with the Job not yet resumed.
func KueueWaitMessage(name string, q *evalsv1alpha1.QueueStatus) string {
	msg := "waiting for Kueue to admit the Job in queue " + name
	if q == nil {
		return msg
	}
	words := q.Reason
	if q.Message != "" {
		words = q.Message
		if q.Reason != "" {
			words = q.Reason + ": " + q.Message
		}
	}
	switch q.Admission {
	case evalsv1alpha1.QueueEvicted:
		msg = "Kueue evicted the Job; " + msg + " again"
	case evalsv1alpha1.QueueQuotaReserved, evalsv1alpha1.QueueAdmitted:
		return fmt.Sprintf("Kueue admitted the Job in ClusterQueue %s; waiting for it to resume", q.ClusterQueue)
	}
	if words != "" {
		msg += " (" + words + ")"
	}
	if q.Position != nil {
		msg += fmt.Sprintf("; position %d in the queue", *q.Position)
	}
	return msg
}

// PositionRecheck is how long a run waiting at position pos waits before it looks again: QueuePositionRecheck
// for each started positionsPerStep positions ahead of it, at most maxPositionRecheck. Every admission moves
// every waiting run up one place; rechecking each at the same pace would write every waiting run's status every
// QueuePositionRecheck (1,000 waiting runs: 100 status writes a second). Scaled, the runs near the head still see
// each step and 1,000 waiting runs write about 6 a second in all.
func PositionRecheck(pos int32) time.Duration {
	steps := (int64(max(pos, 1)) + positionsPerStep - 1) / positionsPerStep
	return min(time.Duration(steps)*QueuePositionRecheck, maxPositionRecheck)
}

// Bounds of Kueue's words copied into status.queue (the CRD's MaxLength).
const (
	MaxQueueReason       = 128
	MaxQueueMessage      = 1024
	MaxQueueClusterQueue = 253
)
