// Package options is the manager's configuration: its flags (docs/operations.md) as Options, validated and defaulted
// once, the judge containers' default limits, and where run pods reach the API server (APIServerEgress, found when
// the manager starts). Every stage of the manager reads it; it reads nothing (pure).
package options

import (
	"fmt"
	"strings"
	"time"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
)

// Defaults of the manager's options.
const (
	// DefaultCollectorImage is the image holding the static collector binary at podwire.CollectorImageBinary and the
	// launcher at podwire.LauncherImageBinary.
	DefaultCollectorImage = "localhost/evalrun/collector:dev"
	// DefaultJudgeImage is the project's judge image (hack/images.sh judge): the code_judge scripts of a run whose
	// spec.judging.image is unset run in it, never in the runner's image.
	DefaultJudgeImage = "localhost/evalrun/judge:dev"
	// MaxStatusBudgetBytes bounds --status-budget-bytes: at the full budget of its worst shape (10,000 tiny cases)
	// an EvalRun's object, managedFields included (an entry per case), measures 2.43 times the section; 600 KiB
	// keeps it under the API server's 1.5 MiB object limit (test/objectsize).
	MaxStatusBudgetBytes = 600 * 1024
	// DefaultUnschedulableTimeout is how long a pod may stay unschedulable before the run fails.
	DefaultUnschedulableTimeout = 5 * time.Minute
	// DefaultImagePullTimeout is how long an image pull may keep failing before the run fails.
	DefaultImagePullTimeout = 2 * time.Minute
	// DefaultPodRejectedTimeout is how long the Job's pod may keep being rejected at creation (Pod Security,
	// ResourceQuota, a webhook) before the run fails with PodRejected, and the run's own objects refused with
	// Forbidden (the manager's RBAC, an admission webhook or policy) before it fails with CreateForbidden.
	DefaultPodRejectedTimeout = 2 * time.Minute
	// DefaultContainerCreateTimeout is how long the kubelet may keep failing to create or start a container
	// (CreateContainerError, RunContainerError, CreateContainerConfigError) or the pod's sandbox before the pod
	// is replaced (or, for CreateContainerConfigError, the run fails with InvalidContainerConfig).
	DefaultContainerCreateTimeout = 2 * time.Minute
	// DefaultMaxConcurrentReconciles is how many EvalRuns are reconciled at once (on the workers: the reconciles
	// of runs that name a bucket run off them, see BucketConcurrency). A reconcile spends its time waiting on the
	// API server (a new run's first one makes five calls in sequence), so workers, not CPU, bound the manager when
	// the API server is slow: on the loaded 2-core node with 300 runs queued in Kueue, 4 workers did 0.35
	// reconciles a second (9.4 s each; runs waited minutes for a first status) and 16 did 4.5 a second.
	DefaultMaxConcurrentReconciles = 16
	// DefaultScheduleConcurrentReconciles is how many EvalSchedules are reconciled at once.
	DefaultScheduleConcurrentReconciles = 2
	// DefaultActiveDeadlineSeconds is the deadline of a run's Job when spec.activeDeadlineSeconds is unset (24
	// hours): every run ends, even when its user set no timeouts. Kubernetes counts it from the Job's start.
	DefaultActiveDeadlineSeconds int64 = 24 * 60 * 60
	// MaxActiveDeadlineSeconds bounds --default-active-deadline-seconds as the CRD bounds
	// spec.activeDeadlineSeconds (7 days).
	MaxActiveDeadlineSeconds int64 = 7 * 24 * 60 * 60
	// DefaultProgressStatusInterval is how often, at most, a run's progress is written: the status of a sharded or
	// resumed run while its shards run (shard completions are merged into one write per interval: a run of 1,000
	// shards is not written 1,000 times), and a change of a one-pod run's progress within one state (the
	// messages of a pod's start, status.runner's pod and image; assess.ProgressOnly). A change of state, and the
	// run's end, are written at once.
	DefaultProgressStatusInterval = 5 * time.Second
)

// Options configure the manager's builders and classification. The zero value of a field means its default.
type Options struct {
	// CollectorImage is the image of the install and collector containers.
	CollectorImage string
	// JudgeImage is the image of the judge containers of a run with code judges whose spec.judging.image is unset
	// (--judge-image).
	JudgeImage string
	// StatusBudgetBytes is written into run.json for the collector.
	StatusBudgetBytes int64
	// UnschedulableTimeout bounds how long the run's pod may stay unschedulable.
	UnschedulableTimeout time.Duration
	// ImagePullTimeout bounds how long an image pull may keep failing.
	ImagePullTimeout time.Duration
	// ContainerCreateTimeout bounds how long a container (or the pod's sandbox) may keep failing to be created.
	ContainerCreateTimeout time.Duration
	// PodRejectedTimeout bounds how long the Job's pod may keep failing to be created, and how long the run's
	// objects may keep being refused with Forbidden.
	PodRejectedTimeout time.Duration
	// MaxConcurrentReconciles is how many EvalRuns the controller reconciles at once (--max-concurrent-reconciles).
	MaxConcurrentReconciles int
	// ScheduleConcurrentReconciles is how many EvalSchedules the schedule controller reconciles at once
	// (--schedule-concurrent-reconciles).
	ScheduleConcurrentReconciles int
	// BucketConcurrency is how many reconciles of runs naming one bucket endpoint run at once, off the workers
	// (--bucket-concurrency): a hung endpoint holds at most this many goroutines, and no worker.
	BucketConcurrency int
	// BucketCallTimeout bounds each bucket step of a reconcile (--bucket-call-timeout); a run not prepared yet is
	// also bounded by its preparation deadline.
	BucketCallTimeout time.Duration
	// LLMBaseURL and LLMModel are the cluster-wide defaults of spec.judging.llm.baseURL and model (--llm-base-url,
	// --llm-model); "" means none.
	LLMBaseURL string
	LLMModel   string
	// DefaultActiveDeadlineSeconds is the Job's activeDeadlineSeconds of a run whose spec sets none
	// (--default-active-deadline-seconds); there is no value meaning "no deadline".
	DefaultActiveDeadlineSeconds int64
	// ProgressStatusInterval is how often, at most, a run's progress is written (DefaultProgressStatusInterval).
	ProgressStatusInterval time.Duration
	// JudgeLimits are the judge containers' default limits (--judge-cpu-limit, --judge-memory-limit,
	// --judge-ephemeral-storage-limit); nil is DefaultJudge*Limit.
	JudgeLimits JudgeLimits
	// NoNetworkPolicy, when true (--run-network-policy=false), creates no NetworkPolicy for runs' pods (a cluster
	// whose network plugin enforces none, or runners whose egress spec.target.egress cannot express).
	NoNetworkPolicy bool
	// ReleaseSucceededPods, when true (--release-succeeded-pods), deletes the pod of a one-pod run decided succeeded
	// once the Job counted it (assess.ReleasableOfOnePodRun), as the manager always does with a sharded run's
	// succeeded shards from index assess.KeptShardPods on; by default it stays, for its logs.
	ReleaseSucceededPods bool
	// APIServer is where runs' pods reach the API server, for their NetworkPolicy (found at start, cmd/manager).
	APIServer APIServerEgress
}

// Validate rejects options the manager cannot run with.
func (o Options) Validate() error {
	if o.LLMBaseURL != "" && !strings.HasPrefix(o.LLMBaseURL, "http://") && !strings.HasPrefix(o.LLMBaseURL, "https://") {
		return fmt.Errorf("--llm-base-url %q is not an http(s) URL", o.LLMBaseURL)
	}
	if o.StatusBudgetBytes > MaxStatusBudgetBytes {
		return fmt.Errorf("--status-budget-bytes %d is above %d: an EvalRun at that budget could outgrow the API server's object size limit",
			o.StatusBudgetBytes, MaxStatusBudgetBytes)
	}
	if o.DefaultActiveDeadlineSeconds < 0 || o.DefaultActiveDeadlineSeconds > MaxActiveDeadlineSeconds {
		return fmt.Errorf("--default-active-deadline-seconds %d is not between 1 and %d", o.DefaultActiveDeadlineSeconds, MaxActiveDeadlineSeconds)
	}
	return nil
}

// WithDefaults returns o with every zero field set to its default.
func (o Options) WithDefaults() Options {
	if o.CollectorImage == "" {
		o.CollectorImage = DefaultCollectorImage
	}
	if o.JudgeImage == "" {
		o.JudgeImage = DefaultJudgeImage
	}
	if o.StatusBudgetBytes <= 0 {
		o.StatusBudgetBytes = evalsv1alpha1.DefaultStatusBudgetBytes
	}
	if o.UnschedulableTimeout <= 0 {
		o.UnschedulableTimeout = DefaultUnschedulableTimeout
	}
	if o.ImagePullTimeout <= 0 {
		o.ImagePullTimeout = DefaultImagePullTimeout
	}
	if o.ContainerCreateTimeout <= 0 {
		o.ContainerCreateTimeout = DefaultContainerCreateTimeout
	}
	if o.PodRejectedTimeout <= 0 {
		o.PodRejectedTimeout = DefaultPodRejectedTimeout
	}
	if o.MaxConcurrentReconciles <= 0 {
		o.MaxConcurrentReconciles = DefaultMaxConcurrentReconciles
	}
	if o.ScheduleConcurrentReconciles <= 0 {
		o.ScheduleConcurrentReconciles = DefaultScheduleConcurrentReconciles
	}
	if o.BucketConcurrency <= 0 {
		o.BucketConcurrency = DefaultBucketConcurrency
	}
	if o.BucketCallTimeout <= 0 {
		o.BucketCallTimeout = DefaultBucketCallTimeout
	}
	if o.DefaultActiveDeadlineSeconds <= 0 {
		o.DefaultActiveDeadlineSeconds = DefaultActiveDeadlineSeconds
	}
	if o.ProgressStatusInterval <= 0 {
		o.ProgressStatusInterval = DefaultProgressStatusInterval
	}
	o.JudgeLimits = defaultJudgeLimits(o.JudgeLimits)
	return o
}

// DefaultBucketCallTimeout bounds one bucket step of a reconcile (pinning an eval file, merging shards, planning a
const DefaultBucketCallTimeout = 5 * time.Minute

// DefaultBucketConcurrency is how many reconciles of runs naming one bucket endpoint call it at once.
const DefaultBucketConcurrency = 8
