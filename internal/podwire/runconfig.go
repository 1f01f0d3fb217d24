package podwire

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"
)

// RunConfig is the run.json the manager writes into the pinned eval ConfigMap. `collector install`, `collector
// collect` and `collector judge` read it (the launcher reads the RunnerConfig install derives from it); it carries
// everything they need from the EvalRun spec, with every default already resolved by the manager, so that none
// needs API access to read the spec.
type RunConfig struct {
	// RunName, Namespace and UID identify the EvalRun.
	RunName   string `json:"runName"`
	Namespace string `json:"namespace"`
	UID       string `json:"uid"`

	// EvalFile is the path of the pod's eval file: the pinned one, or the shard's that install writes. The trusted
	// containers read it; the runner never mounts it (see RunnerEvalFile).
	EvalFile string `json:"evalFile"`
	// EvalFileView is what the runner gets at RunnerEvalFile ({EVAL_FILE}): EvalFileViewInputs, the runner view of
	// EvalFile (evalfile.WriteView), or EvalFileViewFull, a copy of EvalFile (spec.target.evalFileView).
	EvalFileView string `json:"evalFileView"`
	// RunnerEvalFile and RunnerConfigFile are where install writes the runner's eval file and its RunnerConfig,
	// in the view volume: the runner mounts that volume (read-only) and neither run.json nor EvalFile.
	RunnerEvalFile   string `json:"runnerEvalFile"`
	RunnerConfigFile string `json:"runnerConfig"`
	// CaseIDs are the requested case ids, in eval-file order: the whole run's. In a pod of a sharded run,
	// LoadShard narrows them (and ResultConfigMaps) to the pod's shard.
	CaseIDs []string `json:"caseIds"`

	// Shards is the number of shards of the run (1: one pod a trial); shard i holds
	// CaseIDs[ShardRange(len(CaseIDs), Shards, i)].
	Shards int32 `json:"shards"`
	// Trials is the number of trials of every case (spec.trials.count, else the eval file's own), omitted for one.
	// The run has Pods() pods,
	// one per trial of each shard: a pod's shard and trial are those of its Job completion index (EnvShardIndex,
	// ShardTrial). Every per-pod list below (ShardConfigMaps, the result and record ConfigMaps of a pod) is by
	// completion index, one entry (or ResultConfigMapsPerShard entries) per pod.
	Trials int32 `json:"trials,omitempty"`
	// TrialsSource, set with Trials, is where they came from: the API's status.trials.source, EvalFile when they
	// are the eval file's own (an AgentV 4.42 suite's execution.trials, spec.trials unset), else Spec. The pod does
	// not read it: the manager decides the run's trials from it again (children.EffectiveTrials).
	TrialsSource string `json:"trialsSource,omitempty"`
	// TrialsPassRate is spec.trials.passRate resolved ("1" when unset), set with Trials: the least share of its
	// trials a case must pass. The pod does not read it: the manager's merge decides each case by it, and a
	// re-judge of the run takes it from here (docs/rejudge.md).
	TrialsPassRate string `json:"trialsPassRate,omitempty"`
	// TrialRuns, in a resumed run with trials whose trials do not all run the same cases (a case's trial that has
	// a carried result is not run again: docs/storage-and-sharding.md), are the cases each trial runs:
	// TrialRuns[t-1] are the spans of indexes into CaseIDs that trial t runs, ascending and disjoint. Empty: every
	// trial runs every case of CaseIDs. LoadShard narrows a pod's cases to those of its shard that its trial runs,
	// which may be none (NothingToRun).
	TrialRuns [][]CaseSpan `json:"trialRuns,omitempty"`
	// PodIndex is the pod's Job completion index, ShardIndex its shard, Trial its trial (from 1) and ShardOffset
	// the index of its shard's first case among the run's, set by LoadShard (never written by the manager).
	PodIndex    int32 `json:"-"`
	ShardIndex  int32 `json:"-"`
	Trial       int32 `json:"-"`
	ShardOffset int   `json:"-"`
	// CaseIndexes, set by LoadShard when the pod runs only some of its shard's cases (TrialRuns), are the indexes
	// among the run's CaseIDs of the pod's cases; nil when they are the shard's, from ShardOffset on. NothingToRun
	// says the pod has no case at all: install writes no eval file for it, its launcher starts no runner, and its
	// collector records an empty collection.
	CaseIndexes  []int `json:"-"`
	NothingToRun bool  `json:"-"`
	// SourceEvalFile, when set, is the pinned eval file that install splits: it writes the shard's cases to
	// EvalFile, in a volume the runner reads but cannot write.
	SourceEvalFile string `json:"sourceEvalFile,omitempty"`
	// ShardConfigMaps, when set (a sharded or resumed run, or one with trials), name one pre-created ConfigMap per
	// pod (Job completion index) in which that pod's collector records its collection (key ShardSectionKey); the
	// manager merges them into the EvalRun's status, which the collectors then do not write.
	ShardConfigMaps []string `json:"shardConfigMaps,omitempty"`
	// ResultConfigMapsPerShard is how many of ResultConfigMaps each pod has: the pod of completion index i has
	// ResultConfigMaps[i*n:(i+1)*n]. 0 with one pod: all of them.
	ResultConfigMapsPerShard int32 `json:"resultConfigMapsPerShard,omitempty"`
	// AllCaseIDs, in a resumed run, are every case id of the eval file, run (CaseIDs) or carried, in file order:
	// the order of the merged status. Empty otherwise (CaseIDs are all of them).
	AllCaseIDs []string `json:"allCaseIds,omitempty"`
	// CarriedConfigMaps hold the results a resumed run carries from the earlier run, written by the manager.
	CarriedConfigMaps []string `json:"carriedConfigMaps,omitempty"`
	// CarriedObjects, in a resumed run that stores its results in a bucket, are the s3:// URIs of the objects
	// (gzip'd JSONL) holding the carried results, in this run's bucket, written by the manager; such a run has no
	// CarriedConfigMaps.
	CarriedObjects []string `json:"carriedObjects,omitempty"`
	// Resume records what a resumed run took from the earlier run.
	Resume *ResumeRecord `json:"resume,omitempty"`
	// EvalObject, when set, is the bucket object that holds the eval file (spec.evalFile.s3): install downloads
	// it into SourceEvalFile, verifying its sha256, with the credentials mounted at EvalCredentialsDir (install's
	// only), and writes the pod's cases to EvalFile.
	EvalObject *EvalObject `json:"evalObject,omitempty"`
	// IDsFile, when set, is the file (in the eval ConfigMap) that holds CaseIDs and AllCaseIDs as gzip'd JSON
	// (IDsKey), when they are too many for run.json; LoadIDs reads it.
	IDsFile string `json:"idsFile,omitempty"`
	// Bundle, when set, is the run's eval bundle (spec.evalFile.bundle): install materializes it, verified against
	// its manifest, for the judging containers, and the runner's input files for the runner.
	Bundle *Bundle `json:"bundle,omitempty"`
	// Bucket, when set, is where the collector stores its shard's results and collection (spec.storage.s3)
	// instead of result ConfigMaps; the credentials are mounted at BucketCredentialsDir, in the collector only.
	Bucket *Bucket `json:"bucket,omitempty"`
	// Records, when set, says where the collector keeps each answered case's record as the runner wrote it, with
	// its runner-view digest (internal/records, docs/rejudge.md): the record ConfigMaps, or with Bucket the
	// shard's records object.
	Records *Records `json:"records,omitempty"`
	// Rejudge, when set, makes the pod a re-judge (spec.rejudge, docs/rejudge.md): it has no runner container; the
	// collector reads the source run's kept records of its shard, writes those it may judge into its snapshot as
	// the runner's output would be (Launch.Batching is the source's), and judges them as usual.
	Rejudge *Rejudge `json:"rejudge,omitempty"`
	// BucketOnly (spec.storage.statusFrom: Bucket) says the pod makes no API call: the collector stores its
	// collection (summary.json) next to its results in Bucket and nowhere else, and has no token; the manager
	// reads it from there. Such a run has no ShardConfigMaps and no ResultConfigMaps.
	BucketOnly bool `json:"bucketOnly,omitempty"`

	// Launch is what the launcher needs to run the runner (run.json keeps its fields at the top level).
	Launch

	// PassThreshold is the pass threshold as a decimal string ("0.8").
	PassThreshold string `json:"passThreshold"`
	// DefaultEvaluators are the spec's judging.evaluators as raw JSON objects.
	DefaultEvaluators []map[string]any `json:"defaultEvaluators,omitempty"`
	// InputFiles is spec.judging.inputFiles as set ("Reference" or "Embed"); "" when unset (and in a run.json
	// written before the field): the eval file format's own (evaluate.InputFiles).
	InputFiles string `json:"inputFiles,omitempty"`
	// LLM, when set, is the model endpoint of LLM judges (spec.judging.llm resolved with the manager's defaults);
	// the collector calls it. Unset: LLM judges and cases without evaluators are Skipped.
	LLM *LLM `json:"llm,omitempty"`
	// CodeJudgeTimeoutSeconds and CodeJudgeWorkers bound code_judge scripts.
	CodeJudgeTimeoutSeconds int32 `json:"codeJudgeTimeoutSeconds"`
	CodeJudgeWorkers        int32 `json:"codeJudgeWorkers"`
	// CodeJudgeImage, set with CodeJudges, is the image the judge containers run the code_judge scripts in
	// (spec.judging.image, else the manager's --judge-image), and CodeJudgeImageSource where it came from
	// (evalsv1alpha1.JudgeImageSource). The pod does not read them: they record the run's judging, which a resume
	// of the run compares with its own (docs/rejudge.md), and the manager's status.judgeImage.
	CodeJudgeImage       string `json:"codeJudgeImage,omitempty"`
	CodeJudgeImageSource string `json:"codeJudgeImageSource,omitempty"`

	// ResultConfigMaps are the names of the pre-created, owned result ConfigMaps, in order.
	ResultConfigMaps []string `json:"resultConfigMaps"`
	// StatusBudgetBytes bounds the status results section the collector writes.
	StatusBudgetBytes int64 `json:"statusBudgetBytes"`
	// ResultsDeadlineSeconds bounds how long the collector retries API writes after the runner ends.
	ResultsDeadlineSeconds int32 `json:"resultsDeadlineSeconds"`

	// CodeJudges is true when some requested case has a code_judge: the pod then has a judge container, and the
	// collector hands it the snapshot of the runner's output.
	CodeJudges bool `json:"codeJudges,omitempty"`

	// SharedEvaluators is true when the manager, validating the eval file, found that every case is judged by its
	// id and the evaluators all cases inherit, which read nothing of the case (no code_judge, llm_judge or rubric):
	// the collector then reads only the eval file's header (evalfile.ParseShared), not its cases, which the
	// manager has validated.
	SharedEvaluators bool `json:"sharedEvaluators,omitempty"`
	// MaxOutputBytes bounds the Batched output file and the launcher's report the collector copies.
	MaxOutputBytes int64 `json:"maxOutputBytes"`
	// RunnerDeadlineSeconds, when positive, bounds how long the collector waits for the runner container to end
	// (the runner's own timeouts plus a margin); past it, the collector copies the output as it is and reports
	// the runner as timed out. 0: the collector waits until the pod is stopped.
	RunnerDeadlineSeconds int32 `json:"runnerDeadlineSeconds,omitempty"`
	// JudgeContainers is how many judge containers the pod has with code judges: min(codeJudgeWorkers,
	// MaxJudgeContainers, code-judged cases); judge container i judges the code-judged cases whose position in the
	// requested order is i modulo JudgeContainers (Partition). Without code judges it stays 1, as pinned run.json
	// files have it, and the pod has no judge container.
	JudgeContainers int32 `json:"judgeContainers,omitempty"`
	// JudgeDeadlineSeconds bounds how long the collector waits for the judge containers' verdicts.
	JudgeDeadlineSeconds int32 `json:"judgeDeadlineSeconds,omitempty"`
	// LLMJudgeDeadlineSeconds, set with LLM, bounds how long the collector's LLM judges may take (the manager sizes
	// it from the pod's requests, maxConcurrentRequests, timeoutSeconds and requestsPerMinute); a request after it
	// is an Error. Persisting then has ResultsDeadlineSeconds.
	LLMJudgeDeadlineSeconds int32 `json:"llmJudgeDeadlineSeconds,omitempty"`
}

// Validate checks that the manager resolved every default: the pod's containers use the configuration as it is
// and never default anything themselves, so a zero where a value is required is an error that names the fields.
func (c *RunConfig) Validate() error {
	var missing []string
	need := func(ok bool, field string) {
		if !ok {
			missing = append(missing, field)
		}
	}
	need(c.EvalFile != "", "evalFile")
	need(c.EvalFileView == EvalFileViewInputs || c.EvalFileView == EvalFileViewFull, "evalFileView (Inputs or Full)")
	need(c.RunnerEvalFile != "" && c.RunnerConfigFile != "", "runnerEvalFile and runnerConfig")
	if c.Rejudge == nil {
		c.check(need)
	} else {
		// A re-judge runs no runner: only how the source's runner wrote its output matters.
		need(c.Batching == "Batched" || c.Batching == "PerCase", "batching (Batched or PerCase)")
	}
	c.checkStorage(need)
	need(c.PassThreshold != "", "passThreshold")
	need(c.CodeJudgeTimeoutSeconds > 0, "codeJudgeTimeoutSeconds")
	need(c.CodeJudgeWorkers > 0, "codeJudgeWorkers")
	need(c.StatusBudgetBytes > 0, "statusBudgetBytes")
	need(c.ResultsDeadlineSeconds > 0, "resultsDeadlineSeconds")
	need(c.MaxOutputBytes > 0, "maxOutputBytes")
	need(!c.CodeJudges || c.JudgeDeadlineSeconds > 0, "judgeDeadlineSeconds")
	need(!c.CodeJudges || (c.JudgeContainers > 0 && c.JudgeContainers <= MaxJudgeContainers), "judgeContainers (1 to 8)")
	need(c.Shards > 0, "shards")
	need(c.Trials >= 0 && c.Trials <= MaxTrials, "trials (at most 100)")
	need(c.Pods() <= 1 || c.HasShardConfigMaps() || c.BucketOnly, "shardConfigMaps (a run of several pods is merged by the manager)")
	need(c.LLM == nil || (c.LLM.BaseURL != "" && c.LLM.Model != "" && c.LLM.TimeoutSeconds > 0 && c.LLM.MaxConcurrentRequests > 0),
		"llm.baseURL, llm.model, llm.timeoutSeconds and llm.maxConcurrentRequests")
	need(c.LLM == nil || c.LLMJudgeDeadlineSeconds > 0, "llmJudgeDeadlineSeconds")
	need(len(c.ShardConfigMaps) == 0 || len(c.ShardConfigMaps) == c.Pods(), "shardConfigMaps (one per pod)")
	need(c.Pods() <= 1 || c.Bucket != nil || (c.ResultConfigMapsPerShard > 0 && len(c.ResultConfigMaps) == c.Pods()*int(c.ResultConfigMapsPerShard)),
		"resultConfigMapsPerShard (every pod's result ConfigMaps)")
	need(c.Shards <= 1 || c.SourceEvalFile != "", "sourceEvalFile (a sharded run splits the pinned eval file)")
	need(len(c.TrialRuns) == 0 || (c.SourceEvalFile != "" && validTrialRuns(c.TrialRuns, TrialCount(c.Trials), len(c.CaseIDs))),
		"trialRuns (one list per trial of ascending, disjoint spans of caseIds) and sourceEvalFile (each pod cuts its own cases)")
	need(c.Rejudge == nil || c.Rejudge.valid(c), "rejudge.from and the source's records: its record ConfigMaps (not with bucketOnly) or, with bucket, inBucket")
	c.checkSources(need)
	if len(missing) > 0 {
		return fmt.Errorf("the run configuration lacks %s (the manager resolves every default)", strings.Join(missing, ", "))
	}
	if c.TimeoutSeconds < 0 || c.RunnerDeadlineSeconds < 0 {
		return errors.New("the run configuration has a negative timeout")
	}
	return nil
}

// checkSources checks where the eval file comes from when it is not in the pinned ConfigMap: a bucket object or
// a bundle.
func (c *RunConfig) checkSources(need func(ok bool, field string)) {
	need(c.EvalObject == nil || (c.SourceEvalFile != "" && c.EvalObject.MaxBytes > 0), "sourceEvalFile and evalObject.maxBytes (the eval file is downloaded)")
	need(c.Bundle == nil || (c.Bundle.Dir != "" && c.Bundle.EvalFile != "" && c.Bundle.SHA256 != "" && c.Bundle.ManifestFile != "" &&
		c.Bundle.RunnerDir != "" && (c.Bundle.SourceDir == "") != (c.Bundle.Objects == nil)),
		"bundle.dir, evalFile, sha256, manifestFile, runnerDir and one of sourceDir or objects")
}

// checkStorage checks where the collector stores its collection: with BucketOnly, in Bucket and nowhere else.
func (c *RunConfig) checkStorage(need func(ok bool, field string)) {
	need(!c.BucketOnly || (c.Bucket != nil && len(c.ShardConfigMaps) == 0 && len(c.ResultConfigMaps) == 0),
		"bucket, and no shard or result ConfigMaps (bucketOnly: the pod writes only to the bucket)")
}

// Seconds is a configuration's number of seconds as a duration.
func Seconds(n int32) time.Duration { return time.Duration(n) * time.Second }

// LLM is a model endpoint for LLM judges: spec.judging.llm without its key, which is a file only the collector
// mounts.
type LLM struct {
	BaseURL string `json:"baseURL"`
	Model   string `json:"model"`
	// APIKeyFile is the file holding the API key ("" sends none); APIKeySecret names its Secret and key
	// ("<name>/<key>") for messages.
	APIKeyFile   string `json:"apiKeyFile,omitempty"`
	APIKeySecret string `json:"apiKeySecret,omitempty"`
	// TimeoutSeconds bounds each request; MaxConcurrentRequests the requests in flight in the pod;
	// RequestsPerMinute, when positive, the requests the pod starts per minute. The last two are the pod's share
	// of the run's bounds (the manager divides them between the pods that run at once).
	TimeoutSeconds        int32 `json:"timeoutSeconds"`
	MaxConcurrentRequests int32 `json:"maxConcurrentRequests"`
	RequestsPerMinute     int32 `json:"requestsPerMinute,omitempty"`
	// MaxRequests and MaxTokens, when positive, are the pod's budget of requests (retries included) and tokens:
	// its share of spec.judging.llm.maxRequests and maxTokens (ceil(max / shards)). Past them the collector's
	// LLM judges are Skipped.
	MaxRequests int64 `json:"maxRequests,omitempty"`
	MaxTokens   int64 `json:"maxTokens,omitempty"`
	// RunMaxRequests and RunMaxTokens are the run's budgets as the spec says them (spec.judging.llm.maxRequests
	// and maxTokens, 0 without one), before they are shared between the shards. The pod does not read them: they
	// record the run's judging, which a resume of the run compares with its own (docs/rejudge.md).
	RunMaxRequests int64 `json:"runMaxRequests,omitempty"`
	RunMaxTokens   int64 `json:"runMaxTokens,omitempty"`
	// AnswerDelimiters is spec.judging.llm.answerDelimiters resolved ("AgentV" or "Nonce"; "" in a run.json
	// written before the field existed, which is AgentV). With Nonce the collector keys the markers with the
	// run's UID (RunConfig.UID).
	AnswerDelimiters string `json:"answerDelimiters,omitempty"`
}

// NonceDelimiters reports whether the LLM judges wrap answers between nonce markers (AnswerDelimiters Nonce).
func (l *LLM) NonceDelimiters() bool {
	return l != nil && l.AnswerDelimiters == AnswerDelimitersNonce
}

// EvalObject is the bucket object that holds a run's eval file, with the sha256 and the size it may have.
type EvalObject struct {
	Bucket   Bucket `json:"bucket"`
	Key      string `json:"key"`
	SHA256   string `json:"sha256"`
	MaxBytes int64  `json:"maxBytes"`
}

// EvalFileInBucket reports whether the run's eval file stays in a bucket (spec.evalFile.s3, or a bundle in a
// bucket): the pinned eval ConfigMap does not hold it and each pod's install gets it.
func (c *RunConfig) EvalFileInBucket() bool {
	return c.EvalObject != nil || (c.Bundle != nil && c.Bundle.Objects != nil)
}

// Bundle is a run's pinned eval bundle: where its files come from and where they go in the pod.
type Bundle struct {
	// Dir is where install writes the whole bundle (the bundle volume) and EvalFile the eval file's path in it:
	// the judging containers resolve the eval file's references in Dir as if the eval file were at Dir/EvalFile.
	Dir      string `json:"dir"`
	EvalFile string `json:"evalFile"`
	// SHA256 is the bundle digest, and ManifestFile the pinned manifest (path, size and sha256 of every file) in
	// the eval ConfigMap's mount, which install verifies every file against.
	SHA256       string `json:"sha256"`
	ManifestFile string `json:"manifestFile"`
	// Files and Bytes are how many files the bundle has and how many bytes they hold together.
	Files int32 `json:"files"`
	Bytes int64 `json:"bytes"`
	// SourceDir, for a bundle from a ConfigMap, is where install reads the manager's pinned copy (its keys are
	// escaped bundle paths, bundle.KeyFor); Objects, for a bundle from a bucket, is the bucket whose prefix is
	// the bundle's root, read with the credentials at EvalCredentialsDir (install's only). Exactly one is set.
	SourceDir string  `json:"sourceDir,omitempty"`
	Objects   *Bucket `json:"objects,omitempty"`
	// RunnerDir is the runner's bundle in the view volume: install writes the runner's eval file at
	// RunnerDir/EvalFile (RunnerEvalFile) and the input files of the pod's cases at their bundle paths.
	RunnerDir string `json:"runnerDir"`
}

// EvalDir is the eval file's directory in the bundle volume, where code_judge scripts run in a bundle run (as
// `collector check --bundle` runs them: in the eval file's directory), so that a script the eval file names by a
// relative path is found.
func (b *Bundle) EvalDir() string { return path.Join(b.Dir, path.Dir(b.EvalFile)) }

// runIDs is the content of IDsFile.
type runIDs struct {
	CaseIDs    []string `json:"caseIds"`
	AllCaseIDs []string `json:"allCaseIds,omitempty"`
}

// EncodeIDs returns the gzip'd JSON of a run's case ids (IDsKey of the eval ConfigMap).
func EncodeIDs(caseIDs, allCaseIDs []string) ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if err := json.NewEncoder(zw).Encode(runIDs{CaseIDs: caseIDs, AllCaseIDs: allCaseIDs}); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// LoadIDs sets CaseIDs and AllCaseIDs from data, the content of IDsFile.
func (c *RunConfig) LoadIDs(data []byte) error {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("the case ids file: %w", err)
	}
	var ids runIDs
	if err := json.NewDecoder(zr).Decode(&ids); err != nil {
		return fmt.Errorf("the case ids file: %w", err)
	}
	c.CaseIDs, c.AllCaseIDs = ids.CaseIDs, ids.AllCaseIDs
	return nil
}

// Records is where a run keeps its records.
type Records struct {
	// ConfigMaps are the pre-created, owned record ConfigMaps (key RecordsKey), shard by shard, ConfigMapsPerShard
	// each; empty with a bucket (the shard's records object then holds them). LoadShard narrows them to the pod's.
	ConfigMaps         []string `json:"configMaps,omitempty"`
	ConfigMapsPerShard int32    `json:"configMapsPerShard,omitempty"`
}

// Rejudge is where a re-judge's collector finds the source run's kept records.
type Rejudge struct {
	// From and FromUID identify the source EvalRun (in the run's namespace).
	From    string `json:"from"`
	FromUID string `json:"fromUid"`
	// ConfigMaps are the source's record ConfigMaps, shard by shard, ConfigMapsPerShard each (the collector's Role
	// may get them, and nothing else of the source); LoadShard narrows them to the pod's shard. Empty when the
	// source kept its records in the bucket.
	ConfigMaps         []string `json:"configMaps,omitempty"`
	ConfigMapsPerShard int32    `json:"configMapsPerShard,omitempty"`
	// InBucket says the source kept its records in this run's bucket (Bucket): its pod i's are the object
	// objstore.RunRef{Namespace, From, FromUID}.ShardRecordsKey(i).
	InBucket bool `json:"inBucket,omitempty"`
	// Shards is the source's shard count: the pod of shard s and trial t reads the records of the source's pod of
	// shard s and trial t (SourceIndex), whatever this run's own shard count (fewer cases than the source's shards
	// give fewer shards). 0 in a run.json written before it: pod i reads the source's pod i (shard i).
	Shards int32 `json:"shards,omitempty"`
}

// SourceIndex is the completion index of the source's pod whose records the re-judge's pod of shard and trial
// (from 1) judges.
func (r *Rejudge) SourceIndex(shard, trial int) int {
	return PodIndex(shard, trial, max(int(r.Shards), 1))
}

// valid reports whether the re-judge names its source and exactly one place for its records that the pod can
// read: the source's record ConfigMaps (the pod then has a token), or the objects of the run's bucket.
func (r *Rejudge) valid(c *RunConfig) bool {
	inConfigMaps := len(r.ConfigMaps) > 0 && !r.InBucket && !c.BucketOnly
	inBucket := r.InBucket && len(r.ConfigMaps) == 0 && c.Bucket != nil
	return r.From != "" && r.FromUID != "" && (inConfigMaps || inBucket)
}

// Bucket is an S3-compatible bucket: spec.storage.s3 without its credentials.
type Bucket struct {
	Endpoint string `json:"endpoint"`
	Region   string `json:"region,omitempty"`
	Bucket   string `json:"bucket"`
	Prefix   string `json:"prefix,omitempty"`
}

// HasShardConfigMaps reports whether the run has shard ConfigMaps (a sharded or resumed run): its collectors write
// per-shard collections, which the manager merges, rather than the status itself.
func (c *RunConfig) HasShardConfigMaps() bool { return len(c.ShardConfigMaps) > 0 }

// ShardRange returns the half-open range [lo, hi) of the cases of shard i when n cases are split into shards
// contiguous shards: in order, shard i holds cases i*n/shards up to (i+1)*n/shards.
func ShardRange(n, shards, i int) (lo, hi int) {
	if shards <= 1 {
		return 0, n
	}
	return i * n / shards, (i + 1) * n / shards
}

// Pods is the number of the run's pods, the Job's completions: one per trial of each shard.
func (c *RunConfig) Pods() int { return max(int(c.Shards), 1) * TrialCount(c.Trials) }

// LoadShard narrows a validated run configuration to the pod with the given Job completion index
// (EnvShardIndex): its shard's case ids, its trial and its result ConfigMaps. With one pod, index must be "" or "0".
func (c *RunConfig) LoadShard(index string) error {
	i := 0
	if index != "" {
		n, err := strconv.Atoi(index)
		if err != nil || n < 0 {
			return fmt.Errorf("%s is %q, not a shard index", EnvShardIndex, index)
		}
		i = n
	}
	pods := c.Pods()
	switch {
	case i >= pods && c.Trials > 1:
		return fmt.Errorf("index %d does not exist: the run has %d pods (%d shards × %d trials)", i, pods, c.Shards, c.Trials)
	case i >= pods:
		return fmt.Errorf("shard %d does not exist: the run has %d shards", i, c.Shards)
	case pods > 1 && index == "" && c.Trials > 1:
		return fmt.Errorf("the run has %d pods (%d shards × %d trials) but %s is not set", pods, c.Shards, c.Trials, EnvShardIndex)
	case pods > 1 && index == "":
		return fmt.Errorf("the run has %d shards but %s is not set", c.Shards, EnvShardIndex)
	}
	shard, trial := ShardTrial(i, int(c.Shards))
	c.PodIndex, c.ShardIndex, c.Trial = int32(i), int32(shard), int32(trial)
	if pods <= 1 {
		return nil
	}
	lo, hi := ShardRange(len(c.CaseIDs), int(c.Shards), shard)
	if len(c.TrialRuns) >= trial {
		// A trial of a resumed run runs only the cases whose trial has no carried result.
		c.CaseIndexes = spanIndexes(c.TrialRuns[trial-1], lo, hi)
		ids := make([]string, len(c.CaseIndexes))
		for k, j := range c.CaseIndexes {
			ids[k] = c.CaseIDs[j]
		}
		c.CaseIDs, c.ShardOffset, c.NothingToRun = ids, lo, len(ids) == 0
	} else if c.Shards > 1 {
		c.CaseIDs, c.ShardOffset = c.CaseIDs[lo:hi:hi], lo
	}
	if per := int(c.ResultConfigMapsPerShard); per > 0 {
		c.ResultConfigMaps = c.ResultConfigMaps[i*per : (i+1)*per : (i+1)*per]
	}
	if r := c.Records; r != nil && r.ConfigMapsPerShard > 0 && len(r.ConfigMaps) >= (i+1)*int(r.ConfigMapsPerShard) {
		per := int(r.ConfigMapsPerShard)
		r.ConfigMaps = r.ConfigMaps[i*per : (i+1)*per : (i+1)*per]
	}
	if r := c.Rejudge; r != nil && r.ConfigMapsPerShard > 0 {
		// The source's pod of this pod's shard and trial.
		per, src := int(r.ConfigMapsPerShard), r.SourceIndex(shard, trial)
		if len(r.ConfigMaps) >= (src+1)*per {
			r.ConfigMaps = r.ConfigMaps[src*per : (src+1)*per : (src+1)*per]
		} else {
			r.ConfigMaps = nil
		}
	}
	return nil
}

// LineTrial is the trial the pod's result lines carry (results.Line.Trial): its trial from 2 on, 0 for trial 1 (and
// in a run of one trial), which a line omits.
func (c *RunConfig) LineTrial() int {
	if c.Trials <= 1 || c.Trial <= 1 {
		return 0
	}
	return int(c.Trial)
}

// ShardConfigMap is the ConfigMap where this pod's shard records its collection ("" when the collector writes
// the EvalRun's status itself).
func (c *RunConfig) ShardConfigMap() string {
	if !c.HasShardConfigMaps() {
		return ""
	}
	return c.ShardConfigMaps[c.PodIndex]
}
