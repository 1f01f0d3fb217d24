// Package runmemo is the manager's memo, per EvalRun, of what this manager process itself wrote (its applied
// status, a created Job, stopped pods, the decisions counted in the metrics, collections read from a bucket), so
// that a reconcile reading a cache that has not caught up with those writes neither repeats them nor recreates
// children. An optimisation only: after a restart it is empty and the reconciler asks the API server.
package runmemo

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	acv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
	"github.com/evalrun-operator/evalrun-operator/internal/statusapply"
)

// Memo remembers, per EvalRun, what this manager process itself wrote, so that a reconcile reading a cache
// that has not caught up with those writes yet neither repeats them nor recreates children. It is an
// optimisation only: after a restart it is empty and the reconciler falls back to the API server's answers.
type Memo struct {
	mu   sync.Mutex
	runs map[types.NamespacedName]remembered
}

type remembered struct {
	uid        types.UID
	jobCreated bool
	// status is the manager's part of the status this process last applied.
	status *evalsv1alpha1.EvalRunStatus
	// counted are the decisions of the current attempt already counted in the metrics.
	counted map[string]bool
	// forbidden is when this process first saw the API server refuse (Forbidden) a child of the attempt numbered
	// forbiddenAttempt.
	forbidden        time.Time
	forbiddenAttempt int32
	// AppliedAt is when this process last applied the run's status.
	appliedAt time.Time
	// stoppedPods are the pods of stopped shards this process marked and evicted.
	stoppedPods map[string]bool
	// bucketSections are the collections this process read from the bucket (statusFrom: Bucket), by shard, with
	// the pod that stored each: a collection is read once per pod.
	bucketSections map[int]podSection
}

func New() *Memo { return &Memo{runs: map[types.NamespacedName]remembered{}} }

func (m *Memo) Get(key types.NamespacedName, uid types.UID) remembered {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.runs[key]
	if r.uid != uid {
		return remembered{uid: uid}
	}
	return r
}

func (m *Memo) Update(key types.NamespacedName, uid types.UID, f func(*remembered)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.runs[key]
	if r.uid != uid {
		r = remembered{uid: uid}
	}
	f(&r)
	m.runs[key] = r
}

func (m *Memo) Forget(key types.NamespacedName) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.runs, key)
}

// JobCreated reports whether this process created (or found) the run's Job.
func (m *Memo) JobCreated(key types.NamespacedName, uid types.UID) bool {
	return m.Get(key, uid).jobCreated
}

func (m *Memo) MarkJobCreated(key types.NamespacedName, uid types.UID) {
	m.Update(key, uid, func(r *remembered) { r.jobCreated = true })
}

// ForbiddenSince returns when this process first saw the creation of a child of the run's attempt refused with
// Forbidden, recording now when it is the first.
func (m *Memo) ForbiddenSince(key types.NamespacedName, uid types.UID, attempt int32, now time.Time) time.Time {
	var since time.Time
	m.Update(key, uid, func(r *remembered) {
		if r.forbidden.IsZero() || r.forbiddenAttempt != attempt {
			r.forbidden, r.forbiddenAttempt = now, attempt
		}
		since = r.forbidden
	})
	return since
}

// AlreadyApplied reports whether s is the status this process last applied for the run, but for the conditions'
// transition times: a reconcile that reads the run from a cache that has not caught up with that write computes
// them anew, a second later perhaps, and writing again would only move them.
func (m *Memo) AlreadyApplied(key types.NamespacedName, uid types.UID, s *evalsv1alpha1.EvalRunStatus) bool {
	last := m.Get(key, uid).status
	return last != nil && equality.Semantic.DeepEqual(withoutTransitionTimes(last), withoutTransitionTimes(s))
}

// withoutTransitionTimes is the manager's part of s, as it applies it, with its conditions' lastTransitionTime
// cleared.
func withoutTransitionTimes(s *evalsv1alpha1.EvalRunStatus) *acv1alpha1.EvalRunStatusApplyConfiguration {
	ac := statusapply.Manager(s)
	for i := range ac.Conditions {
		ac.Conditions[i].LastTransitionTime = nil
	}
	return ac
}

func (m *Memo) MarkApplied(key types.NamespacedName, uid types.UID, s *evalsv1alpha1.EvalRunStatus, at time.Time) {
	m.Update(key, uid, func(r *remembered) { r.status, r.appliedAt = s, at })
}

// AppliedAt is when this process last applied the run's status (zero: never).
func (m *Memo) AppliedAt(key types.NamespacedName, uid types.UID) time.Time {
	return m.Get(key, uid).appliedAt
}

// FirstTime reports whether this is the first time the decision what (of the run's current attempt) is counted
// by this process, and marks it counted: a status written twice while the cache lags is counted once.
func (m *Memo) FirstTime(key types.NamespacedName, uid types.UID, what string) bool {
	first := false
	m.Update(key, uid, func(r *remembered) {
		if !r.counted[what] {
			if r.counted == nil {
				r.counted = map[string]bool{}
			}
			r.counted[what], first = true, true
		}
	})
	return first
}

// PodStopped reports whether this process has marked and evicted pod (of a stopped shard of the run) or released
// it (a succeeded shard's, releasePods) already: a reconcile whose cache does not show the pod's condition or its
// deletion yet does not act on it again.
func (m *Memo) PodStopped(key types.NamespacedName, uid types.UID, pod string) bool {
	return m.Get(key, uid).stoppedPods[pod]
}

func (m *Memo) MarkPodStopped(key types.NamespacedName, uid types.UID, pod string) {
	m.Update(key, uid, func(r *remembered) {
		if r.stoppedPods == nil {
			r.stoppedPods = map[string]bool{}
		}
		r.stoppedPods[pod] = true
	})
}

// podSection is a shard's collection and the pod whose collector stored it.
type podSection struct {
	pod     string
	section *results.Section
}

// BucketSection returns the collection of shard index stored by pod that this process read from the bucket, nil
// when it has not read it.
func (m *Memo) BucketSection(key types.NamespacedName, uid types.UID, index int, pod string) *results.Section {
	ps, ok := m.Get(key, uid).bucketSections[index]
	if !ok || ps.pod != pod || pod == "" {
		return nil
	}
	return ps.section
}

// BucketSectionOfAnyPod is the section remembered for shard index, whichever pod stored it: for a shard whose
// pods are gone.
func (m *Memo) BucketSectionOfAnyPod(key types.NamespacedName, uid types.UID, index int) *results.Section {
	ps, ok := m.Get(key, uid).bucketSections[index]
	if !ok {
		return nil
	}
	return ps.section
}

func (m *Memo) RememberBucketSection(key types.NamespacedName, uid types.UID, index int, pod string, s *results.Section) {
	m.Update(key, uid, func(r *remembered) {
		if r.bucketSections == nil {
			r.bucketSections = map[int]podSection{}
		}
		r.bucketSections[index] = podSection{pod: pod, section: s}
	})
}
