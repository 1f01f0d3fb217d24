package children

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/options"

	"k8s.io/utils/ptr"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
)

// Settings of run.json that are not in the spec. The spec's defaults, which the manager applies when a field is
// unset (the API server applies the same at admission; the builders do not rely on it), are the API's
// evalsv1alpha1.Default* constants.
const (
	defaultKillGraceSeconds = 10
	// defaultMaxOutputBytes bounds the Batched output file the collector reads.
	defaultMaxOutputBytes = 1 << 30
	// runnerDeadlineMarginSeconds is added to the runner's own timeouts for the collector's wait on its end.
	runnerDeadlineMarginSeconds = 60
	// judgeDeadlineMarginSeconds is added to the code judges' worst case for the collector's wait on them.
	judgeDeadlineMarginSeconds = 60
	// llmJudgeMarginSeconds is added to the LLM judges' worst case (replies asked again, retries after 429s and
	// 5xx, the client's backoff); it is also the least time LLM judging gets.
	llmJudgeMarginSeconds = 60
	// judgeRoundOverheadSeconds is added to each case's script timeout: the wait for its pipes (2 s) and the
	// killing and reaping of what it left behind (judgerunner.ReapTimeout, 2 s).
	judgeRoundOverheadSeconds = 4
	// collectorStartSeconds bounds the launcher's wait for the collector.
	collectorStartSeconds = 300
)

// EvalFilePath is {EVAL_FILE} in the pod: the pinned eval file in the read-only eval ConfigMap mount.
var EvalFilePath = path.Join(podwire.EvalDir, podwire.EvalFileKey)

// RunConfigPath is the run.json the collector modes read.
var RunConfigPath = path.Join(podwire.EvalDir, podwire.RunConfigKey)

// ShardEvalFilePath is {EVAL_FILE} in a sharded run's pod: the shard's eval file, written by install.
var ShardEvalFilePath = path.Join(podwire.ShardDir, podwire.EvalFileKey)

// RunnerEvalFilePath is {EVAL_FILE} in the runner container: the runner's eval file that install writes into the
// view volume (the runner view, or the whole file with evalFileView Full).
var RunnerEvalFilePath = path.Join(podwire.ViewDir, podwire.EvalFileKey)

// RunnerConfigPath is the runner's RunnerConfig that install writes into the view volume; the launcher
// reads it (the runner never mounts run.json).
var RunnerConfigPath = path.Join(podwire.ViewDir, podwire.RunnerConfigName)

// EvalFileView is spec.target.evalFileView, Inputs when unset.
func EvalFileView(run *evalsv1alpha1.EvalRun) evalsv1alpha1.EvalFileView {
	if v := run.Spec.Target.EvalFileView; v != "" {
		return v
	}
	return evalsv1alpha1.DefaultEvalFileView
}

// DownloadedEvalFilePath is where install downloads an eval file that is a bucket object.
var DownloadedEvalFilePath = path.Join(podwire.ShardDir, "source.yaml")

// IDsFilePath is the case ids file in the eval ConfigMap's mount, when run.json cannot hold them.
var IDsFilePath = path.Join(podwire.EvalDir, podwire.IDsKey)

// ManagerMerges reports whether the run's status is merged by the manager from per-pod collections: the run is
// sharded (spec.sharding.shards above 1), answers every case more than once (its trials above 1), resumes an
// earlier run, stores its results in a bucket, or judges an earlier run's records again (it takes that run's
// shard count, which its spec does not say). run is the run as the manager runs it (RunWithTrials): with its eval
// file's trials, when they are its trials.
func ManagerMerges(run *evalsv1alpha1.EvalRun) bool {
	return specShards(run) > 1 || Trials(run) > 1 || run.Spec.Resume != nil || run.Spec.Storage != nil || run.Spec.Rejudge != nil
}

// Trials is the number of trials of every case of the run as the manager runs it (RunWithTrials): spec.trials.count,
// 1 when unset (EffectiveTrials).
func Trials(run *evalsv1alpha1.EvalRun) int { return EffectiveTrials(run, nil).Count }

// TrialRule is how the run as the manager runs it (RunWithTrials) decides each case over its trials:
// spec.trials.count and passRate with their defaults (EffectiveTrials).
func TrialRule(run *evalsv1alpha1.EvalRun) (results.TrialRule, error) {
	t := EffectiveTrials(run, nil)
	return results.ParseTrialRule(int32(t.Count), t.PassRate)
}

// ConfigTrialRule is how the run whose run.json is cfg decides each case over its trials: run.json's trials and
// passRate, or, in a run.json written before it recorded the pass rate, run's spec.trials.passRate.
func ConfigTrialRule(run *evalsv1alpha1.EvalRun, cfg podwire.RunConfig) (results.TrialRule, error) {
	if cfg.TrialsPassRate == "" {
		rule, err := TrialRule(run)
		rule.Count = podwire.TrialCount(cfg.Trials)
		return rule, err
	}
	return results.ParseTrialRule(int32(podwire.TrialCount(cfg.Trials)), cfg.TrialsPassRate)
}

// WithTrialRuns sets in cfg the cases each trial of a resumed run runs (nil: every trial runs every case): each pod
// then cuts its own cases out of the pinned eval file, as a shard's pod does.
func WithTrialRuns(cfg *podwire.RunConfig, runs [][]podwire.CaseSpan) {
	if len(runs) == 0 {
		return
	}
	cfg.TrialRuns = runs
	if cfg.SourceEvalFile == "" {
		cfg.SourceEvalFile, cfg.EvalFile = EvalFilePath, ShardEvalFilePath
	}
}

// BucketOnly reports a run whose pods make no API call (spec.storage.statusFrom: Bucket): their collections are
// read from the bucket by the manager.
func BucketOnly(run *evalsv1alpha1.EvalRun) bool {
	return run.Spec.Storage != nil && ptr.Deref(run.Spec.Storage.StatusFrom, evalsv1alpha1.DefaultStatusFrom) == evalsv1alpha1.StatusFromBucket
}

// specShards is spec.sharding.shards, its default when unset.
func specShards(run *evalsv1alpha1.EvalRun) int {
	if s := run.Spec.Sharding; s != nil && s.Shards != nil && *s.Shards > 1 {
		return int(*s.Shards)
	}
	return int(evalsv1alpha1.DefaultShards)
}

// Shards is the number of shards a run of cases cases gets: spec.sharding.shards, at most one per case.
func Shards(run *evalsv1alpha1.EvalRun, cases int) int {
	return max(1, min(specShards(run), cases))
}

// DefaultEvaluators returns spec.judging.evaluators as JSON objects. An entry that is not a JSON object is an
// error naming its index.
func DefaultEvaluators(run *evalsv1alpha1.EvalRun) ([]map[string]any, error) {
	if run.Spec.Judging == nil || len(run.Spec.Judging.Evaluators) == 0 {
		return nil, nil
	}
	out := make([]map[string]any, 0, len(run.Spec.Judging.Evaluators))
	for i, raw := range run.Spec.Judging.Evaluators {
		var m map[string]any
		if err := json.Unmarshal(raw.Raw, &m); err != nil || m == nil {
			return nil, fmt.Errorf("spec.judging.evaluators[%d] is not an object", i)
		}
		out = append(out, m)
	}
	return out, nil
}

// ResolveLLM returns the run's model endpoint for LLM judges: spec.judging.llm with the manager's defaults
// (--llm-base-url, --llm-model) and the spec's, the API key as the file the collector mounts. It returns nil
// without spec.judging.llm, and a message when the endpoint resolves to no base URL or model.
func ResolveLLM(run *evalsv1alpha1.EvalRun, opts options.Options) (*podwire.LLM, string) {
	if run.Spec.Judging == nil || run.Spec.Judging.LLM == nil {
		return nil, ""
	}
	spec := run.Spec.Judging.LLM
	out := &podwire.LLM{
		BaseURL:               ptr.Deref(spec.BaseURL, opts.LLMBaseURL),
		Model:                 ptr.Deref(spec.Model, opts.LLMModel),
		TimeoutSeconds:        ptr.Deref(spec.TimeoutSeconds, evalsv1alpha1.DefaultLLMTimeoutSeconds),
		MaxConcurrentRequests: ptr.Deref(spec.MaxConcurrentRequests, evalsv1alpha1.DefaultLLMMaxConcurrentRequests),
		RequestsPerMinute:     ptr.Deref(spec.RequestsPerMinute, 0),
		MaxRequests:           ptr.Deref(spec.MaxRequests, 0),
		MaxTokens:             ptr.Deref(spec.MaxTokens, 0),
		AnswerDelimiters:      string(ptr.Deref(spec.AnswerDelimiters, evalsv1alpha1.DefaultAnswerDelimiters)),
	}
	if ref := spec.APIKeySecretRef; ref != nil {
		out.APIKeyFile = path.Join(podwire.LLMCredentialsDir, podwire.LLMAPIKeyFile)
		out.APIKeySecret = ref.Name + "/" + ref.Key
	}
	var missing []string
	if out.BaseURL == "" {
		missing = append(missing, "spec.judging.llm.baseURL (the manager has no --llm-base-url default)")
	}
	if out.Model == "" {
		missing = append(missing, "spec.judging.llm.model (the manager has no --llm-model default)")
	}
	if len(missing) > 0 {
		return nil, "the model endpoint of LLM judges is incomplete: set " + strings.Join(missing, " and ")
	}
	return out, ""
}

// ResultsDeadlineSeconds returns spec.resultsDeadlineSeconds or its default.
func ResultsDeadlineSeconds(run *evalsv1alpha1.EvalRun) int32 {
	return ptr.Deref(run.Spec.ResultsDeadlineSeconds, evalsv1alpha1.DefaultResultsDeadlineSeconds)
}

// JudgeLoad is what judging the run's cases takes, counted from the eval file when the manager validates it; the
// judging deadlines of run.json are sized from it.
type JudgeLoad struct {
	// CodeJudgeCases is how many cases have a code_judge.
	CodeJudgeCases int
	// LLMRequests is how many requests to the model endpoint judging every case makes, and LLMRequestsPerCase the
	// most one case makes (evalfile.File.LLMRequests).
	LLMRequests, LLMRequestsPerCase int
	// FileTrials are the eval file's own trials (evalfile.File.Trials; nil: none): how many times every case is
	// answered and judged when the spec sets no trials (EffectiveTrials).
	FileTrials *evalfile.FileTrials
}

// BuildRunConfig renders run.json from the spec, the eval file's case ids (in file order), the parsed default
// evaluators and what judging the cases takes (with the eval file's own trials, which run.json's Trials and
// TrialsSource record as EffectiveTrials decides: run is the EvalRun as written, not RunWithTrials).
func BuildRunConfig(run *evalsv1alpha1.EvalRun, caseIDs []string, defaults []map[string]any, load JudgeLoad, opts options.Options) podwire.RunConfig {
	codeJudgeCases := load.CodeJudgeCases
	opts = opts.WithDefaults()
	names := NamesFor(run.Name)
	t := run.Spec.Target
	batching := t.Batching
	if batching == "" {
		batching = evalsv1alpha1.DefaultBatching
	}
	workers := evalsv1alpha1.DefaultTargetWorkers
	if batching == evalsv1alpha1.BatchingPerCase {
		workers = ptr.Deref(t.Workers, evalsv1alpha1.DefaultTargetWorkers)
	}
	deadline := ResultsDeadlineSeconds(run)
	cfg := podwire.RunConfig{
		RunName:          run.Name,
		Namespace:        run.Namespace,
		UID:              string(run.UID),
		EvalFile:         EvalFilePath,
		EvalFileView:     string(EvalFileView(run)),
		RunnerEvalFile:   RunnerEvalFilePath,
		RunnerConfigFile: RunnerConfigPath,
		CaseIDs:          append([]string{}, caseIDs...),
		Launch: podwire.Launch{
			CommandTemplate:       string(t.CommandTemplate),
			Batching:              string(batching),
			Workers:               workers,
			TimeoutSeconds:        ptr.Deref(t.TimeoutSeconds, 0),
			KillGraceSeconds:      defaultKillGraceSeconds,
			WorkingDir:            t.WorkingDir,
			CollectorStartSeconds: collectorStartSeconds,
		},
		PassThreshold:           evalsv1alpha1.DefaultPassThreshold,
		DefaultEvaluators:       defaults,
		CodeJudgeTimeoutSeconds: evalsv1alpha1.DefaultCodeJudgeTimeoutSeconds,
		CodeJudgeWorkers:        evalsv1alpha1.DefaultCodeJudgeWorkers,
		ResultConfigMaps:        names.ResultConfigMaps(ResultConfigMapCount(len(caseIDs))),
		StatusBudgetBytes:       opts.StatusBudgetBytes,
		ResultsDeadlineSeconds:  deadline,
		CodeJudges:              codeJudgeCases > 0,
		MaxOutputBytes:          defaultMaxOutputBytes,
	}
	cfg.CodeJudgeImage, cfg.CodeJudgeImageSource = codeJudgeImageOf(run, codeJudgeCases > 0, opts)
	if h := t.Healthcheck; h != nil {
		cfg.HealthcheckTemplate = string(h.CommandTemplate)
		cfg.HealthcheckTimeoutSeconds = ptr.Deref(h.TimeoutSeconds, evalsv1alpha1.DefaultHealthcheckTimeoutSeconds)
	}
	if j := run.Spec.Judging; j != nil {
		if j.PassThreshold != "" {
			cfg.PassThreshold = j.PassThreshold
		}
		cfg.CodeJudgeTimeoutSeconds = ptr.Deref(j.CodeJudgeTimeoutSeconds, evalsv1alpha1.DefaultCodeJudgeTimeoutSeconds)
		cfg.CodeJudgeWorkers = ptr.Deref(j.CodeJudgeWorkers, evalsv1alpha1.DefaultCodeJudgeWorkers)
		cfg.InputFiles = string(ptr.Deref(j.InputFiles, ""))
	}
	if st := run.Spec.Storage; st != nil {
		b := BucketOf(st.S3)
		cfg.Bucket = &b
	}
	cfg.LLM, _ = ResolveLLM(run, opts)
	shards := Shards(run, len(caseIDs))
	cfg.Shards = int32(shards)
	trials := EffectiveTrials(run, load.FileTrials)
	if trials.Count > 1 {
		cfg.Trials, cfg.TrialsPassRate, cfg.TrialsSource = int32(trials.Count), trials.PassRate, string(trials.Source)
	}
	// Every trial of every shard is a pod (podwire.ShardTrial): the run's budgets are shared between all of them.
	pods := cfg.Pods()
	if cfg.LLM != nil {
		cfg.LLM.MaxConcurrentRequests, cfg.LLM.RequestsPerMinute = podShares(podsAtOnce(run, int32(pods)),
			cfg.LLM.MaxConcurrentRequests, cfg.LLM.RequestsPerMinute)
		cfg.LLM.RunMaxRequests, cfg.LLM.RunMaxTokens = cfg.LLM.MaxRequests, cfg.LLM.MaxTokens
		cfg.LLM.MaxRequests, cfg.LLM.MaxTokens = shardBudget(cfg.LLM.MaxRequests, pods), shardBudget(cfg.LLM.MaxTokens, pods)
	}
	cfg.MaxCostNanoUSD = shardCostBudget(t.MaxCostUSD, pods)
	if BucketOnly(run) {
		// The pods make no API call: each collector stores its collection in the bucket only.
		cfg.BucketOnly = true
		cfg.StatusBudgetBytes = podwire.ShardSectionBudgetBytes
	} else if ManagerMerges(RunWithTrials(run, trials)) {
		cfg.ShardConfigMaps = make([]string, pods)
		for i := range pods {
			cfg.ShardConfigMaps[i] = names.ShardConfigMap(i)
		}
		cfg.StatusBudgetBytes = podwire.ShardSectionBudgetBytes
	}
	perShard := (len(caseIDs) + shards - 1) / shards
	// Each pod keeps its cases' records in as many ConfigMaps as it has result ConfigMaps (the storage budget,
	// docs/rejudge.md), or in its one records object in the bucket.
	recordsPer := ResultConfigMapCount(perShard)
	cfg.Records = &podwire.Records{ConfigMaps: names.RecordConfigMaps(pods * recordsPer), ConfigMapsPerShard: int32(recordsPer)}
	if pods > 1 {
		per := ResultConfigMapCount(perShard)
		cfg.ResultConfigMapsPerShard = int32(per)
		cfg.ResultConfigMaps = names.ResultConfigMaps(pods * per)
	}
	if shards > 1 {
		cfg.SourceEvalFile, cfg.EvalFile = EvalFilePath, ShardEvalFilePath
	}
	if o := run.Spec.EvalFile.S3; o != nil {
		// The eval file stays in its bucket: each pod downloads it (install verifies its sha256) and keeps its cases;
		// the case ids go to a file of the eval ConfigMap.
		cfg.EvalObject = &podwire.EvalObject{Bucket: BucketOf(o.S3Bucket), Key: o.Key, SHA256: o.SHA256, MaxBytes: MaxEvalObjectBytes}
		cfg.SourceEvalFile, cfg.EvalFile, cfg.IDsFile = DownloadedEvalFilePath, ShardEvalFilePath, IDsFilePath
	}
	if b := BundleConfig(run); b != nil {
		// The runner's eval file sits at its bundle path in the runner's bundle, next to its input files.
		cfg.Bundle, cfg.RunnerEvalFile = b, path.Join(b.RunnerDir, b.EvalFile)
		if b.Objects != nil {
			// As an eval file in a bucket: it stays there; install materializes the bundle and cuts the pod's
			// cases out of the bundle's eval file; the case ids go to a file of the eval ConfigMap.
			cfg.SourceEvalFile, cfg.EvalFile, cfg.IDsFile = path.Join(b.Dir, b.EvalFile), ShardEvalFilePath, IDsFilePath
		}
	}
	if cfg.Bucket != nil {
		// Every result goes to the bucket: no result ConfigMaps.
		cfg.ResultConfigMaps, cfg.ResultConfigMapsPerShard = nil, 0
		cfg.Records = &podwire.Records{}
	}
	cfg.RunnerDeadlineSeconds = runnerDeadline(cfg, perShard)
	cfg.JudgeContainers = 1
	if codeJudgeCases > 0 {
		// Each judge container judges its share one case at a time, killing and reaping what each script left
		// behind before the next: a round is a script's timeout, its pipes' grace and the reaping.
		cfg.JudgeContainers = podwire.Containers(cfg.CodeJudgeWorkers, min(codeJudgeCases, perShard))
		rounds := (int64(min(codeJudgeCases, perShard)) + int64(cfg.JudgeContainers) - 1) / int64(cfg.JudgeContainers)
		cfg.JudgeDeadlineSeconds = clampSeconds(rounds*int64(cfg.CodeJudgeTimeoutSeconds+judgeRoundOverheadSeconds) + judgeDeadlineMarginSeconds)
	}
	if cfg.LLM != nil {
		cfg.LLMJudgeDeadlineSeconds = llmJudgeDeadline(cfg.LLM, min(load.LLMRequests, perShard*load.LLMRequestsPerCase), RunDeadline(run, opts).Seconds)
	}
	return cfg
}

// podsAtOnce is how many of the run's pods (one per trial of each shard) run at once: all of them, at most
// spec.sharding.parallelism.
func podsAtOnce(run *evalsv1alpha1.EvalRun, pods int32) int32 {
	pods = max(pods, 1)
	if s := run.Spec.Sharding; s != nil && s.Parallelism != nil {
		pods = min(pods, max(*s.Parallelism, 1))
	}
	return pods
}

// shardCostBudget is one pod's share of spec.target.maxCostUSD in nanodollars, ceil(budget / pods) like the
// judges' budgets (shardBudget), nil without a budget. Admission checks the decimal's shape; one it would refuse
// is no budget rather than a run that cannot start.
func shardCostBudget(maxCostUSD *string, pods int) *int64 {
	if maxCostUSD == nil {
		return nil
	}
	nanos, err := results.ParseUSDNanos(*maxCostUSD)
	if err != nil {
		return nil
	}
	if nanos > 0 && pods > 1 {
		nanos = (nanos-1)/int64(pods) + 1
	}
	return &nanos
}

// shardBudget is one pod's share of a run's budget: ceil(budget / pods), so the pods together may spend up to
// pods - 1 more than the budget; 0 (no budget) stays 0.
func shardBudget(budget int64, pods int) int64 {
	if budget <= 0 || pods <= 1 {
		return budget
	}
	n := int64(pods)
	return (budget + n - 1) / n
}

// podShares splits the run's LLM bounds (spec.judging.llm.maxConcurrentRequests and requestsPerMinute, which hold
// per run) between the pods that run at once: each gets ceil(bound / pods), at least 1 (so a run with more pods
// at once than the bound sends up to one per pod); an unset rate (0) stays unset.
func podShares(pods, maxConcurrent, perMinute int32) (int32, int32) {
	share := func(n int32) int32 {
		if n <= 0 {
			return n
		}
		return max((n+pods-1)/pods, 1)
	}
	return share(maxConcurrent), share(perMinute)
}

// llmJudgeDeadline is how long the LLM judges of one pod may take, sized as the code judges' deadline is: the
// pod's requests (at most its share of cases times the most one case makes) in rounds of maxConcurrentRequests,
// each round one request's timeoutSeconds, and no less than the minutes requestsPerMinute needs for them, plus a
// margin; capped at the run's deadline (the Job ends by then whatever the judges do).
func llmJudgeDeadline(l *podwire.LLM, requests int, runDeadline int64) int32 {
	reqs := int64(max(requests, 0))
	concurrency := int64(max(l.MaxConcurrentRequests, 1))
	total := (reqs + concurrency - 1) / concurrency * int64(l.TimeoutSeconds)
	if rpm := int64(l.RequestsPerMinute); rpm > 0 {
		total = max(total, (reqs+rpm-1)/rpm*60)
	}
	total += llmJudgeMarginSeconds
	if runDeadline > 0 {
		total = min(total, max(runDeadline, llmJudgeMarginSeconds))
	}
	return clampSeconds(total)
}

// runnerDeadline is how long the collector waits for the runner container to end: the healthcheck's and the
// invocations' timeouts (PerCase: one round per worker batch), kill graces and a margin; 0 when the runner has
// no timeout (the Job's activeDeadlineSeconds is then the only bound).
func runnerDeadline(cfg podwire.RunConfig, cases int) int32 {
	if cfg.TimeoutSeconds <= 0 {
		return 0
	}
	rounds := int64(1)
	if cfg.Batching == string(evalsv1alpha1.BatchingPerCase) && cases > 0 {
		rounds = (int64(cases) + int64(cfg.Workers) - 1) / int64(cfg.Workers)
	}
	total := rounds*int64(cfg.TimeoutSeconds+cfg.KillGraceSeconds) + int64(cfg.HealthcheckTimeoutSeconds) +
		int64(cfg.KillGraceSeconds) + runnerDeadlineMarginSeconds
	return clampSeconds(total)
}

func clampSeconds(n int64) int32 {
	if n > 1<<31-1 {
		return 1<<31 - 1
	}
	return int32(n)
}

// BucketOf is the layout form of a bucket (without its credentials).
func BucketOf(b evalsv1alpha1.S3Bucket) podwire.Bucket {
	return podwire.Bucket{Endpoint: b.Endpoint, Region: ptr.Deref(b.Region, ""), Bucket: b.Bucket, Prefix: ptr.Deref(b.Prefix, "")}
}

// MaxEvalObjectBytes bounds an eval file read from a bucket.
const MaxEvalObjectBytes = 512 << 20

// BundleConfig is run.json's Bundle for run, without its digest (set once the bundle is pinned).
func BundleConfig(run *evalsv1alpha1.EvalRun) *podwire.Bundle {
	b := run.Spec.EvalFile.Bundle
	if b == nil {
		return nil
	}
	out := &podwire.Bundle{Dir: podwire.BundleDir, EvalFile: b.EvalFile, ManifestFile: path.Join(podwire.EvalDir, podwire.BundleManifestKey),
		RunnerDir: podwire.RunnerBundleDir}
	if b.S3 != nil {
		bk := BucketOf(*b.S3)
		out.Objects = &bk
	} else {
		out.SourceDir = podwire.BundleSourceDir
	}
	return out
}

// RunDeadline is the deadline a run's Job gets: spec.activeDeadlineSeconds, else the manager's default, so that
// every run ends even when its user set no timeouts. Kubernetes counts a Job's activeDeadlineSeconds from the
// Job's start and starts the clock again when a suspended Job is resumed, so time spent suspended or queued by
// Kueue does not count.
func RunDeadline(run *evalsv1alpha1.EvalRun, opts options.Options) evalsv1alpha1.ActiveDeadline {
	if s := run.Spec.ActiveDeadlineSeconds; s != nil && *s > 0 {
		return evalsv1alpha1.ActiveDeadline{Seconds: *s, Source: evalsv1alpha1.DeadlineFromSpec}
	}
	return evalsv1alpha1.ActiveDeadline{Seconds: opts.WithDefaults().DefaultActiveDeadlineSeconds, Source: evalsv1alpha1.DeadlineFromManagerDefault}
}

// ResumeRecordOf is status.resume as run.json records it (nil for nil).
func ResumeRecordOf(s *evalsv1alpha1.ResumeStatus) *podwire.ResumeRecord {
	if s == nil {
		return nil
	}
	return &podwire.ResumeRecord{From: s.From, FromUID: s.FromUID, Cases: string(s.Cases), Ran: s.Ran, Carried: s.Carried,
		RanTrials: ptr.Deref(s.RanTrials, 0)}
}

// ResumeStatusOf is run.json's resume record as status.resume (nil for nil).
func ResumeStatusOf(r *podwire.ResumeRecord) *evalsv1alpha1.ResumeStatus {
	if r == nil {
		return nil
	}
	out := &evalsv1alpha1.ResumeStatus{From: r.From, FromUID: r.FromUID, Cases: evalsv1alpha1.ResumeCases(r.Cases), Ran: r.Ran, Carried: r.Carried}
	if r.RanTrials > 0 {
		out.RanTrials = ptr.To(r.RanTrials)
	}
	return out
}
