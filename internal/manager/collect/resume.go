package collect

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
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
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/objstore"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
	"github.com/evalrun-operator/evalrun-operator/internal/stored"
	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// ResumePlan is what a resumed run runs and what it carries from the earlier run.
type ResumePlan struct {
	// Run are the case ids to run, in file order; Keep selects their indexes in the eval file.
	Run  []string
	Keep map[int]bool
	// Carried are the ConfigMaps holding the carried results (gzip'd JSONL, each result marked carriedFrom), for
	// the reconciler to create; or, for a run that stores its results in a bucket, CarriedObjects are the objects
	// holding them, in its bucket (PlanResume stored them).
	Carried        []*corev1.ConfigMap
	CarriedObjects []string
	// Record is status.resume.
	Record *evalsv1alpha1.ResumeStatus
}

// PlanResume reads the earlier run named by spec.resume.from and decides, for the eval file's case ids (its sha256
// is digest), which cases run again and which results are carried; here is this run's configuration, whose
// judging the earlier run's must be (otherJudging). It returns an assessment instead when the earlier run has not
// finished yet (Pending, rechecked) or cannot be resumed (ResumeSourceInvalid, final).
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
	if n := sourceTrials(src); n > 1 {
		return invalid("EvalRun %s answered every case %d times (spec.trials): resuming a run's trials is still to come "+
			"(docs/design/trials.md); run it again instead", from, n)
	}
	if src.Status.EvalFileSHA256 != digest {
		return invalid("EvalRun %s ran an eval file with sha256 %q; this run's eval file has sha256 %q: a run resumes only the same eval file",
			from, src.Status.EvalFileSHA256, digest)
	}
	refs := src.Status.Results
	if refs == nil || len(refs.ConfigMaps)+len(refs.Objects) == 0 {
		return invalid("EvalRun %s has no stored results to resume from (it ended %s: %s)", from, outcome.Reason, assess.OneLine(outcome.Message))
	}
	if msg, err := r.otherJudging(ctx, src, here); msg != "" || err != nil {
		return nil, &assess.Assessment{State: assess.StateFailed, Reason: evalsv1alpha1.ReasonResumeSourceInvalid, Message: msg}, err
	}
	carry := map[string][]byte{}
	msg, err := r.eachStoredLine(ctx, run, src, func(l *results.Line) error {
		if _, dup := carry[l.ID]; dup || !carried(l, mode) {
			return nil
		}
		if l.CarriedFrom == "" {
			l.CarriedFrom = from
		}
		line, err := json.Marshal(l)
		carry[l.ID] = line
		return err
	})
	switch {
	case msg != "":
		return invalid("the results of EvalRun %s: %s", from, msg)
	case err != nil:
		return nil, nil, fmt.Errorf("reading the results of EvalRun %s: %w", from, err)
	}
	plan := &ResumePlan{Keep: map[int]bool{}}
	var lines [][]byte
	for i, id := range ids {
		if line, ok := carry[id]; ok {
			lines = append(lines, line)
			continue
		}
		plan.Run = append(plan.Run, id)
		plan.Keep[i] = true
	}
	plan.Record = &evalsv1alpha1.ResumeStatus{From: from, FromUID: string(src.UID), Cases: mode,
		Ran: int32(len(plan.Run)), Carried: int32(len(lines))}
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

// otherJudging reads the judging src's verdicts were given under (its pinned run.json) and returns, when it is not
// here's, the ResumeSourceInvalid message naming each difference (assess.JudgingMismatch), or one saying that it cannot
// be read; "" when src judged as this run judges.
func (r *Collections) otherJudging(ctx context.Context, src *evalsv1alpha1.EvalRun, here podwire.RunConfig) (string, error) {
	there, msg, err := r.sourceRunConfig(ctx, src)
	switch {
	case err != nil:
		return "", err
	case msg != "":
		return textbound.Head(msg+": the judging its verdicts were given under is unknown, so they cannot be carried", assess.MaxConditionMessage), nil
	}
	if diff := assess.JudgingDifferences(there, here); len(diff) > 0 {
		return textbound.Head(assess.JudgingMismatch(src.Name, diff), assess.MaxConditionMessage), nil
	}
	return "", nil
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

// carried reports whether an earlier result is kept by a resume in mode: Missing keeps every result that has a
// record; NotPassed keeps only passing ones.
func carried(l *results.Line, mode evalsv1alpha1.ResumeCases) bool {
	if mode == evalsv1alpha1.ResumeNotPassed {
		return l.Verdict == verdict.VerdictPass
	}
	return !l.Missing
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

// sourceTrials is the number of trials of every case of a finished run: its status.trials' count, else its spec's.
func sourceTrials(src *evalsv1alpha1.EvalRun) int {
	if t := src.Status.Trials; t != nil {
		return max(int(t.Count), 1)
	}
	return children.Trials(src)
}
