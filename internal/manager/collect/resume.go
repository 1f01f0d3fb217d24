package collect

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/assess"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/bucketpool"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/evalsource"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/children"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/objstore"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
	"github.com/evalrun-operator/evalrun-operator/internal/stored"
	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
)

// ResumePlan is what a resumed run runs and what it carries from the earlier run.
type ResumePlan struct {
	// Run are the case ids to run, in file order; Keep selects their indexes in the eval file.
	Run  []string
	Keep map[int]bool
	// TrialRuns, in a run with trials whose trials do not all run the same cases, are the cases of Run each trial
	// runs (podwire.RunConfig.TrialRuns); nil when every trial runs every case of Run.
	TrialRuns [][]podwire.CaseSpan
	// Carried are the ConfigMaps holding the carried results (gzip'd JSONL, each result marked carriedFrom), for
	// the reconciler to create; or, for a run that stores its results in a bucket, CarriedObjects are the objects
	// holding them, in its bucket (PlanResume stored them).
	Carried        []*corev1.ConfigMap
	CarriedObjects []string
	// Record is status.resume.
	Record *evalsv1alpha1.ResumeStatus
}

// PlanResume reads the earlier run named by spec.resume.from and decides, for the eval file's case ids (its sha256
// is digest), which cases run again (with trials: which of their trials) and which results are carried; here is
// this run's configuration, whose judging the earlier run's must be (otherJudging), as its trials' count. It
// returns an assessment instead when the earlier run has not finished yet (Pending, rechecked) or cannot be
// resumed (ResumeSourceInvalid, final).
func (r *Collections) PlanResume(ctx context.Context, run *evalsv1alpha1.EvalRun, digest string, ids []string,
	here podwire.RunConfig, now time.Time) (*ResumePlan, *assess.Assessment, error) {
	spec := run.Spec.Resume
	from := spec.From
	mode := ptr.Deref(spec.Cases, evalsv1alpha1.DefaultResumeCases)
	invalid := func(format string, args ...any) (*ResumePlan, *assess.Assessment, error) {
		return nil, &assess.Assessment{State: assess.StateFailed, Reason: evalsv1alpha1.ReasonResumeSourceInvalid,
			Message: textbound.Head(fmt.Sprintf(format, args...), assess.MaxConditionMessage)}, nil
	}
	src, outcome, wait, err := r.finishedSource(ctx, run, from, "spec.resume.from", evalsv1alpha1.ReasonResumeSourceInvalid,
		"resuming it", now)
	if wait != nil || err != nil {
		return nil, wait, err
	}
	if src.Status.EvalFileSHA256 != digest {
		return invalid("EvalRun %s ran an eval file with sha256 %q; this run's eval file has sha256 %q: a run resumes only the same eval file",
			from, src.Status.EvalFileSHA256, digest)
	}
	refs := src.Status.Results
	if refs == nil || len(refs.ConfigMaps)+len(refs.Objects) == 0 {
		return invalid("EvalRun %s has no stored results to resume from (it ended %s: %s)", from, outcome.Reason, assess.OneLine(outcome.Message))
	}
	there, msg, err := r.sourceRunConfig(ctx, src)
	switch {
	case err != nil:
		return nil, nil, err
	case msg != "":
		return invalid("%s: the judging its verdicts were given under is unknown, so they cannot be carried", msg)
	}
	if msg := resumeMismatch(src.Name, there, here); msg != "" {
		return nil, &assess.Assessment{State: assess.StateFailed, Reason: evalsv1alpha1.ReasonResumeSourceInvalid, Message: msg}, nil
	}
	rule, err := children.TrialRule(run)
	if err != nil {
		return invalid("spec.trials: %v", err)
	}
	sel := newResumeSelector(ids, rule, mode, from)
	msg, err = r.eachStoredLine(ctx, run, src, sel.add)
	switch {
	case msg != "":
		return invalid("the results of EvalRun %s: %s", from, msg)
	case err != nil:
		return nil, nil, fmt.Errorf("reading the results of EvalRun %s: %w", from, err)
	}
	picked := sel.finish()
	if picked.Ignored > 0 {
		ctrl.LoggerFrom(ctx).V(2).Info("Stored results of the resumed run left out", "from", from, "ignored", picked.Ignored)
	}
	plan := &ResumePlan{Run: picked.Run, Keep: picked.Keep, TrialRuns: picked.TrialRuns}
	lines := picked.Lines
	plan.Record = &evalsv1alpha1.ResumeStatus{From: from, FromUID: string(src.UID), Cases: mode,
		Ran: int32(len(plan.Run)), Carried: int32(len(lines))}
	if rule.N() > 1 && picked.RanTrials > 0 {
		plan.Record.RanTrials = ptr.To(int32(picked.RanTrials))
	}
	if run.Spec.Storage != nil {
		// A run whose results are in a bucket keeps per-case data out of etcd: the carried results are copied
		// into its own bucket objects, however many.
		if len(lines) > 0 {
			uri, err := r.storeCarried(ctx, run, lines)
			if err != nil {
				return nil, nil, err
			}
			plan.CarriedObjects = []string{uri}
		}
		return plan, nil, nil
	}
	names := children.NamesFor(run.Name)
	cmNames := make([]string, children.ResultConfigMapCount(len(lines)))
	for i := range cmNames {
		cmNames[i] = names.CarriedConfigMap(i)
	}
	chunks, err := results.Chunks(cmNames, lines)
	if err != nil {
		return invalid("the results carried from EvalRun %s do not fit this run's ConfigMaps: %v", from, err)
	}
	for _, ch := range chunks {
		cm := &corev1.ConfigMap{ObjectMeta: children.Meta(run, ch.Destination, children.ComponentResults),
			Immutable: ptr.To(true), BinaryData: map[string][]byte{podwire.ResultsKey: ch.Data}}
		plan.Carried = append(plan.Carried, cm)
	}
	return plan, nil, nil
}

// resumeMismatch is the ResumeSourceInvalid message of a resume whose source (src, its pinned run.json there) it
// cannot carry from into this run (its run.json here): other trials (the trials a resume runs are the ones its
// source did not finish, of as many), or other judging (assess.JudgingMismatch names each difference); "" when
// it can.
func resumeMismatch(src string, there, here podwire.RunConfig) string {
	if a, b := podwire.TrialCount(there.Trials), podwire.TrialCount(here.Trials); a != b {
		return textbound.Head(fmt.Sprintf("EvalRun %s answered every case %d times (its trials.count); this run's spec.trials.count is %d: "+
			"a resume runs the trials its source did not finish, so both must have the same count; run it again instead", src, a, b),
			assess.MaxConditionMessage)
	}
	if diff := assess.JudgingDifferences(there, here); len(diff) > 0 {
		return textbound.Head(assess.JudgingMismatch(src, diff), assess.MaxConditionMessage)
	}
	return ""
}

// storeCarried writes the carried result lines as one gzip'd JSONL object of run's bucket
// (objstore.RunRef.CarriedResultsKey), within the run's bucket call bounds, and returns its s3:// URI. The key is
// the run's own, so a retry writes the same object again.
func (r *Collections) storeCarried(ctx context.Context, run *evalsv1alpha1.EvalRun, lines [][]byte) (string, error) {
	st := run.Spec.Storage.S3
	store, missing, err := stored.OpenBucket(ctx, r.apiReader, run.Namespace, st)
	if err == nil && missing != "" {
		err = errors.New(missing)
	}
	if err != nil {
		return "", bucketpool.OnBucket(st.Endpoint, "opening the bucket for the carried results", err)
	}
	key, err := objstore.RunRef{Namespace: run.Namespace, Name: run.Name, UID: string(run.UID)}.CarriedResultsKey()
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	for _, l := range lines {
		if _, err := zw.Write(append(l, '\n')); err != nil {
			return "", err
		}
	}
	if err := zw.Close(); err != nil {
		return "", err
	}
	bctx, cancel := r.bounds.Context(ctx, run)
	defer cancel()
	if err := store.Put(bctx, key, &buf, "application/gzip"); err != nil {
		return "", bucketpool.OnBucket(st.Endpoint, "storing the carried results "+store.URI(key), err)
	}
	return store.URI(key), nil
}

// CarriedConfigMapNames are the names of the plan's carried ConfigMaps.
func (p *ResumePlan) CarriedConfigMapNames() []string {
	out := make([]string, len(p.Carried))
	for i, cm := range p.Carried {
		out[i] = cm.Name
	}
	return out
}

// finishedSource reads the finished EvalRun from that run's field (spec.resume.from, spec.rejudge.from) names, and
// its terminal assessment. It returns an assessment instead when the source is this run itself or does not exist
// (reason, final) or has not finished yet (Pending, rechecked with a growing delay; doing says what waits).
func (r *Collections) finishedSource(ctx context.Context, run *evalsv1alpha1.EvalRun, from, field, reason, doing string,
	now time.Time) (*evalsv1alpha1.EvalRun, assess.Assessment, *assess.Assessment, error) {
	invalid := func(msg string) (*evalsv1alpha1.EvalRun, assess.Assessment, *assess.Assessment, error) {
		return nil, assess.Assessment{}, &assess.Assessment{State: assess.StateFailed, Reason: reason, Message: textbound.Head(msg, assess.MaxConditionMessage)}, nil
	}
	if from == run.Name {
		return invalid(field + " names this run itself")
	}
	src := &evalsv1alpha1.EvalRun{}
	if err := r.apiReader.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: from}, src); err != nil {
		if apierrors.IsNotFound(err) {
			return invalid(fmt.Sprintf("EvalRun %s, named by %s, does not exist in namespace %s", from, field, run.Namespace))
		}
		return nil, assess.Assessment{}, nil, fmt.Errorf("reading EvalRun %s, named by %s: %w", from, field, err)
	}
	outcome, done := assess.TerminalAssessment(src)
	if !done {
		return nil, outcome, &assess.Assessment{State: assess.StatePending, Reason: evalsv1alpha1.ReasonPending,
			Message:      fmt.Sprintf("waiting for EvalRun %s to finish before %s", from, doing),
			RecheckAfter: evalsource.Recheck(now.Sub(run.CreationTimestamp.Time))}, nil
	}
	return src, outcome, nil, nil
}
