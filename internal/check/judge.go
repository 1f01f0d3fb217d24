package check

import (
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/evaluate"
	"github.com/evalrun-operator/evalrun-operator/internal/pipeline"
)

// judgingFile is the EvalRun's spec.judging as `collector check --judging` reads it: the settings that change
// verdicts, so that a local check gives the in-cluster ones.
type judgingFile struct {
	Evaluators    []map[string]any `json:"evaluators"`
	PassThreshold string           `json:"passThreshold"`
}

// loadJudging reads --judging (YAML or JSON) and applies --pass-threshold over it.
func loadJudging(cfg *config) (judgingFile, error) {
	var j judgingFile
	if cfg.judgingPath != "" {
		data, err := os.ReadFile(cfg.judgingPath)
		if err != nil {
			return j, fmt.Errorf("reading the judging file: %w", err)
		}
		if err := yaml.UnmarshalStrict(data, &j); err != nil {
			return j, usageError(fmt.Sprintf("judging file %s: %v (want the EvalRun's spec.judging: evaluators, passThreshold)", cfg.judgingPath, err))
		}
	}
	if cfg.passThreshold != "" {
		j.PassThreshold = cfg.passThreshold
	}
	return j, nil
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
	threshold, err := evaluate.ParseThreshold(settings.PassThreshold)
	if err != nil {
		return pipeline.Input{}, usageError(fmt.Sprintf("pass threshold: %v", err))
	}
	j := &evaluate.Judge{Threshold: threshold}
	if cfg.runCodeJudges {
		j.CodeJudges = evaluate.ScriptRunner{Dir: filepath.Dir(cfg.evalPath), Timeout: evaluate.DefaultCodeJudgeTimeout}
	}
	return pipeline.Input{File: file, Judge: j}, nil
}
