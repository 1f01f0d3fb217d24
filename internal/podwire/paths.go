package podwire

import (
	"path"
	"strconv"
	"strings"
)

// Container and volume names in the run's pod.
const (
	ContainerInstall   = "install"
	ContainerCollector = "collector"
	ContainerRunner    = "runner"
	ContainerJudge     = "judge"

	// VolumeBin holds the launcher binary (the runner container's init), the runner-end FIFO and the judge-end
	// FIFOs; written by install, read-only everywhere else. It holds no judging code.
	VolumeBin = "bin"
	// VolumeJudgeBin holds the collector binary that judge containers in the runner's (or judging.image's) image
	// run as their init (`collector judge`); written by install, mounted read-only by those judge containers
	// only, and only in a run with code judges. The runner never mounts it.
	VolumeJudgeBin = "judge-bin"
	// VolumeOut is the runner's output directory: the only thing of the runner's the trusted side reads.
	VolumeOut = "out"
	// VolumeSnapshot holds the collector's copy of the runner's final output; read-only for the judge.
	VolumeSnapshot = "snapshot"
	// VolumeVerdicts is the first judge container's own writable directory, where its code_judge scripts may
	// write; judge container i > 0 has its own, JudgeVolume(i). No other container mounts it and nothing in it is
	// trusted: verdicts reach the collector only through the judge-end FIFO (Pod.JudgeEnd).
	VolumeVerdicts = "verdicts"
	VolumeEval     = "eval"
	// VolumeShard holds a sharded run's shard eval file (and a bucket eval file's download); written by install,
	// read-only for the collector and the judge, never mounted by the runner.
	VolumeShard = "shard"
	// VolumeView holds what the runner reads of the run: its eval file ({EVAL_FILE}: the runner view, or the whole
	// file with evalFileView Full) and its RunnerConfig; written by install, mounted read-only by the runner only.
	VolumeView = "view"
	// VolumeBucketCredentials is the Secret with the bucket's credentials (spec.storage.s3); the collector's only.
	VolumeBucketCredentials = "bucket-credentials"
	// VolumeEvalCredentials is the Secret with the eval file's bucket credentials (spec.evalFile.s3); install's
	// only.
	VolumeEvalCredentials = "eval-credentials"
	// VolumeLLMCredentials is the Secret key with the model endpoint's API key (spec.judging.llm.apiKeySecretRef);
	// the collector's only.
	VolumeLLMCredentials = "llm-credentials"
	VolumeToken          = "collector-token"
	// VolumeBundle holds a bundle run's whole eval bundle (spec.evalFile.bundle) at its relative paths, every file
	// verified against the pinned manifest; written by install, mounted read-only by the collector and the judge
	// containers, never by the runner (its input files go to the view volume).
	VolumeBundle = "bundle"
	// VolumeBundleSource is the pinned copy of a ConfigMap bundle (the <run>-evalrun-bundle ConfigMap); install's
	// only.
	VolumeBundleSource = "bundle-source"
)

// MaxJudgeContainers bounds the judge containers of a pod (spec.judging.codeJudgeWorkers above it runs this
// many): each judges its share of the cases one at a time, in its own PID namespace.
const MaxJudgeContainers = 8

// JudgeContainer is the name of judge container i: "judge", then "judge-1", "judge-2", ...
func JudgeContainer(i int) string {
	if i == 0 {
		return ContainerJudge
	}
	return ContainerJudge + "-" + strconv.Itoa(i)
}

// JudgeVolume is the name of judge container i's own writable volume: "verdicts", then "verdicts-1", ...
func JudgeVolume(i int) string {
	if i == 0 {
		return VolumeVerdicts
	}
	return VolumeVerdicts + "-" + strconv.Itoa(i)
}

// IsJudgeContainer reports whether name is one of the judge containers.
func IsJudgeContainer(name string) bool {
	if name == ContainerJudge {
		return true
	}
	n, ok := strings.CutPrefix(name, ContainerJudge+"-")
	if !ok {
		return false
	}
	i, err := strconv.Atoi(n)
	return err == nil && i > 0 && i < MaxJudgeContainers && strconv.Itoa(i) == n
}

// Mount points.
const (
	BinDir      = "/evalrun/bin"
	JudgeBinDir = "/evalrun/judge-bin"
	OutDir      = "/evalrun/out"
	SnapshotDir = "/evalrun/snapshot"
	VerdictsDir = "/evalrun/verdicts"
	EvalDir     = "/evalrun-eval"
	ShardDir    = "/evalrun/shard"
	ViewDir     = "/evalrun/view"
	// BundleDir is where install materializes a bundle run's whole eval bundle (VolumeBundle).
	BundleDir = "/evalrun/bundle"
	// BundleSourceDir is where install reads the pinned copy of a ConfigMap bundle (VolumeBundleSource).
	BundleSourceDir = "/evalrun/bundle-source"
	// RunnerBundleDir is the runner's bundle in the view volume: its eval file and the input files its cases
	// name, at their bundle paths.
	RunnerBundleDir = ViewDir + "/bundle"
	// BucketCredentialsDir is where the collector reads the bucket's credentials (keys accessKeyID and
	// secretAccessKey).
	BucketCredentialsDir = "/evalrun/bucket-credentials"
	// EvalCredentialsDir is where install reads the eval file's bucket credentials.
	EvalCredentialsDir = "/evalrun/eval-credentials"
	// LLMCredentialsDir is where the collector reads the model endpoint's API key (the file LLMAPIKeyFile).
	LLMCredentialsDir = "/evalrun/llm-credentials"
	// LLMAPIKeyFile is the API key's file name in LLMCredentialsDir.
	LLMAPIKeyFile = "api-key"

	// CollectorImageBinary is where the collector binary lives inside the collector image.
	CollectorImageBinary = "/collector"
	// LauncherImageBinary is where the launcher binary lives inside the collector image; install copies it into
	// the bin volume.
	LauncherImageBinary = "/launcher"

	// EvalFileKey and RunConfigKey are the keys of the pinned eval ConfigMap.
	EvalFileKey  = "eval.yaml"
	RunConfigKey = "run.json"
	// RunnerConfigName is the runner's RunnerConfig in the view volume (ViewDir).
	RunnerConfigName = "launch.json"
	// IDsKey is the eval ConfigMap's binaryData key of the case ids, when run.json cannot hold them.
	IDsKey = "ids.json.gz"
	// BundleManifestKey is the eval ConfigMap's key of a bundle run's pinned manifest (bundle.Manifest as JSON).
	BundleManifestKey = "bundle.json"

	// ServiceAccountTokenDir is where the collector's projected token, CA and namespace are mounted (the
	// in-cluster client configuration reads them there).
	ServiceAccountTokenDir = "/var/run/secrets/kubernetes.io/serviceaccount"
)

// Users of the operator's own containers. The runner runs as the pod's user (PodUser unless the EvalRun's
// target.securityContext.runAsUser says otherwise; admission keeps it off the trusted uids), so the trusted
// containers never share a uid with it.
const (
	// PodUser is the pod's uid, gid and fsGroup, and so the runner's default uid: the distroless "nonroot" user.
	PodUser int64 = 65532
	// CollectorUser runs install and the collector.
	CollectorUser int64 = 65531
	// JudgeUser runs the code_judge scripts.
	JudgeUser int64 = 65530
)

// Pod is the set of directories of one run's pod: the mount points in the pod, any directories in tests.
type Pod struct {
	Bin, JudgeBin, Out, Snapshot, Verdicts string
}

// DefaultPod is the layout in the run's pod.
func DefaultPod() Pod {
	return Pod{Bin: BinDir, JudgeBin: JudgeBinDir, Out: OutDir, Snapshot: SnapshotDir, Verdicts: VerdictsDir}
}

// PodIn roots every directory under root (tests).
func PodIn(root string) Pod {
	return Pod{
		Bin: path.Join(root, "bin"), JudgeBin: path.Join(root, "judge-bin"), Out: path.Join(root, "out"),
		Snapshot: path.Join(root, "snapshot"), Verdicts: path.Join(root, "verdicts"),
	}
}

// Launcher is the launcher binary, copied into the bin volume by `collector install`: the runner container's init.
func (p Pod) Launcher() string { return path.Join(p.Bin, "launcher") }

// JudgeRunner is the collector binary, copied into the judge-bin volume by `collector install` in a run with code
// judges: judge containers outside the collector image run it as `collector judge`.
func (p Pod) JudgeRunner() string { return path.Join(p.JudgeBin, "collector") }

// RunnerEnd is the FIFO through which the collector learns that the runner container's processes are gone: the
// launcher (the runner container's init process) holds its write end open until every process of the container
// has been killed and reaped, and the collector reads it until end-of-file. It lives in the bin volume, which
// the runner mounts read-only, so the runner can neither replace nor remove it.
func (p Pod) RunnerEnd() string { return path.Join(p.Bin, "runner-end") }

// Output is the runner's output tree.
func (p Pod) Output() Output { return Output{Root: p.Out} }

// SnapshotOutput is the collector's copy of the runner's output tree, in the snapshot volume.
func (p Pod) SnapshotOutput() Output { return Output{Root: path.Join(p.Snapshot, "out")} }

// SnapshotReady is written by the collector once the snapshot is complete (or abandoned); the judge waits for it.
func (p Pod) SnapshotReady() string { return path.Join(p.Snapshot, "ready") }

// RunnerStarted and RunnerEnded are the collector's own notes (in its snapshot volume) that the launcher opened
// the runner-end FIFO and that it reached end-of-file: a restarted collector resumes from them.
func (p Pod) RunnerStarted() string { return path.Join(p.Snapshot, "runner-started") }

// RunnerEnded: see RunnerStarted.
func (p Pod) RunnerEnded() string { return path.Join(p.Snapshot, "runner-ended") }

// LauncherReport is the collector's copy of the launcher's report as it arrived through the runner-end FIFO (the
// payload of its last frame), kept so that a restarted collector still has it.
func (p Pod) LauncherReport() string { return path.Join(p.Snapshot, "launcher-report") }

// CollectionTime is the collector's note of when it first collected (RFC 3339): a restarted collector reuses it,
// so that it writes the same objects again rather than a new collectedAt.
func (p Pod) CollectionTime() string { return path.Join(p.Snapshot, "collection-time") }

// Collected is written by the collector once it has persisted the results (or given up), just before it ends;
// a collector restarted after it ends at once.
func (p Pod) Collected() string { return path.Join(p.Snapshot, "collected") }

// JudgeEnd is the FIFO through which judge container i's judge runner, and only it, reports verdicts to the
// collector (judgeend.go). install makes it in the bin volume, owned by the collector's user and
// writable by others, so a code_judge script can write into it (a frame it cannot authenticate) or hold it open
// (a delay until it is killed) but never read it.
func (p Pod) JudgeEnd(i int) string { return path.Join(p.Bin, "judge-end-"+strconv.Itoa(i)) }

// JudgeVerdicts is the collector's own note (mode 0600, in its snapshot volume) of the code judges' verdicts
// it accepted: a collector restarted after judging resumes from it.
func (p Pod) JudgeVerdicts() string { return path.Join(p.Snapshot, "judge-verdicts.json") }

// Output is the layout of an output tree: the runner's output volume, or the collector's snapshot of it.
type Output struct{ Root string }

// Names of the files in an output tree, relative to its root.
const (
	BatchOutputName   = "results.jsonl"
	CaseOutputDirName = "cases"
	PromptDirName     = "prompts"
)

// CaseOutputName is the relative name of one case's PerCase output. Case ids are validated as safe file names.
func CaseOutputName(id string) string { return path.Join(CaseOutputDirName, id+".out") }

// BatchOutput is {OUTPUT_FILE} in Batched mode.
func (o Output) BatchOutput() string { return path.Join(o.Root, BatchOutputName) }

// CaseOutputDir holds one output file per case in PerCase mode.
func (o Output) CaseOutputDir() string { return path.Join(o.Root, CaseOutputDirName) }

// CaseOutput is {OUTPUT_FILE} for one case in PerCase mode.
func (o Output) CaseOutput(id string) string { return path.Join(o.Root, CaseOutputName(id)) }

// CasePromptFile is {PROMPT_FILE} for one case in PerCase mode.
func (o Output) CasePromptFile(id string) string { return path.Join(o.Root, PromptDirName, id+".txt") }

// Environment variables set in the runner container.
const (
	EnvEvalFile   = "EVAL_FILE"
	EnvOutputFile = "OUTPUT_FILE"
)

// EnvShardIndex is the Job completion index the Job controller sets in every container of an Indexed Job's pod:
// the pod's shard.
const EnvShardIndex = "JOB_COMPLETION_INDEX"

// Environment variables set in the collector container (downward API and manager-provided values).
const (
	EnvRunName      = "EVALRUN_NAME"
	EnvRunNamespace = "EVALRUN_NAMESPACE"
	EnvRunUID       = "EVALRUN_UID"
	EnvPodName      = "POD_NAME"
)

// Labels and annotations.
const (
	LabelRun        = "evals.evalrun.io/run"
	LabelComponent  = "evals.evalrun.io/component"
	LabelKueueQueue = "kueue.x-k8s.io/queue-name"
	// LabelShard, on a shard ConfigMap, is its shard index.
	LabelShard = "evals.evalrun.io/shard"
	// AnnotationJobCompletionIndex is the Job controller's annotation of an Indexed Job's pod: its shard.
	AnnotationJobCompletionIndex = "batch.kubernetes.io/job-completion-index"
	// AnnotationCases, on the Job, is the number of cases the run runs (split over its shards).
	AnnotationCases = "evals.evalrun.io/cases"
	// AnnotationTrials, on the Job of a run with trials, is the number of trials of every case (RunConfig.Trials):
	// its completions are shards × trials. A re-judge's spec does not say it (it takes its source's).
	AnnotationTrials = "evals.evalrun.io/trials"
	// AnnotationCollectionDeadline, on the Job, is how many seconds after the runner's end the collector may take
	// to record results (code judges plus API writes), from run.json; the manager waits that long.
	AnnotationCollectionDeadline = "evals.evalrun.io/collection-deadline-seconds"
	// AnnotationInfrastructureRetries, on the Job, counts the pods the manager replaced because their containers
	// never ran (an infrastructure failure).
	AnnotationInfrastructureRetries = "evals.evalrun.io/infrastructure-retries"
	// AnnotationInfrastructureRetriedPod, on the Job, names the pod the last counted retry replaces.
	AnnotationInfrastructureRetriedPod = "evals.evalrun.io/infrastructure-retried-pod"
	// AnnotationInfrastructureRetriesByIndex, on the Job, counts those pods per completion index (the one pod of
	// a run is index 0), each with the last pod replaced, so a pod is counted once however often it is seen
	// before it is gone: "<index>=<count>:<pod>,...", in index order. The cap is per index.
	AnnotationInfrastructureRetriesByIndex = "evals.evalrun.io/infrastructure-retries-by-index"
	// AnnotationStoppedShards, on the Job of a sharded run, names the shards the manager stopped and why:
	// "<index>=<reason>,...", in index order. A stopped shard stays failed with that reason once its pods are
	// gone.
	AnnotationStoppedShards = "evals.evalrun.io/stopped-shards"
)

// PodConditionShardStopped is the pod condition the manager sets (status True, the shard's reason and message) on
// a pod of a shard it decided failed before evicting the pod; the Job's pod failure policy fails that index on it
// (FailIndex) instead of replacing the pod, so the other shards go on.
const PodConditionShardStopped = "evals.evalrun.io/ShardStopped"

// Result ConfigMaps.
const (
	// ResultsKey is the binaryData key of each result ConfigMap.
	ResultsKey = "results.jsonl.gz"
	// ResultsFormat names the chunk format.
	ResultsFormat = "jsonl+gzip"
	// MaxResultConfigMapBytes bounds each result ConfigMap's payload.
	MaxResultConfigMapBytes = 900 * 1024
	// MaxResultConfigMaps bounds how many result ConfigMaps one run has.
	MaxResultConfigMaps = 64
	// CasesPerResultConfigMap is the planning figure the manager uses to size the set.
	CasesPerResultConfigMap = 2000
	// ShardSectionKey is the data key of a shard ConfigMap: the shard's collection, a status results section
	// (JSON) within ShardSectionBudgetBytes.
	ShardSectionKey = "shard.json"
	// ShardSectionBudgetBytes bounds a shard's section: the manager reads the shard's cases from its result
	// ConfigMaps, so the section needs little more than the summary, the collection facts and the lists.
	ShardSectionBudgetBytes = 32 << 10
)

// Record ConfigMaps: each case's record as the runner wrote it, kept for judging again (docs/rejudge.md).
const (
	// RecordsKey is the binaryData key of each record ConfigMap (gzip'd JSONL, internal/records).
	RecordsKey = "records.jsonl.gz"
	// MaxRecordConfigMapBytes bounds each record ConfigMap's payload, as a result ConfigMap's.
	MaxRecordConfigMapBytes = MaxResultConfigMapBytes
	// MaxRecordObjectBytes bounds a shard's records object in a bucket (compressed): what the manager and the
	// plugin read of one object (stored.MaxObjectBytes).
	MaxRecordObjectBytes = 256 << 20
)
