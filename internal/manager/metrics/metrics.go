// Package metrics is the manager's Prometheus metrics (docs/monitoring.md): runs finished by reason, cases judged,
// trials and flaky cases, regressions, missing ids, tokens, cost, budgets, bucket reads, the bucket-call pool's
// flights and the namespaces seen, registered once with controller-runtime's registry; the shipped alerts name only
// these.
package metrics

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/assess"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
)

// The manager's metrics, in controller-runtime's registry (served on its metrics endpoint). Labels are bounded:
// the namespace, and values from fixed sets (reasons, condition statuses, verdicts); never run names or case ids.
// docs/operations.md's Metrics section documents each one.
var (
	runsFinished = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "evalrun_runs_finished_total",
		Help: "Runs (attempts) that reached a terminal Succeeded condition, by namespace, reason and Passed status.",
	}, []string{labelNamespace, "reason", "passed"})
	runDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "evalrun_run_duration_seconds",
		Help:    "Seconds from a run's start (its Job's start) to its terminal Succeeded condition.",
		Buckets: prometheus.ExponentialBuckets(5, 2, 14), // 5 s to about 11 h
	}, []string{labelNamespace})
	collectionLatency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "evalrun_collection_latency_seconds",
		Help: "Seconds from the runner container's end (as the kubelet reports it; the last shard's) to the run's " +
			"terminal Succeeded condition: snapshot, parse, judge, store and the manager's decision.",
		Buckets: prometheus.ExponentialBuckets(0.25, 2, 14), // 0.25 s to about 34 min
	}, []string{labelNamespace})
	casesJudged = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "evalrun_cases_total",
		Help: "Cases of finished runs by verdict (Pass, Fail, Error, Skipped); missing cases count as Error too.",
	}, []string{labelNamespace, "verdict"})
	trials = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "evalrun_trials_total",
		Help: "Trials of the cases of finished runs: each case once per trial (spec.trials.count; one without), so " +
			"divided by evalrun_cases_total it is the mean number of trials per case.",
	}, []string{labelNamespace})
	trialCases = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "evalrun_trial_cases_total",
		Help: "Cases of finished runs with more than one trial per case (status.trials.cases): the cases that can be flaky.",
	}, []string{labelNamespace})
	flakyCases = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "evalrun_flaky_cases_total",
		Help: "Flaky cases of finished runs with trials: some of their trials passed and some did not " +
			"(status.trials.flakyCases); divided by evalrun_trial_cases_total, the share of flaky cases.",
	}, []string{labelNamespace})
	missingIDs = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "evalrun_missing_ids_total",
		Help: "Requested case ids of finished runs that had no valid record in the runner's output.",
	}, []string{labelNamespace})
	parseErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "evalrun_parse_errors_total",
		Help: "Invalid lines in the runners' output of finished runs.",
	}, []string{labelNamespace})
	regressions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "evalrun_baseline_comparisons_total",
		Help: "Comparisons of finished runs with their baseline, by outcome (the Regressed condition's reason).",
	}, []string{labelNamespace, "reason"})
	tokens = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "evalrun_tokens_total",
		Help: "Tokens of finished runs by source and kind: the runner's as its records report them (kind input, " +
			"output, cached) and the LLM judges' as the endpoint reports them (input: prompt, output: completion). " +
			"Results a resumed run carried count in the run that made them.",
	}, []string{labelNamespace, "source", "kind"})
	runnerCost = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "evalrun_runner_cost_usd_total",
		Help: "US dollars the runners of finished runs reported in their records (cost_usd; untrusted figures).",
	}, []string{labelNamespace})
	judgeRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "evalrun_judge_requests_total",
		Help: "Requests the LLM judges of finished runs sent, retries included.",
	}, []string{labelNamespace})
	budgetsExceeded = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "evalrun_budgets_exceeded_total",
		Help: "Finished runs that reached a budget, by budget (JudgeRequests, JudgeTokens, RunnerCost).",
	}, []string{labelNamespace, "budget"})
	ScheduledTimes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "evalrun_schedule_runs_total",
		Help: "Scheduled times of EvalSchedules by what became of them: Created, Skipped (concurrencyPolicy " +
			"Forbid), Missed (passed while the manager was away or the schedule suspended, or beyond " +
			"startingDeadlineSeconds).",
	}, []string{labelNamespace, "outcome"})
	FlightsInAir = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "evalrun_bucket_reconciles_in_flight",
		Help: "Reconciles of runs that name a bucket running off the controller's workers now (flights), waiting " +
			"for their endpoint's lane included. Many for long: a bucket endpoint is slow or hangs.",
	})
	bucketReads = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "evalrun_bucket_reads_total",
		Help: "Objects the manager read from runs' buckets, by what: Collection (a shard's summary.json, " +
			"spec.storage.statusFrom: Bucket) or Results (a results object read to merge shards).",
	}, []string{"what"})
	bucketReadBytes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "evalrun_bucket_read_bytes_total",
		Help: "Bytes of the objects counted in evalrun_bucket_reads_total, by what.",
	}, []string{"what"})
	FlightDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "evalrun_bucket_reconcile_duration_seconds",
		Help: "Seconds a reconcile of a run that names a bucket took off the workers (its lane wait included), by " +
			"result: Success, Requeue (asked to look again later) or Error (retried with the run's backoff).",
		Buckets: prometheus.ExponentialBuckets(0.01, 4, 9), // 10 ms to about 11 min
	}, []string{"result"})
)

// What the manager read from a bucket (evalrun_bucket_reads_total's what).
const (
	BucketReadCollection = "Collection"
	BucketReadResults    = "Results"
)

// CountBucketRead counts one object of n bytes read from a bucket.
func CountBucketRead(what string, n int) {
	bucketReads.WithLabelValues(what).Inc()
	bucketReadBytes.WithLabelValues(what).Add(float64(n))
}

// labelNamespace is the namespace label of every metric.
const labelNamespace = "namespace"

// activeRunsDesc is the gauge of runs in progress, computed at each scrape from the manager's cache.
var activeRunsDesc = prometheus.NewDesc("evalrun_active_runs",
	"EvalRuns whose Succeeded condition is not True or False yet, by namespace (reported by the elected leader only).",
	[]string{labelNamespace}, nil)

// activeRuns counts the runs in progress per namespace from the cache at each scrape, so the gauge is exact
// whatever happened to the manager in between. Only the elected leader reports it (every replica's cache holds
// every run: summed across replicas, the runs would count once per replica); a replica that is not elected
// yet reports no series. It reads through the reader and election Register was given last.
type activeRuns struct{}

// activeRunsSource is what the gauge reads: the manager's cache and its election channel (closed once elected;
// swapped when a manager starts again in one process).
type activeRunsSource struct {
	reader  client.Reader
	elected <-chan struct{}
}

// activeRunsFrom is the source the gauge reads now.
var activeRunsFrom atomic.Pointer[activeRunsSource]

func (activeRuns) Describe(ch chan<- *prometheus.Desc) { ch <- activeRunsDesc }

func (activeRuns) Collect(ch chan<- prometheus.Metric) {
	src := activeRunsFrom.Load()
	if src == nil || !isClosed(src.elected) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var runs evalsv1alpha1.EvalRunList
	if err := src.reader.List(ctx, &runs); err != nil {
		return
	}
	counts := map[string]int{}
	for i := range runs.Items {
		if _, done := assess.TerminalAssessment(&runs.Items[i]); !done {
			counts[runs.Items[i].Namespace]++
		} else if _, seen := counts[runs.Items[i].Namespace]; !seen {
			counts[runs.Items[i].Namespace] = 0
		}
	}
	for ns, n := range counts {
		ch <- prometheus.MustNewConstMetric(activeRunsDesc, prometheus.GaugeValue, float64(n), ns)
	}
}

// collectors are every metric of the manager, in the order they are registered.
func collectors() []prometheus.Collector {
	return []prometheus.Collector{runsFinished, runDuration, collectionLatency, casesJudged, missingIDs, parseErrors,
		regressions, ScheduledTimes, FlightsInAir, FlightDuration, bucketReads, bucketReadBytes, activeRuns{}, tokens,
		runnerCost, judgeRequests, budgetsExceeded, trials, trialCases, flakyCases}
}

// isClosed reports whether ch is closed (without waiting).
func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// Register registers the manager's metrics with controller-runtime's registry; reader (the manager's
// cache) feeds the active runs gauge, which is reported once elected is closed (the manager's Elected(): at
// once without leader election). Registering twice (a manager restarted in one process) is harmless.
func Register(reader client.Reader, elected <-chan struct{}) {
	activeRunsFrom.Store(&activeRunsSource{reader: reader, elected: elected})
	for _, c := range collectors() {
		_ = metrics.Registry.Register(c)
	}
}

// finishedReasons are the reasons of a terminal Succeeded condition: Completed and every failure. A reason
// missing here is caught by TestFinishedReasonsAreEveryTerminalReason.
var finishedReasons = []string{
	evalsv1alpha1.ReasonCompleted,
	evalsv1alpha1.ReasonInvalidEvalFile, evalsv1alpha1.ReasonInvalidSpec, evalsv1alpha1.ReasonChildConflict,
	evalsv1alpha1.ReasonCreateForbidden, evalsv1alpha1.ReasonPodRejected, evalsv1alpha1.ReasonInfrastructureFailed,
	evalsv1alpha1.ReasonInvalidContainerConfig, evalsv1alpha1.ReasonResumeSourceInvalid, evalsv1alpha1.ReasonRejudgeSourceInvalid,
	evalsv1alpha1.ReasonRunnerFailed, evalsv1alpha1.ReasonRunnerOOMKilled, evalsv1alpha1.ReasonRunnerTimedOut,
	evalsv1alpha1.ReasonRunnerNotStopped, evalsv1alpha1.ReasonHealthcheckFailed, evalsv1alpha1.ReasonCostBudgetExceeded,
	evalsv1alpha1.ReasonDeadlineExceeded, evalsv1alpha1.ReasonImagePullFailed, evalsv1alpha1.ReasonUnschedulable,
	evalsv1alpha1.ReasonMissingResults, evalsv1alpha1.ReasonInvalidOutput, evalsv1alpha1.ReasonResultsNotReported,
	evalsv1alpha1.ReasonCollectorFailed, evalsv1alpha1.ReasonCancelled, evalsv1alpha1.ReasonStorageLimitExceeded,
	evalsv1alpha1.ReasonDisruptionLimitExceeded, evalsv1alpha1.ReasonBucketUnavailable,
}

// comparedReasons are the reasons evalrun_baseline_comparisons_total counts (BaselinePending never is).
var comparedReasons = []string{evalsv1alpha1.ReasonRegressed, evalsv1alpha1.ReasonNotRegressed,
	evalsv1alpha1.ReasonBaselineUnavailable}

// tokenSeries are the (source, kind) pairs evalrun_tokens_total counts.
var tokenSeries = [][2]string{{"runner", "input"}, {"runner", "output"}, {"runner", "cached"}, {"judge", "input"}, {"judge", "output"}}

// budgetKinds are the budgets evalrun_budgets_exceeded_total counts.
var budgetKinds = []evalsv1alpha1.BudgetKind{evalsv1alpha1.BudgetJudgeRequests, evalsv1alpha1.BudgetJudgeTokens, evalsv1alpha1.BudgetRunnerCost}

// scheduleOutcomes are the outcomes evalrun_schedule_runs_total counts.
var scheduleOutcomes = []string{"Created", "Skipped", "Missed"}

// seenRunNamespaces and seenScheduleNamespaces are the namespaces whose series exist already in this process.
var seenRunNamespaces, seenScheduleNamespaces sync.Map

// NoteRunNamespace creates, the first time this process reconciles a run in ns, every series of the run counters
// there at 0: each finished reason with each Passed status, each verdict, each comparison outcome. An alert
// reading increase() then sees the first run that fails, fails its policy or regresses in a namespace (a series
// born at 1 has no increase), and after a manager restart the counters are back at 0 before anything moves.
// 96 counter series and the two histograms' per namespace with runs.
func NoteRunNamespace(ns string) {
	if _, seen := seenRunNamespaces.LoadOrStore(ns, true); seen {
		return
	}
	for _, reason := range finishedReasons {
		for _, passed := range []metav1.ConditionStatus{metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionUnknown} {
			runsFinished.WithLabelValues(ns, reason, string(passed))
		}
	}
	for _, v := range []evalsv1alpha1.Verdict{evalsv1alpha1.VerdictPass, evalsv1alpha1.VerdictFail,
		evalsv1alpha1.VerdictError, evalsv1alpha1.VerdictSkipped} {
		casesJudged.WithLabelValues(ns, string(v))
	}
	for _, reason := range comparedReasons {
		regressions.WithLabelValues(ns, reason)
	}
	missingIDs.WithLabelValues(ns)
	parseErrors.WithLabelValues(ns)
	trials.WithLabelValues(ns)
	trialCases.WithLabelValues(ns)
	flakyCases.WithLabelValues(ns)
	for _, st := range tokenSeries {
		tokens.WithLabelValues(ns, st[0], st[1])
	}
	runnerCost.WithLabelValues(ns)
	judgeRequests.WithLabelValues(ns)
	for _, k := range budgetKinds {
		budgetsExceeded.WithLabelValues(ns, string(k))
	}
	runDuration.WithLabelValues(ns)
	collectionLatency.WithLabelValues(ns)
}

// NoteScheduleNamespace creates, the first time this process reconciles a schedule in ns, the series of each
// schedule outcome there at 0 (see NoteRunNamespace).
func NoteScheduleNamespace(ns string) {
	if _, seen := seenScheduleNamespaces.LoadOrStore(ns, true); seen {
		return
	}
	for _, outcome := range scheduleOutcomes {
		ScheduledTimes.WithLabelValues(ns, outcome)
	}
}

// RecordDecisions counts what a status write decided: the run's outcome (Succeeded became True or False) and its
// comparison with the baseline, each once per attempt (first says whether a decision is counted the first time).
// runnerEnded is when the runner container ended, if known.
func RecordDecisions(run *evalsv1alpha1.EvalRun, desired *evalsv1alpha1.EvalRunStatus, runnerEnded, now time.Time, first func(what string) bool) {
	ns := run.Namespace
	before := meta.FindStatusCondition(run.Status.Conditions, evalsv1alpha1.ConditionSucceeded)
	after := meta.FindStatusCondition(desired.Conditions, evalsv1alpha1.ConditionSucceeded)
	if after != nil && after.Status != metav1.ConditionUnknown && (before == nil || before.Status == metav1.ConditionUnknown) &&
		first(evalsv1alpha1.ConditionSucceeded) {
		passed := string(metav1.ConditionUnknown)
		if c := meta.FindStatusCondition(desired.Conditions, evalsv1alpha1.ConditionPassed); c != nil {
			passed = string(c.Status)
		}
		runsFinished.WithLabelValues(ns, after.Reason, passed).Inc()
		if desired.StartTime != nil {
			runDuration.WithLabelValues(ns).Observe(now.Sub(desired.StartTime.Time).Seconds())
		}
		if !runnerEnded.IsZero() && !now.Before(runnerEnded) {
			collectionLatency.WithLabelValues(ns).Observe(now.Sub(runnerEnded).Seconds())
		}
		if s := run.Status.Summary; s != nil {
			casesJudged.WithLabelValues(ns, string(evalsv1alpha1.VerdictPass)).Add(float64(s.Passed))
			casesJudged.WithLabelValues(ns, string(evalsv1alpha1.VerdictFail)).Add(float64(s.Failed))
			casesJudged.WithLabelValues(ns, string(evalsv1alpha1.VerdictError)).Add(float64(s.Errored))
			casesJudged.WithLabelValues(ns, string(evalsv1alpha1.VerdictSkipped)).Add(float64(s.Skipped))
			missingIDs.WithLabelValues(ns).Add(float64(s.Missing))
			parseErrors.WithLabelValues(ns).Add(float64(s.ParseErrors))
		}
		recordTrials(ns, run.Status.Summary, run.Status.Trials)
		recordCost(ns, run.Status.Cost)
	}
	beforeR := meta.FindStatusCondition(run.Status.Conditions, evalsv1alpha1.ConditionRegressed)
	afterR := meta.FindStatusCondition(desired.Conditions, evalsv1alpha1.ConditionRegressed)
	if afterR != nil && afterR.Reason != evalsv1alpha1.ReasonBaselinePending && (beforeR == nil || beforeR.Reason != afterR.Reason) &&
		first(evalsv1alpha1.ConditionRegressed) {
		regressions.WithLabelValues(ns, afterR.Reason).Inc()
	}
}

// recordTrials counts a finished run's trials (its cases times its trials per case: one without status.trials)
// and, with trials, its cases and flaky cases. A run without a summary judged nothing and counts nothing.
func recordTrials(ns string, s *evalsv1alpha1.RunSummary, t *evalsv1alpha1.TrialsStatus) {
	if s == nil {
		return
	}
	if t == nil || t.Count <= 1 {
		trials.WithLabelValues(ns).Add(float64(s.Total))
		return
	}
	trials.WithLabelValues(ns).Add(float64(s.Total) * float64(t.Count))
	trialCases.WithLabelValues(ns).Add(float64(t.Cases))
	flakyCases.WithLabelValues(ns).Add(float64(t.FlakyCases))
}

// recordCost counts what a finished run spent (its own figures: carried results were counted by the run that
// made them).
func recordCost(ns string, c *evalsv1alpha1.RunCost) {
	if c == nil {
		return
	}
	if r := c.Runner; r != nil {
		tokens.WithLabelValues(ns, "runner", "input").Add(float64(r.InputTokens))
		tokens.WithLabelValues(ns, "runner", "output").Add(float64(r.OutputTokens))
		tokens.WithLabelValues(ns, "runner", "cached").Add(float64(r.CachedTokens))
		if nanos, err := results.ParseUSDNanos(r.CostUSD); err == nil {
			runnerCost.WithLabelValues(ns).Add(float64(nanos) / 1e9)
		}
	}
	if j := c.Judges; j != nil {
		tokens.WithLabelValues(ns, "judge", "input").Add(float64(j.PromptTokens))
		tokens.WithLabelValues(ns, "judge", "output").Add(float64(j.CompletionTokens))
		judgeRequests.WithLabelValues(ns).Add(float64(j.Calls))
	}
	for _, k := range c.BudgetsExceeded {
		budgetsExceeded.WithLabelValues(ns, string(k)).Inc()
	}
}

// LastRunnerEnd is when the last of the pods' runner containers ended, or the zero time.
func LastRunnerEnd(pods []corev1.Pod) time.Time {
	var last time.Time
	for i := range pods {
		if t := assess.RunnerTerminated(&pods[i]); t != nil && t.FinishedAt.After(last) {
			last = t.FinishedAt.Time
		}
	}
	return last
}
