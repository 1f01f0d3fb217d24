package statusapply

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	acv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1/applyconfiguration/api/v1alpha1"
)

// The converters below turn one nested API value into its apply configuration. Each sets a field exactly when
// encoding/json writes it for the API type: always for a field without omitempty, when not zero for an
// omitempty value, when not nil for a pointer. A metav1.Time that is zero encodes as null, which an apply
// configuration (a pointer) reads as unset, so zero times are left unset too.

// optional sets an omitempty field: with(v) unless v is its type's zero value.
func optional[T comparable, R any](v T, with func(T) R) {
	var zero T
	if v != zero {
		with(v)
	}
}

// pointer sets an optional pointer field: with(*p) unless p is nil.
func pointer[T any, R any](p *T, with func(T) R) {
	if p != nil {
		with(*p)
	}
}

// timestamp sets a time field: with(*t) unless t is nil or zero (a zero metav1.Time is JSON null).
func timestamp[R any](t *metav1.Time, with func(metav1.Time) R) {
	if t != nil && !t.IsZero() {
		with(*t)
	}
}

// owned returns the conditions of the given kinds in conds, in the order of kinds.
func owned(conds []metav1.Condition, kinds []string) []*metav1.Condition {
	var out []*metav1.Condition
	for _, t := range kinds {
		for i := range conds {
			if conds[i].Type == t {
				out = append(out, &conds[i])
				break
			}
		}
	}
	return out
}

// condition converts a metav1.Condition (client-go's apply configuration of it).
func condition(c *metav1.Condition) *metav1ac.ConditionApplyConfiguration {
	ac := metav1ac.Condition().WithType(c.Type).WithStatus(c.Status).WithReason(c.Reason).WithMessage(c.Message)
	optional(c.ObservedGeneration, ac.WithObservedGeneration)
	timestamp(&c.LastTransitionTime, ac.WithLastTransitionTime)
	return ac
}

// runnerStatus converts status.runner.
func runnerStatus(r *evalsv1alpha1.RunnerStatus) *acv1alpha1.RunnerStatusApplyConfiguration {
	ac := acv1alpha1.RunnerStatus()
	pointer(r.ExitCode, ac.WithExitCode)
	optional(r.Reason, ac.WithReason)
	optional(r.Message, ac.WithMessage)
	optional(r.PodName, ac.WithPodName)
	pointer(r.ImageID, ac.WithImageID)
	return ac
}

// judgeImageStatus converts status.judgeImage (and a baseline comparison's baselineJudgeImage).
func judgeImageStatus(j *evalsv1alpha1.JudgeImageStatus) *acv1alpha1.JudgeImageStatusApplyConfiguration {
	ac := acv1alpha1.JudgeImageStatus()
	optional(j.Image, ac.WithImage)
	optional(j.Source, ac.WithSource)
	pointer(j.ImageID, ac.WithImageID)
	return ac
}

// runSummary converts a run summary (status.summary, a finished run's and an attempt's).
func runSummary(s *evalsv1alpha1.RunSummary) *acv1alpha1.RunSummaryApplyConfiguration {
	ac := acv1alpha1.RunSummary().WithTotal(s.Total).WithPassed(s.Passed).WithFailed(s.Failed).WithErrored(s.Errored).
		WithSkipped(s.Skipped).WithMissing(s.Missing).WithParseErrors(s.ParseErrors).WithUnexpected(s.Unexpected)
	pointer(s.BudgetUnjudged, ac.WithBudgetUnjudged)
	optional(s.MeanScore, ac.WithMeanScore)
	optional(s.MedianScore, ac.WithMedianScore)
	optional(s.MinScore, ac.WithMinScore)
	optional(s.MaxScore, ac.WithMaxScore)
	optional(s.PassRate, ac.WithPassRate)
	ac.WithHistogram(s.Histogram...)
	if u := s.JudgeUsage; u != nil {
		ac.WithJudgeUsage(judgeUsage(u))
	}
	return ac
}

// caseResult converts one of status.cases.
func caseResult(c *evalsv1alpha1.CaseResult) *acv1alpha1.CaseResultApplyConfiguration {
	ac := acv1alpha1.CaseResult().WithID(c.ID)
	optional(c.Verdict, ac.WithVerdict)
	optional(c.Score, ac.WithScore)
	optional(c.Answer, ac.WithAnswer)
	optional(c.Error, ac.WithError)
	if len(c.Evaluators) > 0 {
		evaluators := make([]*acv1alpha1.EvaluatorSummaryApplyConfiguration, len(c.Evaluators))
		for i := range c.Evaluators {
			evaluators[i] = evaluatorSummary(&c.Evaluators[i])
		}
		ac.WithEvaluators(evaluators...)
	}
	pointer(c.CarriedFrom, ac.WithCarriedFrom)
	pointer(c.AnsweredBy, ac.WithAnsweredBy)
	if t := c.Trials; t != nil {
		ac.WithTrials(acv1alpha1.CaseTrials().WithPassed(t.Passed).WithCount(t.Count))
	}
	return ac
}

// trialsStatus converts status.trials.
func trialsStatus(t *evalsv1alpha1.TrialsStatus) *acv1alpha1.TrialsStatusApplyConfiguration {
	ac := acv1alpha1.TrialsStatus().WithCount(t.Count).WithPassRate(t.PassRate).WithCases(t.Cases).WithFlakyCases(t.FlakyCases).
		WithFlaky(t.Flaky...)
	estimate := func(e *evalsv1alpha1.TrialsEstimate, with func(*acv1alpha1.TrialsEstimateApplyConfiguration) *acv1alpha1.TrialsStatusApplyConfiguration) {
		if e != nil {
			with(acv1alpha1.TrialsEstimate().WithValue(e.Value).WithLow(e.Low).WithHigh(e.High))
		}
	}
	estimate(t.RunPassRate, ac.WithRunPassRate)
	estimate(t.MeanTrialPassRate, ac.WithMeanTrialPassRate)
	estimate(t.MeanScore, ac.WithMeanScore)
	optional(t.PassAtN, ac.WithPassAtN)
	optional(t.PassHatN, ac.WithPassHatN)
	optional(t.Source, ac.WithSource)
	return ac
}

// evaluatorSummary converts one of a case's evaluators.
func evaluatorSummary(e *evalsv1alpha1.EvaluatorSummary) *acv1alpha1.EvaluatorSummaryApplyConfiguration {
	ac := acv1alpha1.EvaluatorSummary().WithName(e.Name)
	optional(e.Type, ac.WithType)
	optional(e.Verdict, ac.WithVerdict)
	optional(e.Score, ac.WithScore)
	optional(e.Message, ac.WithMessage)
	return ac
}

// parseError converts one of status.parseErrors.
func parseError(p *evalsv1alpha1.ParseError) *acv1alpha1.ParseErrorApplyConfiguration {
	ac := acv1alpha1.ParseError().WithLine(p.Line).WithMessage(p.Message)
	optional(p.Excerpt, ac.WithExcerpt)
	pointer(p.Shard, ac.WithShard)
	pointer(p.Trial, ac.WithTrial)
	return ac
}

// missingIDRun converts one of status.missingIdShards.
func missingIDRun(r *evalsv1alpha1.MissingIDRun) *acv1alpha1.MissingIDRunApplyConfiguration {
	ac := acv1alpha1.MissingIDRun()
	optional(r.Count, ac.WithCount)
	pointer(r.Shard, ac.WithShard)
	return ac
}

// resultsReference converts status.results.
func resultsReference(r *evalsv1alpha1.ResultsReference) *acv1alpha1.ResultsReferenceApplyConfiguration {
	ac := acv1alpha1.ResultsReference().WithConfigMaps(r.ConfigMaps...).WithObjects(r.Objects...)
	pointer(r.ObjectsPrefix, ac.WithObjectsPrefix)
	pointer(r.ConfigMapsPrefix, ac.WithConfigMapsPrefix)
	optional(r.Key, ac.WithKey)
	optional(r.Format, ac.WithFormat)
	optional(r.TotalCases, ac.WithTotalCases)
	optional(r.OmittedCases, ac.WithOmittedCases)
	optional(r.OmittedMissingIDs, ac.WithOmittedMissingIDs)
	optional(r.OmittedParseErrors, ac.WithOmittedParseErrors)
	optional(r.OmittedUnexpectedIDs, ac.WithOmittedUnexpectedIDs)
	return ac
}

// collectionStatus converts status.collection.
func collectionStatus(c *evalsv1alpha1.CollectionStatus) *acv1alpha1.CollectionStatusApplyConfiguration {
	ac := acv1alpha1.CollectionStatus().WithRunnerFinished(c.RunnerFinished)
	optional(c.OutputSHA256, ac.WithOutputSHA256)
	if c.Launcher != nil {
		ac.WithLauncher(launcherReport(c.Launcher))
	}
	optional(c.Outcome, ac.WithOutcome)
	optional(c.Message, ac.WithMessage)
	timestamp(c.CollectedAt, ac.WithCollectedAt)
	optional(c.PodName, ac.WithPodName)
	pointer(c.CodeJudgeLandlockABI, ac.WithCodeJudgeLandlockABI)
	return ac
}

// launcherReport converts status.collection.launcher.
func launcherReport(l *evalsv1alpha1.LauncherReport) *acv1alpha1.LauncherReportApplyConfiguration {
	ac := acv1alpha1.LauncherReport()
	pointer(l.ExitCode, ac.WithExitCode)
	optional(l.Signal, ac.WithSignal)
	optional(l.TimedOut, ac.WithTimedOut)
	optional(l.HealthcheckFailed, ac.WithHealthcheckFailed)
	optional(l.Invocations, ac.WithInvocations)
	optional(l.FailedInvocations, ac.WithFailedInvocations)
	optional(l.Leftovers, ac.WithLeftovers)
	pointer(l.Survivors, ac.WithSurvivors)
	pointer(l.Delivery, ac.WithDelivery)
	optional(l.StderrTail, ac.WithStderrTail)
	if c := l.CostBudget; c != nil {
		ac.WithCostBudget(acv1alpha1.CostBudgetStop().WithCostUSD(c.CostUSD).WithMaxCostUSD(c.MaxCostUSD).WithCases(c.Cases))
	}
	return ac
}

// shardingStatus converts status.sharding.
func shardingStatus(s *evalsv1alpha1.ShardingStatus) *acv1alpha1.ShardingStatusApplyConfiguration {
	ac := acv1alpha1.ShardingStatus().WithSplit(s.Split).WithSucceeded(s.Succeeded).WithFailed(s.Failed).WithOmittedShards(s.OmittedShards)
	optional(s.Shards, ac.WithShards)
	return ac
}

// shardStatus converts one of status.shards.
func shardStatus(s *evalsv1alpha1.ShardStatus) *acv1alpha1.ShardStatusApplyConfiguration {
	ac := acv1alpha1.ShardStatus().WithIndex(s.Index).WithCases(s.Cases).WithState(s.State).WithReason(s.Reason).
		WithMessage(s.Message).WithPodName(s.PodName).WithPassed(s.Passed).WithFailed(s.Failed).WithErrored(s.Errored).
		WithMissing(s.Missing).WithParseErrors(s.ParseErrors).WithMissingIDs(s.MissingIDs...)
	pointer(s.Trial, ac.WithTrial)
	pointer(s.ImageID, ac.WithImageID)
	if s.Cost != nil {
		ac.WithCost(runCost(s.Cost))
	}
	return ac
}

// resumeStatus converts status.resume.
func resumeStatus(r *evalsv1alpha1.ResumeStatus) *acv1alpha1.ResumeStatusApplyConfiguration {
	ac := acv1alpha1.ResumeStatus().WithFrom(r.From).WithFromUID(r.FromUID).WithRan(r.Ran).WithCarried(r.Carried)
	optional(r.Cases, ac.WithCases)
	pointer(r.RanTrials, ac.WithRanTrials)
	return ac
}

// baselineComparison converts status.baseline.
func baselineComparison(b *evalsv1alpha1.BaselineComparison) *acv1alpha1.BaselineComparisonApplyConfiguration {
	ac := acv1alpha1.BaselineComparison().WithRunName(b.RunName).WithRunUID(b.RunUID).WithSharedCases(b.SharedCases).
		WithNewlyFailing(b.NewlyFailing...).WithNewlyFailingCount(b.NewlyFailingCount).
		WithNewlyPassing(b.NewlyPassing...).WithNewlyPassingCount(b.NewlyPassingCount).
		WithMissingInRun(b.MissingInRun...).WithMissingInRunCount(b.MissingInRunCount).
		WithMissingInBaseline(b.MissingInBaseline...).WithMissingInBaselineCount(b.MissingInBaselineCount).
		WithQuarantined(b.Quarantined...)
	optional(b.QuarantinedCount, ac.WithQuarantinedCount)
	optional(b.EvalFile, ac.WithEvalFile)
	if b.BaselineJudgeImage != nil {
		ac.WithBaselineJudgeImage(judgeImageStatus(b.BaselineJudgeImage))
	}
	optional(b.MeanScore, ac.WithMeanScore)
	optional(b.BaselineMeanScore, ac.WithBaselineMeanScore)
	optional(b.MeanScoreDelta, ac.WithMeanScoreDelta)
	optional(b.Test, ac.WithTest)
	if b.Paired != nil {
		ac.WithPaired(pairedComparison(b.Paired))
	}
	return ac
}

// pairedComparison converts status.baseline.paired.
func pairedComparison(p *evalsv1alpha1.PairedComparison) *acv1alpha1.PairedComparisonApplyConfiguration {
	ac := acv1alpha1.PairedComparison().WithCases(p.Cases).WithWorseCases(p.WorseCases).WithBetterCases(p.BetterCases).
		WithSkippedCases(p.SkippedCases).WithOnlyInBaselineCases(p.OnlyInBaselineCases).WithOnlyInRunCases(p.OnlyInRunCases)
	optional(p.Method, ac.WithMethod)
	if p.PassRate != nil {
		ac.WithPassRate(pairedEffect(p.PassRate))
	}
	if p.MeanScore != nil {
		ac.WithMeanScore(pairedEffect(p.MeanScore))
	}
	optional(p.PValue, ac.WithPValue)
	return ac
}

// pairedEffect converts one metric of status.baseline.paired.
func pairedEffect(e *evalsv1alpha1.PairedEffect) *acv1alpha1.PairedEffectApplyConfiguration {
	return acv1alpha1.PairedEffect().WithBaseline(e.Baseline).WithRun(e.Run).WithDelta(e.Delta).
		WithDeltaLow(e.DeltaLow).WithDeltaHigh(e.DeltaHigh)
}

// attempt converts status.attempt.
func attempt(a *evalsv1alpha1.Attempt) *acv1alpha1.AttemptApplyConfiguration {
	ac := acv1alpha1.Attempt()
	optional(a.Number, ac.WithNumber)
	optional(a.Trigger, ac.WithTrigger)
	optional(a.SpecSHA256, ac.WithSpecSHA256)
	pointer(a.Rerun, ac.WithRerun)
	optional(a.Generation, ac.WithGeneration)
	return ac
}

// attemptRecord converts one of status.previousAttempts.
func attemptRecord(r *evalsv1alpha1.AttemptRecord) *acv1alpha1.AttemptRecordApplyConfiguration {
	ac := acv1alpha1.AttemptRecord()
	optional(r.Number, ac.WithNumber)
	optional(r.Trigger, ac.WithTrigger)
	pointer(r.Rerun, ac.WithRerun)
	timestamp(r.StartTime, ac.WithStartTime)
	pointer(r.EvalFileSHA256, ac.WithEvalFileSHA256)
	ac.RunOutcomeApplyConfiguration = *runOutcome(&r.RunOutcome)
	return ac
}

// runOutcome converts the outcome inlined in an attempt record and a finished run.
func runOutcome(o *evalsv1alpha1.RunOutcome) *acv1alpha1.RunOutcomeApplyConfiguration {
	ac := acv1alpha1.RunOutcomeApplyConfiguration{}
	timestamp(o.CompletionTime, ac.WithCompletionTime)
	optional(o.Succeeded, ac.WithSucceeded)
	ac.WithReason(o.Reason)
	pointer(o.Passed, ac.WithPassed)
	pointer(o.Regressed, ac.WithRegressed)
	if o.Summary != nil {
		ac.WithSummary(runSummary(o.Summary))
	}
	return &ac
}

// activeDeadline converts status.activeDeadline.
func activeDeadline(d *evalsv1alpha1.ActiveDeadline) *acv1alpha1.ActiveDeadlineApplyConfiguration {
	ac := acv1alpha1.ActiveDeadline()
	optional(d.Seconds, ac.WithSeconds)
	optional(d.Source, ac.WithSource)
	return ac
}

// queueStatus converts status.queue.
func queueStatus(q *evalsv1alpha1.QueueStatus) *acv1alpha1.QueueStatusApplyConfiguration {
	ac := acv1alpha1.QueueStatus()
	optional(q.Name, ac.WithName)
	optional(q.Workload, ac.WithWorkload)
	optional(q.Admission, ac.WithAdmission)
	optional(q.ClusterQueue, ac.WithClusterQueue)
	optional(q.Reason, ac.WithReason)
	optional(q.Message, ac.WithMessage)
	optional(q.Evictions, ac.WithEvictions)
	pointer(q.Position, ac.WithPosition)
	return ac
}

// scheduledRun converts one of an EvalSchedule's status.active.
func scheduledRun(r *evalsv1alpha1.ScheduledRun) *acv1alpha1.ScheduledRunApplyConfiguration {
	ac := acv1alpha1.ScheduledRun().WithName(r.Name)
	timestamp(&r.ScheduledTime, ac.WithScheduledTime)
	return ac
}

// finishedRun converts an EvalSchedule's status.lastFinished.
func finishedRun(r *evalsv1alpha1.FinishedRun) *acv1alpha1.FinishedRunApplyConfiguration {
	ac := acv1alpha1.FinishedRun().WithName(r.Name)
	timestamp(&r.ScheduledTime, ac.WithScheduledTime)
	ac.RunOutcomeApplyConfiguration = *runOutcome(&r.RunOutcome)
	return ac
}

// recordsStatus converts status.records.
func recordsStatus(r *evalsv1alpha1.RecordsStatus) *acv1alpha1.RecordsStatusApplyConfiguration {
	ac := acv1alpha1.RecordsStatus()
	optional(r.Kept, ac.WithKept)
	optional(r.NotKept, ac.WithNotKept)
	optional(r.Bytes, ac.WithBytes)
	optional(r.Where, ac.WithWhere)
	return ac
}

// judgeUsage converts a JudgeUsage (summary.judgeUsage, cost.judges).
func judgeUsage(u *evalsv1alpha1.JudgeUsage) *acv1alpha1.JudgeUsageApplyConfiguration {
	return acv1alpha1.JudgeUsage().WithCalls(u.Calls).WithPromptTokens(u.PromptTokens).
		WithCompletionTokens(u.CompletionTokens).WithTotalTokens(u.TotalTokens).WithLatencyMilliseconds(u.LatencyMilliseconds)
}

// runnerCost converts a RunnerCost.
func runnerCost(r *evalsv1alpha1.RunnerCost) *acv1alpha1.RunnerCostApplyConfiguration {
	return acv1alpha1.RunnerCost().WithCases(r.Cases).WithTokenUsageCases(r.TokenUsageCases).
		WithInputTokens(r.InputTokens).WithOutputTokens(r.OutputTokens).WithCachedTokens(r.CachedTokens).
		WithTotalTokens(r.TotalTokens).WithCostCases(r.CostCases).WithCostUSD(r.CostUSD).
		WithDurationCases(r.DurationCases).WithDurationMilliseconds(r.DurationMilliseconds)
}

// runCost converts status.cost (and shards[].cost).
func runCost(c *evalsv1alpha1.RunCost) *acv1alpha1.RunCostApplyConfiguration {
	ac := acv1alpha1.RunCost().WithBudgetsExceeded(c.BudgetsExceeded...)
	if c.Runner != nil {
		ac.WithRunner(runnerCost(c.Runner))
	}
	if c.Judges != nil {
		ac.WithJudges(judgeUsage(c.Judges))
	}
	if cc := c.Carried; cc != nil {
		carried := acv1alpha1.CarriedCost()
		if cc.Runner != nil {
			carried.WithRunner(runnerCost(cc.Runner))
		}
		if cc.Judges != nil {
			carried.WithJudges(judgeUsage(cc.Judges))
		}
		ac.WithCarried(carried)
	}
	return ac
}

// scheduleCost converts an EvalSchedule's status.cost.
func scheduleCost(c *evalsv1alpha1.ScheduleCost) *acv1alpha1.ScheduleCostApplyConfiguration {
	ac := acv1alpha1.ScheduleCost().WithRuns(c.Runs)
	if c.Runner != nil {
		ac.WithRunner(runnerCost(c.Runner))
	}
	if c.Judges != nil {
		ac.WithJudges(judgeUsage(c.Judges))
	}
	return ac
}
