package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// CommandTemplate is a command run with /bin/sh -c after its {PLACEHOLDER}s are replaced by shell-quoted values
// (target.commandTemplate, healthcheck.commandTemplate). Each placeholder must stand in a plain, unquoted word: the
// rule below rejects one inside quotes, `...`, $(...), ${...} or $((...)), or after a backslash, where the shell
// would not read its quoted value as one literal word. Which placeholders are allowed is up to each field. The
// rule's regular expression is written out in named parts in placeholder_rule_test.go, which checks it is their
// composition: change it there first.
// +kubebuilder:validation:MinLength=1
// +kubebuilder:validation:MaxLength=4096
// +kubebuilder:validation:XValidation:rule=`!self.matches(r'^(?:\\\n|#[^\n]*\n)*(?:[ \t\n;&|<>()](?:\\\n|#[^\n]*\n)*|(?:[^ \t\n;&|<>()\\\x27\x22\x60$#]|\\[^\n]|\$[$A-Za-z0-9_@*?!#-]|\$?\x27[^\x27]*\x27|\$?\x22(?:[^\x22\\\x60$]|\\[^$]|\$[A-Za-z0-9_@*?!#-]|\x60(?:[^\x60\\]|\\[\s\S])*\x60|\$\((?:[^()\x27\x22\\\x60$#]|\\[\s\S]|\$[$A-Za-z0-9_@*?!#-])*\)|\$\{[^{}\x27\x22\\\x60$]*\}|\$\(\([^()\x27\x22\\\x60$#]*\)\))*\$?\x22|\$?\x60(?:[^\x60\\]|\\[\s\S])*\x60|\$\((?:[^()\x27\x22\\\x60$#]|\\[\s\S]|\$[$A-Za-z0-9_@*?!#-])*\)|\$\{[^{}\x27\x22\\\x60$]*\}|\$\(\([^()\x27\x22\\\x60$#]*\)\))(?:#|\\\n)*)*(?:\$?(?:\x27(?:[^\x27]*[^\x27$])?|\\|\x60(?:[^\x60]*[^\x60$])?|\x22(?:[^\x22\\\x60$]|\\[^$]|\$[A-Za-z0-9_@*?!#-]|\x60(?:[^\x60\\]|\\[\s\S])*\x60|\$\((?:[^()\x27\x22\\\x60$#]|\\[\s\S]|\$[$A-Za-z0-9_@*?!#-])*\)|\$\{[^{}\x27\x22\\\x60$]*\}|\$\(\([^()\x27\x22\\\x60$#]*\)\))*(?:\\|\$?\x60(?:[^\x60]*[^\x60$])?|\$\((?:[^)]*[^)$])?|\$\{(?:[^}]*[^}$])?)?)|\$\((?:[^)]*[^)$])?|\$\{(?:[^}]*[^}$])?|\(\((?:[^)]*[^)$])?)\{[A-Z][A-Z0-9_]*\}')`,message="placeholders must not be quoted or inside `...`, $(...) or ${...}: their values are already shell-quoted; write {PROMPT}, not \"{PROMPT}\""
type CommandTemplate string

// BatchingMode says how the runner is invoked.
// +kubebuilder:validation:Enum=Batched;PerCase
type BatchingMode string

// EvalFileView says what the runner reads at {EVAL_FILE}.
// +kubebuilder:validation:Enum=Inputs;Full
type EvalFileView string

const (
	// EvalFileViewInputs gives the runner the runner view of its eval file: per case only its id,
	// conversation_id and input_messages (content as written, file segments included) and a placeholder
	// expected_outcome, the same for every case; nothing a judge reads.
	EvalFileViewInputs EvalFileView = "Inputs"
	// EvalFileViewFull gives the runner its whole pinned (or shard's) eval file, expected answers, rubrics and
	// judge scripts included. The run records it in status.evalFileView and emits a Warning event.
	EvalFileViewFull EvalFileView = "Full"
)

const (
	// BatchingBatched invokes the command template once for all cases; the runner writes one JSONL file.
	BatchingBatched BatchingMode = "Batched"
	// BatchingPerCase invokes the command template once per case; each invocation writes one output file.
	BatchingPerCase BatchingMode = "PerCase"
)

// EvalRunSpec is the desired state of an EvalRun (and the template of an EvalSchedule's runs). An EvalRun's spec
// is immutable after creation, except suspend.
// +kubebuilder:validation:XValidation:rule="!has(self.target) || !has(self.target.workers) || self.target.batching == 'PerCase'",message="target.workers is only meaningful with target.batching: PerCase"
// +kubebuilder:validation:XValidation:rule="has(self.target) || has(self.rejudge)",message="target is required unless rejudge is set (a re-judge runs no runner)"
// +kubebuilder:validation:XValidation:rule="!has(self.rejudge) || !has(self.resume)",message="rejudge and resume are exclusive: a re-judge judges an earlier run's kept records, a resume runs the cases an earlier run did not finish"
// +kubebuilder:validation:XValidation:rule="(has(self.sharding) && has(self.sharding.shards) ? self.sharding.shards : 1) * (has(self.trials) && has(self.trials.count) ? self.trials.count : 1) <= 1000",message="sharding.shards times trials.count must be at most 1000: each trial of each shard is a pod of the run's Job"
// +kubebuilder:validation:XValidation:rule="!has(self.rejudge) || !has(self.trials) || !has(self.trials.count) || self.trials.count == 1",message="a re-judge judges every trial its source kept: its trials.count is its source's; set at most trials.passRate"
type EvalRunSpec struct {
	// evalFile says where the agentv-eval-v2 eval file comes from: exactly one of inline, configMapKeyRef, s3 or
	// bundle (an eval file with the files it names).
	// The manager copies it into an owned ConfigMap when the run starts, so later edits of the source do not
	// change a running evaluation.
	// +required
	EvalFile EvalFileSource `json:"evalFile"`

	// target describes the batch runner: its image, command template and how it is invoked. Required unless
	// rejudge is set: a re-judge runs no runner, and uses target only for what judging takes from it (the image
	// and working directory of code_judge scripts when judging.image is unset).
	// +optional
	Target Target `json:"target,omitzero"`

	// judging holds the evaluators and pass threshold used for cases that declare no evaluators of their own.
	// +optional
	Judging *Judging `json:"judging,omitempty"`

	// successPolicy decides the Passed condition from the judged results. It is separate from whether the run
	// itself completed (the Succeeded condition). Defaults to every judged case passing.
	// +optional
	SuccessPolicy *SuccessPolicy `json:"successPolicy,omitempty"`

	// activeDeadlineSeconds bounds the whole Job (all pods, retries included), in seconds, counted from the Job's
	// start (time suspended or queued does not count). Copied to the Job's activeDeadlineSeconds. Unset means the
	// manager's default (--default-active-deadline-seconds, 24 hours unless the operator changed it), so every
	// run ends; status.activeDeadline says which applied.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=604800
	// +optional
	ActiveDeadlineSeconds *int64 `json:"activeDeadlineSeconds,omitempty"`

	// backoffLimit is the number of pod retries the Job allows for infrastructure failures. Copied to the Job.
	// Defaults to 0: a runner that ran and failed is reported, not retried.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10
	// +default=0
	// +optional
	BackoffLimit *int32 `json:"backoffLimit,omitempty"`

	// ttlSecondsAfterFinished lets Kubernetes delete the finished Job (and its pods) after this many seconds.
	// The EvalRun and its results stay. Unset keeps the Job.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=31536000
	// +optional
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`

	// resultsDeadlineSeconds is how long after the runner ends the collector may take to report results before
	// the run fails with ResultsNotReported. Defaults to 300.
	// +kubebuilder:validation:Minimum=10
	// +kubebuilder:validation:Maximum=86400
	// +default=300
	// +optional
	ResultsDeadlineSeconds *int32 `json:"resultsDeadlineSeconds,omitempty"`

	// suspend pauses the run: the Job is created (or set) suspended and no pod runs. Setting it back to false
	// resumes. Ignored when queueName is set, because Kueue then owns the Job's suspension. The only mutable field.
	// +optional
	Suspend *bool `json:"suspend,omitempty"`

	// queueName is the Kueue LocalQueue that admits this run. When set, the Job is created suspended with the
	// kueue.x-k8s.io/queue-name label and Kueue decides when it starts.
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +optional
	QueueName string `json:"queueName,omitempty"`

	// podTemplate holds scheduling and metadata overrides for the run's pod.
	// +optional
	PodTemplate *PodOverrides `json:"podTemplate,omitempty"`

	// trials answers every case several times, each answer (a trial) in its own pod, and decides each case by its
	// pass rate over its trials (docs/statistics.md). Unset means the eval file's own trials (an AgentV 4.42 suite's
	// execution.trials: its count, and a case passing when any trial passes), else one trial per case; when set, it
	// wins over the eval file's. status.trials.source says which. A resume must have its source's count; a re-judge
	// takes its source's count and passRate (it may set passRate only, which then replaces its source's), never its
	// eval file's.
	// +optional
	Trials *Trials `json:"trials,omitempty"`

	// sharding splits the eval's cases into shards that run as one Indexed Job, one pod per shard. Each shard's
	// runner gets an eval file holding only its cases at {EVAL_FILE}; the manager merges the shards' results into
	// this run's status. Unset means one pod for all cases.
	// +optional
	Sharding *Sharding `json:"sharding,omitempty"`

	// resume runs only the cases an earlier run of the same eval file did not finish (or did not pass) and
	// carries that run's results for the rest, so that a crashed or partly failed run is completed without
	// re-running (and re-paying for) the cases it already has.
	// +optional
	Resume *Resume `json:"resume,omitempty"`

	// rejudge judges an earlier run's kept records again, without running the runner: the run's pod has no runner
	// container; its collector reads the earlier run's records (status.records) shard by shard and judges them with
	// this run's eval file, judging and successPolicy (docs/rejudge.md). Exclusive with resume.
	// +optional
	Rejudge *Rejudge `json:"rejudge,omitempty"`

	// storage says where the run keeps its full per-case results. Unset: in ConfigMaps the run owns (in etcd,
	// bounded to 900 KiB each). With s3, every shard's results and collection go to the bucket and no per-case data
	// goes to etcd beyond what the status shows.
	// +optional
	Storage *ResultsStorage `json:"storage,omitempty"`

	// baseline compares this run's full per-case results with an earlier run's once this run has finished:
	// newly failing and newly passing cases, cases only one of them has, and the mean score delta go to
	// status.baseline, and the Regressed condition says whether the run regressed, by baseline.test: beyond the
	// given bounds (Count), or by a paired test, a drop unlikely by chance (Paired; docs/statistics.md).
	// +optional
	Baseline *Baseline `json:"baseline,omitempty"`
}

// Baseline names the run to compare with and how much worse a run may be before it counts as regressed.
type Baseline struct {
	// runName is the baseline EvalRun, in this run's namespace. Required on an EvalRun. In an EvalSchedule's
	// template, leave it empty to compare each run with the schedule's latest run that succeeded (the first run,
	// which has none, is not compared).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +optional
	RunName *string `json:"runName,omitempty"`

	// maxNewFailures is how many newly failing cases (passed in the baseline, not passing now) the run may have
	// without being Regressed. Defaults to 0.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000000
	// +default=0
	// +optional
	MaxNewFailures *int32 `json:"maxNewFailures,omitempty"`

	// maxScoreDrop is how far the mean score over the shared cases may fall below the baseline's (a decimal in
	// [0, 1]) without the run being Regressed. Unset means no bar on the score.
	// +kubebuilder:validation:MaxLength=8
	// +kubebuilder:validation:Pattern=`^(0(\.[0-9]{1,6})?|1(\.0{1,6})?)$`
	// +optional
	MaxScoreDrop *string `json:"maxScoreDrop,omitempty"`

	// test is how Regressed is decided. Count (the default, so that objects written before the field keep their
	// meaning): more than maxNewFailures newly failing cases, or a mean score drop of more than maxScoreDrop.
	// Paired: a paired test of the pass rate (docs/statistics.md): the cases are paired by id (cases only one run
	// has are counted and left out, as are cases with no judged trial in one run: every trial Skipped; a missing
	// record is a failed trial), and the run regressed when its pass rate fell by at least minEffect and the
	// test's one-sided p-value for "this run is worse" is below alpha. With one trial per case in both runs the
	// test is McNemar's exact test on the discordant cases; with more, the sign-flip (paired permutation) test
	// on the per-case pass-rate differences, exact while it fits and seeded Monte Carlo beyond (the seed comes
	// from both runs' names and uids, so the result repeats). maxNewFailures and maxScoreDrop apply to Count
	// only; alpha and minEffect to Paired only. Use Paired for an agent that is not deterministic: Count flags
	// most nights of an unchanged agent whose cases pass 80% of the time.
	// +default="Count"
	// +optional
	Test *BaselineTest `json:"test,omitempty"`

	// alpha is the Paired test's significance level, a decimal strictly between 0 and 1 with at most 6
	// decimals: an unchanged agent is flagged Regressed on at most this share of comparisons. Defaults to
	// "0.05"; "0.01" for a gate that pages someone or blocks a release.
	// +kubebuilder:validation:MaxLength=8
	// +kubebuilder:validation:XValidation:rule="self.matches('^0[.][0-9]{0,5}[1-9][0-9]{0,5}$')",message="alpha must be a decimal strictly between 0 and 1 with at most 6 decimals, such as 0.05 or 0.01"
	// +default="0.05"
	// +optional
	Alpha *string `json:"alpha,omitempty"`

	// minEffect is the smallest drop of the pass rate (a fraction: 0.05 is 5 points) the Paired test calls a
	// regression, a decimal in [0, 1]. Defaults to "0": any drop unlikely by chance. Set it to the smallest drop
	// you would act on where a suite is large enough to detect drops too small to matter.
	// +kubebuilder:validation:MaxLength=8
	// +kubebuilder:validation:Pattern=`^(0(\.[0-9]{1,6})?|1(\.0{1,6})?)$`
	// +default="0"
	// +optional
	MinEffect *string `json:"minEffect,omitempty"`

	// quarantine leaves flaky cases out of the regression test (Count and Paired alike), for a run an
	// EvalSchedule created: its cases whose verdict flipped between passing and not passing in more than
	// flakyOver of the changes over the schedule's recorded history (its last 30 runs, this run left out, at
	// least 3 verdicts) are listed in status.baseline.quarantined instead of compared. A run no schedule created
	// has no history and quarantines nothing.
	// +optional
	Quarantine *BaselineQuarantine `json:"quarantine,omitempty"`
}

// BaselineQuarantine is spec.baseline.quarantine.
type BaselineQuarantine struct {
	// flakyOver is the flip rate above which a case is quarantined, a decimal in (0, 1] with at most 6 decimals
	// (a case flipped between consecutive verdicts of its history in more than this share of them).
	// +kubebuilder:validation:MaxLength=8
	// +kubebuilder:validation:Pattern=`^(0\.[0-9]{0,5}[1-9][0-9]{0,5}|1(\.0{1,6})?)$`
	// +required
	FlakyOver string `json:"flakyOver"`
}

// BaselineTest is how spec.baseline decides Regressed.
// +kubebuilder:validation:Enum=Count;Paired
type BaselineTest string

const (
	// BaselineTestCount: more than maxNewFailures newly failing cases, or a mean score drop above maxScoreDrop.
	BaselineTestCount BaselineTest = "Count"
	// BaselineTestPaired: a paired test of the pass rate; a drop of at least minEffect with p below alpha.
	BaselineTestPaired BaselineTest = "Paired"
)

// ResultsStorage is where a run's per-case results are kept.
type ResultsStorage struct {
	// s3 keeps each shard's per-case results (gzip'd JSONL, results.jsonl.gz) and its collection (summary.json)
	// in an S3-compatible bucket at <prefix>/<namespace>/<run>/<run uid>/shards/<index>/.
	// +required
	S3 S3Bucket `json:"s3,omitzero"`

	// statusFrom says who writes what the pods collected into this run's status. Pod (the default): each pod's
	// collector writes its collection to the API server (a shard ConfigMap, or the run's status), with a token of
	// its own. Bucket: the pods make no Kubernetes API call at all (no token, no Role): each collector writes its
	// collection only to the bucket (summary.json next to results.jsonl.gz), and the manager, once the collector's
	// termination message says it stored them, reads it from there and writes the status, merging the shards as
	// it does for Pod. This is what a pod on a cluster that cannot reach the manager's API server (a MultiKueue
	// worker) needs. Immutable while the run is in progress, as the rest of the spec.
	// +default="Pod"
	// +optional
	StatusFrom *StatusSource `json:"statusFrom,omitempty"`
}

// StatusSource says where the manager finds what a run's pods collected: spec.storage.statusFrom.
// +kubebuilder:validation:Enum=Pod;Bucket
type StatusSource string

const (
	// StatusFromPod: the collectors write their collections to the API server (the default).
	StatusFromPod StatusSource = "Pod"
	// StatusFromBucket: the collectors write their collections only to the bucket; the pods make no API call.
	StatusFromBucket StatusSource = "Bucket"
)

// S3Bucket is a bucket of an S3-compatible object store and the credentials to use it.
type S3Bucket struct {
	// endpoint is the store's URL: http:// or https://, host and optional port (for example
	// http://seaweedfs.storage.svc:8333). Requests use path-style addressing.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Pattern=`^https?://[^/?#]+/?$`
	// +required
	Endpoint string `json:"endpoint,omitempty"`

	// region signs the requests. Defaults to us-east-1, which S3-compatible stores accept.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +optional
	Region *string `json:"region,omitempty"`

	// bucket is the bucket's name; it must exist.
	// +kubebuilder:validation:MinLength=3
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9][a-z0-9.-]*[a-z0-9]$`
	// +required
	Bucket string `json:"bucket,omitempty"`

	// prefix is prepended to every key (without leading or trailing slash).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Pattern=`^[^/](.*[^/])?$`
	// +optional
	Prefix *string `json:"prefix,omitempty"`

	// credentialsSecret names a Secret in the run's namespace with the keys accessKeyID and secretAccessKey. It is
	// mounted only into the collector, never into the runner or the judge; the manager reads it to merge shards.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	CredentialsSecret string `json:"credentialsSecret,omitempty"`
}

// Trials answers every case of a run several times (docs/design/trials.md).
type Trials struct {
	// count is how many times every case is answered, 1 to 100; defaults to 1. Each answer (a trial) is judged as
	// a single answer is, in its own pod: the run's Job gets sharding.shards × count pods (at most 1000), trial
	// by trial (every shard's first trial before any second). The runner sees its trial's number, 1 to count, as
	// {ATTEMPT} and $ATTEMPT. The run's budgets and deadline cover every trial.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +default=1
	// +optional
	Count *int32 `json:"count,omitempty"`

	// passRate is the least share of a case's trials that must pass for the case to pass, a decimal in (0, 1]
	// with at most 6 decimals, rounded up to whole trials (0.6 of 5 trials is 3); defaults to "1": every trial.
	// A case that does not pass is Error when every trial that did not pass errored or has no record, else Fail;
	// a trial without a record counts as not passed. Skipped trials (nothing could judge them) are left out of the
	// case's trials; a case whose trials were all skipped is Skipped. minPassRate and the Count comparison read
	// these case verdicts.
	// +kubebuilder:validation:MaxLength=8
	// +kubebuilder:validation:XValidation:rule="self.matches('^(0[.][0-9]{0,5}[1-9][0-9]{0,5}|1([.]0{1,6})?)$')",message="passRate must be a decimal in (0, 1] with at most 6 decimals, such as 0.6 or 1"
	// +default="1"
	// +optional
	PassRate *string `json:"passRate,omitempty"`
}

// Sharding splits a run's cases over several pods.
type Sharding struct {
	// shards is how many shards the cases are split into, 1 to 1000. The split is deterministic and contiguous:
	// in eval-file order, shard i holds cases [i*n/shards, (i+1)*n/shards) of the n cases run. A run with fewer
	// cases than shards uses one shard per case. Defaults to 1.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +default=1
	// +optional
	Shards *int32 `json:"shards,omitempty"`

	// parallelism bounds how many shard pods run at once. Defaults to all shards.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +optional
	Parallelism *int32 `json:"parallelism,omitempty"`
}

// ResumeCases says which cases of the earlier run are run again.
// +kubebuilder:validation:Enum=Missing;NotPassed
type ResumeCases string

const (
	// ResumeMissing runs the cases the earlier run has no valid record for (missing ids).
	ResumeMissing ResumeCases = "Missing"
	// ResumeNotPassed runs every case whose verdict in the earlier run is not Pass (failed, errored, skipped or
	// missing).
	ResumeNotPassed ResumeCases = "NotPassed"
)

// Resume names an earlier run whose results this run completes.
type Resume struct {
	// from is the name of the earlier EvalRun, in this run's namespace. It must have finished, its eval file
	// must have the same sha256 as this run's, and it must have judged as this run judges (the same pass
	// threshold, default evaluators, LLM judges' endpoint, model, timeout and budgets, code judges' image and
	// timeout, as its pinned run.json says): carried verdicts are not judged again. Otherwise this run ends with
	// reason ResumeSourceInvalid, naming what differs; to change the judging, re-judge the earlier run first
	// (spec.rejudge) and resume from that re-judge.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	From string `json:"from,omitempty"`

	// cases says which cases are run again: Missing (the default) or NotPassed. The others keep the earlier
	// run's results, marked with carriedFrom. With trials (the earlier run's spec.trials.count must be this
	// run's), Missing runs each case's trials that have no result, and NotPassed every trial of each case that
	// did not pass (as this run's trials.passRate decides it) and the trials without a result of the others: the
	// trials of a case are never picked by their verdicts, which would bias its pass rate upward.
	// +default="Missing"
	// +optional
	Cases *ResumeCases `json:"cases,omitempty"`
}

// Rejudge names the earlier run whose kept records this run judges again.
type Rejudge struct {
	// from is the name of the earlier EvalRun, in this run's namespace, whose runner's records are judged again.
	// It must have finished and kept records (status.records.kept above 0), and must not itself be a resumed run
	// (its carried cases' records are another run's); otherwise this run ends with reason RejudgeSourceInvalid.
	// A source still in progress is waited for. This run takes the source's shard count and trials (count and
	// passRate, unless this run's spec.trials sets passRate): the pod of its shard i and trial t judges the records
	// of the source's shard i and trial t. A case is judged only when its record was kept and its inputs (the digest
	// of its runner view) are the same in this run's eval file; otherwise it is missing, with an error saying
	// which. Each judged result says answeredBy: this run. Immutable while the run is in progress, as the rest
	// of the spec.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +required
	From string `json:"from,omitempty"`
}

// EvalFileSource is a union: exactly one of inline, configMapKeyRef, s3 or bundle.
// +kubebuilder:validation:XValidation:rule="(has(self.inline) ? 1 : 0) + (has(self.configMapKeyRef) ? 1 : 0) + (has(self.s3) ? 1 : 0) + (has(self.bundle) ? 1 : 0) == 1",message="evalFile needs exactly one of inline, configMapKeyRef, s3 or bundle"
type EvalFileSource struct {
	// inline is the eval file's YAML text (agentv-eval-v2), at most 256 KiB. Larger files belong in a ConfigMap.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=262144
	// +optional
	Inline *string `json:"inline,omitempty"`

	// configMapKeyRef names a key of a ConfigMap in the EvalRun's namespace that holds the eval file.
	// +optional
	ConfigMapKeyRef *ConfigMapKeyReference `json:"configMapKeyRef,omitempty"`

	// s3 names an object in an S3-compatible bucket that holds the eval file, for files beyond a ConfigMap's
	// 1 MiB. Its sha256 is verified before the run starts (by the manager, which validates the file, and by each
	// pod, which downloads it into its own volume); the file itself is never copied into etcd.
	// +optional
	S3 *S3Object `json:"s3,omitempty"`

	// bundle is an eval bundle: the eval file together with the files it names (prompt files, input files of
	// `type: file` segments, reference-answer files, code-judge scripts, templates), under one root at the
	// relative paths the eval file uses. The manager reads every file when the run starts and pins the bundle by
	// its digest (status.bundleSHA256); each pod verifies every file against it. The judging containers get the
	// whole bundle read-only; the runner only the input files its cases name (docs/bundles.md).
	// +optional
	Bundle *EvalBundle `json:"bundle,omitempty"`
}

// EvalBundle is an eval bundle: a root (a ConfigMap or a bucket prefix: exactly one) and the eval file's path in it.
// +kubebuilder:validation:XValidation:rule="(has(self.configMap) ? 1 : 0) + (has(self.s3) ? 1 : 0) == 1",message="evalFile.bundle needs exactly one of configMap or s3"
type EvalBundle struct {
	// evalFile is the eval file's path inside the bundle: relative, slash-separated, without "." or ".."
	// segments (for example suites/math/eval.yaml). File references in it resolve from its directory up to the
	// bundle's root, as AgentV's do, never outside the root.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^[^/\\]+(/[^/\\]+)*$`
	// +kubebuilder:validation:XValidation:rule="!self.split('/').exists(s, s == '.' || s == '..')",message="evalFile must not have \".\" or \"..\" segments"
	// +required
	EvalFile string `json:"evalFile,omitempty"`

	// configMap names a ConfigMap in the EvalRun's namespace whose every key is one file of the bundle, its
	// bundle path escaped (a key cannot hold "/"): each byte other than a letter, a digit, "-" or "." (and a "."
	// starting the key) is written "_" and two upper-case hex digits, so prompts/judge.md is the key
	// prompts_2Fjudge.md (`kubectl evalrun bundle DIR` writes it). At most 1 MiB, a ConfigMap's bound.
	// +optional
	ConfigMap *BundleConfigMap `json:"configMap,omitempty"`

	// s3 is a bucket prefix holding the bundle, for bundles beyond 1 MiB: the object <prefix>/<path> is the file
	// <path>. prefix is required. At most 1000 files and 512 MiB; the manager reads every object when the run
	// starts, and each pod's install downloads and verifies them with credentials only it mounts.
	// +kubebuilder:validation:XValidation:rule="has(self.prefix)",message="evalFile.bundle.s3 needs a prefix: the bundle's root"
	// +optional
	S3 *S3Bucket `json:"s3,omitempty"`

	// sha256 is the bundle digest the files must have (`kubectl evalrun bundle` prints it): the hex sha256 of one
	// line "<sha256> <size> <path>\n" per file, in path order. Unset, the bundle is pinned as found when the run
	// starts. A mismatch fails the run with InvalidEvalFile.
	// +kubebuilder:validation:MinLength=64
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[0-9a-f]{64}$`
	// +optional
	SHA256 *string `json:"sha256,omitempty"`
}

// BundleConfigMap names the ConfigMap that holds an eval bundle.
type BundleConfigMap struct {
	// name of the ConfigMap, in the EvalRun's namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name,omitempty"`
}

// S3Object is one object in an S3-compatible bucket, with the sha256 its content must have.
type S3Object struct {
	S3Bucket `json:",inline"`

	// key of the object (after prefix, when one is set).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +required
	Key string `json:"key,omitempty"`

	// sha256 is the hex sha256 the object's content must have; a mismatch fails the run with InvalidEvalFile.
	// +kubebuilder:validation:MinLength=64
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[0-9a-f]{64}$`
	// +required
	SHA256 string `json:"sha256,omitempty"`
}

// ConfigMapKeyReference selects one key of a ConfigMap in the same namespace.
type ConfigMapKeyReference struct {
	// name of the ConfigMap.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name,omitempty"`

	// key in the ConfigMap's data. Defaults to eval.yaml.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	// +default="eval.yaml"
	// +optional
	Key string `json:"key,omitempty"`
}

// Target describes the batch runner container and how it is invoked.
// +kubebuilder:validation:XValidation:rule="self.batching == 'PerCase' || !self.commandTemplate.matches('(^|[^$])\\\\{(EVAL_ID|PROMPT|PROMPT_FILE)\\\\}')",message="{EVAL_ID}, {PROMPT} and {PROMPT_FILE} need batching: PerCase; with Batched the allowed placeholders are {EVAL_FILE}, {OUTPUT_FILE} and {ATTEMPT}"
type Target struct {
	// image is the runner's container image, holding the runner and its interpreters (code_judge scripts run in
	// judging.image, else the manager's judge image: never here by default).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +required
	Image string `json:"image,omitempty"`

	// imagePullPolicy for the runner image. Defaults to the Kubernetes default for the tag.
	// +kubebuilder:validation:Enum=Always;IfNotPresent;Never
	// +optional
	ImagePullPolicy corev1.PullPolicy `json:"imagePullPolicy,omitempty"`

	// commandTemplate is the runner command, run with /bin/sh -c after its placeholders are replaced by
	// shell-quoted values. Allowed placeholders: {EVAL_FILE} and {OUTPUT_FILE} (required), {ATTEMPT} (the
	// trial, 1 to spec.trials.count), and with batching PerCase also {EVAL_ID}, {PROMPT}, {PROMPT_FILE}. Each
	// must stand in a plain, unquoted word (--out={OUTPUT_FILE} is fine): never inside quotes, `...`, $(...),
	// ${...} or $((...)), nor after a backslash, where the shell would not read its quoted value as one literal
	// word. There, use the environment variable the runner also gets ("$EVAL_ID"; the prompt is only in the
	// file "$PROMPT_FILE"). Admission rejects the common misplacements; the rest fail when the command is
	// rendered, before it runs.
	// +kubebuilder:validation:XValidation:rule="self.contains('{OUTPUT_FILE}')",message="commandTemplate must contain {OUTPUT_FILE}: the runner writes its results there"
	// +kubebuilder:validation:XValidation:rule="!self.replace('{EVAL_FILE}', '').replace('{OUTPUT_FILE}', '').replace('{EVAL_ID}', '').replace('{PROMPT_FILE}', '').replace('{PROMPT}', '').replace('{ATTEMPT}', '').matches('(^|[^$])\\\\{[A-Z][A-Z0-9_]*\\\\}')",message="commandTemplate has an unknown placeholder; allowed: {EVAL_FILE}, {OUTPUT_FILE}, {EVAL_ID}, {PROMPT}, {PROMPT_FILE}, {ATTEMPT}"
	// +required
	CommandTemplate CommandTemplate `json:"commandTemplate,omitempty"`

	// batching is Batched (one invocation for all cases, the default) or PerCase (one invocation per case).
	// +default="Batched"
	// +optional
	Batching BatchingMode `json:"batching,omitempty"`

	// workers is how many PerCase invocations run at once. Defaults to 1. Only with batching PerCase.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=64
	// +optional
	Workers *int32 `json:"workers,omitempty"`

	// evalFileView is what the runner reads at {EVAL_FILE} (and $EVAL_FILE): Inputs (the default), a valid
	// agentv-eval-v2 file with, per case, only id, conversation_id, input_messages and a placeholder
	// expected_outcome (`collector view EVAL_FILE` writes the same locally), or Full, the whole pinned (shard's)
	// eval file, for runners that truly need more than the inputs: it hands them the expected answers, rubrics and
	// judge scripts, so the run's verdicts then prove less (status.evalFileView records it, and a Warning event
	// EvalFileViewFull is emitted). Either way the runner never reads run.json or the judging settings.
	// Immutable like the rest of the spec.
	// +default="Inputs"
	// +optional
	EvalFileView EvalFileView `json:"evalFileView,omitempty"`

	// env adds environment variables to the runner container.
	// +kubebuilder:validation:MaxItems=64
	// +listType=map
	// +listMapKey=name
	// +optional
	Env []corev1.EnvVar `json:"env,omitempty"`

	// envFrom adds environment variables from ConfigMaps or Secrets to the runner container.
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	// +optional
	EnvFrom []corev1.EnvFromSource `json:"envFrom,omitempty"`

	// resources are the runner container's compute requests and limits. limits["ephemeral-storage"] also
	// bounds the runner's output volume (its emptyDir sizeLimit; 2Gi when unset): a runner that writes past it
	// is evicted by the kubelet and the run fails with StorageLimitExceeded.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`

	// workingDir is the runner's working directory (also the default cwd of code_judge scripts). Defaults to the
	// image's.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	WorkingDir string `json:"workingDir,omitempty"`

	// timeoutSeconds bounds each runner invocation; when it passes, the invocation's whole process group is sent
	// SIGTERM, then SIGKILL, and the run reports a timeout. Unset means no per-invocation timeout.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=604800
	// +optional
	TimeoutSeconds *int32 `json:"timeoutSeconds,omitempty"`

	// maxCostUSD is, when set, the most the runner may spend by its own account, in US dollars, as a decimal
	// string like status.cost.runner.costUSD ("25", "0.5"; at most nine fractional digits). The launcher adds up
	// the cost_usd of the records the runner has written so far, each case counted once at the most it reported
	// for it: with batching PerCase after each invocation, with Batched as the output file grows (read about once
	// a second). Once the sum passes maxCostUSD the runner is stopped (no further invocation starts; running ones
	// get SIGTERM, then SIGKILL), the records written by then are collected and judged as usual, and the run
	// fails with CostBudgetExceeded, naming the figure and the budget (status.collection.launcher.costBudget).
	// The figures are the runner's claims: a runner that reports no cost is never stopped, and verdicts never
	// come from this reading. A sharded run gives each shard ceil(maxCostUSD / shards) (to the nanodollar), so
	// the run may spend up to maxCostUSD plus what each shard's last records add. Unset means no budget.
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^[0-9]{1,12}(\.[0-9]{1,9})?$`
	// +optional
	MaxCostUSD *string `json:"maxCostUSD,omitempty"`

	// healthcheck runs before the runner; if it fails the run ends with its output excerpt.
	// +optional
	Healthcheck *Healthcheck `json:"healthcheck,omitempty"`

	// egress are further egress rules of the run's pods (NetworkPolicy egress rules: peers and ports), for a
	// runner that reaches services of its own (an agent's model endpoint). The run's NetworkPolicy otherwise
	// allows only what the operator's side needs: DNS, the API server, the run's buckets and LLM judges'
	// endpoint; no ingress; never another run's pod. A NetworkPolicy is pod-wide: the judges' code_judge scripts
	// are kept off the network by Landlock, whatever these allow (docs/judging.md). Unset: none.
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	// +optional
	Egress []networkingv1.NetworkPolicyEgressRule `json:"egress,omitempty"`

	// securityContext overrides the runner container's security context. It must stay within the Pod Security
	// "restricted" profile: the manager always enforces runAsNonRoot, no privilege escalation, all capabilities
	// dropped and a RuntimeDefault or Localhost seccomp profile.
	// +kubebuilder:validation:XValidation:rule="!has(self.privileged) || !self.privileged",message="the runner may not be privileged"
	// +kubebuilder:validation:XValidation:rule="!has(self.allowPrivilegeEscalation) || !self.allowPrivilegeEscalation",message="the runner may not allow privilege escalation"
	// +kubebuilder:validation:XValidation:rule="!has(self.runAsNonRoot) || self.runAsNonRoot",message="the runner must run as non-root"
	// +kubebuilder:validation:XValidation:rule="!has(self.runAsUser) || self.runAsUser != 0",message="the runner may not run as user 0"
	// +kubebuilder:validation:XValidation:rule="!has(self.runAsUser) || (self.runAsUser != 65530 && self.runAsUser != 65531)",message="uids 65530 and 65531 are reserved for the operator's collector and judge containers; the runner must run as another user"
	// +kubebuilder:validation:XValidation:rule="!has(self.capabilities) || !has(self.capabilities.add) || size(self.capabilities.add) == 0 || (size(self.capabilities.add) == 1 && self.capabilities.add[0] == 'NET_BIND_SERVICE')",message="the runner may add no capability other than NET_BIND_SERVICE"
	// +kubebuilder:validation:XValidation:rule="!has(self.seccompProfile) || self.seccompProfile.type in ['RuntimeDefault', 'Localhost']",message="the runner's seccomp profile must be RuntimeDefault or Localhost"
	// +kubebuilder:validation:XValidation:rule="!has(self.seLinuxOptions) || ((!has(self.seLinuxOptions.type) || self.seLinuxOptions.type in ['', 'container_t', 'container_init_t', 'container_kvm_t', 'container_engine_t']) && (!has(self.seLinuxOptions.user) || self.seLinuxOptions.user == '') && (!has(self.seLinuxOptions.role) || self.seLinuxOptions.role == ''))",message="the runner's seLinuxOptions may only set type container_t, container_init_t, container_kvm_t or container_engine_t (and level), as the Pod Security restricted profile requires"
	// +kubebuilder:validation:XValidation:rule="!has(self.appArmorProfile) || self.appArmorProfile.type != 'Unconfined'",message="the runner's AppArmor profile may not be Unconfined"
	// +optional
	SecurityContext *corev1.SecurityContext `json:"securityContext,omitempty"`
}

// Healthcheck is a command run once before the runner.
type Healthcheck struct {
	// commandTemplate is run with /bin/sh -c; allowed placeholders: {EVAL_FILE}, {OUTPUT_FILE}, each in a plain,
	// unquoted word as in target.commandTemplate (their values are already shell-quoted).
	// +kubebuilder:validation:XValidation:rule="!self.replace('{EVAL_FILE}', '').replace('{OUTPUT_FILE}', '').matches('(^|[^$])\\\\{[A-Z][A-Z0-9_]*\\\\}')",message="healthcheck.commandTemplate has an unknown placeholder; allowed: {EVAL_FILE}, {OUTPUT_FILE}"
	// +required
	CommandTemplate CommandTemplate `json:"commandTemplate,omitempty"`

	// timeoutSeconds bounds the healthcheck. Defaults to 60.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=3600
	// +default=60
	// +optional
	TimeoutSeconds *int32 `json:"timeoutSeconds,omitempty"`
}

// Judging configures how cases without their own evaluators are judged.
type Judging struct {
	// evaluators are used for every case that declares none, ahead of the eval file's file-level
	// execution.evaluators. Each entry has the eval file's evaluator shape (name, type and type-specific keys);
	// the manager validates them with the eval file and fails the run with InvalidEvalFile if one is invalid.
	// +kubebuilder:validation:MaxItems=32
	// +listType=atomic
	// +optional
	Evaluators []runtime.RawExtension `json:"evaluators,omitempty"`

	// passThreshold is the score at or above which an evaluator and a case pass, a decimal in [0, 1].
	// Defaults to "0.8".
	// +kubebuilder:validation:MaxLength=8
	// +kubebuilder:validation:Pattern=`^(0(\.[0-9]{1,6})?|1(\.0{1,6})?)$`
	// +default="0.8"
	// +optional
	PassThreshold string `json:"passThreshold,omitempty"`

	// codeJudgeTimeoutSeconds bounds each code_judge script. Defaults to 60.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=3600
	// +default=60
	// +optional
	CodeJudgeTimeoutSeconds *int32 `json:"codeJudgeTimeoutSeconds,omitempty"`

	// codeJudgeWorkers is how many cases' code_judge scripts run at once. Defaults to 2. Each worker is its own
	// judge container ("judge", "judge-1", ...), which judges its share of the cases one case at a time and kills
	// every process a case's scripts left behind before the next, so no script can reach another case's judge.
	// The pod gets min(codeJudgeWorkers, 8, the code-judged cases) judge containers, each with judging.resources:
	// the pod requests them once per judge container.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=64
	// +default=2
	// +optional
	CodeJudgeWorkers *int32 `json:"codeJudgeWorkers,omitempty"`

	// image runs the code_judge scripts, in the judge containers. Unset: the manager's --judge-image (the
	// project's judge image: sh, coreutils, python3, node, bun and a `uv run` shim), never the runner's image,
	// which the evaluated team controls. It may name any image, target.image included; choosing target.image is
	// recorded in status.judgeImage (source Target) and raises a Warning event JudgeImageIsTarget. The judge
	// containers exist only when some case has a code_judge; they run under their own uid, never see the runner's
	// processes or output directory, and judge the collector's copy of the runner's final output.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Image string `json:"image,omitempty"`

	// resources of each judge container (see codeJudgeWorkers). Defaults to small requests (10m CPU, 64Mi memory)
	// and no limits.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`

	// llm is the model endpoint that judges llm_judge and rubric evaluators (and composites with an llm_judge
	// aggregator), an OpenAI-compatible chat-completions API. Setting it (even to {}, which takes the manager's
	// cluster-wide defaults) also judges every case without evaluators with llm_judge, as AgentV does. Unset
	// leaves those evaluators and cases Skipped. The collector calls the model; the key is mounted there
	// only, never into the runner or the judge container.
	// +optional
	LLM *LLMJudging `json:"llm,omitempty"`

	// inputFiles says how the judges' prompts show a case's input files (its input messages' file segments).
	// Reference shows each as a reference to its file (<file: path="...">), as AgentV shows them for a CLI target,
	// which every runner is: the path as written in an agentv-eval-v2 file (AgentV v2.0.1), the file's absolute
	// path in the eval bundle in an AgentV 4.42 suite. Embed shows the file's text (<file path="...">TEXT</file>),
	// as AgentV does for a language-model target. Unset: the eval file format's own, what runs judged before the
	// field: Embed for agentv-eval-v2, Reference for AgentV 4.42 suites. Part of the judging a resume compares with
	// its source's.
	// +optional
	InputFiles *InputFiles `json:"inputFiles,omitempty"`
}

// InputFiles is how the judges' prompts show a case's input files.
// +kubebuilder:validation:Enum=Reference;Embed
type InputFiles string

const (
	// InputFilesReference shows each input file as a reference to it, as AgentV does for a CLI target.
	InputFilesReference InputFiles = "Reference"
	// InputFilesEmbed shows each input file's text, as AgentV does for a language-model target.
	InputFilesEmbed InputFiles = "Embed"
)

// AnswerDelimiters is how the runner's answer is set apart in the prompts of LLM judges.
// +kubebuilder:validation:Enum=AgentV;Nonce
type AnswerDelimiters string

const (
	// AnswerDelimitersAgentV sends the answer verbatim after AgentV's section header, as AgentV does.
	AnswerDelimitersAgentV AnswerDelimiters = "AgentV"
	// AnswerDelimitersNonce wraps the answer between markers derived from the run's UID and the case id.
	AnswerDelimitersNonce AnswerDelimiters = "Nonce"
)

// LLMJudging is an OpenAI-compatible chat-completions endpoint for LLM judges.
type LLMJudging struct {
	// baseURL is the API's base URL, the part before /chat/completions (for example https://api.openai.com/v1).
	// Defaults to the manager's --llm-base-url; a run whose endpoint resolves to nothing fails with
	// InvalidEvalFile.
	// +kubebuilder:validation:MinLength=8
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:Pattern=`^https?://[^\s]+$`
	// +optional
	BaseURL *string `json:"baseURL,omitempty"`

	// model is the model name sent with every request. An evaluator's own model key in the eval file is ignored
	// (the endpoint decides what runs). Defaults to the manager's --llm-model.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +optional
	Model *string `json:"model,omitempty"`

	// apiKeySecretRef selects the key of a Secret in the run's namespace that holds the API key, sent as a bearer
	// token. It is mounted into the collector only; it never appears in status, events, logs or errors.
	// Unset sends no Authorization header (an endpoint without authentication).
	// +optional
	APIKeySecretRef *SecretKeyRef `json:"apiKeySecretRef,omitempty"`

	// timeoutSeconds bounds each request (one attempt); a request that times out is retried like a 5xx.
	// Defaults to 60.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=600
	// +default=60
	// +optional
	TimeoutSeconds *int32 `json:"timeoutSeconds,omitempty"`

	// maxConcurrentRequests bounds the requests in flight at once across all cases of the run: each pod that runs
	// at once (min(shards, sharding.parallelism)) gets ceil(maxConcurrentRequests / pods), at least 1, so a run
	// with more pods at once than this sends up to one per pod. Defaults to 4.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=64
	// +default=4
	// +optional
	MaxConcurrentRequests *int32 `json:"maxConcurrentRequests,omitempty"`

	// requestsPerMinute limits, when set, how many requests the run starts per minute (retries included): each
	// pod that runs at once (min(shards, sharding.parallelism)) starts at most ceil(requestsPerMinute / pods), at
	// least 1. Unset means no limit beyond maxConcurrentRequests.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000
	// +optional
	RequestsPerMinute *int32 `json:"requestsPerMinute,omitempty"`

	// answerDelimiters says how the runner's answer (and its output messages) is set apart in the prompts of LLM
	// judges. AgentV (the default, for parity) sends it verbatim after AgentV's "[[ ## candidate_answer ## ]]"
	// header, as AgentV does: an answer can then append sections of its own (a forged expected_outcome,
	// reference_answer or rubrics). Nonce wraps it between markers the answer cannot predict (an HMAC of the case
	// id keyed by the run's UID, which the runner's containers are never given), the same for every judging of the
	// case in this run, and tells the model that everything between them is the answer; an answer that contains
	// its marker is an Error. Part of the judging a resume compares with its source's.
	// +default="AgentV"
	// +optional
	AnswerDelimiters *AnswerDelimiters `json:"answerDelimiters,omitempty"`

	// maxRequests is, when set, the most requests the run sends to the model, retries included. Once they are
	// sent, judging stops: every LLM evaluator not yet judged is Skipped with the reason, its case is an Error
	// (counted in status.summary.budgetUnjudged, never passed), and the run's BudgetExceeded condition is True (JudgeRequestBudgetSpent). A sharded run gives each shard
	// ceil(maxRequests / shards), so the run sends at most maxRequests + shards - 1. Unset means no budget.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000000000
	// +optional
	MaxRequests *int64 `json:"maxRequests,omitempty"`

	// maxTokens is, when set, the most tokens (the replies' usage.total_tokens, or prompt plus completion tokens
	// when the endpoint gives no total) the run's judges spend. Once the replies reach it no request is sent:
	// every LLM evaluator not yet judged is Skipped with the reason, its case is an Error (counted in
	// status.summary.budgetUnjudged), and BudgetExceeded is True
	// (JudgeTokenBudgetSpent). The requests in flight when it is reached still count, so the run may pass it by
	// what maxConcurrentRequests replies spend. A sharded run gives each shard ceil(maxTokens / shards). Unset
	// means no budget.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000000000000
	// +optional
	MaxTokens *int64 `json:"maxTokens,omitempty"`
}

// SecretKeyRef selects one key of a Secret in the run's namespace.
type SecretKeyRef struct {
	// name of the Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +required
	Name string `json:"name,omitempty"`

	// key in the Secret's data.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	// +required
	Key string `json:"key,omitempty"`
}

// SuccessPolicy decides the Passed condition once results are in.
type SuccessPolicy struct {
	// minPassRate is the least fraction of all requested cases (missing ones count as not passing) whose verdict
	// must be pass, a decimal in [0, 1]. Defaults to "1".
	// +kubebuilder:validation:MaxLength=8
	// +kubebuilder:validation:Pattern=`^(0(\.[0-9]{1,6})?|1(\.0{1,6})?)$`
	// +default="1"
	// +optional
	MinPassRate string `json:"minPassRate,omitempty"`

	// minMeanScore is a second bar, checked only when set: the mean case score must be at least this decimal in
	// [0, 1]. Unset means no bar on the mean score.
	// +kubebuilder:validation:MaxLength=8
	// +kubebuilder:validation:Pattern=`^(0(\.[0-9]{1,6})?|1(\.0{1,6})?)$`
	// +optional
	MinMeanScore string `json:"minMeanScore,omitempty"`

	// regression says what a Regressed run means for Passed: Ignore (the default) leaves Passed to the bars
	// above; Fail makes Passed False when the run regressed against spec.baseline, or when it could not be
	// compared with it. Passed stays Unknown while the comparison waits for the baseline to finish.
	// +default="Ignore"
	// +optional
	Regression *RegressionPolicy `json:"regression,omitempty"`
}

// RegressionPolicy is what regressing against the baseline means for the Passed condition.
// +kubebuilder:validation:Enum=Ignore;Fail
type RegressionPolicy string

const (
	// RegressionIgnore leaves Passed to the pass rate and mean score bars.
	RegressionIgnore RegressionPolicy = "Ignore"
	// RegressionFail makes a regressed (or not comparable) run not pass.
	RegressionFail RegressionPolicy = "Fail"
)

// PodOverrides are scheduling and metadata settings for the run's pod.
type PodOverrides struct {
	// labels are added to the pod, over the labels it inherits from the EvalRun's metadata. Keys the operator or
	// the Job controller own (evals.evalrun.io/*, batch.kubernetes.io/*, job-name, controller-uid) are rejected;
	// use spec.queueName for Kueue.
	// +kubebuilder:validation:MaxProperties=32
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.startsWith('evals.evalrun.io/') && !k.startsWith('batch.kubernetes.io/') && !(k in ['job-name', 'controller-uid', 'kueue.x-k8s.io/queue-name']))",message="podTemplate.labels may not set labels the operator or the Job controller own (evals.evalrun.io/*, batch.kubernetes.io/*, job-name, controller-uid) nor kueue.x-k8s.io/queue-name (use spec.queueName)"
	// +optional
	Labels map[string]string `json:"labels,omitempty"`

	// annotations are added to the pod, over the annotations it inherits from the EvalRun's metadata. The legacy
	// AppArmor annotations (container.apparmor.security.beta.kubernetes.io/*) may only name runtime/default or
	// localhost/<profile>, as the Pod Security "restricted" profile requires.
	// +kubebuilder:validation:MaxProperties=32
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.startsWith('container.apparmor.security.beta.kubernetes.io/') || self[k] == 'runtime/default' || self[k].startsWith('localhost/'))",message="AppArmor annotations in podTemplate.annotations must be runtime/default or localhost/<profile> (Pod Security restricted); the pod would be rejected"
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`

	// nodeSelector constrains the pod to nodes with these labels.
	// +kubebuilder:validation:MaxProperties=32
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// tolerations let the pod schedule onto tainted nodes.
	// +kubebuilder:validation:MaxItems=32
	// +listType=atomic
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// affinity constrains where the pod schedules.
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`

	// imagePullSecrets are used to pull the runner image.
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	// +optional
	ImagePullSecrets []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty"`

	// priorityClassName is the pod's priority class.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`
}
