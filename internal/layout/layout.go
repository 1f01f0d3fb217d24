// Package layout is the contract between the manager, which builds the run's pod, and the collector binary,
// which runs inside it: paths in the shared work volume, environment variables, container names and the run
// configuration file. It is pure Go so both sides and their tests share one definition.
package layout

import "path"

// Container and volume names in the run's pod.
const (
	ContainerInstall   = "install"
	ContainerCollector = "collector"
	ContainerRunner    = "runner"

	VolumeWork  = "work"
	VolumeEval  = "eval"
	VolumeToken = "collector-token"
)

// Paths. The work volume (an emptyDir) is mounted at WorkDir in every container; the pinned eval ConfigMap is
// mounted read-only at EvalDir in the collector and the runner.
const (
	WorkDir = "/evalrun"
	EvalDir = "/evalrun-eval"

	// CollectorImageBinary is where the collector binary lives inside the collector image.
	CollectorImageBinary = "/collector"

	// EvalFileKey and RunConfigKey are the keys of the pinned eval ConfigMap.
	EvalFileKey  = "eval.yaml"
	RunConfigKey = "run.json"

	// ServiceAccountTokenDir is where the collector's projected token, CA and namespace are mounted (the
	// in-cluster client configuration reads them there).
	ServiceAccountTokenDir = "/var/run/secrets/kubernetes.io/serviceaccount"
)

// Paths under a work directory (WorkDir in the pod, any directory in tests).
type Paths struct{ Root string }

// In returns the layout rooted at root.
func In(root string) Paths { return Paths{Root: root} }

// Binary is the collector binary copied by `collector install`.
func (p Paths) Binary() string { return path.Join(p.Root, "bin", "collector") }

// OutputDir holds the runner's outputs.
func (p Paths) OutputDir() string { return path.Join(p.Root, "out") }

// BatchOutput is {OUTPUT_FILE} in Batched mode.
func (p Paths) BatchOutput() string { return path.Join(p.Root, "out", "results.jsonl") }

// CaseOutputDir holds one output file per case in PerCase mode.
func (p Paths) CaseOutputDir() string { return path.Join(p.Root, "out", "cases") }

// CaseOutput is {OUTPUT_FILE} for one case in PerCase mode. Case ids are validated as safe file names.
func (p Paths) CaseOutput(id string) string { return path.Join(p.Root, "out", "cases", id+".out") }

// CasePromptFile is {PROMPT_FILE} for one case in PerCase mode.
func (p Paths) CasePromptFile(id string) string {
	return path.Join(p.Root, "out", "prompts", id+".txt")
}

// StateDir holds the handshake files.
func (p Paths) StateDir() string { return path.Join(p.Root, "state") }

// RunnerRecord is written by launch: exit code or signal, duration, stdout/stderr tails, timeout flag.
func (p Paths) RunnerRecord() string { return path.Join(p.Root, "state", "runner.json") }

// JudgeResults is written by launch: one JSON line per case and code_judge evaluator.
func (p Paths) JudgeResults() string { return path.Join(p.Root, "state", "judges.jsonl") }

// Done is written last by launch, after RunnerRecord and JudgeResults.
func (p Paths) Done() string { return path.Join(p.Root, "state", "done") }

// Ack is written by collect once results are persisted (or with the reason they could not be).
func (p Paths) Ack() string { return path.Join(p.Root, "state", "ack") }

// CollectorReady is written by collect once it is watching; the collector's startup probe checks it.
func (p Paths) CollectorReady() string { return path.Join(p.Root, "state", "collector-ready") }

// Environment variables set in the runner container.
const (
	EnvEvalFile   = "EVAL_FILE"
	EnvOutputFile = "OUTPUT_FILE"
)

// Environment variables set in the collector container (downward API and manager-provided values).
const (
	EnvRunName      = "EVALRUN_NAME"
	EnvRunNamespace = "EVALRUN_NAMESPACE"
	EnvRunUID       = "EVALRUN_UID"
	EnvPodName      = "POD_NAME"
)

// Field managers used for server-side apply of EvalRun status.
const (
	FieldManagerManager   = "evalrun-manager"
	FieldManagerCollector = "evalrun-collector"
)

// Labels and annotations.
const (
	LabelRun        = "evals.evalrun.io/run"
	LabelComponent  = "evals.evalrun.io/component"
	LabelKueueQueue = "kueue.x-k8s.io/queue-name"
)

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
)
