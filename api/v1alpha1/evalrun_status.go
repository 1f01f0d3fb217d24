package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Condition types of an EvalRun. Reconciling and Stalled follow the kstatus conventions that Flux and Argo CD read.
const (
	// ConditionReconciling is True while the run is in progress (pending, queued, running, collecting).
	ConditionReconciling = "Reconciling"
	// ConditionStalled is True when the run failed; its reason says why.
	ConditionStalled = "Stalled"
	// ConditionSucceeded is True when the run completed and every result was collected, False when it failed,
	// Unknown while it is in progress.
	ConditionSucceeded = "Succeeded"
	// ConditionPassed is True when the success policy was met by the collected results, False when it was not.
	ConditionPassed = "Passed"
	// ConditionResultsTruncated is True when the status could not hold every result; the full results are in the
	// ConfigMaps listed in status.results.
	ConditionResultsTruncated = "ResultsTruncated"
	// ConditionQueued is True while the Job is suspended, by spec.suspend or by Kueue.
	ConditionQueued = "Queued"
	// ConditionRegressed is set on a finished run with spec.baseline: True when it regressed against the
	// baseline beyond spec.baseline's bounds, False when it did not, Unknown while the baseline has not finished
	// or when it cannot be compared.
	ConditionRegressed = "Regressed"
	// ConditionCodeJudgesConfined says whether the run's code_judge scripts ran under Landlock (the judge
	// runner's per-case ruleset: their own case's files, no TCP, no signal outside): True with
	// ReasonLandlockConfined, False with ReasonLandlockUnavailable or ReasonLandlockPartial. Only on runs whose code
	// judges ran.
	ConditionCodeJudgesConfined = "CodeJudgesConfined"
)

// Reasons used on EvalRun conditions. They form a fixed set: in progress Pending, Queued, Running, Collecting;
// success Completed; failures the rest.
const (
	ReasonPending            = "Pending"
	ReasonQueued             = "Queued"
	ReasonRunning            = "Running"
	ReasonCollecting         = "Collecting"
	ReasonCompleted          = "Completed"
	ReasonInvalidEvalFile    = "InvalidEvalFile"
	ReasonRunnerFailed       = "RunnerFailed"
	ReasonRunnerOOMKilled    = "RunnerOOMKilled"
	ReasonRunnerTimedOut     = "RunnerTimedOut"
	ReasonHealthcheckFailed  = "HealthcheckFailed"
	ReasonDeadlineExceeded   = "DeadlineExceeded"
	ReasonImagePullFailed    = "ImagePullFailed"
	ReasonUnschedulable      = "Unschedulable"
	ReasonMissingResults     = "MissingResults"
	ReasonInvalidOutput      = "InvalidOutput"
	ReasonResultsNotReported = "ResultsNotReported"
	ReasonCollectorFailed    = "CollectorFailed"
	ReasonCancelled          = "Cancelled"
	// ReasonRunnerNotStopped: processes of the runner survived SIGKILL for the launcher's kill grace (a process in
	// uninterruptible sleep), so nothing can tell when the runner's output stopped changing.
	ReasonRunnerNotStopped = "RunnerNotStopped"
	// ReasonCostBudgetExceeded: the cost the runner's records reported passed spec.target.maxCostUSD (a sharded
	// run's shard: its share), so the launcher stopped the runner; the records written by then were judged.
	ReasonCostBudgetExceeded = "CostBudgetExceeded"
	// ReasonChildConflict: an object the run needs (its pinned eval ConfigMap, result ConfigMaps, RBAC or Job)
	// exists and is not the run's.
	ReasonChildConflict = "ChildConflict"
	// ReasonInvalidSpec: the API server rejected a child built from the spec (labels, resources, sizes), or the
	// spec with its eval file breaks a bound admission checks for the spec alone (spec.sharding.shards times the
	// eval file's own trials above 1000 pods).
	ReasonInvalidSpec = "InvalidSpec"
	// ReasonCreateForbidden: the API server kept refusing (403 Forbidden, other than a quota) to create one of the
	// run's objects within the manager's --pod-rejected-timeout: the manager's own RBAC (a namespaced install
	// without its RoleBinding), an admission webhook or policy.
	ReasonCreateForbidden = "CreateForbidden"
	// ReasonPodRejected: the Job's pod could not be created (Pod Security, ResourceQuota, a webhook, an unknown
	// priority class) within the manager's --pod-rejected-timeout.
	ReasonPodRejected = "PodRejected"
	// ReasonInfrastructureFailed: the pod's containers never ran through no fault of the runner (the runtime
	// could not start the runner: StartError, ContainerCannotRun; a container the kubelet could not create or
	// start within the manager's --container-create-timeout: CreateContainerError, RunContainerError; a sandbox
	// never created or gone), on the original pod and 3 replacements; each replacement is an eviction.
	ReasonInfrastructureFailed = "InfrastructureFailed"
	// ReasonInvalidContainerConfig: the kubelet could not configure a container within the manager's
	// --container-create-timeout (CreateContainerConfigError: a Secret, ConfigMap or key named by the runner's env
	// is missing, or the image would run as root); the message is the kubelet's. Not retried: a new pod would
	// meet the same configuration.
	ReasonInvalidContainerConfig = "InvalidContainerConfig"
	// ReasonResumeSourceInvalid: spec.resume.from names a run that does not exist, is this run, has no stored
	// results, ran an eval file with another sha256, judged under other settings than this run (each named), or
	// whose pinned run.json is gone.
	ReasonResumeSourceInvalid = "ResumeSourceInvalid"
	// ReasonRejudgeSourceInvalid: spec.rejudge.from names a run that does not exist, is this run, kept no
	// records (status.records), resumed another run, or whose records this run cannot read (another bucket).
	ReasonRejudgeSourceInvalid = "RejudgeSourceInvalid"
	// ReasonStorageLimitExceeded: the kubelet evicted a pod of the run because it wrote past a storage limit: an
	// emptyDir over its sizeLimit (the runner's output volume is bounded by target.resources.limits
	// ["ephemeral-storage"] or the manager's default), a container over its ephemeral-storage limit, or the pod
	// over the sum of them; the message names the volume or container and the limit. Not retried: a new pod
	// would write the same.
	ReasonStorageLimitExceeded = "StorageLimitExceeded"
	// ReasonDisruptionLimitExceeded: a pod of the run (in a sharded run, of one shard) was taken away (evicted,
	// drained, preempted, lost with its node, evicted under node pressure, or replaced by the manager after an
	// infrastructure failure) more than 3 times, as the Job counts them per completion index; the Job is stopped.
	ReasonDisruptionLimitExceeded = "DisruptionLimitExceeded"
	// ReasonBucketUnavailable: a bucket the run names (its eval file's, its storage's, its resume source's) failed
	// or did not answer, so the run could not be prepared within its deadline (spec.activeDeadlineSeconds or the
	// manager's default, counted from the run's creation, or from the start of a new attempt); the message names
	// the endpoint and the call.
	ReasonBucketUnavailable = "BucketUnavailable"

	// Passed condition reasons.
	ReasonPolicyMet    = "PolicyMet"
	ReasonPolicyNotMet = "PolicyNotMet"
	ReasonNoResults    = "NoResults"

	// Regressed condition reasons.
	ReasonRegressed           = "Regressed"
	ReasonNotRegressed        = "NotRegressed"
	ReasonBaselinePending     = "BaselinePending"
	ReasonBaselineUnavailable = "BaselineUnavailable"

	// ResultsTruncated condition reasons.
	ReasonStatusBudgetExceeded = "StatusBudgetExceeded"
	ReasonAllResultsInStatus   = "AllResultsInStatus"
)

// Verdict is the judgement of one case or evaluator.
// +kubebuilder:validation:Enum=Pass;Fail;Error;Skipped
type Verdict string

const (
	// VerdictPass means the score reached the pass threshold.
	VerdictPass Verdict = "Pass"
	// VerdictFail means the score stayed below the pass threshold.
	VerdictFail Verdict = "Fail"
	// VerdictError means the case had no usable output (missing id, runner error, judge crash).
	VerdictError Verdict = "Error"
	// VerdictSkipped means nothing could judge the case (for example only llm_judge evaluators, without a model).
	VerdictSkipped Verdict = "Skipped"
)

// EvalRunStatus is the observed state of an EvalRun. The manager (field manager "evalrun-manager") writes
// observedGeneration, conditions other than ResultsTruncated, jobName, times, evalFileSHA256, runner and
// activeDeadline; the collector (field manager "evalrun-collector") writes summary, cases, missingIds,
// parseErrors, unexpectedIds, results, collection and the ResultsTruncated condition. Both use server-side apply on disjoint fields.
type EvalRunStatus struct {
	// conditions are the run's observed conditions: Reconciling, Stalled, Succeeded, Passed, ResultsTruncated,
	// Queued, at most one of each type.
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// observedGeneration is the generation the manager last acted on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// jobName is the name of the Job that runs the evaluation.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	JobName string `json:"jobName,omitempty"`

	// startTime is when the run's Job started (or was created, if it never started).
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`

	// completionTime is when the run reached a terminal condition.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`

	// evalFileSHA256 is the hex sha256 of the eval file the run uses (the pinned copy).
	// +kubebuilder:validation:MaxLength=64
	// +optional
	EvalFileSHA256 string `json:"evalFileSHA256,omitempty"`

	// bundleSHA256 is the digest of the eval bundle the run uses (spec.evalFile.bundle), as the manager pinned it:
	// every pod verifies every file against it. Unset for a run without a bundle.
	// +kubebuilder:validation:MinLength=64
	// +kubebuilder:validation:MaxLength=64
	// +optional
	BundleSHA256 *string `json:"bundleSHA256,omitempty"`

	// evalFileView is what the run's runner reads at {EVAL_FILE}, spec.target.evalFileView resolved: Inputs (the
	// runner view, nothing a judge reads) or Full (the whole eval file, expected answers included). Written by
	// the manager when it builds the run's Job.
	// +optional
	EvalFileView *EvalFileView `json:"evalFileView,omitempty"`

	// evalConfigMapName is the owned ConfigMap holding the pinned eval file.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	EvalConfigMapName string `json:"evalConfigMapName,omitempty"`

	// runner holds what the manager learned about the runner container from the Job's pods.
	// +optional
	Runner *RunnerStatus `json:"runner,omitempty"`

	// judgeImage is the image the run's code_judge scripts run in and where that choice came from; unset for a
	// run without code judges (its judge container only waits for the collector, in the collector image).
	// +optional
	JudgeImage *JudgeImageStatus `json:"judgeImage,omitempty"`

	// summary counts the judged results. Written by the collector. With spec.trials it counts cases, each by its
	// verdict over its trials.
	// +optional
	Summary *RunSummary `json:"summary,omitempty"`

	// trials is what a run with spec.trials.count above 1 found over its trials: the pass rates and the mean
	// score with their 95% intervals, pass@k and pass^k, and the flaky cases (docs/statistics.md). Written with
	// the merged results (by the manager's merge); unset for a run of one trial.
	// +optional
	Trials *TrialsStatus `json:"trials,omitempty"`

	// cases are per-case results, non-passing first, as many as fit the status byte budget; every result is in
	// the ConfigMaps named in results. Written by the collector.
	// +listType=map
	// +listMapKey=id
	// +kubebuilder:validation:MaxItems=20000
	// +optional
	Cases []CaseResult `json:"cases,omitempty"`

	// missingIds are requested case ids with no valid record, in request order (bounded; the full count is in
	// summary.missing). Written by the collector. In a sharded or resumed run, missingIdShards names each id's
	// shard.
	// +kubebuilder:validation:MaxItems=1000
	// +kubebuilder:validation:items:MaxLength=256
	// +listType=atomic
	// +optional
	MissingIDs []string `json:"missingIds,omitempty"`

	// missingIdShards names the shard of each id of missingIds in a sharded or resumed run, as runs in the same
	// order: the first run's count ids of missingIds are its shard's, the next run's count ids the next run's
	// shard's, and so on; the counts add up to the length of missingIds. A run without a shard holds ids carried
	// from an earlier run, which no shard ran. Written with missingIds (by the manager merging the shards).
	// +kubebuilder:validation:MaxItems=1000
	// +listType=atomic
	// +optional
	MissingIDShards []MissingIDRun `json:"missingIdShards,omitempty"`

	// parseErrors are problems with lines of the runner's output (bounded; the full count is in
	// summary.parseErrors). Written by the collector.
	// +kubebuilder:validation:MaxItems=100
	// +listType=atomic
	// +optional
	ParseErrors []ParseError `json:"parseErrors,omitempty"`

	// unexpectedIds are ids of valid records that no case requested; they are ignored (bounded, each at most 256
	// characters). Written by the collector.
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MaxLength=256
	// +listType=atomic
	// +optional
	UnexpectedIDs []string `json:"unexpectedIds,omitempty"`

	// results says where the full results live and what the status left out. Written by the collector.
	// +optional
	Results *ResultsReference `json:"results,omitempty"`

	// collection holds the collector's facts about the pod it ran in. Written by the collector of a run with
	// one pod and no resume; a sharded or resumed run has its collectors' facts per shard in shards.
	// +optional
	Collection *CollectionStatus `json:"collection,omitempty"`

	// sharding counts the shards of a sharded or resumed run and says how its cases were split. Written by the
	// manager.
	// +optional
	Sharding *ShardingStatus `json:"sharding,omitempty"`

	// shards lists shards of a sharded or resumed run (index, state, counts, pod): failed shards first, then
	// those in progress, then the rest, in index order, at most 100 (sharding.omittedShards counts the rest).
	// With spec.trials, an entry is one trial of one shard (its pod): index and trial, in the Job's completion
	// order (every shard's first trial, then every shard's second, ...). Written by the manager, whole (atomic:
	// entries of one shard's trials share their index).
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=100
	// +optional
	Shards []ShardStatus `json:"shards,omitempty"`

	// resume says what a run with spec.resume ran and what it carried from the earlier run. Written by the
	// manager.
	// +optional
	Resume *ResumeStatus `json:"resume,omitempty"`

	// records counts the cases' records as the runner wrote them that the run kept for judging again
	// (docs/rejudge.md) and those beyond the storage budget that it did not keep. Written by the
	// collector (a sharded run's: summed by the manager).
	// +optional
	Records *RecordsStatus `json:"records,omitempty"`

	// baseline compares the run's full per-case results with spec.baseline's run. Written by the manager once
	// both runs have finished.
	// +optional
	Baseline *BaselineComparison `json:"baseline,omitempty"`

	// attempt is the attempt this status describes. A finished run starts a new attempt under the same name when
	// its spec changes (other than suspend) or its evals.evalrun.io/rerun annotation gets a new value. Written by
	// the manager.
	// +optional
	Attempt *Attempt `json:"attempt,omitempty"`

	// previousAttempts are the outcomes of the run's earlier attempts, newest first (at most 10). Written by the
	// manager.
	// +listType=map
	// +listMapKey=number
	// +kubebuilder:validation:MaxItems=10
	// +optional
	PreviousAttempts []AttemptRecord `json:"previousAttempts,omitempty"`

	// activeDeadline is the deadline the run's Job got and where it came from: spec.activeDeadlineSeconds, or the
	// manager's --default-active-deadline-seconds when the spec sets none, so that every run ends. Written by the
	// manager once the Job exists.
	// +optional
	ActiveDeadline *ActiveDeadline `json:"activeDeadline,omitempty"`

	// queue is the run's place in Kueue when spec.queueName is set: the queue, the admission state and the
	// admitting ClusterQueue of the Workload Kueue made for the run's Job, and Kueue's reason while the Workload
	// waits. Written by the manager; the admission fields stay empty where Kueue is not installed.
	// +optional
	Queue *QueueStatus `json:"queue,omitempty"`

	// cost is what the run spent: the runner's reported tokens, cost and duration summed over its cases, the LLM
	// judges' requests and tokens, and the budgets it reached (docs/operations.md#cost). Written with the results:
	// by the collector, or for a sharded or resumed run by the manager's merge (each shard's own in shards[].cost).
	// +optional
	Cost *RunCost `json:"cost,omitempty"`
}

// QueueAdmission is where a run's Kueue Workload stands.
// +kubebuilder:validation:Enum=Waiting;QuotaReserved;Admitted;Evicted;Finished
type QueueAdmission string

const (
	// QueueWaiting: Kueue has not reserved quota for the Workload yet (Queued=True says why).
	QueueWaiting QueueAdmission = "Waiting"
	// QueueQuotaReserved: a ClusterQueue reserved quota; the Workload's admission checks have not all passed.
	QueueQuotaReserved QueueAdmission = "QuotaReserved"
	// QueueAdmitted: the Workload is admitted; the Job runs.
	QueueAdmitted QueueAdmission = "Admitted"
	// QueueEvicted: Kueue took the Workload's quota back (preempted by a higher-priority Workload, or another
	// eviction); the Job is suspended again and waits to be admitted anew.
	QueueEvicted QueueAdmission = "Evicted"
	// QueueFinished: the Workload finished with its Job.
	QueueFinished QueueAdmission = "Finished"
)

// QueueStatus is a run's place in Kueue, read from the Workload Kueue made for the run's Job.
type QueueStatus struct {
	// name is the LocalQueue the run's Job was submitted to (spec.queueName).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +required
	Name string `json:"name,omitempty"`

	// workload is the name of the Kueue Workload of the run's Job. Unset until Kueue created it, and where the
	// manager cannot read Workloads (Kueue not installed).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Workload string `json:"workload,omitempty"`

	// admission is where the Workload stands: Waiting, QuotaReserved, Admitted, Evicted or Finished. Unset while
	// there is no Workload.
	// +optional
	Admission QueueAdmission `json:"admission,omitempty"`

	// clusterQueue is the ClusterQueue that reserved quota for (admitted) the Workload; unset while it waits.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +optional
	ClusterQueue string `json:"clusterQueue,omitempty"`

	// reason is Kueue's reason for the Workload's state while it waits or after an eviction (the reason of its
	// QuotaReserved or Evicted condition, e.g. Pending, Preempted, InactiveWorkload), as Kueue wrote it, cut to 128
	// bytes.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +optional
	Reason string `json:"reason,omitempty"`

	// message is Kueue's message with that reason (e.g. which quota is short), cut to 1024 bytes.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Message string `json:"message,omitempty"`

	// position is where the Workload waits in its LocalQueue, 1 being the next to be admitted: Kueue's
	// positionInLocalQueue (which counts from 0) plus one, from Kueue's visibility API
	// (visibility.kueue.x-k8s.io, pending workloads of the LocalQueue). Set only while the Workload waits and where
	// that API is served; the manager looks again every 10 s while it waits.
	// +kubebuilder:validation:Minimum=1
	// +optional
	Position *int32 `json:"position,omitempty"`

	// evictions is how many times Kueue evicted the Workload (its Evicted condition turning True, as the manager
	// saw it); each eviction stopped the run's pods, which run again from the start once re-admitted.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Evictions int32 `json:"evictions,omitempty"`
}

// DeadlineSource says where a run's deadline came from.
// +kubebuilder:validation:Enum=Spec;ManagerDefault
type DeadlineSource string

const (
	// DeadlineFromSpec: spec.activeDeadlineSeconds.
	DeadlineFromSpec DeadlineSource = "Spec"
	// DeadlineFromManagerDefault: the manager's --default-active-deadline-seconds (spec.activeDeadlineSeconds unset).
	DeadlineFromManagerDefault DeadlineSource = "ManagerDefault"
)

// ActiveDeadline is the deadline of a run's Job.
type ActiveDeadline struct {
	// seconds is the Job's activeDeadlineSeconds: how long the Job may run, counted by Kubernetes from the Job's
	// start (time spent suspended or queued by Kueue does not count; the clock starts again when the Job is
	// resumed). Between 1 and 604800.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=604800
	// +required
	Seconds int64 `json:"seconds,omitempty"`

	// source is where the deadline came from: Spec or ManagerDefault.
	// +required
	Source DeadlineSource `json:"source,omitempty"`
}

// AttemptTrigger says what started an attempt.
// +kubebuilder:validation:Enum=Created;SpecChanged;Rerun
type AttemptTrigger string

const (
	// AttemptCreated: the run's first attempt.
	AttemptCreated AttemptTrigger = "Created"
	// AttemptSpecChanged: the spec of the finished run changed (say, a new runner image tag from Git).
	AttemptSpecChanged AttemptTrigger = "SpecChanged"
	// AttemptRerun: the evals.evalrun.io/rerun annotation got a new value.
	AttemptRerun AttemptTrigger = "Rerun"
)

// Attempt identifies one attempt of a run.
type Attempt struct {
	// number counts the run's attempts, from 1.
	// +kubebuilder:validation:Minimum=1
	// +required
	Number int32 `json:"number,omitempty"`
	// trigger is what started the attempt.
	// +required
	Trigger AttemptTrigger `json:"trigger,omitempty"`
	// specSHA256 is the hex sha256 of the spec the attempt runs (suspend left out).
	// +kubebuilder:validation:MinLength=64
	// +kubebuilder:validation:MaxLength=64
	// +required
	SpecSHA256 string `json:"specSHA256,omitempty"`
	// rerun is the value of the evals.evalrun.io/rerun annotation when the attempt started.
	// +kubebuilder:validation:MaxLength=256
	// +optional
	Rerun *string `json:"rerun,omitempty"`
	// generation is the run's metadata.generation whose spec specSHA256 is the digest of.
	// +kubebuilder:validation:Minimum=1
	// +required
	Generation int64 `json:"generation,omitempty"`
}

// AttemptRecord is an earlier attempt of a run and how it ended.
type AttemptRecord struct {
	// number of the attempt.
	// +kubebuilder:validation:Minimum=1
	// +required
	Number int32 `json:"number,omitempty"`
	// trigger is what started the attempt.
	// +required
	Trigger AttemptTrigger `json:"trigger,omitempty"`
	// rerun is the value of the evals.evalrun.io/rerun annotation when the attempt started.
	// +kubebuilder:validation:MaxLength=256
	// +optional
	Rerun *string `json:"rerun,omitempty"`
	// startTime is when the attempt's Job started.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// evalFileSHA256 is the sha256 of the eval file the attempt ran.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	EvalFileSHA256 *string `json:"evalFileSHA256,omitempty"`
	// How the attempt ended.
	RunOutcome `json:",inline"`
}

// BaselineComparison is how a finished run's per-case results compare with its baseline's, over every stored
// result of both (not only those in status.cases). A case passes when its verdict is Pass; Fail, Error, Skipped
// and a missing record do not pass.
type BaselineComparison struct {
	// runName is the baseline run.
	// +kubebuilder:validation:MaxLength=253
	// +required
	RunName string `json:"runName"`
	// runUID is the baseline run's uid.
	// +kubebuilder:validation:MaxLength=64
	// +required
	RunUID string `json:"runUID"`
	// evalFile is Same when both runs ran an eval file with the same sha256; Different when they did not, and
	// then only the case ids both have are compared.
	// +required
	EvalFile EvalFileComparison `json:"evalFile,omitempty"`
	// baselineJudgeImage is the judge image the baseline run's code judges ran in (its status.judgeImage); this
	// run's is status.judgeImage. Unset when the baseline had no code judges.
	// +optional
	BaselineJudgeImage *JudgeImageStatus `json:"baselineJudgeImage,omitempty"`
	// sharedCases is the number of case ids both runs have a result (or a missing record) for.
	// +required
	SharedCases int32 `json:"sharedCases"`
	// newlyFailing are shared cases the baseline passed and this run did not, in this run's case order (at most
	// 100; newlyFailingCount counts them all).
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MaxLength=256
	// +listType=atomic
	// +optional
	NewlyFailing []string `json:"newlyFailing,omitempty"`
	// newlyFailingCount is the number of newly failing cases.
	// +required
	NewlyFailingCount int32 `json:"newlyFailingCount"`
	// newlyPassing are shared cases this run passed and the baseline did not (at most 100).
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MaxLength=256
	// +listType=atomic
	// +optional
	NewlyPassing []string `json:"newlyPassing,omitempty"`
	// newlyPassingCount is the number of newly passing cases.
	// +required
	NewlyPassingCount int32 `json:"newlyPassingCount"`
	// missingInRun are cases the baseline has that this run has no result for (not in its eval file, or no
	// valid record), at most 100.
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MaxLength=256
	// +listType=atomic
	// +optional
	MissingInRun []string `json:"missingInRun,omitempty"`
	// missingInRunCount is the number of cases missing in this run.
	// +required
	MissingInRunCount int32 `json:"missingInRunCount"`
	// missingInBaseline are cases this run has that the baseline has no result for, at most 100.
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MaxLength=256
	// +listType=atomic
	// +optional
	MissingInBaseline []string `json:"missingInBaseline,omitempty"`
	// missingInBaselineCount is the number of cases missing in the baseline.
	// +required
	MissingInBaselineCount int32 `json:"missingInBaselineCount"`
	// quarantined are this run's cases left out of the comparison as flaky (spec.baseline.quarantine), at most
	// 100, in this run's case order.
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MaxLength=256
	// +listType=atomic
	// +optional
	Quarantined []string `json:"quarantined,omitempty"`
	// quarantinedCount is the number of quarantined cases.
	// +optional
	QuarantinedCount int32 `json:"quarantinedCount,omitempty"`
	// meanScore is this run's mean score over the cases both runs have a result for (Error counts 0; Skipped in
	// either run leaves the case out), as a decimal string.
	// +kubebuilder:validation:MaxLength=16
	// +optional
	MeanScore string `json:"meanScore,omitempty"`
	// baselineMeanScore is the baseline's mean score over the same cases.
	// +kubebuilder:validation:MaxLength=16
	// +optional
	BaselineMeanScore string `json:"baselineMeanScore,omitempty"`
	// meanScoreDelta is meanScore minus baselineMeanScore (negative when the score dropped).
	// +kubebuilder:validation:MaxLength=16
	// +optional
	MeanScoreDelta string `json:"meanScoreDelta,omitempty"`
	// test is the test that decided the Regressed condition, spec.baseline.test: Count (the counts above against
	// maxNewFailures and maxScoreDrop) or Paired (paired).
	// +optional
	Test BaselineTest `json:"test,omitempty"`
	// paired is the Paired test's result (docs/statistics.md); set with test: Paired only.
	// +optional
	Paired *PairedComparison `json:"paired,omitempty"`
}

// PairedComparison is the Paired test of a run against its baseline (spec.baseline.test: Paired). The cases are
// paired by id; a case is tested when both runs have a judged trial of it (a trial without a record counts as
// failed, a Skipped one is not counted). Each case's pass rate is its passed trials over its counted trials (0 or
// 1 with one trial). Decimals are strings: rates and their changes with 4 decimals, the p-value with 6.
type PairedComparison struct {
	// method is the test that gave the p-value: McNemarExact (one trial per case in both runs: McNemar's exact
	// test on the discordant cases), SignFlipExact or SignFlipMonteCarlo (more trials: the sign-flip test on the
	// per-case pass-rate differences, every sign pattern counted, or 10,000 seeded random ones). Unset when no
	// case could be tested.
	// +optional
	Method PairedMethod `json:"method,omitempty"`
	// cases is the number of cases tested: in both runs, with a judged trial in each.
	// +kubebuilder:validation:Minimum=0
	// +required
	Cases int32 `json:"cases"`
	// worseCases is the number of tested cases whose pass rate fell (with one trial: passed in the baseline and
	// not now); betterCases those whose pass rate rose. Together they are the discordant cases; the rest kept
	// their pass rate and say nothing about a change.
	// +kubebuilder:validation:Minimum=0
	// +required
	WorseCases int32 `json:"worseCases"`
	// betterCases is the number of tested cases whose pass rate rose.
	// +kubebuilder:validation:Minimum=0
	// +required
	BetterCases int32 `json:"betterCases"`
	// skippedCases is the number of cases both runs have that were left out: every trial of one of them Skipped
	// (nothing could judge it).
	// +kubebuilder:validation:Minimum=0
	// +required
	SkippedCases int32 `json:"skippedCases"`
	// onlyInBaselineCases is the number of cases only the baseline has a result for, left out of the test;
	// onlyInRunCases those only this run has.
	// +kubebuilder:validation:Minimum=0
	// +required
	OnlyInBaselineCases int32 `json:"onlyInBaselineCases"`
	// onlyInRunCases is the number of cases only this run has a result for, left out of the test.
	// +kubebuilder:validation:Minimum=0
	// +required
	OnlyInRunCases int32 `json:"onlyInRunCases"`
	// passRate is the mean pass rate over the tested cases in both runs, its change and the change's 95%
	// interval. Unset when no case could be tested.
	// +optional
	PassRate *PairedEffect `json:"passRate,omitempty"`
	// meanScore is the mean score over the tested cases both runs scored (Error counts 0; a case without a
	// record has no score), its change and the change's 95% interval; for the record, the test is on the pass
	// rate. Unset when no tested case has a score in both runs.
	// +optional
	MeanScore *PairedEffect `json:"meanScore,omitempty"`
	// pValue is the test's one-sided p-value for "this run is worse": the chance, were neither run better, of a
	// drop at least as large as the one seen. Rounded to 6 decimals ("0.000000": below 0.0000005), down where
	// rounding would carry a p-value below spec.baseline.alpha up to it, so that it is below alpha exactly when
	// the test's p-value is. Unset when no case could be tested.
	// +kubebuilder:validation:MaxLength=16
	// +optional
	PValue string `json:"pValue,omitempty"`
}

// PairedEffect is one metric of a Paired comparison: its mean in both runs over the same cases, the change, and
// the change's 95% paired bootstrap interval (cases resampled with both runs' values: clustered by case).
type PairedEffect struct {
	// baseline is the baseline's mean over the cases.
	// +kubebuilder:validation:MaxLength=16
	// +required
	Baseline string `json:"baseline"`
	// run is this run's mean over the same cases.
	// +kubebuilder:validation:MaxLength=16
	// +required
	Run string `json:"run"`
	// delta is run minus baseline, signed ("-0.1800": a drop).
	// +kubebuilder:validation:MaxLength=16
	// +required
	Delta string `json:"delta"`
	// deltaLow and deltaHigh bound delta's 95% interval.
	// +kubebuilder:validation:MaxLength=16
	// +required
	DeltaLow string `json:"deltaLow"`
	// deltaHigh is the upper end of delta's 95% interval.
	// +kubebuilder:validation:MaxLength=16
	// +required
	DeltaHigh string `json:"deltaHigh"`
}

// PairedMethod is the test a Paired comparison ran.
// +kubebuilder:validation:Enum=McNemarExact;SignFlipExact;SignFlipMonteCarlo
type PairedMethod string

const (
	// PairedMcNemarExact: McNemar's exact test on the discordant cases (one trial per case in both runs).
	PairedMcNemarExact PairedMethod = "McNemarExact"
	// PairedSignFlipExact: the sign-flip test on per-case pass-rate differences, every sign pattern counted.
	PairedSignFlipExact PairedMethod = "SignFlipExact"
	// PairedSignFlipMonteCarlo: the sign-flip test over seeded random sign patterns (too many to count).
	PairedSignFlipMonteCarlo PairedMethod = "SignFlipMonteCarlo"
)

// EvalFileComparison says whether two compared runs ran the same eval file.
// +kubebuilder:validation:Enum=Same;Different
type EvalFileComparison string

const (
	// EvalFileSame: both eval files have the same sha256.
	EvalFileSame EvalFileComparison = "Same"
	// EvalFileDifferent: the eval files differ; only the shared case ids are compared.
	EvalFileDifferent EvalFileComparison = "Different"
)

// TrialsSource says where a run's trials came from.
// +kubebuilder:validation:Enum=Spec;EvalFile
type TrialsSource string

const (
	// TrialsSourceSpec: spec.trials, which wins over the eval file's own trials.
	TrialsSourceSpec TrialsSource = "Spec"
	// TrialsSourceEvalFile: the eval file's own trials (an AgentV 4.42 suite's execution.trials: count, and its
	// strategy pass_at_k as the pass rate 1/count), spec.trials being unset.
	TrialsSourceEvalFile TrialsSource = "EvalFile"
)

// TrialsStatus is a run's results over its repeated trials (spec.trials, else the eval file's own). Decimals are
// strings with 4 decimals.
type TrialsStatus struct {
	// count is the number of trials of every case (spec.trials.count, else the eval file's).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +required
	Count int32 `json:"count"`
	// passRate is the share of its trials a case had to pass (spec.trials.passRate, else the eval file's: 1/count
	// rounded down to 6 decimals, a case passing when any trial passes).
	// +kubebuilder:validation:MaxLength=8
	// +required
	PassRate string `json:"passRate"`
	// source is where count and passRate came from: Spec (spec.trials) or EvalFile (the eval file's own trials,
	// an AgentV 4.42 suite's execution.trials, spec.trials being unset). Unset for a re-judge, whose trials are
	// its source run's (that run's status.trials.source says where they came from).
	// +optional
	Source TrialsSource `json:"source,omitempty"`
	// cases is the number of cases the figures below cover: every requested case.
	// +kubebuilder:validation:Minimum=0
	// +required
	Cases int32 `json:"cases"`
	// runPassRate is the share of cases whose verdict passed (summary.passed / summary.total) with its 95% Wilson
	// interval: a case counts once, whatever its trials.
	// +optional
	RunPassRate *TrialsEstimate `json:"runPassRate,omitempty"`
	// meanTrialPassRate is the mean over cases of each case's share of passed trials (pass@1 = pass^1; a trial
	// without a record does not pass), with its 95% interval from the bootstrap over cases (clustered by case).
	// +optional
	MeanTrialPassRate *TrialsEstimate `json:"meanTrialPassRate,omitempty"`
	// meanScore is the mean over the judged cases (Pass or Fail) of each case's mean score over its trials, with
	// its 95% interval from the bootstrap over cases. Unset when no case was judged.
	// +optional
	MeanScore *TrialsEstimate `json:"meanScore,omitempty"`
	// passAtN is the mean over cases of pass@N: the share of cases with at least one passed trial.
	// +kubebuilder:validation:MaxLength=16
	// +optional
	PassAtN string `json:"passAtN,omitempty"`
	// passHatN is the mean over cases of pass^N: the share of cases whose every trial passed.
	// +kubebuilder:validation:MaxLength=16
	// +optional
	PassHatN string `json:"passHatN,omitempty"`
	// flakyCases is the number of flaky cases: some of their trials passed and some did not.
	// +kubebuilder:validation:Minimum=0
	// +required
	FlakyCases int32 `json:"flakyCases"`
	// flaky are the first flaky cases' ids in the run's case order, as many as the status budget holds (at most
	// 100; flakyCases counts them all).
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MaxLength=256
	// +listType=atomic
	// +optional
	Flaky []string `json:"flaky,omitempty"`
}

// TrialsEstimate is a mean with its 95% interval, as decimal strings with 4 decimals.
type TrialsEstimate struct {
	// value is the estimate.
	// +kubebuilder:validation:MaxLength=16
	// +required
	Value string `json:"value"`
	// low is the lower end of its 95% interval.
	// +kubebuilder:validation:MaxLength=16
	// +required
	Low string `json:"low"`
	// high is the upper end of its 95% interval.
	// +kubebuilder:validation:MaxLength=16
	// +required
	High string `json:"high"`
}

// CaseTrials is a case's trials: how many passed of how many it had (spec.trials.count).
type CaseTrials struct {
	// passed is the number of the case's trials that passed.
	// +kubebuilder:validation:Minimum=0
	// +required
	Passed int32 `json:"passed"`
	// count is the number of the case's trials (spec.trials.count), passed or not, with or without a record.
	// +kubebuilder:validation:Minimum=1
	// +required
	Count int32 `json:"count"`
}

// ShardingStatus describes how a run's cases were split over its shards and how far the shards got.
type ShardingStatus struct {
	// shards is the number of shards (spec.sharding.shards, at most one per case run).
	// +kubebuilder:validation:Minimum=1
	// +required
	Shards int32 `json:"shards,omitempty"`
	// split names how cases were assigned to shards: Contiguous means that, in eval-file order, shard i holds
	// cases [i*n/shards, (i+1)*n/shards) of the n cases run.
	// +kubebuilder:validation:MaxLength=32
	// +required
	Split string `json:"split"`
	// succeeded is the number of shards whose results were collected and complete (with spec.trials, of shards'
	// trials: of the run's pods).
	// +required
	Succeeded int32 `json:"succeeded"`
	// failed is the number of shards that ended with a failure reason (with spec.trials, of shards' trials).
	// +required
	Failed int32 `json:"failed"`
	// omittedShards is the number of entries left out of status.shards.
	// +required
	OmittedShards int32 `json:"omittedShards"`
}

// MissingIDRun is a run of consecutive ids of status.missingIds that one shard ran.
type MissingIDRun struct {
	// shard is the index of the shard that ran these cases; unset for cases carried from an earlier run.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Shard *int32 `json:"shard,omitempty"`
	// count is the number of consecutive ids of missingIds in this run.
	// +kubebuilder:validation:Minimum=1
	// +required
	Count int32 `json:"count,omitempty"`
}

// ShardStatus is one shard of a sharded or resumed run; with spec.trials, one trial of one shard (one pod).
type ShardStatus struct {
	// index of the shard: the Job's completion index, or with spec.trials the shard whose trial this is.
	// +kubebuilder:validation:Minimum=0
	// +required
	Index int32 `json:"index"`
	// trial is the trial of the shard this entry is, 1 to spec.trials.count (its pod is the Job's completion
	// index (trial - 1) × shards + index). Unset for a run of one trial.
	// +kubebuilder:validation:Minimum=1
	// +optional
	Trial *int32 `json:"trial,omitempty"`
	// cases is the number of cases the shard runs.
	// +required
	Cases int32 `json:"cases"`
	// state is Pending, Running, Collecting, Succeeded or Failed.
	// +kubebuilder:validation:MaxLength=32
	// +required
	State string `json:"state"`
	// reason is the shard's reason, from the same set as the run's Succeeded condition.
	// +kubebuilder:validation:MaxLength=64
	// +required
	Reason string `json:"reason"`
	// message explains the reason in one bounded line.
	// +kubebuilder:validation:MaxLength=512
	// +required
	Message string `json:"message"`
	// podName is the shard's latest pod.
	// +kubebuilder:validation:MaxLength=253
	// +required
	PodName string `json:"podName"`
	// passed counts the shard's collected cases that passed.
	// +required
	Passed int32 `json:"passed"`
	// failed cases of the shard.
	// +required
	Failed int32 `json:"failed"`
	// errored cases of the shard (missing ones included).
	// +required
	Errored int32 `json:"errored"`
	// missing case ids of the shard.
	// +required
	Missing int32 `json:"missing"`
	// parseErrors of the shard's output.
	// +required
	ParseErrors int32 `json:"parseErrors"`
	// missingIds are the shard's first missing case ids (at most 10).
	// +kubebuilder:validation:MaxItems=10
	// +kubebuilder:validation:items:MaxLength=256
	// +listType=atomic
	// +optional
	MissingIDs []string `json:"missingIds,omitempty"`
	// imageID is the image the shard's latest pod ran its runner from, as the kubelet reported it (the runner
	// container status' imageID, for example registry.example/runner@sha256:<hex>); empty until the runner
	// container started. Shards may differ when the runner image is a tag that moved between their pods.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +optional
	ImageID *string `json:"imageID,omitempty"`
	// cost is what the shard's collection says the shard spent (status.cost is the run's, summed over every
	// stored result). Unset until the shard is collected.
	// +optional
	Cost *RunCost `json:"cost,omitempty"`
}

// ResumeStatus is what a resumed run took from the earlier run.
type ResumeStatus struct {
	// from is the earlier run's name.
	// +kubebuilder:validation:MaxLength=253
	// +required
	From string `json:"from"`
	// fromUID is the earlier run's uid when this run started.
	// +kubebuilder:validation:MaxLength=64
	// +required
	FromUID string `json:"fromUID"`
	// cases is the resume mode that chose the cases run again.
	// +required
	Cases ResumeCases `json:"cases,omitempty"`
	// ran is the number of cases this run ran (with trials: of which it ran at least one trial).
	// +required
	Ran int32 `json:"ran"`
	// carried is the number of results carried from the earlier run (with trials: of case trials, each keeping
	// its trial).
	// +required
	Carried int32 `json:"carried"`
	// ranTrials is the number of case trials this run ran, set in a run with trials (spec.trials.count above 1):
	// with cases Missing, only the trials without a result; with NotPassed, every trial of each case that did not
	// pass, and the trials without a result of the others.
	// +kubebuilder:validation:Minimum=0
	// +optional
	RanTrials *int32 `json:"ranTrials,omitempty"`
}

// RunnerStatus holds facts about the runner container, as the kubelet reported them (never from anything the
// runner can write).
type RunnerStatus struct {
	// exitCode of the runner container.
	// +optional
	ExitCode *int32 `json:"exitCode,omitempty"`

	// reason is the container's terminated or waiting reason as the kubelet reported it (for example OOMKilled,
	// Error, ErrImagePull).
	// +kubebuilder:validation:MaxLength=128
	// +optional
	Reason string `json:"reason,omitempty"`

	// message is a bounded excerpt of the container's termination message or waiting message. The termination
	// message is written inside the runner container (by the launcher, but the runner can write it too): it is
	// informational only and never decides a reason.
	// +kubebuilder:validation:MaxLength=2048
	// +optional
	Message string `json:"message,omitempty"`

	// podName is the pod the facts come from.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	PodName string `json:"podName,omitempty"`

	// imageID is the image the runner container ran, as the kubelet reported it in the container status' imageID:
	// the image's digest (for example registry.example/runner@sha256:<hex>), which pins what ran even when
	// spec.target.image is a tag. Empty until the runner container started. A sharded run has no status.runner:
	// each shard's imageID is in status.shards.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +optional
	ImageID *string `json:"imageID,omitempty"`
}

// JudgeImageSource says where a run's judge image came from.
// +kubebuilder:validation:Enum=Default;Spec;Target
type JudgeImageSource string

const (
	// JudgeImageSourceDefault: spec.judging.image is unset; the manager's --judge-image (the project's judge image
	// by default), never the runner's image.
	JudgeImageSourceDefault JudgeImageSource = "Default"
	// JudgeImageSourceSpec: spec.judging.image names an image other than spec.target.image.
	JudgeImageSourceSpec JudgeImageSource = "Spec"
	// JudgeImageSourceTarget: spec.judging.image names spec.target.image, the runner's own image: the image the
	// evaluated team controls then runs the scripts that judge it (a Warning event JudgeImageIsTarget says so).
	JudgeImageSourceTarget JudgeImageSource = "Target"
)

// JudgeImageStatus is the image a run's code_judge scripts ran in.
type JudgeImageStatus struct {
	// image is the judge containers' image as the pod spec names it.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +required
	Image string `json:"image,omitempty"`
	// source is where image came from: Default (the manager's --judge-image), Spec (spec.judging.image) or Target
	// (spec.judging.image set to spec.target.image).
	// +required
	Source JudgeImageSource `json:"source,omitempty"`
	// imageID is the image the judge container ran, as the kubelet reported it in the container status' imageID
	// (for example localhost/evalrun/judge@sha256:<hex>); empty until a judge container started. In a sharded run,
	// the first shard's pod that reported one.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +optional
	ImageID *string `json:"imageID,omitempty"`
}

// UnjudgedByBudget returns budgetUnjudged, 0 when it is unset.
func (s *RunSummary) UnjudgedByBudget() int32 {
	if s == nil || s.BudgetUnjudged == nil {
		return 0
	}
	return *s.BudgetUnjudged
}

// RunSummary counts the judged results of a run.
type RunSummary struct {
	// total is the number of requested cases.
	// +required
	Total int32 `json:"total"`
	// passed cases.
	// +required
	Passed int32 `json:"passed"`
	// failed cases (judged below the threshold).
	// +required
	Failed int32 `json:"failed"`
	// errored cases (no usable output or a judge crash); missing cases are counted here too.
	// +required
	Errored int32 `json:"errored"`
	// skipped cases (nothing could judge them).
	// +required
	Skipped int32 `json:"skipped"`
	// missing is the number of requested ids with no valid record.
	// +required
	Missing int32 `json:"missing"`
	// budgetUnjudged is the number of cases the LLM judging budget (spec.judging.llm.maxRequests, maxTokens) left
	// unjudged: an LLM evaluator of the case, or a member of one, was Skipped because the budget was spent. Each
	// is counted in errored too (its verdict is Error, never Pass), so the success policy never counts it as
	// passed. In [0, total]; unset when none.
	// +kubebuilder:validation:Minimum=0
	// +optional
	BudgetUnjudged *int32 `json:"budgetUnjudged,omitempty"`
	// parseErrors is the number of invalid output lines.
	// +required
	ParseErrors int32 `json:"parseErrors"`
	// unexpected is the number of valid records whose id no case requested.
	// +required
	Unexpected int32 `json:"unexpected"`
	// meanScore over judged cases, a decimal string with 4 digits.
	// +kubebuilder:validation:MaxLength=16
	// +optional
	MeanScore string `json:"meanScore,omitempty"`
	// medianScore over judged cases.
	// +kubebuilder:validation:MaxLength=16
	// +optional
	MedianScore string `json:"medianScore,omitempty"`
	// minScore over judged cases.
	// +kubebuilder:validation:MaxLength=16
	// +optional
	MinScore string `json:"minScore,omitempty"`
	// maxScore over judged cases.
	// +kubebuilder:validation:MaxLength=16
	// +optional
	MaxScore string `json:"maxScore,omitempty"`
	// passRate is passed / total.
	// +kubebuilder:validation:MaxLength=16
	// +optional
	PassRate string `json:"passRate,omitempty"`
	// histogram counts judged case scores in five bins: [0,0.2) [0.2,0.4) [0.4,0.6) [0.6,0.8) [0.8,1].
	// +kubebuilder:validation:MaxItems=5
	// +listType=atomic
	// +optional
	Histogram []int32 `json:"histogram,omitempty"`
	// judgeUsage adds up the model calls of LLM judges (spec.judging.llm) over every case: calls, tokens and
	// time spent waiting. Unset when no model was called.
	// +optional
	JudgeUsage *JudgeUsage `json:"judgeUsage,omitempty"`
}

// JudgeUsage is the model usage of LLM judges, as the endpoint reported it.
type JudgeUsage struct {
	// calls is the number of requests sent, retries included.
	// +kubebuilder:validation:Minimum=0
	// +required
	Calls int64 `json:"calls"`
	// promptTokens is the sum of the replies' usage.prompt_tokens.
	// +kubebuilder:validation:Minimum=0
	// +required
	PromptTokens int64 `json:"promptTokens"`
	// completionTokens is the sum of the replies' usage.completion_tokens.
	// +kubebuilder:validation:Minimum=0
	// +required
	CompletionTokens int64 `json:"completionTokens"`
	// totalTokens is the sum of the replies' usage.total_tokens.
	// +kubebuilder:validation:Minimum=0
	// +required
	TotalTokens int64 `json:"totalTokens"`
	// latencyMilliseconds is the sum of the calls' latencies (concurrent calls each count in full).
	// +kubebuilder:validation:Minimum=0
	// +required
	LatencyMilliseconds int64 `json:"latencyMilliseconds"`
}

// CaseResult is the judged result of one case.
type CaseResult struct {
	// id of the case.
	// +kubebuilder:validation:MaxLength=256
	// +required
	ID string `json:"id"`
	// verdict of the case.
	// +required
	Verdict Verdict `json:"verdict,omitempty"`
	// score of the case, a decimal string in [0, 1] with 4 digits.
	// +kubebuilder:validation:MaxLength=16
	// +optional
	Score string `json:"score,omitempty"`
	// answer is a short excerpt of the candidate answer.
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Answer string `json:"answer,omitempty"`
	// error says why the case has no usable output, when its verdict is Error.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Error string `json:"error,omitempty"`
	// evaluators summarise each evaluator's judgement.
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	// +optional
	Evaluators []EvaluatorSummary `json:"evaluators,omitempty"`
	// carriedFrom names the earlier run this result was carried from (spec.resume); empty for a result of this
	// run.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	CarriedFrom *string `json:"carriedFrom,omitempty"`
	// answeredBy names the earlier run whose runner answered this case, when this run judged that run's kept
	// record again (spec.rejudge); empty for a case this run's own runner answered.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	AnsweredBy *string `json:"answeredBy,omitempty"`
	// trials says how many of the case's trials passed, in a run with spec.trials.count above 1. The verdict and
	// score are then the case's over its trials; answer, error and evaluators are one trial's: the first that
	// did not pass when the case did not, else the first.
	// +optional
	Trials *CaseTrials `json:"trials,omitempty"`
}

// EvaluatorSummary is one evaluator's judgement of one case.
type EvaluatorSummary struct {
	// name of the evaluator.
	// +kubebuilder:validation:MaxLength=128
	// +required
	Name string `json:"name"`
	// type of the evaluator (tool_trajectory, field_accuracy, code_judge, ...).
	// +kubebuilder:validation:MaxLength=64
	// +optional
	Type string `json:"type,omitempty"`
	// verdict of this evaluator.
	// +required
	Verdict Verdict `json:"verdict,omitempty"`
	// score of this evaluator, a decimal string.
	// +kubebuilder:validation:MaxLength=16
	// +optional
	Score string `json:"score,omitempty"`
	// message is a bounded excerpt of the first misses or the reason it was skipped.
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Message string `json:"message,omitempty"`
}

// ParseError is one problem with one line of the runner's output.
type ParseError struct {
	// line is the 1-based physical line number in the output file (0 for a whole-file problem).
	// +required
	Line int64 `json:"line"`
	// excerpt is the start of the line, at most 120 bytes of valid UTF-8, marked when cut.
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Excerpt string `json:"excerpt,omitempty"`
	// message says what is wrong.
	// +kubebuilder:validation:MaxLength=1024
	// +required
	Message string `json:"message"`
	// shard is the index of the shard whose output has the line, in a sharded run.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Shard *int32 `json:"shard,omitempty"`
	// trial is the trial of that shard whose output has the line, in a run with spec.trials.
	// +kubebuilder:validation:Minimum=1
	// +optional
	Trial *int32 `json:"trial,omitempty"`
}

// ResultsReference says where the full results live and what the status omitted.
type ResultsReference struct {
	// configMaps are the owned ConfigMaps that together hold every per-case result as gzip'd JSONL, in order
	// (in a sharded run, shard by shard; in a resumed run, the carried results last); with configMapsPrefix, each
	// is the rest of its name after configMapsPrefix.
	// +kubebuilder:validation:MaxItems=2048
	// +kubebuilder:validation:items:MaxLength=253
	// +listType=atomic
	// +optional
	ConfigMaps []string `json:"configMaps,omitempty"`
	// objects are the s3:// URLs of the objects that hold the per-case results (gzip'd JSONL) when spec.storage
	// names a bucket, shard by shard; with objectsPrefix, each is the rest of its URL after objectsPrefix.
	// +kubebuilder:validation:MaxItems=2048
	// +kubebuilder:validation:items:MaxLength=1024
	// +listType=atomic
	// +optional
	Objects []string `json:"objects,omitempty"`
	// objectsPrefix is the start every URL of objects shares, when the full URLs would take more than an eighth of
	// the status budget (a run of up to 1,000 shards with long names and bucket prefixes): an object's URL is
	// objectsPrefix followed by its item. Unset otherwise.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	ObjectsPrefix *string `json:"objectsPrefix,omitempty"`
	// configMapsPrefix is the start every name of configMaps shares, when the full names would take more than an
	// eighth of the status budget: a ConfigMap's name is configMapsPrefix followed by its item. Unset otherwise.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +optional
	ConfigMapsPrefix *string `json:"configMapsPrefix,omitempty"`
	// key is the binaryData key under which each ConfigMap holds its chunk.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Key string `json:"key,omitempty"`
	// format of the chunks; "jsonl+gzip".
	// +kubebuilder:validation:MaxLength=32
	// +optional
	Format string `json:"format,omitempty"`
	// totalCases is the number of results stored in the ConfigMaps.
	// +optional
	TotalCases int32 `json:"totalCases,omitempty"`
	// omittedCases is the number of case results left out of status.cases.
	// +optional
	OmittedCases int32 `json:"omittedCases,omitempty"`
	// omittedMissingIds is the number of missing ids left out of status.missingIds.
	// +optional
	OmittedMissingIDs int32 `json:"omittedMissingIds,omitempty"`
	// omittedParseErrors is the number of parse errors left out of status.parseErrors.
	// +optional
	OmittedParseErrors int32 `json:"omittedParseErrors,omitempty"`
	// omittedUnexpectedIds is the number of unexpected ids left out of status.unexpectedIds.
	// +optional
	OmittedUnexpectedIDs int32 `json:"omittedUnexpectedIds,omitempty"`
}

// CollectionStatus holds the collector's facts about its collection.
type CollectionStatus struct {
	// runnerFinished is true when every process of the runner container had ended before the collector copied
	// the output; false when the collector stopped waiting (the pod was stopped, or the runner outlived its
	// timeouts) and collected the output as it was then.
	// +required
	RunnerFinished bool `json:"runnerFinished"`
	// outputSHA256 is the hex sha256 of the runner's output as collected.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	OutputSHA256 string `json:"outputSHA256,omitempty"`
	// launcher is what the launcher inside the runner container reported about the runner's invocations,
	// through the runner-end FIFO after every other process of the container was gone. It can only make the
	// outcome worse (a timeout, a failed healthcheck or invocation, processes that survived SIGKILL); a report
	// that did not arrive (delivery Missing) fails the run. How the runner container ended is in status.runner,
	// from the kubelet.
	// +optional
	Launcher *LauncherReport `json:"launcher,omitempty"`
	// outcome is the collector's classification of the run: Completed, RunnerFailed, RunnerTimedOut,
	// RunnerNotStopped, HealthcheckFailed, MissingResults, InvalidOutput or CollectorFailed. The manager turns it into conditions.
	// +optional
	Outcome CollectionOutcome `json:"outcome,omitempty"`
	// message explains the outcome in one bounded line.
	// +kubebuilder:validation:MaxLength=2048
	// +optional
	Message string `json:"message,omitempty"`
	// collectedAt is when the collector wrote these results.
	// +optional
	CollectedAt *metav1.Time `json:"collectedAt,omitempty"`
	// codeJudgeLandlockABI is the Landlock ABI the judge containers confined the code_judge scripts with, the
	// lowest any of them reported: 0 means the node's kernel has no Landlock and the scripts ran with the judge
	// container's whole reach (the CodeJudgesConfined condition says so); 1 to 3 confine files only, 4 and 5 also
	// TCP, 6 and above also signals and abstract unix sockets. Unset when no code judge ran.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	// +optional
	CodeJudgeLandlockABI *int32 `json:"codeJudgeLandlockABI,omitempty"`
	// podName is the pod the results come from; the manager uses a collection only for the pod it names.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	PodName string `json:"podName,omitempty"`
}

// CollectionOutcome is the collector's classification of a run, recorded in status.collection.outcome and in
// its termination message; each value is also the Succeeded condition's reason the manager derives from it.
// +kubebuilder:validation:Enum=Completed;RunnerFailed;RunnerTimedOut;RunnerNotStopped;HealthcheckFailed;MissingResults;InvalidOutput;CollectorFailed;CostBudgetExceeded
type CollectionOutcome string

// Collection outcomes.
const (
	OutcomeCompleted         CollectionOutcome = ReasonCompleted
	OutcomeRunnerFailed      CollectionOutcome = ReasonRunnerFailed
	OutcomeRunnerTimedOut    CollectionOutcome = ReasonRunnerTimedOut
	OutcomeHealthcheckFailed CollectionOutcome = ReasonHealthcheckFailed
	OutcomeMissingResults    CollectionOutcome = ReasonMissingResults
	OutcomeInvalidOutput     CollectionOutcome = ReasonInvalidOutput
	OutcomeCollectorFailed   CollectionOutcome = ReasonCollectorFailed
	OutcomeRunnerNotStopped  CollectionOutcome = ReasonRunnerNotStopped
	// OutcomeCostBudgetExceeded: the launcher stopped the runner once the cost its records reported passed
	// spec.target.maxCostUSD (the pod's share of it).
	OutcomeCostBudgetExceeded CollectionOutcome = ReasonCostBudgetExceeded
)

// LauncherReportDelivery says whether the launcher's report reached the collector.
// +kubebuilder:validation:Enum=Delivered;Missing
type LauncherReportDelivery string

// Launcher report deliveries.
const (
	LauncherReportDelivered LauncherReportDelivery = "Delivered"
	LauncherReportMissing   LauncherReportDelivery = "Missing"
)

// LauncherReport is the launcher's own account of the runner's invocations (untrusted: written inside the
// runner container).
type LauncherReport struct {
	// exitCode of the Batched invocation, or of the first failed PerCase invocation.
	// +optional
	ExitCode *int32 `json:"exitCode,omitempty"`
	// signal that ended that invocation, if any.
	// +kubebuilder:validation:MaxLength=32
	// +optional
	Signal string `json:"signal,omitempty"`
	// timedOut is true when the launcher killed an invocation at target.timeoutSeconds.
	// +optional
	TimedOut bool `json:"timedOut,omitempty"`
	// healthcheckFailed is true when the healthcheck failed and the runner never started.
	// +optional
	HealthcheckFailed bool `json:"healthcheckFailed,omitempty"`
	// invocations is the number of runner invocations started.
	// +optional
	Invocations int32 `json:"invocations,omitempty"`
	// failedInvocations is the number of PerCase invocations that did not succeed.
	// +optional
	FailedInvocations int32 `json:"failedInvocations,omitempty"`
	// leftovers is the number of processes the runner left behind that the launcher killed at the end.
	// +optional
	Leftovers int32 `json:"leftovers,omitempty"`
	// survivors is the number of those processes still alive after the launcher's kill grace (SIGKILL does not
	// end a process in uninterruptible sleep until it wakes); more than zero fails the run (RunnerNotStopped).
	// +optional
	Survivors *int32 `json:"survivors,omitempty"`
	// delivery says whether the launcher's report arrived: Delivered, or Missing when the runner container's
	// processes were gone but no report ended the runner-end FIFO (the run then fails). Empty when the
	// collector stopped waiting before the runner's end.
	// +optional
	Delivery *LauncherReportDelivery `json:"delivery,omitempty"`
	// stderrTail is a bounded excerpt of the end of that invocation's stderr.
	// +kubebuilder:validation:MaxLength=4096
	// +optional
	StderrTail string `json:"stderrTail,omitempty"`
	// costBudget is set when the launcher stopped the runner because the cost its records reported passed the
	// pod's share of spec.target.maxCostUSD (the run then fails with CostBudgetExceeded).
	// +optional
	CostBudget *CostBudgetStop `json:"costBudget,omitempty"`
}

// CostBudgetStop is what the launcher read when it stopped the runner for spec.target.maxCostUSD: the runner's
// own figures, read while it ran, which only ever stop a run early and never decide a verdict.
type CostBudgetStop struct {
	// costUSD is the cost the runner's records had reported when the launcher stopped it (each case counted once,
	// at the most it reported), as a decimal string in US dollars.
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^[0-9]{1,19}(\.[0-9]{1,9})?$`
	// +required
	CostUSD string `json:"costUSD"`
	// maxCostUSD is the budget the pod had: spec.target.maxCostUSD, or a sharded run's share of it.
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^[0-9]{1,19}(\.[0-9]{1,9})?$`
	// +required
	MaxCostUSD string `json:"maxCostUSD"`
	// cases is the number of cases whose records had reported a cost by then.
	// +kubebuilder:validation:Minimum=0
	// +required
	Cases int32 `json:"cases"`
}

// The EvalRun's spec is held still while the run is in progress by the first XValidation rules below, one per group
// of spec fields: each admits an update that leaves its fields as they were, or one of a run that has finished (its
// Succeeded condition is not Unknown). Every spec field but suspend is in one (TestEveryImmutableSpecFieldIsInTheRule),
// and together they admit what specUpdateAllowed does (TestImmutabilityRulesMatchTheGo).

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=er,categories=evals
// +kubebuilder:printcolumn:name="Succeeded",type=string,JSONPath=`.status.conditions[?(@.type=="Succeeded")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Succeeded")].reason`
// +kubebuilder:printcolumn:name="Passed",type=string,JSONPath=`.status.conditions[?(@.type=="Passed")].status`
// +kubebuilder:printcolumn:name="Total",type=integer,JSONPath=`.status.summary.total`
// +kubebuilder:printcolumn:name="Failed",type=integer,JSONPath=`.status.summary.failed`
// +kubebuilder:printcolumn:name="Missing",type=integer,JSONPath=`.status.summary.missing`
// +kubebuilder:printcolumn:name="Score",type=string,JSONPath=`.status.summary.meanScore`
// +kubebuilder:printcolumn:name="Regressed",type=string,JSONPath=`.status.conditions[?(@.type=="Regressed")].status`,priority=1
// +kubebuilder:printcolumn:name="Queue",type=string,JSONPath=`.status.queue.name`,priority=1
// +kubebuilder:printcolumn:name="Admission",type=string,JSONPath=`.status.queue.admission`,priority=1
// +kubebuilder:printcolumn:name="Position",type=integer,JSONPath=`.status.queue.position`,priority=1
// +kubebuilder:printcolumn:name="ClusterQueue",type=string,JSONPath=`.status.queue.clusterQueue`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="(has(oldSelf.status) && has(oldSelf.status.conditions) && oldSelf.status.conditions.exists(c, c.type == 'Succeeded' && c.status != 'Unknown')) || (self.spec.evalFile == oldSelf.spec.evalFile && has(self.spec.target) == has(oldSelf.spec.target) && (!has(self.spec.target) || self.spec.target == oldSelf.spec.target))",message="spec is immutable except suspend while the run is in progress (spec.evalFile or spec.target changed): once it has finished, a changed spec starts a new attempt; or create a new EvalRun"
// +kubebuilder:validation:XValidation:rule="(has(oldSelf.status) && has(oldSelf.status.conditions) && oldSelf.status.conditions.exists(c, c.type == 'Succeeded' && c.status != 'Unknown')) || (has(self.spec.judging) == has(oldSelf.spec.judging) && (!has(self.spec.judging) || self.spec.judging == oldSelf.spec.judging) && has(self.spec.successPolicy) == has(oldSelf.spec.successPolicy) && (!has(self.spec.successPolicy) || self.spec.successPolicy == oldSelf.spec.successPolicy) && has(self.spec.baseline) == has(oldSelf.spec.baseline) && (!has(self.spec.baseline) || self.spec.baseline == oldSelf.spec.baseline))",message="spec is immutable except suspend while the run is in progress (spec.judging, spec.successPolicy or spec.baseline changed): once it has finished, a changed spec starts a new attempt; or create a new EvalRun"
// +kubebuilder:validation:XValidation:rule="(has(oldSelf.status) && has(oldSelf.status.conditions) && oldSelf.status.conditions.exists(c, c.type == 'Succeeded' && c.status != 'Unknown')) || (has(self.spec.activeDeadlineSeconds) == has(oldSelf.spec.activeDeadlineSeconds) && (!has(self.spec.activeDeadlineSeconds) || self.spec.activeDeadlineSeconds == oldSelf.spec.activeDeadlineSeconds) && has(self.spec.backoffLimit) == has(oldSelf.spec.backoffLimit) && (!has(self.spec.backoffLimit) || self.spec.backoffLimit == oldSelf.spec.backoffLimit) && has(self.spec.ttlSecondsAfterFinished) == has(oldSelf.spec.ttlSecondsAfterFinished) && (!has(self.spec.ttlSecondsAfterFinished) || self.spec.ttlSecondsAfterFinished == oldSelf.spec.ttlSecondsAfterFinished) && has(self.spec.resultsDeadlineSeconds) == has(oldSelf.spec.resultsDeadlineSeconds) && (!has(self.spec.resultsDeadlineSeconds) || self.spec.resultsDeadlineSeconds == oldSelf.spec.resultsDeadlineSeconds))",message="spec is immutable except suspend while the run is in progress (spec.activeDeadlineSeconds, spec.backoffLimit, spec.ttlSecondsAfterFinished or spec.resultsDeadlineSeconds changed): once it has finished, a changed spec starts a new attempt; or create a new EvalRun"
// +kubebuilder:validation:XValidation:rule="(has(oldSelf.status) && has(oldSelf.status.conditions) && oldSelf.status.conditions.exists(c, c.type == 'Succeeded' && c.status != 'Unknown')) || (has(self.spec.queueName) == has(oldSelf.spec.queueName) && (!has(self.spec.queueName) || self.spec.queueName == oldSelf.spec.queueName) && has(self.spec.podTemplate) == has(oldSelf.spec.podTemplate) && (!has(self.spec.podTemplate) || self.spec.podTemplate == oldSelf.spec.podTemplate) && has(self.spec.sharding) == has(oldSelf.spec.sharding) && (!has(self.spec.sharding) || self.spec.sharding == oldSelf.spec.sharding) && has(self.spec.trials) == has(oldSelf.spec.trials) && (!has(self.spec.trials) || self.spec.trials == oldSelf.spec.trials))",message="spec is immutable except suspend while the run is in progress (spec.queueName, spec.podTemplate, spec.sharding or spec.trials changed): once it has finished, a changed spec starts a new attempt; or create a new EvalRun"
// +kubebuilder:validation:XValidation:rule="(has(oldSelf.status) && has(oldSelf.status.conditions) && oldSelf.status.conditions.exists(c, c.type == 'Succeeded' && c.status != 'Unknown')) || (has(self.spec.resume) == has(oldSelf.spec.resume) && (!has(self.spec.resume) || self.spec.resume == oldSelf.spec.resume) && has(self.spec.storage) == has(oldSelf.spec.storage) && (!has(self.spec.storage) || self.spec.storage == oldSelf.spec.storage) && has(self.spec.rejudge) == has(oldSelf.spec.rejudge) && (!has(self.spec.rejudge) || self.spec.rejudge == oldSelf.spec.rejudge))",message="spec is immutable except suspend while the run is in progress (spec.resume, spec.rejudge or spec.storage changed): once it has finished, a changed spec starts a new attempt; or create a new EvalRun"

// EvalRun runs a batch runner over an eval file as a Kubernetes Job and records the judged per-case results.
// +kubebuilder:validation:XValidation:rule="!has(self.spec.baseline) || has(self.spec.baseline.runName)",message="spec.baseline.runName is required on an EvalRun (only an EvalSchedule's template may leave it empty, to compare with the schedule's latest successful run)"
type EvalRun struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata. The run's Job and pod inherit its labels and annotations when the
	// Job is created (later changes do not reach them), so that Kueue (kueue.x-k8s.io/priority-class), cost
	// allocation and policy engines see them on the Job and the pod. Not inherited: the operator's and the Job
	// controller's keys (evals.evalrun.io/*, batch.kubernetes.io/*, job-name, controller-uid), which the operator
	// sets itself and which always win; the label kueue.x-k8s.io/queue-name (use spec.queueName); the annotations
	// kubectl.kubernetes.io/* (last-applied-configuration), *kueue.x-k8s.io/* and the legacy AppArmor ones (use
	// spec.podTemplate.annotations); and GitOps and Helm tracking keys (*argocd.argoproj.io/*, *fluxcd.io/*,
	// *helm.sh/*), which stay on the EvalRun so those tools do not take the Job or pod for their own. On the pod,
	// spec.podTemplate.labels and .annotations win over the inherited ones.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired evaluation.
	// +required
	Spec EvalRunSpec `json:"spec,omitzero"`

	// status is the observed state, written by the manager and the collector.
	// +optional
	Status EvalRunStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// EvalRunList contains a list of EvalRun.
type EvalRunList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the EvalRuns.
	Items []EvalRun `json:"items"`
}

// RecordsLocation says where a run keeps its cases' records.
// +kubebuilder:validation:Enum=ConfigMaps;Bucket
type RecordsLocation string

const (
	// RecordsInConfigMaps: the owned ConfigMaps <run>-evalrun-records-<n> (key records.jsonl.gz), as many per
	// shard as the shard has result ConfigMaps, each at most 900 KiB compressed.
	RecordsInConfigMaps RecordsLocation = "ConfigMaps"
	// RecordsInBucket: one object per shard, <prefix>/<namespace>/<run>/<uid>/shards/<i>/records.jsonl.gz in
	// spec.storage.s3's bucket, at most 256 MiB compressed.
	RecordsInBucket RecordsLocation = "Bucket"
)

// RecordsStatus counts a run's kept records (docs/rejudge.md).
type RecordsStatus struct {
	// kept is the number of cases whose record (and runner-view digest) the run kept.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Kept int32 `json:"kept,omitempty"`
	// notKept is the number of cases with a record that the run did not keep: beyond the storage budget (the
	// record ConfigMaps full, or the bucket object at its bound), or a single record larger than a chunk.
	// +kubebuilder:validation:Minimum=0
	// +optional
	NotKept int32 `json:"notKept,omitempty"`
	// bytes is the compressed size of the kept records.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Bytes int64 `json:"bytes,omitempty"`
	// where the records are: ConfigMaps or Bucket.
	// +optional
	Where RecordsLocation `json:"where,omitempty"`
}
