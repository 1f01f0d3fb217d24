package collect

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/assess"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/evalsource"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/metrics"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/children"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
)

// ObserveShards reads what the shards of a sharded or resumed run recorded, for assess.ClassifyShards: the run's
// shard ConfigMaps from the cache (their data is kept there; they are small) and
// the number of shards and cases from the Job (or, without a Job, from the shard ConfigMaps); a run whose pods
// make no API call (statusFrom: Bucket) has no shard ConfigMaps: its shards' collections are read from the bucket
// (bucketSections, told by pods which are there), and without a Job its shards are counted from the pinned
// run.json.
func (r *Collections) ObserveShards(ctx context.Context, run *evalsv1alpha1.EvalRun, job *batchv1.Job,
	pods []corev1.Pod) (assess.ShardObservation, error) {
	if children.BucketOnly(run) {
		return r.bucketShardObservation(ctx, run, job, pods)
	}
	var cms corev1.ConfigMapList
	err := r.client.List(ctx, &cms, client.InNamespace(run.Namespace),
		client.MatchingLabels{podwire.LabelRun: children.NamesFor(run.Name).RunLabel, podwire.LabelComponent: children.ComponentShard})
	if err != nil {
		return assess.ShardObservation{}, fmt.Errorf("listing the shard ConfigMaps of EvalRun %s: %w", run.Name, err)
	}
	so := assess.ShardObservation{Shards: 1, Trials: jobTrials(run, job), Sections: map[int]*results.Section{}}
	if job != nil {
		if job.Spec.CompletionMode != nil && *job.Spec.CompletionMode == batchv1.IndexedCompletion {
			so.Shards = int(ptr.Deref(job.Spec.Completions, 1))
		}
		so.Cases, _ = strconv.Atoi(job.Annotations[podwire.AnnotationCases])
	}
	shardCMs := 0
	for i := range cms.Items {
		cm := &cms.Items[i]
		if !metav1.IsControlledBy(cm, run) {
			continue
		}
		shardCMs++
		index, err := strconv.Atoi(cm.Labels[podwire.LabelShard])
		if err != nil || index < 0 {
			continue
		}
		raw, ok := cm.Data[podwire.ShardSectionKey]
		if !ok {
			continue
		}
		var s results.Section
		if err := json.Unmarshal([]byte(raw), &s); err != nil {
			// A shard ConfigMap is the collector's; an unreadable one counts as a shard that recorded nothing.
			continue
		}
		so.Sections[index] = &s
	}
	if job == nil {
		so.Shards = max(1, shardCMs)
		if run.Spec.Rejudge != nil {
			// A re-judge's trials are its source's, which its spec does not say: its pinned run.json does.
			cfg, err := r.pinnedConfig(ctx, run)
			if err != nil {
				return assess.ShardObservation{}, err
			}
			if cfg != nil {
				so.Trials = podwire.TrialCount(cfg.Trials)
			}
		}
	}
	return so, nil
}

// jobTrials is the number of trials of every case of run: its Job's (the Job of a run with trials says them, so
// a re-judge's, whose spec does not, are known too), else its spec's.
func jobTrials(run *evalsv1alpha1.EvalRun, job *batchv1.Job) int {
	if job != nil {
		if n, err := strconv.Atoi(job.Annotations[podwire.AnnotationTrials]); err == nil && n > 1 {
			return n
		}
	}
	return children.Trials(run)
}

// pinnedConfig is the run's pinned run.json (nil when the run has pinned none).
func (r *Collections) pinnedConfig(ctx context.Context, run *evalsv1alpha1.EvalRun) (*podwire.RunConfig, error) {
	pinned, err := evalsource.PinnedConfigMap(ctx, r.apiReader, run)
	if err != nil || pinned == nil {
		return nil, err
	}
	cfg, err := children.RunConfigFrom(pinned)
	if err != nil {
		return nil, err
	}
	return &cfg, nil
}

// bucketShardObservation is ObserveShards for a run whose shards' collections are in its bucket.
func (r *Collections) bucketShardObservation(ctx context.Context, run *evalsv1alpha1.EvalRun, job *batchv1.Job,
	pods []corev1.Pod) (assess.ShardObservation, error) {
	so := assess.ShardObservation{Shards: 1, Trials: jobTrials(run, job)}
	if job != nil {
		if job.Spec.CompletionMode != nil && *job.Spec.CompletionMode == batchv1.IndexedCompletion {
			so.Shards = int(ptr.Deref(job.Spec.Completions, 1))
		}
		so.Cases, _ = strconv.Atoi(job.Annotations[podwire.AnnotationCases])
	} else {
		cfg, err := r.pinnedConfig(ctx, run)
		if err != nil {
			return assess.ShardObservation{}, err
		}
		if cfg != nil {
			so.Shards, so.Trials = cfg.Pods(), podwire.TrialCount(cfg.Trials)
		}
	}
	sections, err := r.bucketSections(ctx, run, job, pods, so.Shards)
	if err != nil {
		return assess.ShardObservation{}, err
	}
	so.Sections = sections
	return so, nil
}

// Merge merges the shards' stored results (and, for a resumed run, the carried ones) into the run's status
// results section, as the reconciler writes it with its own field manager (statusapply.FieldManagerMerge), and
// returns it. Its cost is summed from every stored result (carried ones apart) and names the budgets any shard
// reached. In a run with trials every pod's results are one trial's: each case is decided over its trials
// (results.Merger.WithTrials), which reads the stored results twice. It is idempotent: the same shards give the
// same section.
func (r *Collections) Merge(ctx context.Context, run *evalsv1alpha1.EvalRun, so assess.ShardObservation,
	v assess.ShardVerdict) (*results.Section, error) {
	pinned, err := evalsource.PinnedConfigMap(ctx, r.apiReader, run)
	if err != nil {
		return nil, err
	}
	if pinned == nil {
		return nil, fmt.Errorf("the pinned eval ConfigMap %s is gone", children.NamesFor(run.Name).EvalConfigMap)
	}
	cfg, err := children.RunConfigFrom(pinned)
	if err != nil {
		return nil, err
	}
	ids := cfg.CaseIDs
	if len(cfg.AllCaseIDs) > 0 {
		ids = cfg.AllCaseIDs
	}
	// A case's index among those run (and so its shard).
	runIndex := make(map[string]int, len(cfg.CaseIDs))
	for i, id := range cfg.CaseIDs {
		runIndex[id] = i
	}
	var names, objects []string
	at := metav1.Time{}
	for i := range so.Shards {
		s := so.Sections[i]
		if s == nil {
			continue
		}
		if s.Results != nil {
			names = append(names, results.ConfigMapNames(s.Results)...)
			objects = append(objects, results.ObjectURLs(s.Results)...)
		}
		if c := s.Collection; c != nil && c.CollectedAt != nil && at.Before(c.CollectedAt) {
			at = *c.CollectedAt
		}
	}
	names = append(names, cfg.CarriedConfigMaps...)
	objects = append(objects, cfg.CarriedObjects...)
	if at.IsZero() {
		at = metav1.NewTime(r.clock.Now().UTC().Truncate(time.Second))
	}
	// The pods are the cases' shards times their trials (so.Shards counts the pods).
	trials := podwire.TrialCount(cfg.Trials)
	so.Trials = trials
	shards := so.CaseShards()
	m := results.NewMerger(ids, names, objects, MergedSectionBudget(r.opts.StatusBudgetBytes, v.Statuses))
	if trials > 1 {
		// The rule run.json records (a re-judge's is its source's).
		rule, err := children.ConfigTrialRule(run, cfg)
		if err != nil {
			return nil, err
		}
		m.WithTrials(rule, func(index, trial int) string {
			i, ran := runIndex[ids[index]]
			if !ran || !cfg.RunsInTrial(i, trial) {
				// A resumed run carried this trial's result rather than run it.
				return carriedGone(cfg)
			}
			k := podwire.PodIndex(assess.ShardOf(i, len(cfg.CaseIDs), shards), trial, shards)
			if k >= len(v.Shards) {
				return ""
			}
			a := v.Shards[k]
			return fmt.Sprintf("%s recorded no result for this case (%s): %s", so.PodName(k), a.Reason, assess.OneLine(a.Message))
		})
	}
	// Results that are gone (a ConfigMap or object deleted) leave their cases missing, with the reason below.
	read := func(add func([]byte) error) error {
		return r.eachStoredChunk(ctx, run, names, objects, true, func(where string, data []byte) error {
			if run.Spec.Storage != nil {
				metrics.CountBucketRead(metrics.BucketReadResults, len(data))
			}
			if err := add(data); err != nil {
				return fmt.Errorf("%s: %w", where, err)
			}
			return nil
		})
	}
	if err := read(m.AddChunk); err != nil {
		return nil, err
	}
	if trials > 1 {
		// A case is shown by one of its trials, known once every trial is in: the results are read again.
		if err := read(m.ShowChunk); err != nil {
			return nil, err
		}
	}
	for i := range so.Shards {
		var trial *int32
		shard := int32(i)
		if trials > 1 {
			k, t := so.ShardTrial(i)
			shard, trial = int32(k), ptr.To(int32(t))
		}
		m.AddCollection(so.Sections[i], &shard, trial)
	}
	section, err := m.Finish(func(index int) string {
		i, ran := runIndex[ids[index]]
		if !ran {
			return carriedGone(cfg)
		}
		k := assess.ShardOf(i, len(cfg.CaseIDs), shards)
		if k >= len(v.Shards) {
			return ""
		}
		a := v.Shards[k]
		return fmt.Sprintf("shard %d recorded no result for this case (%s): %s", k, a.Reason, assess.OneLine(a.Message))
	}, func(index int) (int32, bool) {
		i, ran := runIndex[ids[index]]
		if !ran {
			return 0, false
		}
		return int32(assess.ShardOf(i, len(cfg.CaseIDs), shards)), true
	}, at)
	if err != nil {
		return nil, err
	}
	return section, nil
}

// carriedGone says why a result a resumed run (run.json cfg) carried is not among its stored results ("" for a run
// that carried none).
func carriedGone(cfg podwire.RunConfig) string {
	if cfg.Resume == nil {
		return ""
	}
	return "the result carried from EvalRun " + cfg.Resume.From + " is gone"
}

// MergedSectionBudget is the status budget of a merged run's results section: the status budget less what the
// manager writes about the shards next to it (status.sharding and status.shards, with a quarter more for their
// managedFields), so that the section and the shards together stay within the budget however many shards there
// are. all are the shards' entries, as assess.ShardingStatus bounds them.
func MergedSectionBudget(budget int64, all []evalsv1alpha1.ShardStatus) int64 {
	sharding, listed := assess.ShardingStatus(all)
	data, err := json.Marshal(struct {
		Sharding *evalsv1alpha1.ShardingStatus `json:"sharding"`
		Shards   []evalsv1alpha1.ShardStatus   `json:"shards"`
	}{sharding, listed})
	if err != nil {
		// Plain data: Marshal cannot fail on it.
		panic(fmt.Sprintf("encode the shards' status: %v", err))
	}
	return budget - int64(len(data))*5/4
}
