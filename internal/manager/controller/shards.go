package controller

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/assess"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/children"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
	"github.com/evalrun-operator/evalrun-operator/internal/statusapply"
	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
)

// observeShards classifies a sharded or resumed run from its Job, its pods and its shards' collections
// (internal/manager/collect), records the shards in status, and, once the run is decided, merges the shards'
// results into its status.
// collect reads the run as the manager runs it, with trials (children.RunWithTrials).
func (r *EvalRunReconciler) observeShards(ctx context.Context, run *evalsv1alpha1.EvalRun, trials children.RunTrials,
	obs assess.Observation, facts assess.StatusFacts) (*observed, error) {
	so, err := r.collect.ObserveShards(ctx, children.RunWithTrials(run, trials), obs.Job, obs.Pods)
	if err != nil {
		return nil, err
	}
	v := assess.ClassifyShards(obs, so, r.opts)
	if len(obs.Pods) == 0 && v.Assessment.RecheckAfter == 0 && !v.Assessment.State.Terminal() && !ptr.Deref(obs.Job.Spec.Suspend, false) {
		v.Assessment.RecheckAfter = assess.PodRejectedRecheck
	}
	return r.decideShards(ctx, run, trials, so, v, facts, obs.Job)
}

// observeShardsWithoutJob ends a sharded or resumed run whose Job is gone: the shards' recorded collections stand,
// the rest were cancelled. collect reads the run with trials, as in observeShards.
func (r *EvalRunReconciler) observeShardsWithoutJob(ctx context.Context, run *evalsv1alpha1.EvalRun, trials children.RunTrials) (*observed, error) {
	so, err := r.collect.ObserveShards(ctx, children.RunWithTrials(run, trials), nil, nil)
	if err != nil {
		return nil, err
	}
	return r.decideShards(ctx, run, trials, so, assess.ShardsWithoutJob(so, run.Status.JobName, run.Status.Shards), assess.StatusFactsFrom(run), nil)
}

// decideShards records the shards in the facts and, when the run is decided, merges their results first: the
// run's terminal condition is written only once its merged results are.
func (r *EvalRunReconciler) decideShards(ctx context.Context, run *evalsv1alpha1.EvalRun, trials children.RunTrials, so assess.ShardObservation,
	v assess.ShardVerdict, facts assess.StatusFacts, job *batchv1.Job) (*observed, error) {
	facts.Sharding, facts.Shards = assess.ShardingStatus(v.Statuses)
	facts.CodeJudgeLandlockABI = assess.LowestLandlockABI(so.Sections)
	a := v.Assessment
	if a.State.Terminal() {
		merged, err := r.mergeShards(ctx, run, trials, so, v)
		if err != nil {
			wait := assess.Assessment{State: assess.StateCollecting, Reason: evalsv1alpha1.ReasonCollecting,
				Message: textbound.Head("merging the shards' results: "+assess.OneLine(err.Error()), assess.MaxConditionMessage)}
			return &observed{assessment: wait, facts: facts, job: job}, err
		}
		// The Passed and BudgetExceeded conditions are decided on the merged summary and cost, which the cache
		// does not show yet.
		run.Status.Summary, run.Status.Cost = merged.Summary, merged.Cost
	}
	return &observed{assessment: a, facts: facts, job: job}, nil
}

// mergeShards merges the shards' stored results (collect.Merge) and writes the merged section into the run's
// status with its own field manager (statusapply.FieldManagerMerge), then returns it. collect merges the run with
// its trials (children.RunWithTrials), whose source status.trials names.
func (r *EvalRunReconciler) mergeShards(ctx context.Context, run *evalsv1alpha1.EvalRun, trials children.RunTrials,
	so assess.ShardObservation, v assess.ShardVerdict) (*results.Section, error) {
	section, err := r.collect.Merge(ctx, children.RunWithTrials(run, trials), so, v)
	if err != nil {
		return nil, err
	}
	if section.Trials != nil {
		section.Trials.Source = trials.Source
	}
	ac := statusapply.EvalRun(run.Namespace, run.Name, run.UID, statusapply.Collector(section))
	if err := r.client.Status().Apply(ctx, ac, client.FieldOwner(statusapply.FieldManagerMerge), client.ForceOwnership); err != nil {
		return nil, fmt.Errorf("applying the merged results of EvalRun %s: %w", run.Name, err)
	}
	return section, nil
}
