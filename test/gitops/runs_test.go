// Package gitops tests the health that GitOps tools read from an EvalRun: Argo CD's Lua health check
// (config/gitops/argocd/health.lua, run by gopher-lua as Argo CD runs it), Flux's healthCheckExprs
// (config/gitops/flux/evals-kustomization.yaml, evaluated by cel-go as Flux evaluates them) and the kstatus
// library (sigs.k8s.io/cli-utils), which Flux falls back to. Every case's status is built by the controller's own
// status code (assess.DesiredManagerStatus), for every reason the API defines.
package gitops

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/assess"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/statusapply"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
)

// repoRoot is the repository's root, from this package's directory.
const repoRoot = "../.."

// Health statuses as Argo CD spells them.
const (
	argoHealthy     = "Healthy"
	argoProgressing = "Progressing"
	argoDegraded    = "Degraded"
	argoSuspended   = "Suspended"
)

// kstatus results as Flux and the kstatus library spell them; fluxError is an expression that Flux cannot
// evaluate (Flux reports the object's status as Unknown and keeps polling).
const (
	inProgress = "InProgress"
	current    = "Current"
	failed     = "Failed"
	fluxError  = "error"
)

// reasonKind is what a reason of the API means for health.
type reasonKind int

const (
	// running: a reason of Succeeded=Unknown while the run is in progress (Reconciling=True).
	running reasonKind = iota + 1
	// queued: the in-progress reason of a suspended Job (Queued=True).
	queued
	// completed: the reason of Succeeded=True.
	completed
	// failure: a reason of Succeeded=False (Stalled=True).
	failure
	// passedReason: a reason of the Passed condition.
	passedReason
	// regressedReason: a reason of the Regressed condition (spec.baseline's comparison); BaselinePending is also
	// Passed's while a policy with regression: Fail waits for the comparison.
	regressedReason
	// truncatedReason: a reason of the collector's ResultsTruncated condition, which health ignores.
	truncatedReason
)

// reasonKinds maps every reason of api/v1alpha1 to what it means for health. A reason added to the API and not
// here fails TestEveryReasonHasAHealthMapping: decide what Argo CD, Flux and kstatus should show for it, check that
// health.lua and the Flux expressions show that, and add it.
var reasonKinds = map[string]reasonKind{
	evalsv1alpha1.ReasonPending:    running,
	evalsv1alpha1.ReasonRunning:    running,
	evalsv1alpha1.ReasonCollecting: running,
	evalsv1alpha1.ReasonQueued:     queued,
	evalsv1alpha1.ReasonCompleted:  completed,

	evalsv1alpha1.ReasonInvalidEvalFile:        failure,
	evalsv1alpha1.ReasonInvalidSpec:            failure,
	evalsv1alpha1.ReasonChildConflict:          failure,
	evalsv1alpha1.ReasonPodRejected:            failure,
	evalsv1alpha1.ReasonInfrastructureFailed:   failure,
	evalsv1alpha1.ReasonInvalidContainerConfig: failure,
	evalsv1alpha1.ReasonResumeSourceInvalid:    failure,
	evalsv1alpha1.ReasonRejudgeSourceInvalid:   failure,
	evalsv1alpha1.ReasonRunnerFailed:           failure,
	evalsv1alpha1.ReasonRunnerOOMKilled:        failure,
	evalsv1alpha1.ReasonRunnerTimedOut:         failure,
	evalsv1alpha1.ReasonRunnerNotStopped:       failure,
	evalsv1alpha1.ReasonHealthcheckFailed:      failure,
	evalsv1alpha1.ReasonDeadlineExceeded:       failure,
	evalsv1alpha1.ReasonImagePullFailed:        failure,
	evalsv1alpha1.ReasonUnschedulable:          failure,
	evalsv1alpha1.ReasonMissingResults:         failure,
	evalsv1alpha1.ReasonInvalidOutput:          failure,
	evalsv1alpha1.ReasonResultsNotReported:     failure,
	evalsv1alpha1.ReasonCollectorFailed:        failure,
	evalsv1alpha1.ReasonCancelled:              failure,

	// Every run ends (issue 21): storage evictions and the disruption cap.
	evalsv1alpha1.ReasonStorageLimitExceeded:    failure,
	evalsv1alpha1.ReasonDisruptionLimitExceeded: failure,
	// The runner's cost budget (issue 27): the launcher stopped the runner.
	evalsv1alpha1.ReasonCostBudgetExceeded: failure,
	// A manager that never stalls (issue 23): a bucket that hangs ends the runs naming it.
	evalsv1alpha1.ReasonBucketUnavailable: failure,
	// The manager's RBAC or an admission policy refusing the run's objects past --pod-rejected-timeout.
	evalsv1alpha1.ReasonCreateForbidden: failure,

	evalsv1alpha1.ReasonPolicyMet:    passedReason,
	evalsv1alpha1.ReasonPolicyNotMet: passedReason,
	evalsv1alpha1.ReasonNoResults:    passedReason,

	evalsv1alpha1.ReasonRegressed:           regressedReason,
	evalsv1alpha1.ReasonNotRegressed:        regressedReason,
	evalsv1alpha1.ReasonBaselinePending:     regressedReason,
	evalsv1alpha1.ReasonBaselineUnavailable: regressedReason,

	evalsv1alpha1.ReasonStatusBudgetExceeded: truncatedReason,
	evalsv1alpha1.ReasonAllResultsInStatus:   truncatedReason,
}

// knownConditionTypes are the condition types the health checks were written for. A condition type added to the
// API and not here fails TestEveryConditionTypeIsKnown.
var knownConditionTypes = []string{
	evalsv1alpha1.ConditionReconciling,
	evalsv1alpha1.ConditionStalled,
	evalsv1alpha1.ConditionSucceeded,
	evalsv1alpha1.ConditionPassed,
	evalsv1alpha1.ConditionResultsTruncated,
	evalsv1alpha1.ConditionQueued,
	evalsv1alpha1.ConditionRegressed,
	// Informational: a Warning event when False; health follows Succeeded and Passed (docs/operations.md#reasons).
	evalsv1alpha1.ConditionCodeJudgesConfined,
}

// apiConstants returns the string values of the constants in api/v1alpha1/evalrun_status.go whose names start with
// prefix, in file order.
func apiConstants(t *testing.T, prefix string) []string {
	t.Helper()
	return apiConstantsIn(t, "evalrun_status.go", prefix)
}

// apiConstantsIn returns the string values of the constants in the file of api/v1alpha1 whose names start with
// prefix, in file order.
func apiConstantsIn(t *testing.T, file, prefix string) []string {
	t.Helper()
	path := filepath.Join(repoRoot, "api", "v1alpha1", file)
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var values []string
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || len(vs.Names) != 1 || len(vs.Values) != 1 || !strings.HasPrefix(vs.Names[0].Name, prefix) {
			return true
		}
		if lit, ok := vs.Values[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
			v, err := strconv.Unquote(lit.Value)
			if err != nil {
				t.Fatal(err)
			}
			values = append(values, v)
		}
		return true
	})
	if len(values) == 0 {
		t.Fatalf("no %s constants in %s", prefix, path)
	}
	return values
}

// apiReasons returns every reason of the API.
func apiReasons(t *testing.T) []string {
	t.Helper()
	reasons := apiConstants(t, "Reason")
	if len(reasons) < 20 {
		t.Fatalf("found only %d reasons in the API: %v", len(reasons), reasons)
	}
	return reasons
}

func TestEveryReasonHasAHealthMapping(t *testing.T) {
	for _, r := range apiReasons(t) {
		if _, ok := reasonKinds[r]; !ok {
			t.Errorf("reason %s of api/v1alpha1 has no health mapping: add it to reasonKinds in test/gitops and check "+
				"that health.lua and the Flux expressions show the right health for it", r)
		}
	}
}

func TestEveryConditionTypeIsKnown(t *testing.T) {
	for _, c := range apiConstants(t, "Condition") {
		if !slices.Contains(knownConditionTypes, c) {
			t.Errorf("condition type %s of api/v1alpha1 is unknown to the health checks: decide what it means for "+
				"health, handle it in health.lua and the Flux expressions, and add it to knownConditionTypes", c)
		}
	}
}

// healthCase is one EvalRun as a GitOps tool reads it from the API server, and the health each tool should show.
type healthCase struct {
	name string
	// obj is the object as JSON decodes into unstructured content (integers as int64).
	obj map[string]any
	// argo is the health Argo CD shows with health.lua.
	argo argoHealth
	// flux is what Flux computes with the healthCheckExprs (inProgress, current, failed or fluxError).
	flux string
	// kstatus is what kstatus' status.Compute returns; empty for malformed objects, which kstatus is not asked about.
	kstatus string
}

// argoHealth is the table health.lua returns.
type argoHealth struct {
	Status  string
	Message string
}

// now is the clock of every status the tests build.
var now = time.Date(2026, 11, 25, 2, 0, 0, 0, time.UTC)

// newRun returns a run as the API server holds it right after it was created: generation 1, no status.
func newRun() *evalsv1alpha1.EvalRun { return created(testutil.MakeEvalRun("run", "evals")) }

// created returns the built run as the API server holds it right after it was created.
func created(w *testutil.EvalRunWrapper) *evalsv1alpha1.EvalRun {
	run := w.Obj()
	run.Generation = 1
	run.UID = "4f0c6b8e-2a59-4b4e-9d57-000000000001"
	run.CreationTimestamp = metav1.NewTime(now.Add(-time.Hour))
	return run
}

// advance writes the manager's status for the state and reason, as Reconcile does: DesiredManagerStatus, then a
// server-side apply of the manager's fields, which keeps the conditions other writers own.
func advance(run *evalsv1alpha1.EvalRun, state assess.State, reason, message string) {
	write(run, assess.Assessment{State: state, Reason: reason, Message: message}, assess.StatusFacts{})
}

// write applies the manager's status for the assessment and facts.
func write(run *evalsv1alpha1.EvalRun, a assess.Assessment, f assess.StatusFacts) {
	f.JobName = run.Name + "-evalrun"
	desired := assess.DesiredManagerStatus(run, a, f, now)
	before, after := statusapply.Manager(&run.Status), statusapply.Manager(&desired)
	owned := map[string]bool{}
	for _, c := range before.Conditions {
		owned[*c.Type] = true
	}
	for _, c := range after.Conditions {
		owned[*c.Type] = true
	}
	conditions := desired.Conditions
	for _, c := range run.Status.Conditions {
		if !owned[c.Type] {
			conditions = append(conditions, c)
		}
	}
	// The fields the manager applied before are its own: the apply replaces them with those it applies now, and
	// keeps the others.
	status := toMap(run.Status)
	for name := range toMap(before) {
		delete(status, name)
	}
	maps.Copy(status, toMap(after))
	var next evalsv1alpha1.EvalRunStatus
	roundTrip(status, &next)
	next.Conditions = conditions
	run.Status = next
}

// toMap returns v's JSON object.
func toMap(v any) map[string]any {
	out := map[string]any{}
	roundTrip(v, &out)
	return out
}

// roundTrip decodes the JSON of from into to. Status types are plain data, so neither step can fail.
func roundTrip(from, to any) {
	data, err := json.Marshal(from)
	if err == nil {
		err = json.Unmarshal(data, to)
	}
	if err != nil {
		panic(err)
	}
}

// collect writes what the collector writes before the manager ends the run: the summary and the ResultsTruncated
// condition.
func collect(run *evalsv1alpha1.EvalRun, passed, total int32, truncated bool) {
	run.Status.Summary = &evalsv1alpha1.RunSummary{Total: total, Passed: passed, Failed: total - passed, MeanScore: "0.7500"}
	c := metav1.Condition{
		Type: evalsv1alpha1.ConditionResultsTruncated, Status: metav1.ConditionFalse,
		Reason: evalsv1alpha1.ReasonAllResultsInStatus, Message: "Every result is in the status",
		LastTransitionTime: metav1.NewTime(now),
	}
	if truncated {
		c.Status, c.Reason = metav1.ConditionTrue, evalsv1alpha1.ReasonStatusBudgetExceeded
		c.Message = "The status budget left out 3 cases, 0 missing ids, 0 parse errors and 0 unexpected ids"
	}
	meta.SetStatusCondition(&run.Status.Conditions, c)
}

// compared records the outcome of the comparison with spec.baseline's run as the reconcile that compared it
// does: the run's recorded outcome again, with the Regressed condition in the facts (its message as
// compareWithBaseline writes it).
func compared(t *testing.T, run *evalsv1alpha1.EvalRun, status metav1.ConditionStatus, reason, message string) {
	t.Helper()
	a, ok := assess.TerminalAssessment(run)
	if !ok {
		t.Fatal("compared: the run has not finished")
	}
	write(run, a, assess.StatusFacts{Regressed: &metav1.Condition{
		Type: evalsv1alpha1.ConditionRegressed, Status: status, Reason: reason, Message: message,
	}})
}

// Regressed condition messages, as the manager's comparison writes them.
const (
	regressedMessage    = "compared with baseline EvalRun nightly-1 over 2 shared cases: 1 newly failing cases (at most 0 allowed): case-002"
	notRegressedMessage = "compared with baseline EvalRun nightly-1 over 2 shared cases: 0 newly failing cases (at most 0 allowed)"
	unavailableMessage  = "baseline EvalRun nightly-1 does not exist in namespace evals"
	pendingMessage      = "waiting for baseline EvalRun nightly-1 to finish"
)

// started takes a run through Pending and Running, as every run with a Job goes.
func started(run *evalsv1alpha1.EvalRun) {
	advance(run, assess.StatePending, evalsv1alpha1.ReasonPending, "waiting for the Job's pod to be scheduled")
	advance(run, assess.StateRunning, evalsv1alpha1.ReasonRunning, "the runner is running")
}

// unstructuredContent returns the object as a GitOps tool gets it from the API server: JSON decoded into
// unstructured content.
func unstructuredContent(t *testing.T, run *evalsv1alpha1.EvalRun) map[string]any {
	t.Helper()
	data, err := json.Marshal(run)
	if err != nil {
		t.Fatal(err)
	}
	return decodeJSON(t, string(data))
}

func decodeJSON(t *testing.T, data string) map[string]any {
	t.Helper()
	var obj map[string]any
	if err := utiljson.Unmarshal([]byte(data), &obj); err != nil {
		t.Fatalf("decoding %s: %v", data, err)
	}
	return obj
}

const (
	policyMetMessage    = "2 of 2 cases passed (pass rate 1.0000, required 1)"
	policyNotMetMessage = "1 of 2 cases passed (pass rate 0.5000, required 1)"
	noResultsMessage    = "no judged results were recorded"
)

// runCases are the statuses the operator writes: every reason of the API in its phase, and the states around it.
// Each case's status comes from the controller's own code.
func runCases(t *testing.T) []healthCase {
	t.Helper()
	var cases []healthCase
	add := func(name string, run *evalsv1alpha1.EvalRun, argo argoHealth, flux, kstatus string) {
		cases = append(cases, healthCase{name: name, obj: unstructuredContent(t, run), argo: argo, flux: flux, kstatus: kstatus})
	}
	failedCondition := func(reason string) string { return "the controller's message for " + reason }

	for _, reason := range apiReasons(t) {
		run := newRun()
		switch reasonKinds[reason] {
		case running:
			if reason != evalsv1alpha1.ReasonPending {
				started(run)
			}
			msg := "the run is " + strings.ToLower(reason)
			advance(run, assess.State(reason), reason, msg)
			add("in progress: "+reason, run, argoHealth{argoProgressing, reason + ": " + msg}, inProgress, inProgress)
		case queued:
			msg := "waiting for Kueue to admit the Job in queue nightly (Pending: couldn't assign flavors to pod set main)"
			run.Spec.QueueName = "nightly"
			advance(run, assess.StateQueued, reason, msg)
			add("queued by Kueue", run, argoHealth{argoSuspended, "Queued: " + msg}, inProgress, inProgress)

			run = newRun()
			run.Spec.QueueName = "nightly"
			run.Spec.Suspend = ptrTo(true)
			msg = "Kueue evicted the Job; waiting for Kueue to admit the Job in queue nightly again (Preempted: Preempted to accommodate a workload)"
			advance(run, assess.StateQueued, reason, msg)
			add("preempted by Kueue, spec.suspend set (ignored with a queue)", run, argoHealth{argoSuspended, "Queued: " + msg}, inProgress, inProgress)

			run = newRun()
			run.Spec.Suspend = ptrTo(true)
			advance(run, assess.StateQueued, reason, "the Job is suspended by spec.suspend")
			add("queued by spec.suspend", run, argoHealth{argoSuspended, "Queued: the Job is suspended by spec.suspend"}, inProgress, inProgress)
		case completed:
			addCompleted(t, add)
		case failure:
			started(run)
			collect(run, 1, 2, false)
			advance(run, assess.StateFailed, reason, failedCondition(reason))
			add("failed: "+reason, run, argoHealth{argoDegraded, "The run failed (" + reason + "): " + failedCondition(reason)}, failed, failed)
		case passedReason, truncatedReason, regressedReason:
			// Passed, ResultsTruncated and Regressed reasons come with a finished run: addCompleted and
			// addBaseline cover them, and TestRunCasesCoverEveryReason checks that the controller produced each.
		default:
			// Not mapped: TestEveryReasonHasAHealthMapping reports it.
		}
	}

	// Around the phases.
	// The API server drops status from a created object whose kind has a status subresource.
	fresh := unstructuredContent(t, newRun())
	delete(fresh, "status")
	cases = append(cases, healthCase{name: "created, no status yet", obj: fresh,
		argo: argoHealth{argoProgressing, "Waiting for the EvalRun operator to report the run's status"}, flux: fluxError, kstatus: current})

	run := newRun()
	started(run)
	collect(run, 2, 2, false)
	advance(run, assess.StateSucceeded, evalsv1alpha1.ReasonCompleted, "every requested case has a valid record")
	run.Generation = 2
	add("spec changed after the run finished, not yet observed", run,
		argoHealth{argoProgressing, "Waiting for the EvalRun operator to observe generation 2 (it last observed generation 1)"}, inProgress, inProgress)

	run = newRun()
	started(run)
	run.Spec.Suspend = ptrTo(true)
	run.Generation = 2
	advance(run, assess.StateRunning, evalsv1alpha1.ReasonRunning, "the runner is running")
	add("spec.suspend set while running, the Job not suspended yet", run,
		argoHealth{argoSuspended, "The run is suspended by spec.suspend"}, inProgress, inProgress)

	// With spec.queueName, Kueue owns the Job's suspension and spec.suspend is ignored: a run Kueue admitted runs.
	run = newRun()
	run.Spec.QueueName = "nightly"
	run.Spec.Suspend = ptrTo(true)
	started(run)
	advance(run, assess.StateRunning, evalsv1alpha1.ReasonRunning, "the runner is running")
	add("admitted by Kueue and running, spec.suspend set (ignored with a queue)", run,
		argoHealth{argoProgressing, "Running: the runner is running"}, inProgress, inProgress)

	run = newRun()
	started(run)
	collect(run, 2, 2, false)
	advance(run, assess.StateSucceeded, evalsv1alpha1.ReasonCompleted, "every requested case has a valid record")
	run.Spec.Suspend = ptrTo(true)
	run.Generation = 2
	advance(run, assess.StateSucceeded, evalsv1alpha1.ReasonCompleted, "every requested case has a valid record")
	add("spec.suspend set after the run finished", run,
		argoHealth{argoHealthy, "The run completed and met its success policy (PolicyMet): " + policyMetMessage}, current, current)

	addRerun(t, add)
	addBaseline(t, add)
	return cases
}

// addRerun adds finished runs whose evals.evalrun.io/rerun annotation asks for a new attempt, or not, as the
// controller decides (NewAttemptTrigger), and the new attempt's first statuses.
func addRerun(t *testing.T, add func(string, *evalsv1alpha1.EvalRun, argoHealth, string, string)) {
	t.Helper()
	annotate := func(run *evalsv1alpha1.EvalRun, value string, want evalsv1alpha1.AttemptTrigger) {
		t.Helper()
		if run.Annotations == nil {
			run.Annotations = map[string]string{}
		}
		run.Annotations[assess.AnnotationRerun] = value
		if got := assess.NewAttemptTrigger(run); got != want {
			t.Fatalf("with %s=%q the controller's new attempt trigger is %q, want %q", assess.AnnotationRerun, value, got, want)
		}
	}
	healthy := argoHealth{argoHealthy, "The run completed and met its success policy (PolicyMet): " + policyMetMessage}
	waiting := func(value string) argoHealth {
		return argoHealth{argoProgressing, "Waiting for the EvalRun operator to start the attempt asked for by evals.evalrun.io/rerun=" + value}
	}

	run := newRun()
	run.Annotations = map[string]string{assess.AnnotationRerun: "1"}
	complete(run, 2, 2, false)
	add("completed, created with a rerun annotation", run, healthy, current, current)

	annotate(run, "2", evalsv1alpha1.AttemptRerun)
	add("completed, rerun annotation changed, new attempt not started", run, waiting("2"), inProgress, current)

	annotate(run, "", "")
	add("completed, rerun annotation emptied", run, healthy, current, current)

	run = complete(newRun(), 1, 2, false)
	annotate(run, "nightly-2026-11-26", evalsv1alpha1.AttemptRerun)
	add("failed policy, rerun annotation added, new attempt not started", run, waiting("nightly-2026-11-26"), inProgress, current)

	// The new attempt's first status, as startNewAttempt writes it (the whole status replaced), then its first
	// reconcile.
	previous := evalsv1alpha1.AttemptRecord{Number: 1, Trigger: evalsv1alpha1.AttemptCreated}
	run.Status = evalsv1alpha1.EvalRunStatus{
		ObservedGeneration: run.Generation,
		Attempt: &evalsv1alpha1.Attempt{Number: 2, Trigger: evalsv1alpha1.AttemptRerun, SpecSHA256: assess.SpecSHA256(&run.Spec),
			Rerun: ptrTo("nightly-2026-11-26"), Generation: run.Generation},
		PreviousAttempts: []evalsv1alpha1.AttemptRecord{previous},
	}
	if got := assess.NewAttemptTrigger(run); got != "" {
		t.Fatalf("the new attempt's status still triggers a new attempt: %q", got)
	}
	add("new attempt started, no conditions yet", run,
		argoHealth{argoProgressing, "Waiting for the EvalRun operator to report the run's status"}, inProgress, current)
	advance(run, assess.StatePending, evalsv1alpha1.ReasonPending, "waiting for the Job's pod to be scheduled")
	add("new attempt pending", run, argoHealth{argoProgressing, "Pending: waiting for the Job's pod to be scheduled"}, inProgress, inProgress)
}

// complete takes a run through its phases to Completed, the collector having recorded passed of total cases.
func complete(run *evalsv1alpha1.EvalRun, passed, total int32, truncated bool) *evalsv1alpha1.EvalRun {
	started(run)
	advance(run, assess.StateCollecting, evalsv1alpha1.ReasonCollecting, "waiting for the collector's results")
	if total > 0 {
		collect(run, passed, total, truncated)
	}
	advance(run, assess.StateSucceeded, evalsv1alpha1.ReasonCompleted, "every requested case has a valid record")
	return run
}

// addCompleted adds the finished runs: every outcome of the success policy, truncated or not, regressed or not.
func addCompleted(t *testing.T, add func(string, *evalsv1alpha1.EvalRun, argoHealth, string, string)) {
	t.Helper()
	healthy := argoHealth{argoHealthy, "The run completed and met its success policy (PolicyMet): " + policyMetMessage}
	add("completed, policy met", complete(newRun(), 2, 2, false), healthy, current, current)
	add("completed, policy met, results truncated", complete(newRun(), 2, 2, true), healthy, current, current)

	notMet := argoHealth{argoDegraded, "The run completed but did not meet its success policy (PolicyNotMet): " + policyNotMetMessage}
	add("completed, policy not met", complete(newRun(), 1, 2, false), notMet, failed, current)

	add("completed, no results", complete(newRun(), 0, 0, false),
		argoHealth{argoDegraded, "The run completed but did not meet its success policy (NoResults): " + noResultsMessage}, failed, current)

	run := created(testutil.MakeEvalRun("run", "evals").MinPassRate("0.5"))
	add("completed, policy met at minPassRate 0.5", complete(run, 1, 2, false),
		argoHealth{argoHealthy, "The run completed and met its success policy (PolicyMet): 1 of 2 cases passed (pass rate 0.5000, required 0.5)"},
		current, current)
}

// addBaseline adds runs with spec.baseline, the Regressed condition and, with successPolicy.regression: Fail, its
// effect on Passed, as the controller writes them.
func addBaseline(t *testing.T, add func(string, *evalsv1alpha1.EvalRun, argoHealth, string, string)) {
	t.Helper()
	withBaseline := func() *testutil.EvalRunWrapper {
		return testutil.MakeEvalRun("run", "evals").Baseline("nightly-1", 0, "")
	}
	met := "The run completed and met its success policy (PolicyMet): " + policyMetMessage
	regressed := "The run regressed against its baseline (Regressed): " + regressedMessage

	add("completed, comparison with the baseline not started", complete(created(withBaseline()), 2, 2, false),
		argoHealth{argoProgressing, "The run completed; comparing it with its baseline (BaselinePending): comparing with baseline EvalRun nightly-1"},
		inProgress, current)

	run := complete(created(withBaseline().FailWhenRegressed()), 2, 2, false)
	compared(t, run, metav1.ConditionUnknown, evalsv1alpha1.ReasonBaselinePending, pendingMessage)
	add("completed, baseline still running, regression: Fail", run,
		argoHealth{argoProgressing, "The run completed; comparing it with its baseline (BaselinePending): " + pendingMessage}, inProgress, current)

	run = complete(created(withBaseline().FailWhenRegressed()), 2, 2, false)
	compared(t, run, metav1.ConditionFalse, evalsv1alpha1.ReasonNotRegressed, notRegressedMessage)
	add("completed, not regressed, regression: Fail", run,
		argoHealth{argoHealthy, met + "; it did not regress against its baseline (NotRegressed): " + notRegressedMessage}, current, current)

	run = complete(created(withBaseline()), 2, 2, false)
	compared(t, run, metav1.ConditionTrue, evalsv1alpha1.ReasonRegressed, regressedMessage)
	add("completed, policy met, regressed, regression: Ignore", run, argoHealth{argoDegraded, regressed}, failed, current)

	run = complete(created(withBaseline().FailWhenRegressed()), 2, 2, false)
	compared(t, run, metav1.ConditionTrue, evalsv1alpha1.ReasonRegressed, regressedMessage)
	add("completed, regressed, regression: Fail", run, argoHealth{argoDegraded, regressed + "; " +
		"The run completed but did not meet its success policy (PolicyNotMet): " + policyMetMessage +
		"; regressed against baseline EvalRun nightly-1: " + regressedMessage}, failed, current)

	run = complete(created(withBaseline()), 1, 2, false)
	compared(t, run, metav1.ConditionTrue, evalsv1alpha1.ReasonRegressed, regressedMessage)
	add("completed, policy not met, regressed", run, argoHealth{argoDegraded, regressed + "; " +
		"The run completed but did not meet its success policy (PolicyNotMet): " + policyNotMetMessage}, failed, current)

	run = complete(created(withBaseline()), 2, 2, false)
	compared(t, run, metav1.ConditionUnknown, evalsv1alpha1.ReasonBaselineUnavailable, unavailableMessage)
	add("completed, baseline unavailable, regression: Ignore", run,
		argoHealth{argoHealthy, met + "; it was not compared with its baseline (BaselineUnavailable): " + unavailableMessage}, current, current)

	run = complete(created(withBaseline().FailWhenRegressed()), 2, 2, false)
	compared(t, run, metav1.ConditionUnknown, evalsv1alpha1.ReasonBaselineUnavailable, unavailableMessage)
	add("completed, baseline unavailable, regression: Fail", run, argoHealth{argoDegraded,
		"The run completed but did not meet its success policy (PolicyNotMet): " + policyMetMessage +
			"; not compared with baseline EvalRun nightly-1: " + unavailableMessage}, failed, current)

	failedRun := func() *evalsv1alpha1.EvalRun {
		run := created(withBaseline())
		started(run)
		collect(run, 1, 2, false)
		advance(run, assess.StateFailed, evalsv1alpha1.ReasonMissingResults, "1 requested case has no valid record")
		return run
	}
	const failedMessage = "The run failed (MissingResults): 1 requested case has no valid record"
	add("failed, comparison with the baseline not started", failedRun(), argoHealth{argoDegraded, failedMessage}, failed, failed)

	run = failedRun()
	compared(t, run, metav1.ConditionTrue, evalsv1alpha1.ReasonRegressed, regressedMessage)
	add("failed and regressed", run, argoHealth{argoDegraded, failedMessage + "; " + regressed}, failed, failed)
}

// TestRunCasesCoverEveryReason checks that the cases hold every reason of the API, each on the condition it
// belongs to, as the controller wrote it.
func TestRunCasesCoverEveryReason(t *testing.T) {
	seen := map[string]map[string]bool{}
	for _, c := range runCases(t) {
		conds, _, err := unstructured.NestedSlice(c.obj, "status", "conditions")
		if err != nil {
			t.Fatal(err)
		}
		for _, raw := range conds {
			m, _ := raw.(map[string]any)
			typ, _ := m["type"].(string)
			reason, _ := m["reason"].(string)
			if seen[typ] == nil {
				seen[typ] = map[string]bool{}
			}
			seen[typ][reason] = true
		}
	}
	on := map[reasonKind]string{
		running: evalsv1alpha1.ConditionSucceeded, queued: evalsv1alpha1.ConditionQueued,
		completed: evalsv1alpha1.ConditionSucceeded, failure: evalsv1alpha1.ConditionStalled,
		passedReason: evalsv1alpha1.ConditionPassed, truncatedReason: evalsv1alpha1.ConditionResultsTruncated,
		regressedReason: evalsv1alpha1.ConditionRegressed,
	}
	for _, r := range apiReasons(t) {
		kind, ok := reasonKinds[r]
		if !ok {
			continue // TestEveryReasonHasAHealthMapping reports it
		}
		typ := on[kind]
		if !seen[typ][r] {
			t.Errorf("no case has a %s condition with reason %s", typ, r)
		}
	}
}

func ptrTo[T any](v T) *T { return &v }

// malformedCases are objects no operator writes: health.lua must still answer, never fail, and say Progressing
// unless the conditions it can read say more.
func malformedCases(t *testing.T) []healthCase {
	t.Helper()
	waiting := argoHealth{argoProgressing, "Waiting for the EvalRun operator to report the run's status"}
	const head = `"apiVersion": "evals.evalrun.io/v1alpha1", "kind": "EvalRun", "metadata": {"name": "run", "generation": 1}`
	cases := []struct {
		name string
		json string
		argo argoHealth
		flux string
	}{
		{"empty object", `{}`, waiting, fluxError},
		{"status null", `{` + head + `, "status": null}`, waiting, inProgress},
		{"status a string", `{` + head + `, "status": "Succeeded"}`, waiting, inProgress},
		{"status a list", `{` + head + `, "status": [1, 2]}`, waiting, fluxError},
		{"status empty", `{` + head + `, "status": {}}`, waiting, inProgress},
		{"metadata a string", `{"metadata": "x", "status": {"observedGeneration": 1}}`, waiting, inProgress},
		{"generation a string", `{"metadata": {"generation": "2"}, "status": {"observedGeneration": 1}}`, waiting, inProgress},
		{"observedGeneration a string", `{` + head + `, "status": {"observedGeneration": "1"}}`, waiting, inProgress},
		{"conditions a string", `{` + head + `, "status": {"observedGeneration": 1, "conditions": "Succeeded"}}`, waiting, fluxError},
		{"conditions an object", `{` + head + `, "status": {"observedGeneration": 1, "conditions": {"type": "Succeeded", "status": "True"}}}`,
			waiting, fluxError},
		{"conditions of strings and nulls", `{` + head + `, "status": {"observedGeneration": 1, "conditions": ["Succeeded", null, 3]}}`,
			waiting, fluxError},
		{"condition fields of the wrong types", `{` + head + `, "status": {"observedGeneration": 1, "conditions": [
			{"type": ["Succeeded"], "status": "True"}, {"type": "Reconciling", "status": true},
			{"type": "Succeeded", "status": "False", "reason": {"a": 1}, "message": 7}]}}`,
			argoHealth{argoDegraded, "The run failed"}, failed},
		{"succeeded without a Passed condition", `{` + head + `, "status": {"observedGeneration": 1, "conditions": [
			{"type": "Succeeded", "status": "True", "reason": "Completed"}]}}`,
			argoHealth{argoProgressing, "The run completed; waiting for the operator to judge its success policy"}, inProgress},
		{"Passed with an unknown status", `{` + head + `, "status": {"observedGeneration": 1, "conditions": [
			{"type": "Succeeded", "status": "True"}, {"type": "Passed", "status": "Maybe"}]}}`,
			argoHealth{argoProgressing, "The run completed; its success policy is not decided yet"}, inProgress},
		{"Reconciling without a Succeeded condition", `{` + head + `, "status": {"observedGeneration": 1, "conditions": [
			{"type": "Reconciling", "status": "True", "reason": "Running", "message": "the runner is running"}]}}`,
			argoHealth{argoProgressing, "Running: the runner is running"}, inProgress},
		{"Queued without a reason or message", `{` + head + `, "status": {"observedGeneration": 1, "conditions": [
			{"type": "Queued", "status": "True"}]}}`, argoHealth{argoSuspended, "The run is queued"}, inProgress},
		{"Reconciling and Succeeded without reasons or messages", `{` + head + `, "status": {"observedGeneration": 1, "conditions": [
			{"type": "Reconciling", "status": "True"}, {"type": "Succeeded", "status": "Unknown"}]}}`,
			argoHealth{argoProgressing, "The run is in progress"}, inProgress},
		{"unknown condition types only", `{` + head + `, "status": {"observedGeneration": 1, "conditions": [
			{"type": "Ready", "status": "True"}]}}`, waiting, inProgress},
		{"spec a string, suspend a string", `{` + head + `, "spec": "x", "status": {"observedGeneration": 1}}`, waiting, inProgress},
		{"spec.suspend the string true", `{` + head + `, "spec": {"suspend": "true"}, "status": {"observedGeneration": 1}}`, waiting, inProgress},
		{"valid conditions among garbage", `{` + head + `, "status": {"observedGeneration": 1, "conditions": [
			"x", {"type": "Succeeded", "status": "True", "reason": "Completed"},
			{"type": "Passed", "status": "True", "reason": "PolicyMet", "message": "2 of 2 cases passed"}]}}`,
			argoHealth{argoHealthy, "The run completed and met its success policy (PolicyMet): 2 of 2 cases passed"}, fluxError},
	}
	out := make([]healthCase, 0, len(cases))
	for _, c := range cases {
		out = append(out, healthCase{name: "malformed: " + c.name, obj: decodeJSON(t, c.json), argo: c.argo, flux: c.flux})
	}
	return out
}

func readRepoFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, path))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
