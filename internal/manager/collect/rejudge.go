package collect

import (
	"context"
	"fmt"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/assess"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/children"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
)

// RejudgePlan is what a re-judge (spec.rejudge) takes from its source run: where the source's records are, its
// shard count, its trials (count, and the pass rate unless the re-judge's spec sets one) and how its runner wrote
// its output.
type RejudgePlan struct {
	config   podwire.Rejudge
	shards   int32
	trials   int32
	passRate string
	batching string
}

// planRejudge reads the run named by spec.rejudge.from and its pinned run.json, and decides where this run's
// collectors read its kept records. It returns an assessment instead when the source has not finished yet
// (Pending, rechecked) or cannot be judged again (RejudgeSourceInvalid, final, naming what is wrong).
func (r *Collections) planRejudge(ctx context.Context, run *evalsv1alpha1.EvalRun, now time.Time) (*RejudgePlan, *assess.Assessment, error) {
	from := run.Spec.Rejudge.From
	invalid := func(format string, args ...any) (*RejudgePlan, *assess.Assessment, error) {
		return nil, &assess.Assessment{State: assess.StateFailed, Reason: evalsv1alpha1.ReasonRejudgeSourceInvalid,
			Message: textbound.Head(fmt.Sprintf(format, args...), assess.MaxConditionMessage)}, nil
	}
	src, outcome, wait, err := r.finishedSource(ctx, run, from, "spec.rejudge.from", evalsv1alpha1.ReasonRejudgeSourceInvalid,
		"judging its records again", now)
	if wait != nil || err != nil {
		return nil, wait, err
	}
	if rec := src.Status.Records; rec == nil || rec.Kept == 0 {
		return invalid("EvalRun %s kept no records (status.records: %s; it ended %s: %s): only a run that kept its runner's records can be judged again",
			from, describeRecords(rec), outcome.Reason, assess.OneLine(outcome.Message))
	}
	if src.Spec.Resume != nil || src.Status.Resume != nil {
		return invalid("EvalRun %s resumed another run: the records of the cases it carried are that run's; judge the runs it was made of instead", from)
	}
	srcCfg, msg, err := r.sourceRunConfig(ctx, src)
	switch {
	case err != nil:
		return nil, nil, err
	case msg != "":
		return invalid("%s: where its records are is unknown", msg)
	}
	return rejudgeFrom(run, src, srcCfg)
}

// sourceRunConfig reads the run.json pinned in the eval ConfigMap of src, a finished run that another run takes
// something from (spec.rejudge.from, spec.resume.from). It returns a message instead when that ConfigMap is not
// there (the run ended before it pinned its eval file, or it was deleted) or its run.json cannot be read.
func (r *Collections) sourceRunConfig(ctx context.Context, src *evalsv1alpha1.EvalRun) (podwire.RunConfig, string, error) {
	cm := &corev1.ConfigMap{}
	name := children.NamesFor(src.Name).EvalConfigMap
	if err := r.apiReader.Get(ctx, client.ObjectKey{Namespace: src.Namespace, Name: name}, cm); err != nil {
		if apierrors.IsNotFound(err) {
			return podwire.RunConfig{}, fmt.Sprintf("EvalRun %s has no pinned eval ConfigMap %s", src.Name, name), nil
		}
		return podwire.RunConfig{}, "", fmt.Errorf("reading ConfigMap %s of EvalRun %s: %w", name, src.Name, err)
	}
	cfg, err := children.RunConfigFrom(cm)
	if err != nil {
		return podwire.RunConfig{}, fmt.Sprintf("the run configuration of EvalRun %s cannot be read: %v", src.Name, err), nil
	}
	return cfg, "", nil
}

// rejudgeFrom is the pure part of planRejudge: the plan for judging src's records again (srcCfg is src's
// run.json), or a final assessment naming what makes them unreadable to run.
func rejudgeFrom(run, src *evalsv1alpha1.EvalRun, srcCfg podwire.RunConfig) (*RejudgePlan, *assess.Assessment, error) {
	invalid := func(format string, args ...any) (*RejudgePlan, *assess.Assessment, error) {
		return nil, &assess.Assessment{State: assess.StateFailed, Reason: evalsv1alpha1.ReasonRejudgeSourceInvalid,
			Message: textbound.Head(fmt.Sprintf(format, args...), assess.MaxConditionMessage)}, nil
	}
	plan := &RejudgePlan{shards: max(srcCfg.Shards, 1), trials: int32(podwire.TrialCount(srcCfg.Trials)), batching: srcCfg.Batching,
		config: podwire.Rejudge{From: src.Name, FromUID: string(src.UID), Shards: max(srcCfg.Shards, 1)}}
	if plan.trials > 1 {
		// Each pod judges one trial of one shard, its source's: the source's trials' count, and its pass rate
		// (run.json's; a run.json written before it recorded one: the source's spec) unless this run sets one.
		plan.passRate = srcCfg.TrialsPassRate
		if plan.passRate == "" {
			rule, err := children.TrialRule(src)
			if err != nil {
				return invalid("EvalRun %s's spec.trials: %v", src.Name, err)
			}
			plan.passRate = rule.PassRateText
		}
		if t := run.Spec.Trials; t != nil && t.PassRate != nil {
			plan.passRate = *t.PassRate
		}
	}
	if plan.batching == "" {
		plan.batching = string(evalsv1alpha1.DefaultBatching)
	}
	switch where := src.Status.Records.Where; {
	case where == evalsv1alpha1.RecordsInBucket || srcCfg.Bucket != nil:
		// The collector reads the source's records objects with this run's bucket credentials: the same bucket,
		// under the same prefix.
		if run.Spec.Storage == nil || src.Spec.Storage == nil {
			return invalid("EvalRun %s kept its records in a bucket: set spec.storage.s3 to the same bucket (endpoint, bucket and prefix), "+
				"whose credentials the collector then reads them with", src.Name)
		}
		a, b := run.Spec.Storage.S3, src.Spec.Storage.S3
		if a.Endpoint != b.Endpoint || a.Bucket != b.Bucket || ptr.Deref(a.Prefix, "") != ptr.Deref(b.Prefix, "") {
			return invalid("EvalRun %s kept its records in bucket %s at %s (prefix %q); this run's spec.storage.s3 is bucket %s at %s (prefix %q): "+
				"a re-judge reads the records with its own bucket's credentials, so it must be the same",
				src.Name, b.Bucket, b.Endpoint, ptr.Deref(b.Prefix, ""), a.Bucket, a.Endpoint, ptr.Deref(a.Prefix, ""))
		}
		plan.config.InBucket = true
	default:
		if children.BucketOnly(run) {
			return invalid("EvalRun %s kept its records in ConfigMaps, which a pod with spec.storage.statusFrom: Bucket (no API access) cannot read", src.Name)
		}
		if srcCfg.Records == nil || len(srcCfg.Records.ConfigMaps) == 0 {
			return invalid("EvalRun %s names no record ConfigMaps in its run configuration", src.Name)
		}
		plan.config.ConfigMaps = srcCfg.Records.ConfigMaps
		plan.config.ConfigMapsPerShard = srcCfg.Records.ConfigMapsPerShard
		if plan.shards > 1 && plan.config.ConfigMapsPerShard <= 0 {
			return invalid("EvalRun %s has %d shards but its run configuration does not say which record ConfigMaps are whose", src.Name, plan.shards)
		}
	}
	return plan, nil, nil
}

// describeRecords says what status.records holds.
func describeRecords(rec *evalsv1alpha1.RecordsStatus) string {
	if rec == nil {
		return "none; the run is from before records were kept, or kept none"
	}
	return fmt.Sprintf("kept %d, not kept %d", rec.Kept, rec.NotKept)
}

// configRun is the run as its run.json is built: with the source's shard count and trials (the re-judge's pod of
// shard i and trial t reads the source's pod of shard i and trial t) and this run's parallelism.
func (p *RejudgePlan) configRun(run *evalsv1alpha1.EvalRun) *evalsv1alpha1.EvalRun {
	out := run.DeepCopy()
	sh := &evalsv1alpha1.Sharding{Shards: ptr.To(p.shards)}
	if run.Spec.Sharding != nil {
		sh.Parallelism = run.Spec.Sharding.Parallelism
	}
	out.Spec.Sharding = sh
	if p.trials > 1 {
		out.Spec.Trials = &evalsv1alpha1.Trials{Count: ptr.To(p.trials), PassRate: ptr.To(p.passRate)}
	}
	return out
}

// apply sets what a re-judge's run.json takes from the plan: where the source's records are, and the source's
// batching (records are written into the snapshot as its runner wrote its output). The pod runs no runner: no
// runner deadline.
func (p *RejudgePlan) apply(cfg *podwire.RunConfig) {
	rj := p.config
	cfg.Rejudge = &rj
	cfg.Batching = p.batching
	cfg.RunnerDeadlineSeconds = 0
}

// RejudgeConfigRun plans a re-judge (nil plan and run itself for any other run) and returns the run its run.json is
// built from: a re-judge takes its source's shard count. A wait or a final assessment comes back as planRejudge's.
func (r *Collections) RejudgeConfigRun(ctx context.Context, run *evalsv1alpha1.EvalRun, now time.Time) (
	*RejudgePlan, *evalsv1alpha1.EvalRun, *assess.Assessment, error) {
	if run.Spec.Rejudge == nil {
		return nil, run, nil, nil
	}
	p, wait, err := r.planRejudge(ctx, run, now)
	if wait != nil || err != nil {
		return nil, nil, wait, err
	}
	return p, p.configRun(run), nil, nil
}

// ApplyTo puts the plan into run.json (nothing for a nil plan, a run that is not a re-judge). Its code judges run
// in spec.judging.image or the manager's judge image, as any run's: a re-judge needs no target image.
func (p *RejudgePlan) ApplyTo(cfg *podwire.RunConfig) {
	if p != nil {
		p.apply(cfg)
	}
}
