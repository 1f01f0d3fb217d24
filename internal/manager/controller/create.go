package controller

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/assess"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/children"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
)

// Waiting for a missing eval-file source: the delay grows with the time already waited, within these bounds.
const (
	minSourceWait = 2 * time.Second
	maxSourceWait = time.Minute
)

// createChildren creates the run's children in order: the pinned eval ConfigMap (after validating the eval
// file), the collector's ServiceAccount, Role and RoleBinding (no Role and RoleBinding when the pods make no API
// call: bucketOnly), the result ConfigMaps and the Job. Each create tolerates an existing object this run
// controls, so a reconcile interrupted half-way (or a manager restart) resumes without duplicates. It returns an
// assessment without a Job when the run must wait for its eval file or has failed validation.
func (r *EvalRunReconciler) createChildren(ctx context.Context, run *evalsv1alpha1.EvalRun, now time.Time) (*observed, error) {
	if run.Spec.Storage != nil {
		// The collector could not store a single result without the bucket's credentials: wait for them first.
		if _, _, missing, err := r.bucketCredentials(ctx, run); missing != "" || err != nil {
			if err != nil {
				missing = "checking the bucket's credentials: " + assess.OneLine(err.Error())
			}
			return &observed{assessment: assess.Assessment{State: assess.StatePending, Reason: evalsv1alpha1.ReasonPending, Message: missing,
				RecheckAfter: sourceWait(now.Sub(run.CreationTimestamp.Time))}}, err
		}
	}
	pinned, wait, err := r.pinEvalFile(ctx, run, now)
	if wait != nil {
		return &observed{assessment: *wait}, err
	}
	if err != nil {
		return nil, err
	}
	cfg, err := children.RunConfigFrom(pinned)
	if err != nil {
		return nil, err
	}
	facts := assess.StatusFacts{EvalFileSHA256: pinnedDigest(pinned), EvalConfigMapName: pinned.Name, Resume: children.ResumeStatusOf(cfg.Resume),
		EvalFileView: evalsv1alpha1.EvalFileView(cfg.EvalFileView), BundleSHA256: bundleDigest(cfg), JudgeImage: assess.JudgeImageFacts(run, cfg)}
	if len(cfg.CaseIDs) == 0 && cfg.Resume != nil {
		// Every case is carried from the earlier run: nothing runs; the carried results are the run's.
		merged, err := r.mergeShards(ctx, run, assess.ShardObservation{}, assess.ShardVerdict{})
		if err != nil {
			return nil, err
		}
		run.Status.Summary, run.Status.Cost = merged.Summary, merged.Cost
		a := assess.Assessment{State: assess.StateSucceeded, Reason: evalsv1alpha1.ReasonCompleted,
			Message: fmt.Sprintf("nothing left to run: every case's result was carried from EvalRun %s", cfg.Resume.From)}
		return &observed{assessment: a, facts: facts}, nil
	}
	objs := []client.Object{children.BuildCollectorServiceAccount(run)}
	if !cfg.BucketOnly {
		// A pod that makes no API call gets no permission at all: no Role, no RoleBinding.
		objs = append(objs, children.BuildCollectorRole(run, cfg))
	}
	for _, cm := range children.BuildResultConfigMaps(run, cfg) {
		objs = append(objs, cm)
	}
	for _, cm := range children.BuildRecordConfigMaps(run, cfg) {
		objs = append(objs, cm)
	}
	for _, cm := range children.BuildShardConfigMaps(run, cfg) {
		objs = append(objs, cm)
	}
	if !r.opts.NoNetworkPolicy {
		// Before the Job: its pods never run without their policy.
		objs = append(objs, children.BuildNetworkPolicy(run, cfg, r.opts.APIServer))
	}
	// These children are independent of each other; the RoleBinding needs the Role (the API server checks that
	// the manager holds every permission of the Role it binds, reading the Role from storage: created at the same
	// time, it may not be there yet), and the Job needs them all.
	if err := r.createAll(ctx, run, objs); err != nil {
		return nil, err
	}
	if !cfg.BucketOnly {
		if _, err := r.createOwned(ctx, run, children.BuildCollectorRoleBinding(run)); err != nil {
			return nil, err
		}
	}
	created, err := r.createOwned(ctx, run, children.BuildJob(run, cfg, r.opts))
	if err != nil {
		return nil, err
	}
	job, ok := created.(*batchv1.Job)
	if !ok {
		return nil, fmt.Errorf("creating the Job of EvalRun %s returned %T", run.Name, created)
	}
	return &observed{facts: facts, job: job}, nil
}

// createCarried creates a resumed run's ConfigMaps of carried results (plan.carried).
func (r *EvalRunReconciler) createCarried(ctx context.Context, run *evalsv1alpha1.EvalRun, plan *resumePlan) error {
	carried := make([]client.Object, len(plan.carried))
	for i, cm := range plan.carried {
		carried[i] = cm
	}
	return r.createAll(ctx, run, carried)
}

// pinEvalFile reads, validates and pins the eval file, or returns the copy an earlier reconcile pinned (the
// create meets it; a pinned copy also wins over a source that has gone since). It returns an assessment instead
// when the source is not there yet (Pending, rechecked with a growing delay) or the file is invalid
// (InvalidEvalFile, final).
func (r *EvalRunReconciler) pinEvalFile(ctx context.Context, run *evalsv1alpha1.EvalRun, now time.Time) (*corev1.ConfigMap, *assess.Assessment, error) {
	facts, pb, invalid, missing, err := r.readEvalFile(ctx, run)
	if errors.Is(err, errInvalidEvalObject) || errors.Is(err, errInvalidBundle) {
		return nil, &assess.Assessment{State: assess.StateFailed, Reason: evalsv1alpha1.ReasonInvalidEvalFile,
			Message: textbound.Head(assess.OneLine(err.Error()), assess.MaxConditionMessage)}, nil
	}
	if err != nil {
		return nil, nil, err
	}
	if missing != "" {
		if pinned, err := r.pinnedConfigMap(ctx, run); pinned != nil || err != nil {
			return pinned, nil, err
		}
		return nil, &assess.Assessment{State: assess.StatePending, Reason: evalsv1alpha1.ReasonPending, Message: missing,
			RecheckAfter: sourceWait(now.Sub(run.CreationTimestamp.Time))}, nil
	}
	caseIDs := facts.caseIDs
	invalidFile := func(msg string) (*corev1.ConfigMap, *assess.Assessment, error) {
		return nil, &assess.Assessment{State: assess.StateFailed, Reason: evalsv1alpha1.ReasonInvalidEvalFile,
			Message: textbound.Head(msg, assess.MaxConditionMessage)}, nil
	}
	_, llmProblem := children.ResolveLLM(run, r.opts)
	if invalid = cmp.Or(invalid, llmProblem); invalid != "" {
		return invalidFile(invalid)
	}
	// A streamed bucket object has no text here (data nil): the pods download it and cut their shards from it.
	digest := facts.digest
	pinData, runIDs := facts.data, caseIDs
	var plan *resumePlan
	if run.Spec.Resume != nil {
		// The cases to run were chosen when the run was pinned; the earlier run's results are not read again.
		if pinned, err := r.pinnedConfigMap(ctx, run); pinned != nil || err != nil {
			return pinned, nil, err
		}
		// The earlier run's verdicts are carried only when it judged as this run judges (judgingOf).
		here := children.BuildRunConfig(run, caseIDs, mustDefaults(run), facts.judgeLoad(run), r.opts)
		p, wait, err := r.planResume(ctx, run, digest, caseIDs, here, now)
		if wait != nil || err != nil {
			return nil, wait, err
		}
		plan, runIDs = p, p.run
		if len(runIDs) > 0 && len(runIDs) < len(caseIDs) && pinData != nil {
			if pinData, err = evalfile.Subset(pinData, func(i int) bool { return plan.keep[i] }); err != nil {
				return invalidFile("invalid eval file: the cases to resume cannot be selected from it: " + err.Error())
			}
		}
		if err := r.createCarried(ctx, run, plan); err != nil {
			return nil, nil, err
		}
	}
	// The run as its run.json is built: a re-judge takes its source's shard count.
	rejudge, cfgRun, wait, err := r.rejudgeConfigRun(ctx, run, now)
	if wait != nil || err != nil {
		return nil, wait, err
	}
	// A streamed file splits by construction: Scan parsed each item alone after the header, as the pod reads the
	// items its shard keeps (evalfile.Facts.Text).
	if shards := children.Shards(cfgRun, len(runIDs)); shards > 1 && pinData != nil {
		if msg := checkSplit(pinData, runIDs, shards, mustDefaults(run)); msg != "" {
			return invalidFile(msg)
		}
	}
	cfg := children.BuildRunConfig(cfgRun, runIDs, mustDefaults(run), facts.judgeLoad(run), r.opts)
	cfg.SharedEvaluators = facts.judgedByID(cfg.LLM != nil)
	if plan != nil {
		cfg.AllCaseIDs, cfg.CarriedConfigMaps, cfg.CarriedObjects = caseIDs, plan.carriedConfigMapNames(), plan.carriedObjects
		cfg.Resume = children.ResumeRecordOf(plan.record)
	}
	rejudge.applyTo(&cfg)
	manifest, err := r.pinBundle(ctx, run, pb, &cfg)
	if err != nil {
		return nil, nil, err
	}
	cm, err := children.BuildEvalConfigMap(run, pinData, cfg)
	if err != nil {
		return nil, nil, err
	}
	cm.Annotations = map[string]string{AnnotationEvalFileSHA256: digest}
	if manifest != nil {
		cm.Data[podwire.BundleManifestKey] = string(manifest)
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

// readEvalFile reads and validates the run's eval file: a bucket object streamed through its sha256 check and
// evalfile.Scan, never held whole (scanEvalObject); a bundle's eval file (readBundle: at most
// evalfile.MaxWholeBytes, the bundle pinned with it); or the inline text or ConfigMap key (at most 1 MiB), parsed
// whole. It returns its facts and the bundle read, or a message saying why it is invalid, or one saying what is
// missing.
func (r *EvalRunReconciler) readEvalFile(ctx context.Context, run *evalsv1alpha1.EvalRun) (evalFileFacts, *pinnedBundle, string, string, error) {
	if run.Spec.EvalFile.S3 != nil {
		facts, invalid, missing, err := r.scanEvalObject(ctx, run)
		return facts, nil, invalid, missing, err
	}
	var data []byte
	var pb *pinnedBundle
	var missing string
	var err error
	if run.Spec.EvalFile.Bundle != nil {
		if pb, missing, err = r.readBundle(ctx, run); pb != nil {
			data = pb.evalData
		}
	} else {
		data, missing, err = r.evalSource(ctx, run)
	}
	if missing != "" || err != nil {
		return evalFileFacts{}, nil, "", missing, err
	}
	facts, invalid := ValidateEvalFile(run, data)
	if invalid == "" && pb != nil {
		// Every input file must be in the bundle: the runner gets them, and only them.
		invalid = bundleInputs(pb.manifest, facts.file)
	}
	return facts, pb, invalid, "", nil
}

// ValidateEvalFile parses the eval file with the run's default evaluators. It returns the case ids in file
// order and how many cases have a code_judge, or a message listing the problems (bounded by the parser).
func ValidateEvalFile(run *evalsv1alpha1.EvalRun, data []byte) (evalFileFacts, string) {
	defaults, err := children.DefaultEvaluators(run)
	if err != nil {
		return evalFileFacts{}, "invalid eval file: " + err.Error()
	}
	f, err := evalfile.Parse(data, evalfile.WithDefaultEvaluators(defaults))
	if err != nil {
		return evalFileFacts{}, invalidMessage(err)
	}
	facts := newEvalFileFacts(evalfile.FactsOf(f), data, children.EvalSHA256(data))
	facts.file = f
	return facts, ""
}

// invalidMessage is the InvalidEvalFile message of a parse error: the problems (bounded by the parser), or the
// error.
func invalidMessage(err error) string {
	var verr *evalfile.ValidationError
	if errors.As(err, &verr) {
		return verr.Error()
	}
	return "invalid eval file: " + err.Error()
}

// evalFileFacts are what validating an eval file established.
type evalFileFacts struct {
	caseIDs        []string
	codeJudgeCases int
	facts          *evalfile.Facts
	// data is the file's text, nil for a bucket object read as a stream; digest its sha256.
	data   []byte
	digest string
	// file is the parsed file, nil for a bucket object read as a stream (a bundle's input files are checked on it).
	file *evalfile.File
}

// newEvalFileFacts returns the evalFileFacts of a valid file.
func newEvalFileFacts(f *evalfile.Facts, data []byte, digest string) evalFileFacts {
	return evalFileFacts{caseIDs: f.CaseIDs(), codeJudgeCases: f.CodeJudgeCases(), facts: f, data: data, digest: digest}
}

// judgeLoad is what judging the file's cases takes, for run (which may name a model endpoint).
func (e evalFileFacts) judgeLoad(run *evalsv1alpha1.EvalRun) children.JudgeLoad {
	load := children.JudgeLoad{CodeJudgeCases: e.codeJudgeCases}
	if e.facts != nil {
		load.LLMRequests, load.LLMRequestsPerCase = e.facts.LLMRequests(run.Spec.Judging != nil && run.Spec.Judging.LLM != nil)
	}
	return load
}

// judgedByID reports whether every case is judged by its id and the evaluators all inherit (see
// evalfile.JudgedByID and podwire.RunConfig.SharedEvaluators), with a model endpoint or without.
func (e evalFileFacts) judgedByID(llm bool) bool {
	return e.facts != nil && evalfile.JudgedByID(e.facts, llm)
}

// checkSplit checks that the eval file splits into shards whose first shard holds exactly its cases (the pods
// split it the same way), or says why not.
func checkSplit(data []byte, ids []string, shards int, defaults []map[string]any) string {
	lo, hi := podwire.ShardRange(len(ids), shards, 0)
	sub, err := evalfile.Subset(data, func(i int) bool { return i >= lo && i < hi })
	if err == nil {
		var f *evalfile.File
		if f, err = evalfile.Parse(sub, evalfile.WithDefaultEvaluators(defaults)); err == nil && !slices.Equal(f.CaseIDs(), ids[lo:hi]) {
			err = fmt.Errorf("its first shard holds %d cases instead of %d", len(f.CaseIDs()), hi-lo)
		}
	}
	if err != nil {
		return "invalid eval file: it cannot be split into shards: " + err.Error()
	}
	return ""
}

// mustDefaults returns the default evaluators; ValidateEvalFile has already rejected malformed ones.
func mustDefaults(run *evalsv1alpha1.EvalRun) []map[string]any {
	defaults, _ := children.DefaultEvaluators(run)
	return defaults
}

// sourceWait is the delay before looking for a missing eval-file source again after waiting for waited.
func sourceWait(waited time.Duration) time.Duration {
	return min(max(waited/2, minSourceWait), maxSourceWait)
}

// evalSource returns the bytes of an inline or ConfigMap eval file, or a message saying what is missing.
func (r *EvalRunReconciler) evalSource(ctx context.Context, run *evalsv1alpha1.EvalRun) ([]byte, string, error) {
	src := run.Spec.EvalFile
	if src.Inline != nil {
		return []byte(*src.Inline), "", nil
	}
	ref := src.ConfigMapKeyRef
	if ref == nil {
		return nil, "spec.evalFile names no source", nil
	}
	key := ref.Key
	if key == "" {
		key = evalsv1alpha1.DefaultEvalFileKey
	}
	cm := &corev1.ConfigMap{}
	err := r.apiReader.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: ref.Name}, cm)
	if apierrors.IsNotFound(err) {
		return nil, fmt.Sprintf("waiting for ConfigMap %s holding the eval file", ref.Name), nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("reading the eval file's ConfigMap %s: %w", ref.Name, err)
	}
	if v, ok := cm.Data[key]; ok {
		return []byte(v), "", nil
	}
	if v, ok := cm.BinaryData[key]; ok {
		return v, "", nil
	}
	return nil, fmt.Sprintf("waiting for key %s in ConfigMap %s holding the eval file", key, ref.Name), nil
}

// pinnedConfigMap reads the run's pinned eval ConfigMap from the API server; nil when it does not exist yet.
func (r *EvalRunReconciler) pinnedConfigMap(ctx context.Context, run *evalsv1alpha1.EvalRun) (*corev1.ConfigMap, error) {
	name := children.NamesFor(run.Name).EvalConfigMap
	cm := &corev1.ConfigMap{}
	err := r.apiReader.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: name}, cm)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading ConfigMap %s: %w", name, err)
	}
	if !metav1.IsControlledBy(cm, run) {
		return nil, notControlled("ConfigMap", name, run)
	}
	return cm, nil
}

// pinnedFacts recovers the eval file digest from the pinned ConfigMap when the status lost it.
func (r *EvalRunReconciler) pinnedFacts(ctx context.Context, run *evalsv1alpha1.EvalRun) (assess.StatusFacts, error) {
	facts := assess.StatusFactsFrom(run)
	cm, err := r.pinnedConfigMap(ctx, run)
	if err != nil || cm == nil {
		return facts, err
	}
	facts.EvalFileSHA256 = pinnedDigest(cm)
	facts.EvalConfigMapName = cm.Name
	if cfg, err := children.RunConfigFrom(cm); err == nil {
		facts.Resume = children.ResumeStatusOf(cfg.Resume)
		facts.EvalFileView = evalsv1alpha1.EvalFileView(cfg.EvalFileView)
		facts.BundleSHA256 = bundleDigest(cfg)
		facts.JudgeImage = assess.JudgeImageFacts(run, cfg)
	}
	return facts, nil
}

// pinnedDigest is the sha256 of the run's eval file: of the pinned copy, or, when the copy holds only the cases a
// resumed run runs, of the whole file (its annotation).
func pinnedDigest(cm *corev1.ConfigMap) string {
	if d := cm.Annotations[AnnotationEvalFileSHA256]; d != "" {
		return d
	}
	return children.EvalSHA256([]byte(cm.Data[podwire.EvalFileKey]))
}

// createAll creates the objects concurrently (at most createWorkers at once) and returns every error.
func (r *EvalRunReconciler) createAll(ctx context.Context, run *evalsv1alpha1.EvalRun, objs []client.Object) error {
	errs := make([]error, len(objs))
	// A run of many shards has thousands of children: at most createWorkers requests are in flight at once.
	workqueue.ParallelizeUntil(ctx, createWorkers, len(objs), func(i int) {
		_, errs[i] = r.createOwned(ctx, run, objs[i])
	})
	if err := ctx.Err(); err != nil {
		errs = append(errs, err) // the pieces not started when ctx ended
	}
	return errors.Join(errs...)
}

// createWorkers bounds the concurrent creates of one run's children.
const createWorkers = 16

// createOwned creates obj; when it already exists, it reads it back from the API server and accepts it only if
// run controls it. It returns the object as stored.
func (r *EvalRunReconciler) createOwned(ctx context.Context, run *evalsv1alpha1.EvalRun, obj client.Object) (client.Object, error) {
	kind := reflect.TypeOf(obj).Elem().Name()
	err := r.client.Create(ctx, obj)
	if err == nil {
		return obj, nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return nil, createFailure(fmt.Errorf("creating %s %s: %w", kind, obj.GetName(), err))
	}
	existing, ok := reflect.New(reflect.TypeOf(obj).Elem()).Interface().(client.Object)
	if !ok {
		return nil, fmt.Errorf("creating %s %s: cannot allocate a %s", kind, obj.GetName(), kind)
	}
	if err := r.apiReader.Get(ctx, client.ObjectKeyFromObject(obj), existing); err != nil {
		return nil, fmt.Errorf("reading existing %s %s: %w", kind, obj.GetName(), err)
	}
	if !metav1.IsControlledBy(existing, run) {
		return nil, notControlled(kind, obj.GetName(), run)
	}
	return existing, nil
}

func notControlled(kind, name string, run *evalsv1alpha1.EvalRun) error {
	return &childError{reason: evalsv1alpha1.ReasonChildConflict,
		err: fmt.Errorf("%s %s exists and is not controlled by EvalRun %s (uid %s); delete it or rename the run", kind, name, run.Name, run.UID)}
}

// childError is a failure to create a child that retrying cannot heal: it ends the run with its reason.
type childError struct {
	reason string
	err    error
}

func (e *childError) Error() string { return e.err.Error() }
func (e *childError) Unwrap() error { return e.err }

// forbiddenError is a create the API server refused with 403 Forbidden for a reason other than a quota: the
// manager's own RBAC (a namespaced install missing its RoleBinding), an admission webhook or policy, a namespace
// being deleted. None of these is known to be the spec's, and each may heal (an administrator fixes the RBAC, a
// webhook recovers), so the run waits, Pending with the API's message, and ends CreateForbidden only once the
// refusals have lasted the manager's --pod-rejected-timeout (createForbidden).
type forbiddenError struct{ err error }

func (e *forbiddenError) Error() string { return e.err.Error() }
func (e *forbiddenError) Unwrap() error { return e.err }

// quotaExceeded reports a Forbidden that a ResourceQuota gave: it may free up, and is retried for as long as it
// takes.
func quotaExceeded(err error) bool { return strings.Contains(err.Error(), "exceeded quota") }

// createFailure classifies a failed create (err wraps the API server's error): a forbiddenError for a refusal
// that may heal (createForbidden decides), a childError ending the run InvalidSpec for an object the API server
// will never take (the same create fails the same way on every retry: the run ends with the API's message), and
// err itself, retried with backoff, for the rest.
func createFailure(err error) error {
	switch {
	case apierrors.IsForbidden(err) && !quotaExceeded(err):
		return &forbiddenError{err: err}
	case permanentCreateError(err):
		return &childError{reason: evalsv1alpha1.ReasonInvalidSpec, err: err}
	}
	return err
}

// permanentCreateError reports whether a create error will not heal by itself: the object is invalid (labels or
// annotations from podTemplate, a ConfigMap over the size limit), or the request is malformed. Quota, Forbidden
// (forbiddenError), conflicts, throttling and server errors may heal and are retried.
func permanentCreateError(err error) bool {
	return apierrors.IsInvalid(err) || apierrors.IsRequestEntityTooLargeError(err) || apierrors.IsBadRequest(err)
}

// createForbidden decides what becomes of a run whose children the API server refuses with Forbidden (err holds a
// forbiddenError): Pending with the API's message while the refusals last less than PodRejectedTimeout, counted
// from the first this manager process saw in this attempt (a restarted manager counts anew), then Failed
// CreateForbidden. It returns nil for any other error.
func (r *EvalRunReconciler) createForbidden(run *evalsv1alpha1.EvalRun, err error, now time.Time) *assess.Assessment {
	var fe *forbiddenError
	if !errors.As(err, &fe) {
		return nil
	}
	since := r.memo.ForbiddenSince(client.ObjectKeyFromObject(run), run.UID, attemptNumber(run), now)
	timeout := r.opts.PodRejectedTimeout
	msg := assess.OneLine(fe.Error())
	if now.Sub(since) < timeout {
		return &assess.Assessment{State: assess.StatePending, Reason: evalsv1alpha1.ReasonPending,
			Message: textbound.Head("the API server refuses to create the run's objects (retrying): "+msg, assess.MaxConditionMessage)}
	}
	return &assess.Assessment{State: assess.StateFailed, Reason: evalsv1alpha1.ReasonCreateForbidden,
		Message: textbound.Head(fmt.Sprintf("the API server refused to create the run's objects for %s: %s", timeout, msg), assess.MaxConditionMessage)}
}

// attemptNumber is the run's current attempt, 1 before the manager recorded one.
func attemptNumber(run *evalsv1alpha1.EvalRun) int32 {
	if a := run.Status.Attempt; a != nil {
		return a.Number
	}
	return 1
}

// childFailure turns a child error that retrying cannot heal into a terminal assessment.
func childFailure(err error) (assess.Assessment, bool) {
	var ce *childError
	if !errors.As(err, &ce) {
		return assess.Assessment{}, false
	}
	return assess.Assessment{State: assess.StateFailed, Reason: ce.reason, Message: textbound.Head(assess.OneLine(ce.Error()), assess.MaxConditionMessage)}, true
}
