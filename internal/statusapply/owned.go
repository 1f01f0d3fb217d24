// Package statusapply builds the server-side apply bodies of the EvalRun and EvalSchedule status subresources: for
// each field manager, one function that lists the status fields it owns and builds the generated apply
// configuration with its With builders. A field a function does not set is never sent, so each manager's apply
// owns exactly its fields and leaves the others' alone; a field it stops sending is removed. Nested API values are
// converted by small typed converters (convert.go) that set a field exactly when encoding/json would write it, so
// the body is byte for byte what the API type's JSON would be. It is pure: no I/O, no client.
package statusapply

import (
	"k8s.io/apimachinery/pkg/types"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	acv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
)

// ManagerConditionTypes are the EvalRun condition types the manager owns, in the order it writes them.
var ManagerConditionTypes = []string{
	evalsv1alpha1.ConditionReconciling,
	evalsv1alpha1.ConditionStalled,
	evalsv1alpha1.ConditionSucceeded,
	evalsv1alpha1.ConditionQueued,
	evalsv1alpha1.ConditionPassed,
	evalsv1alpha1.ConditionCodeJudgesConfined,
	evalsv1alpha1.ConditionRegressed,
	evalsv1alpha1.ConditionBudgetExceeded,
}

// CollectorConditionTypes are the EvalRun condition types the collector owns.
var CollectorConditionTypes = []string{evalsv1alpha1.ConditionResultsTruncated}

// Manager returns the part of s the manager owns (field manager evalrun-manager): observedGeneration, the
// conditions of ManagerConditionTypes (in that order), jobName, startTime, completionTime, evalFileSHA256,
// bundleSHA256, evalFileView, evalConfigMapName, runner, sharding, shards, resume, baseline, attempt, previousAttempts,
// activeDeadline and queue. Everything else in s is left out. It is also the manager's view of a run's current status: two
// statuses the manager would apply alike give equal results.
func Manager(s *evalsv1alpha1.EvalRunStatus) *acv1alpha1.EvalRunStatusApplyConfiguration {
	ac := acv1alpha1.EvalRunStatus()
	optional(s.ObservedGeneration, ac.WithObservedGeneration)
	for _, c := range owned(s.Conditions, ManagerConditionTypes) {
		ac.WithConditions(condition(c))
	}
	optional(s.JobName, ac.WithJobName)
	timestamp(s.StartTime, ac.WithStartTime)
	timestamp(s.CompletionTime, ac.WithCompletionTime)
	optional(s.EvalFileSHA256, ac.WithEvalFileSHA256)
	if s.BundleSHA256 != nil {
		ac.WithBundleSHA256(*s.BundleSHA256)
	}
	if s.EvalFileView != nil {
		optional(*s.EvalFileView, ac.WithEvalFileView)
	}
	optional(s.EvalConfigMapName, ac.WithEvalConfigMapName)
	if s.Runner != nil {
		ac.WithRunner(runnerStatus(s.Runner))
	}
	if s.JudgeImage != nil {
		ac.WithJudgeImage(judgeImageStatus(s.JudgeImage))
	}
	if s.Sharding != nil {
		ac.WithSharding(shardingStatus(s.Sharding))
	}
	for i := range s.Shards {
		ac.WithShards(shardStatus(&s.Shards[i]))
	}
	if s.Resume != nil {
		ac.WithResume(resumeStatus(s.Resume))
	}
	if s.Baseline != nil {
		ac.WithBaseline(baselineComparison(s.Baseline))
	}
	if s.Attempt != nil {
		ac.WithAttempt(attempt(s.Attempt))
	}
	for i := range s.PreviousAttempts {
		ac.WithPreviousAttempts(attemptRecord(&s.PreviousAttempts[i]))
	}
	if s.ActiveDeadline != nil {
		ac.WithActiveDeadline(activeDeadline(s.ActiveDeadline))
	}
	if s.Queue != nil {
		ac.WithQueue(queueStatus(s.Queue))
	}
	return ac
}

// Collector returns the results section s as the part of the status the collector owns (field manager
// evalrun-collector; for a sharded or resumed run, the manager's evalrun-merge owns the same fields): summary,
// cases, missingIds, missingIdShards, parseErrors, unexpectedIds, results, collection, records and the
// conditions of CollectorConditionTypes (ResultsTruncated), cost, and a merged run's trials.
func Collector(s *results.Section) *acv1alpha1.EvalRunStatusApplyConfiguration {
	ac := acv1alpha1.EvalRunStatus()
	for _, c := range owned(s.Conditions, CollectorConditionTypes) {
		ac.WithConditions(condition(c))
	}
	if s.Summary != nil {
		ac.WithSummary(runSummary(s.Summary))
	}
	if len(s.Cases) > 0 {
		cases := make([]*acv1alpha1.CaseResultApplyConfiguration, len(s.Cases))
		for i := range s.Cases {
			cases[i] = caseResult(&s.Cases[i])
		}
		ac.WithCases(cases...)
	}
	ac.WithMissingIDs(s.MissingIDs...)
	for i := range s.MissingIDShards {
		ac.WithMissingIDShards(missingIDRun(&s.MissingIDShards[i]))
	}
	for i := range s.ParseErrors {
		ac.WithParseErrors(parseError(&s.ParseErrors[i]))
	}
	ac.WithUnexpectedIDs(s.UnexpectedIDs...)
	if s.Results != nil {
		ac.WithResults(resultsReference(s.Results))
	}
	if s.Collection != nil {
		ac.WithCollection(collectionStatus(s.Collection))
	}
	if s.Records != nil {
		ac.WithRecords(recordsStatus(s.Records))
	}
	if s.Cost != nil {
		ac.WithCost(runCost(s.Cost))
	}
	if s.Trials != nil {
		ac.WithTrials(trialsStatus(s.Trials))
	}
	return ac
}

// Schedule returns an EvalSchedule's status as its apply configuration: the schedule's field manager
// (evalrun-schedule) owns all of it.
func Schedule(s *evalsv1alpha1.EvalScheduleStatus) *acv1alpha1.EvalScheduleStatusApplyConfiguration {
	ac := acv1alpha1.EvalScheduleStatus()
	for i := range s.Conditions {
		ac.WithConditions(condition(&s.Conditions[i]))
	}
	optional(s.ObservedGeneration, ac.WithObservedGeneration)
	timestamp(s.LastScheduleTime, ac.WithLastScheduleTime)
	timestamp(s.LastSkippedTime, ac.WithLastSkippedTime)
	timestamp(s.NextScheduleTime, ac.WithNextScheduleTime)
	timestamp(s.LastSuccessfulTime, ac.WithLastSuccessfulTime)
	for i := range s.Active {
		ac.WithActive(scheduledRun(&s.Active[i]))
	}
	if s.LastFinished != nil {
		ac.WithLastFinished(finishedRun(s.LastFinished))
	}
	if s.Cost != nil {
		ac.WithCost(scheduleCost(s.Cost))
	}
	optional(s.HistoryRuns, ac.WithHistoryRuns)
	optional(s.HistoryDroppedCases, ac.WithHistoryDroppedCases)
	for i := range s.Flakiest {
		f := &s.Flakiest[i]
		ac.WithFlakiest(acv1alpha1.FlakyCase().WithID(f.ID).WithFlips(f.Flips).WithRuns(f.Runs).WithFlipRate(f.FlipRate))
	}
	return ac
}

// EvalRun returns the apply configuration of the named EvalRun's status subresource holding status. A non-empty
// uid makes the apply succeed only on the EvalRun with that uid.
func EvalRun(namespace, name string, uid types.UID, status *acv1alpha1.EvalRunStatusApplyConfiguration) *acv1alpha1.EvalRunApplyConfiguration {
	ac := acv1alpha1.EvalRun(name, namespace).WithStatus(status)
	if uid != "" {
		ac.WithUID(uid)
	}
	return ac
}
