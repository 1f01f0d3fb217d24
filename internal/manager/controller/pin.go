package controller

import (
	"cmp"
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/assess"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/children"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/collect"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/evalsource"
	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
)

// pinEvalFile reads, validates and pins the eval file (internal/manager/evalsource), or returns the copy an
// earlier reconcile pinned (the create meets it; a pinned copy also wins over a source that has gone since). It
// returns an assessment instead when the source is not there yet (Pending, rechecked with a growing delay) or the
// run cannot run what it found (refusal: InvalidEvalFile or InvalidSpec, final).
func (r *EvalRunReconciler) pinEvalFile(ctx context.Context, run *evalsv1alpha1.EvalRun, now time.Time) (*corev1.ConfigMap, *assess.Assessment, error) {
	found, err := r.source.Read(ctx, run)
	if err != nil {
		return nil, nil, err
	}
	if found.Missing != "" {
		if pinned, err := evalsource.PinnedConfigMap(ctx, r.apiReader, run); pinned != nil || err != nil {
			return pinned, nil, err
		}
		return nil, &assess.Assessment{State: assess.StatePending, Reason: evalsv1alpha1.ReasonPending, Message: found.Missing,
			RecheckAfter: evalsource.Recheck(now.Sub(run.CreationTimestamp.Time))}, nil
	}
	file := found.File
	caseIDs := file.CaseIDs
	invalidFile := func(msg string) (*corev1.ConfigMap, *assess.Assessment, error) {
		return nil, &assess.Assessment{State: assess.StateFailed, Reason: evalsv1alpha1.ReasonInvalidEvalFile,
			Message: textbound.Head(msg, assess.MaxConditionMessage)}, nil
	}
	if a := r.refusal(run, found); a != nil {
		return nil, a, nil
	}
	// The run's trials: the spec's, else the eval file's own.
	trials := children.EffectiveTrials(run, file.Trials())
	// A streamed bucket object has no text here (Data nil): the pods download it and cut their shards from it.
	defaults := evalsource.Defaults(run)
	pinData, runIDs := file.Data, caseIDs
	var plan *collect.ResumePlan
	if run.Spec.Resume != nil {
		// The cases to run were chosen when the run was pinned; the earlier run's results are not read again.
		if pinned, err := evalsource.PinnedConfigMap(ctx, r.apiReader, run); pinned != nil || err != nil {
			return pinned, nil, err
		}
		// The earlier run's verdicts are carried only when it judged as this run judges (collect.PlanResume).
		here := children.BuildRunConfig(run, caseIDs, defaults, file.JudgeLoad(run), r.opts)
		p, wait, err := r.collect.PlanResume(ctx, children.RunWithTrials(run, trials), file.Digest, caseIDs, here, now)
		if wait != nil || err != nil {
			return nil, wait, err
		}
		plan, runIDs = p, p.Run
		if len(runIDs) > 0 && len(runIDs) < len(caseIDs) && pinData != nil {
			if pinData, err = evalfile.Subset(pinData, func(i int) bool { return plan.Keep[i] }); err != nil {
				return invalidFile("invalid eval file: the cases to resume cannot be selected from it: " + err.Error())
			}
		}
		if err := r.createCarried(ctx, run, plan); err != nil {
			return nil, nil, err
		}
	}
	// The run as its run.json is built: a re-judge takes its source's shard count.
	rejudge, cfgRun, wait, err := r.collect.RejudgeConfigRun(ctx, run, now)
	if wait != nil || err != nil {
		return nil, wait, err
	}
	// A streamed file splits by construction: Scan parsed each item alone after the header, as the pod reads the
	// items its shard keeps (evalfile.Facts.Text).
	if shards := children.Shards(cfgRun, len(runIDs)); (shards > 1 || plan != nil && plan.TrialRuns != nil) && pinData != nil {
		if msg := evalsource.CheckSplit(pinData, runIDs, shards, defaults); msg != "" {
			return invalidFile(msg)
		}
	}
	cfg := children.BuildRunConfig(cfgRun, runIDs, defaults, file.JudgeLoad(run), r.opts)
	cfg.SharedEvaluators = file.JudgedByID(cfg.LLM != nil)
	if plan != nil {
		cfg.AllCaseIDs, cfg.CarriedConfigMaps, cfg.CarriedObjects = caseIDs, plan.CarriedConfigMapNames(), plan.CarriedObjects
		cfg.Resume = children.ResumeRecordOf(plan.Record)
		// With trials, each trial runs only its cases without a carried result: each pod cuts its own.
		children.WithTrialRuns(&cfg, plan.TrialRuns)
	}
	rejudge.ApplyTo(&cfg)
	if cp := found.Bundle.Copy(); cp != nil {
		// The pods read the manager's immutable copy, never the user's ConfigMap.
		if _, err := r.createOwned(ctx, run, cp); err != nil {
			return nil, nil, err
		}
	}
	manifest, err := found.Bundle.Pin(&cfg)
	if err != nil {
		return nil, nil, err
	}
	cm, err := evalsource.ConfigMap(run, pinData, file.Digest, cfg, manifest)
	if err != nil {
		return nil, nil, err
	}
	created, err := r.createOwned(ctx, run, cm)
	if err != nil {
		return nil, nil, err
	}
	ctrl.LoggerFrom(ctx).V(2).Info("Eval file pinned", "configMap", klog.KObj(cm), "cases", len(caseIDs))
	pinned, ok := created.(*corev1.ConfigMap)
	if !ok {
		return nil, nil, fmt.Errorf("creating ConfigMap %s returned %T", cm.Name, created)
	}
	return pinned, nil, nil
}

// refusal is the final assessment of a run whose eval file was read (found) but that cannot run: the file is
// invalid or the model endpoint resolves to nothing (InvalidEvalFile), or the eval file's own trials break the
// bound admission checks for spec.trials (InvalidSpec, children.CheckFileTrials); nil when it can run.
func (r *EvalRunReconciler) refusal(run *evalsv1alpha1.EvalRun, found evalsource.Found) *assess.Assessment {
	_, llmProblem := children.ResolveLLM(run, r.opts)
	if invalid := cmp.Or(found.Invalid, llmProblem); invalid != "" {
		return &assess.Assessment{State: assess.StateFailed, Reason: evalsv1alpha1.ReasonInvalidEvalFile,
			Message: textbound.Head(invalid, assess.MaxConditionMessage)}
	}
	file := found.File.Trials()
	if msg := children.CheckFileTrials(run, children.EffectiveTrials(run, file), file); msg != "" {
		return &assess.Assessment{State: assess.StateFailed, Reason: evalsv1alpha1.ReasonInvalidSpec,
			Message: textbound.Head(msg, assess.MaxConditionMessage)}
	}
	return nil
}

// createCarried creates a resumed run's ConfigMaps of carried results (plan.Carried).
func (r *EvalRunReconciler) createCarried(ctx context.Context, run *evalsv1alpha1.EvalRun, plan *collect.ResumePlan) error {
	carried := make([]client.Object, len(plan.Carried))
	for i, cm := range plan.Carried {
		carried[i] = cm
	}
	return r.createAll(ctx, run, carried)
}
