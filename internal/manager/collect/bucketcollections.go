package collect

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/assess"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/bucketpool"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/children"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/metrics"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/objstore"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
	"github.com/evalrun-operator/evalrun-operator/internal/stored"
	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
)

// Collections read from the bucket (spec.storage.statusFrom: Bucket).
//
// The pods of such a run make no API call: each collector stores its collection (the shard's section, as a shard
// ConfigMap would hold it) as summary.json next to its results, and nothing else. The manager learns that a
// shard's collection is there from the pod: the collector's termination message (podwire.TerminationMessage),
// which the kubelet reports once the collector ended, says whether it stored it. Only then does the manager read
// the object, once per pod (memory keeps it), within the run's bucket call bounds; a shard whose pod is gone (its
// Job deleted) is read once when the run is decided without its Job.

// maxCollectionObjectBytes bounds a summary.json the manager reads: a shard's section is within
// podwire.ShardSectionBudgetBytes; the rest is slack for its JSON encoding.
const maxCollectionObjectBytes = 4 * podwire.ShardSectionBudgetBytes

// EndedCollector is a pod whose collector container has ended with a termination message: what it says about
// the shard's collection.
type EndedCollector struct {
	// Pod is the pod's name; FinishedAt when its collector ended.
	Pod        string
	FinishedAt time.Time
	// Message is the collector's termination message.
	Message podwire.TerminationMessage
}

// EndedCollectors returns, for each shard of shards, its newest pod whose collector has ended with a readable
// termination message (pods grouped by completion index as the classification groups them). A shard none of
// whose pods has such a collector is absent.
func EndedCollectors(pods []corev1.Pod, shards int) map[int]EndedCollector {
	out := map[int]EndedCollector{}
	for i, list := range assess.PodsByShard(pods, shards) {
		list = slices.Clone(list)
		// Newest first, as newestPod picks: the shard's current pod is the one that counts.
		slices.SortFunc(list, assess.NewerFirst)
		for p := range list {
			if e, ok := endedCollector(&list[p]); ok {
				out[i] = e
				break
			}
		}
	}
	return out
}

// endedCollector reads pod's collector's termination message, when the collector has ended (its current state:
// a collector that restarted and runs again has not ended).
func endedCollector(pod *corev1.Pod) (EndedCollector, bool) {
	s := assess.ContainerStatus(pod, podwire.ContainerCollector)
	if s == nil || s.State.Terminated == nil || s.State.Terminated.Message == "" {
		return EndedCollector{}, false
	}
	var m podwire.TerminationMessage
	if err := json.Unmarshal([]byte(s.State.Terminated.Message), &m); err != nil || m.Outcome == "" {
		return EndedCollector{}, false
	}
	return EndedCollector{Pod: pod.Name, FinishedAt: s.State.Terminated.FinishedAt.Time, Message: m}, true
}

// UnstoredCollection is the section of a shard whose collector says it could not store its collection in the
// bucket: the collector failed, with its error, as the collector records a failed bucket write in a shard
// ConfigMap when it has API access.
func UnstoredCollection(e EndedCollector, why string) *results.Section {
	at := metav1.NewTime(e.FinishedAt.UTC().Truncate(time.Second))
	msg := textbound.Head("the collector could not store the results in the bucket: "+why, results.MaxCollectionMessageBytes)
	return &results.Section{Collection: &evalsv1alpha1.CollectionStatus{
		RunnerFinished: e.Message.RunnerFinished, Outcome: evalsv1alpha1.OutcomeCollectorFailed, Message: msg,
		CollectedAt: &at, PodName: e.Pod,
	}}
}

// bucketSections reads the collections of run's shards from its bucket: of each shard whose collector ended
// (EndedCollectors of pods), the one its termination message says it stored; without job, of every shard (the
// pods are gone). A collection that should be there and is not yet is waited for (an error, retried with the
// run's backoff) until the results deadline after the collector's end, then the shard's collector failed.
func (r *Collections) bucketSections(ctx context.Context, run *evalsv1alpha1.EvalRun, job *batchv1.Job,
	pods []corev1.Pod, shards int) (map[int]*results.Section, error) {
	out := map[int]*results.Section{}
	ended := EndedCollectors(pods, shards)
	key := client.ObjectKeyFromObject(run)
	var todo []int
	for i := range shards {
		e, ok := ended[i]
		switch {
		case job != nil && !ok && !assess.InIndexSet(job.Status.CompletedIndexes, i):
			// Still running (or never started): nothing to read yet.
		case ok && !e.Message.Persisted:
			out[i] = UnstoredCollection(e, e.Message.PersistError)
		default:
			s := r.memo.BucketSection(key, run.UID, i, e.Pod)
			if !ok {
				// The shard's pods are gone (its succeeded pod released, ReleasableShardPods, or the Job
				// deleted): what was read while the pod was there, else what the bucket holds, stands.
				s = r.memo.BucketSectionOfAnyPod(key, run.UID, i)
			}
			if s != nil {
				out[i] = s
				continue
			}
			todo = append(todo, i)
		}
	}
	if len(todo) == 0 {
		return out, nil
	}
	store, missing, err := stored.OpenBucket(ctx, r.apiReader, run.Namespace, run.Spec.Storage.S3)
	if missing != "" {
		return nil, errors.New(missing)
	}
	if err != nil {
		return nil, err
	}
	ref := objstore.RunRef{Namespace: run.Namespace, Name: run.Name, UID: string(run.UID)}
	bctx, cancel := r.bounds.Context(ctx, run)
	defer cancel()
	var waiting []error
	for _, i := range todo {
		e, fromPod := ended[i]
		k, err := ref.ShardSummaryKey(i)
		if err != nil {
			return nil, err
		}
		s, err := readCollection(bctx, store, k)
		switch {
		case errors.Is(err, errUnreadableCollection):
			// Not what a collector writes: the shard's collector failed.
			if fromPod {
				out[i] = UnstoredCollection(e, err.Error())
			}
			continue
		case err != nil && !errors.Is(err, objstore.ErrNotFound):
			return nil, bucketpool.OnBucket(run.Spec.Storage.S3.Endpoint, "reading shard "+strconv.Itoa(i)+"'s collection "+store.URI(k), err)
		case !fromPod:
			// The pods are gone: what the bucket holds stands (nothing: the shard recorded nothing).
			if s != nil {
				if s.Collection != nil && s.Collection.PodName != "" {
					r.memo.RememberBucketSection(key, run.UID, i, s.Collection.PodName, s)
				}
				out[i] = s
			}
			continue
		case s != nil && s.Collection != nil && s.Collection.PodName == e.Pod:
			r.memo.RememberBucketSection(key, run.UID, i, e.Pod, s)
			out[i] = s
			continue
		}
		why := fmt.Sprintf("its termination message says it stored them, but %s is not there", store.URI(k))
		if s != nil && s.Collection != nil {
			why = fmt.Sprintf("its termination message says it stored them, but %s holds pod %s's", store.URI(k), s.Collection.PodName)
		}
		if left := e.FinishedAt.Add(podwire.Seconds(children.ResultsDeadlineSeconds(run))).Sub(r.clock.Now()); left > 0 {
			waiting = append(waiting, fmt.Errorf("shard %d (pod %s): %s yet", i, e.Pod, why))
			continue
		}
		out[i] = UnstoredCollection(e, why)
	}
	if len(waiting) > 0 {
		return nil, fmt.Errorf("waiting for collections in the bucket: %w", errors.Join(waiting...))
	}
	return out, nil
}

// errUnreadableCollection marks a summary.json that is too large or not a section.
var errUnreadableCollection = errors.New("unreadable collection")

// readCollection reads and decodes one summary.json (at most maxCollectionObjectBytes), counting what it read.
func readCollection(ctx context.Context, store *objstore.Store, key string) (*results.Section, error) {
	rc, err := store.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rc.Close() }()
	data, err := io.ReadAll(io.LimitReader(rc, maxCollectionObjectBytes+1))
	if err != nil {
		return nil, err
	}
	metrics.CountBucketRead(metrics.BucketReadCollection, len(data))
	if len(data) > maxCollectionObjectBytes {
		return nil, fmt.Errorf("%w: %s is over %d bytes", errUnreadableCollection, store.URI(key), maxCollectionObjectBytes)
	}
	var s results.Section
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("%w: %s cannot be read: %w", errUnreadableCollection, store.URI(key), err)
	}
	return &s, nil
}
