package v1alpha1

// The defaults and bounds of the API that the code relies on, each defined once. Markers cannot name Go
// constants, so the CRDs repeat them as literals; TestCRDMatchesTheConstants (constants_test.go) reads the
// generated CRDs and fails when a marker and its constant differ, or when a +default has no constant here.

// Spec defaults. The API server applies them at admission (the field's +default marker); the manager applies the
// same when a field is unset (an object stored before the default existed, or one built by a unit test).
const (
	// DefaultEvalFileKey is spec.evalFile.configMapKeyRef.key's default.
	DefaultEvalFileKey = "eval.yaml"
	// DefaultBackoffLimit is spec.backoffLimit's default: a runner that ran and failed is not retried.
	DefaultBackoffLimit int32 = 0
	// DefaultResultsDeadlineSeconds is spec.resultsDeadlineSeconds's default.
	DefaultResultsDeadlineSeconds int32 = 300
	// DefaultBatching is spec.target.batching's default.
	DefaultBatching = BatchingBatched
	// DefaultEvalFileView is spec.target.evalFileView's default.
	DefaultEvalFileView = EvalFileViewInputs
	// DefaultTargetWorkers is spec.target.workers when unset (no +default: the field is only valid with PerCase).
	DefaultTargetWorkers int32 = 1
	// DefaultHealthcheckTimeoutSeconds is spec.target.healthcheck.timeoutSeconds's default.
	DefaultHealthcheckTimeoutSeconds int32 = 60
	// DefaultPassThreshold is spec.judging.passThreshold's default, a decimal string as the field is.
	DefaultPassThreshold = "0.8"
	// DefaultCodeJudgeTimeoutSeconds is spec.judging.codeJudgeTimeoutSeconds's default.
	DefaultCodeJudgeTimeoutSeconds int32 = 60
	// DefaultCodeJudgeWorkers is spec.judging.codeJudgeWorkers's default.
	DefaultCodeJudgeWorkers int32 = 2
	// DefaultLLMTimeoutSeconds is spec.judging.llm.timeoutSeconds's default.
	DefaultLLMTimeoutSeconds int32 = 60
	// DefaultLLMMaxConcurrentRequests is spec.judging.llm.maxConcurrentRequests's default.
	DefaultLLMMaxConcurrentRequests int32 = 4
	// DefaultMinPassRate is spec.successPolicy.minPassRate's default: every case must pass.
	DefaultMinPassRate = "1"
	// DefaultRegression is spec.successPolicy.regression's default.
	DefaultRegression = RegressionIgnore
	// DefaultAnswerDelimiters is spec.judging.llm.answerDelimiters' default: AgentV's prompts.
	DefaultAnswerDelimiters = AnswerDelimitersAgentV
	// DefaultShards is spec.sharding.shards's default.
	DefaultShards int32 = 1
	// DefaultTrials is spec.trials.count's default: every case is answered once.
	DefaultTrials int32 = 1
	// DefaultTrialsPassRate is spec.trials.passRate's default: a case passes when every trial passes.
	DefaultTrialsPassRate = "1"
	// DefaultResumeCases is spec.resume.cases's default.
	DefaultResumeCases = ResumeMissing
	// DefaultStatusFrom is spec.storage.statusFrom's default.
	DefaultStatusFrom = StatusFromPod
	// DefaultMaxNewFailures is spec.baseline.maxNewFailures's default.
	DefaultMaxNewFailures int32 = 0
	// DefaultBaselineTest is spec.baseline.test's default: Count, what a baseline meant before the field existed.
	DefaultBaselineTest = BaselineTestCount
	// DefaultBaselineAlpha is spec.baseline.alpha's default, a decimal string as the field is.
	DefaultBaselineAlpha = "0.05"
	// DefaultBaselineMinEffect is spec.baseline.minEffect's default: any drop unlikely by chance.
	DefaultBaselineMinEffect = "0"

	// DefaultConcurrencyPolicy is an EvalSchedule's spec.concurrencyPolicy default.
	DefaultConcurrencyPolicy = ConcurrencyAllow
	// DefaultSuccessfulRunsHistoryLimit is an EvalSchedule's spec.successfulRunsHistoryLimit default.
	DefaultSuccessfulRunsHistoryLimit int32 = 3
	// DefaultFailedRunsHistoryLimit is an EvalSchedule's spec.failedRunsHistoryLimit default.
	DefaultFailedRunsHistoryLimit int32 = 1
)

// Status bounds: the MaxItems of the status lists the collector and the manager cut to.
const (
	// MaxStatusCases bounds status.cases.
	MaxStatusCases = 20000
	// MaxStatusMissingIDs bounds status.missingIds.
	MaxStatusMissingIDs = 1000
	// MaxStatusParseErrors bounds status.parseErrors.
	MaxStatusParseErrors = 100
	// MaxStatusUnexpectedIDs bounds status.unexpectedIds.
	MaxStatusUnexpectedIDs = 100
	// MaxCaseEvaluators bounds the evaluators of each case in status.cases.
	MaxCaseEvaluators = 16
	// HistogramBins is the length of status.summary.histogram.
	HistogramBins = 5
	// MaxStatusShards bounds status.shards.
	MaxStatusShards = 100
	// MaxShardMissingIDs bounds each shard's missingIds in status.shards.
	MaxShardMissingIDs = 10
	// MaxTrials bounds spec.trials.count.
	MaxTrials = 100
	// MaxPods bounds the pods of a run's Job: spec.sharding.shards times spec.trials.count.
	MaxPods = 1000
	// MaxStatusFlakyIDs bounds status.trials.flaky.
	MaxStatusFlakyIDs = 100
	// MaxComparisonIDs bounds each id list of status.baseline.
	MaxComparisonIDs = 100
	// MaxPreviousAttempts bounds status.previousAttempts.
	MaxPreviousAttempts = 10
	// MaxScheduleActive bounds an EvalSchedule's status.active.
	MaxScheduleActive = 100
)

// DefaultStatusBudgetBytes is the default bound of the results part of an EvalRun's status (summary, cases,
// missing ids, parse errors, ...), measured on its JSON encoding: the manager's --status-budget-bytes default,
// written into run.json for the collector. The manager bounds the flag with MaxStatusBudgetBytes
// (internal/manager/controller), measured by test/objectsize against the API server's object limit.
const DefaultStatusBudgetBytes = 512 << 10
