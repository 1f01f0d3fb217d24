package check

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/bundle"
	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/evaluate"
	"github.com/evalrun-operator/evalrun-operator/internal/evaluate/grade42"
	"github.com/evalrun-operator/evalrun-operator/internal/pipeline"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// judgingFile is what `collector check --judging` takes from the EvalRun: its spec.judging, as the API types read
// it (so that any valid judging block is accepted), or a whole EvalRun manifest whose spec.judging is used.
type judgingFile struct {
	Evaluators    []map[string]any
	PassThreshold string
	// CodeJudgeTimeout bounds each local code_judge script, as judging.codeJudgeTimeoutSeconds does in the pod.
	CodeJudgeTimeout time.Duration
	// LLM is the judging file's llm block, if any (its key Secret is not read: the key comes from the flags).
	LLM *evalsv1alpha1.LLMJudging
	// InputFiles is the judging file's inputFiles ("" unset: the eval file format's own).
	InputFiles evaluate.InputFiles
}

// loadJudging reads --judging (YAML or JSON) and applies --pass-threshold over it.
func loadJudging(cfg *config) (judgingFile, error) {
	j := judgingFile{CodeJudgeTimeout: evaluate.DefaultCodeJudgeTimeout}
	if cfg.judgingPath != "" {
		data, err := os.ReadFile(cfg.judgingPath)
		if err != nil {
			return j, fmt.Errorf("reading the judging file: %w", err)
		}
		spec, err := parseJudging(data)
		if err != nil {
			return j, usageError(fmt.Sprintf("judging file %s: %v (want the EvalRun's spec.judging, or the EvalRun)", cfg.judgingPath, err))
		}
		j.PassThreshold = spec.PassThreshold
		j.LLM = spec.LLM
		if spec.InputFiles != nil {
			j.InputFiles = evaluate.InputFiles(*spec.InputFiles)
		}
		if spec.CodeJudgeTimeoutSeconds != nil && *spec.CodeJudgeTimeoutSeconds > 0 {
			j.CodeJudgeTimeout = time.Duration(*spec.CodeJudgeTimeoutSeconds) * time.Second
		}
		for i, raw := range spec.Evaluators {
			var m map[string]any
			if err := json.Unmarshal(raw.Raw, &m); err != nil || m == nil {
				return j, usageError(fmt.Sprintf("judging file %s: evaluators[%d] is not an object", cfg.judgingPath, i))
			}
			j.Evaluators = append(j.Evaluators, m)
		}
	}
	if cfg.passThreshold != "" {
		j.PassThreshold = cfg.passThreshold
	}
	return j, nil
}

// parseJudging reads a spec.judging block, or an EvalRun manifest (kind: EvalRun) and its spec.judging, strictly.
func parseJudging(data []byte) (*evalsv1alpha1.Judging, error) {
	var kind struct {
		Kind string `json:"kind"`
	}
	if err := yaml.Unmarshal(data, &kind); err == nil && kind.Kind == "EvalRun" {
		var run evalsv1alpha1.EvalRun
		if err := yaml.UnmarshalStrict(data, &run); err != nil {
			return nil, err
		}
		if run.Spec.Judging == nil {
			return &evalsv1alpha1.Judging{}, nil
		}
		return run.Spec.Judging, nil
	}
	var j evalsv1alpha1.Judging
	if err := yaml.UnmarshalStrict(data, &j); err != nil {
		return nil, err
	}
	return &j, nil
}

// judgingInput returns the pipeline input's judging for the check: with --eval, every requested case is judged
// with the eval file's evaluators (and --judging's defaults, --pass-threshold) exactly as the in-pod collector
// judges it. Code judges run only with --run-code-judges (in the eval file's directory); otherwise they are
// reported as skipped.
func judgingInput(cfg *config, file *evalfile.File) (pipeline.Input, error) {
	if file == nil {
		return pipeline.Input{}, nil
	}
	settings, err := loadJudging(cfg)
	if err != nil {
		return pipeline.Input{}, err
	}
	threshold, err := verdict.ParseThreshold(settings.PassThreshold)
	if err != nil {
		return pipeline.Input{}, usageError(fmt.Sprintf("pass threshold: %v", err))
	}
	b, err := bundleDir(cfg.bundle, cfg.evalPath)
	if err != nil {
		return pipeline.Input{}, err
	}
	j := &evaluate.Judge{Threshold: threshold, Bundle: b, InputFiles: settings.InputFiles, Grader42: grade42.Graders{}}
	if cfg.runCodeJudges {
		j.CodeJudges = evaluate.ScriptRunner{Dir: filepath.Dir(cfg.evalPath), Timeout: settings.CodeJudgeTimeout}
	}
	model, parallel, err := cfg.llm.client(settings.LLM)
	if err != nil {
		return pipeline.Input{}, err
	}
	if model != nil {
		j.LLM = model
		j.AnswerNonceKey = cfg.llm.answerNonceKey(settings.LLM)
	}
	return pipeline.Input{File: file, Judge: j, CaseParallelism: parallel}, nil
}

// bundleDir is the eval bundle of `collector check`: the directory given with --bundle, which must hold the eval
// file (its path inside it is the eval file's bundle path), or, without --bundle, the eval file's own directory.
// References then resolve from the eval file's directory up to that root (bundle.Dir), never outside it. Without
// --bundle, AgentV's config (.agentv/config.yaml, whose guideline patterns the v2 judges read) is searched up to the
// eval file's repository root, as AgentV v2.0.1 searches it.
func bundleDir(root, evalPath string) (bundle.Dir, error) {
	if root == "" {
		dir, err := filepath.Abs(filepath.Dir(evalPath))
		if err != nil {
			return bundle.Dir{}, fmt.Errorf("--eval: %w", err)
		}
		return bundle.Dir{Root: dir, EvalFile: filepath.Base(evalPath), ConfigRoot: bundle.RepoRoot(dir)}, nil
	}
	absRoot, err := filepath.Abs(root)
	if err != nil {
		return bundle.Dir{}, fmt.Errorf("--bundle: %w", err)
	}
	absEval, err := filepath.Abs(evalPath)
	if err != nil {
		return bundle.Dir{}, fmt.Errorf("--eval: %w", err)
	}
	rel, err := filepath.Rel(absRoot, absEval)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return bundle.Dir{}, usageError(fmt.Sprintf("--eval %s is not inside --bundle %s", evalPath, root))
	}
	return bundle.Dir{Root: absRoot, EvalFile: filepath.ToSlash(rel)}, nil
}
