package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Condition types and reasons of an EvalSchedule.
const (
	// ScheduleConditionReady is True while the schedule is valid and creates runs (or is suspended), False when
	// its schedule or time zone cannot be parsed.
	ScheduleConditionReady = "Ready"
	// ScheduleConditionStalled is True when the schedule cannot create runs until its spec is fixed (kstatus).
	ScheduleConditionStalled = "Stalled"

	ScheduleReasonScheduled       = "Scheduled"
	ScheduleReasonSuspended       = "Suspended"
	ScheduleReasonInvalidSchedule = "InvalidSchedule"
)

// ConcurrencyPolicy says what a schedule does when a run is due while an earlier one is still running.
// +kubebuilder:validation:Enum=Allow;Forbid;Replace
type ConcurrencyPolicy string

const (
	// ConcurrencyAllow starts the new run alongside the running ones.
	ConcurrencyAllow ConcurrencyPolicy = "Allow"
	// ConcurrencyForbid skips the new run while an earlier one is running.
	ConcurrencyForbid ConcurrencyPolicy = "Forbid"
	// ConcurrencyReplace deletes the running runs and starts the new one.
	ConcurrencyReplace ConcurrencyPolicy = "Replace"
)

// EvalScheduleSpec is the desired state of an EvalSchedule.
type EvalScheduleSpec struct {
	// schedule is a cron expression in the standard five-field format (minute hour day-of-month month
	// day-of-week), or a descriptor such as @daily or @hourly. An expression that cannot be parsed makes the
	// schedule Stalled with reason InvalidSchedule. TZ= and CRON_TZ= prefixes are not allowed: use timeZone.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:XValidation:rule="!self.contains('TZ')",message="use spec.timeZone instead of a TZ= or CRON_TZ= prefix"
	// +required
	Schedule string `json:"schedule,omitempty"`

	// timeZone is the IANA time zone the schedule is read in (for example Europe/Paris). Defaults to the
	// manager's local time zone (UTC in its image).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +optional
	TimeZone *string `json:"timeZone,omitempty"`

	// startingDeadlineSeconds is how late, in seconds, a run may still start after its scheduled time (after a
	// manager outage, say). A run missed by more is skipped, with an event. Unset means no deadline: after an
	// outage at most one missed run (the latest) is started, as CronJob does.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=604800
	// +optional
	StartingDeadlineSeconds *int64 `json:"startingDeadlineSeconds,omitempty"`

	// concurrencyPolicy says what happens when a run is due while an earlier run of this schedule is still in
	// progress: Allow (the default) starts it anyway, Forbid skips it, Replace deletes the running runs first.
	// +default="Allow"
	// +optional
	ConcurrencyPolicy ConcurrencyPolicy `json:"concurrencyPolicy,omitempty"`

	// suspend stops the schedule from creating runs; runs already created go on. Scheduled times that pass
	// while suspended count as missed.
	// +optional
	Suspend *bool `json:"suspend,omitempty"`

	// successfulRunsHistoryLimit is how many finished runs that succeeded are kept; older ones are deleted with
	// their result ConfigMaps and bucket objects. Defaults to 3.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	// +default=3
	// +optional
	SuccessfulRunsHistoryLimit *int32 `json:"successfulRunsHistoryLimit,omitempty"`

	// failedRunsHistoryLimit is how many finished runs that failed are kept. Defaults to 1.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	// +default=1
	// +optional
	FailedRunsHistoryLimit *int32 `json:"failedRunsHistoryLimit,omitempty"`

	// template is the EvalRun each scheduled time creates.
	// +required
	Template EvalRunTemplate `json:"template,omitzero"`
}

// EvalRunTemplate is the EvalRun a schedule creates: its labels and annotations, and its spec.
type EvalRunTemplate struct {
	// metadata holds the labels and annotations of the created runs. Keys under evals.evalrun.io/ are the
	// operator's and rejected.
	// +optional
	Metadata *TemplateMetadata `json:"metadata,omitempty"`

	// spec is the created runs' spec. A baseline without runName compares each run with the schedule's latest
	// run that succeeded.
	// +required
	Spec EvalRunSpec `json:"spec,omitzero"`
}

// TemplateMetadata is the metadata a schedule gives the runs it creates.
type TemplateMetadata struct {
	// labels are added to every created run.
	// +kubebuilder:validation:MaxProperties=32
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.startsWith('evals.evalrun.io/'))",message="labels under evals.evalrun.io/ are the operator's"
	// +optional
	Labels map[string]string `json:"labels,omitempty"`

	// annotations are added to every created run.
	// +kubebuilder:validation:MaxProperties=32
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.startsWith('evals.evalrun.io/'))",message="annotations under evals.evalrun.io/ are the operator's"
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// EvalScheduleStatus is the observed state of an EvalSchedule, written by the manager.
type EvalScheduleStatus struct {
	// conditions are Ready and Stalled.
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// observedGeneration is the generation the manager last acted on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// lastScheduleTime is the scheduled time of the latest run created.
	// +optional
	LastScheduleTime *metav1.Time `json:"lastScheduleTime,omitempty"`

	// lastSkippedTime is the latest scheduled time skipped because a run was in progress (concurrencyPolicy
	// Forbid). A skipped time is counted once (evalrun_schedule_runs_total, a RunSkipped event) and never started
	// later, even when the run in progress finishes before the next scheduled time.
	// +optional
	LastSkippedTime *metav1.Time `json:"lastSkippedTime,omitempty"`

	// nextScheduleTime is the next scheduled time (unset while suspended or invalid).
	// +optional
	NextScheduleTime *metav1.Time `json:"nextScheduleTime,omitempty"`

	// lastSuccessfulTime is when the latest run that succeeded finished.
	// +optional
	LastSuccessfulTime *metav1.Time `json:"lastSuccessfulTime,omitempty"`

	// active are the schedule's runs still in progress, oldest first (at most 100).
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=100
	// +optional
	Active []ScheduledRun `json:"active,omitempty"`

	// lastFinished is the most recently scheduled run of the schedule that has finished.
	// +optional
	LastFinished *FinishedRun `json:"lastFinished,omitempty"`

	// cost sums what the schedule's finished runs that it still keeps (its history) spent: their status.cost,
	// carried results left out. Unset until a run it keeps has finished.
	// +optional
	Cost *ScheduleCost `json:"cost,omitempty"`

	// historyRuns is how many finished runs the schedule's case history (the ConfigMap
	// <schedule>-evalrun-history) holds, at most 30.
	// +optional
	HistoryRuns int32 `json:"historyRuns,omitempty"`

	// historyDroppedCases counts the cases the latest recording left out of the case history to keep it under
	// its size budget.
	// +optional
	HistoryDroppedCases int32 `json:"historyDroppedCases,omitempty"`

	// flakiest are the (at most 10) cases whose verdict flipped between passing and not passing most often over
	// the case history, most flips first.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=10
	// +optional
	Flakiest []FlakyCase `json:"flakiest,omitempty"`
}

// FlakyCase is a case of status.flakiest.
type FlakyCase struct {
	// id is the case id.
	// +kubebuilder:validation:MaxLength=256
	// +required
	ID string `json:"id"`
	// flips is how often its verdict flipped between passing and not passing.
	// +required
	Flips int32 `json:"flips"`
	// runs is how many verdicts of it the history holds (Skipped and runs without the case left out).
	// +required
	Runs int32 `json:"runs"`
	// flipRate is flips over runs - 1, a decimal string.
	// +kubebuilder:validation:MaxLength=16
	// +required
	FlipRate string `json:"flipRate"`
}

// ScheduledRun is a run a schedule created.
type ScheduledRun struct {
	// name of the EvalRun.
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`
	// scheduledTime is the time the run was scheduled for.
	// +required
	ScheduledTime metav1.Time `json:"scheduledTime"`
}

// FinishedRun is a finished run of a schedule and its outcome.
type FinishedRun struct {
	// name of the EvalRun.
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`
	// scheduledTime is the time the run was scheduled for.
	// +required
	ScheduledTime metav1.Time `json:"scheduledTime"`
	// The run's outcome.
	RunOutcome `json:",inline"`
}

// RunOutcome is how a finished run (or attempt) ended: its conditions and its summary.
type RunOutcome struct {
	// completionTime is when the run finished.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// succeeded is the status of the run's Succeeded condition (True or False).
	// +kubebuilder:validation:Enum=True;False;Unknown
	// +required
	Succeeded metav1.ConditionStatus `json:"succeeded,omitempty"`
	// reason is the reason of the run's Succeeded condition.
	// +kubebuilder:validation:MaxLength=64
	// +required
	Reason string `json:"reason"`
	// passed is the status of the run's Passed condition.
	// +kubebuilder:validation:Enum=True;False;Unknown
	// +optional
	Passed *metav1.ConditionStatus `json:"passed,omitempty"`
	// regressed is the status of the run's Regressed condition, when it has a baseline.
	// +kubebuilder:validation:Enum=True;False;Unknown
	// +optional
	Regressed *metav1.ConditionStatus `json:"regressed,omitempty"`
	// summary is the run's summary.
	// +optional
	Summary *RunSummary `json:"summary,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=esched,categories=evals
// +kubebuilder:printcolumn:name="Schedule",type=string,JSONPath=`.spec.schedule`
// +kubebuilder:printcolumn:name="Suspend",type=boolean,JSONPath=`.spec.suspend`
// +kubebuilder:printcolumn:name="Active",type=integer,JSONPath=`.status.active.size()`,priority=1
// +kubebuilder:printcolumn:name="Last Schedule",type=date,JSONPath=`.status.lastScheduleTime`
// +kubebuilder:printcolumn:name="Last Run",type=string,JSONPath=`.status.lastFinished.name`
// +kubebuilder:printcolumn:name="Last Reason",type=string,JSONPath=`.status.lastFinished.reason`
// +kubebuilder:printcolumn:name="Last Passed",type=string,JSONPath=`.status.lastFinished.passed`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// EvalSchedule creates EvalRuns from a template on a cron schedule, keeps a bounded history of them, and reports
// the latest outcome: the nightly eval.
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 52",message="an EvalSchedule's name is at most 52 characters: its runs are named <schedule>-<minutes since the epoch>"
type EvalSchedule struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the schedule and the run template.
	// +required
	Spec EvalScheduleSpec `json:"spec,omitzero"`

	// status is the observed state, written by the manager.
	// +optional
	Status EvalScheduleStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// EvalScheduleList contains a list of EvalSchedule.
type EvalScheduleList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the EvalSchedules.
	Items []EvalSchedule `json:"items"`
}

// Labels and annotations of the runs an EvalSchedule creates: users and tools select a schedule's runs by them.
const (
	// LabelSchedule, on a run, names the EvalSchedule that created it.
	LabelSchedule = "evals.evalrun.io/schedule"
	// AnnotationScheduledTime, on a run, is the scheduled time it was created for (RFC 3339, UTC).
	AnnotationScheduledTime = "evals.evalrun.io/scheduled-time"
)
