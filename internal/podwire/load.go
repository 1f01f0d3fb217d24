package podwire

import (
	"errors"
	"fmt"
	"os"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
)

// LoadRunConfig reads run.json and checks that every default is resolved.
func LoadRunConfig(path string) (*RunConfig, error) {
	var cfg RunConfig
	if err := ReadJSON(path, &cfg); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("run configuration %s does not exist", path)
		}
		return nil, fmt.Errorf("read run configuration: %w", err)
	}
	if cfg.IDsFile != "" {
		data, err := os.ReadFile(cfg.IDsFile)
		if err != nil {
			return nil, fmt.Errorf("read the run's case ids: %w", err)
		}
		if err := cfg.LoadIDs(data); err != nil {
			return nil, err
		}
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("run configuration %s: %w", path, err)
	}
	return &cfg, nil
}

// LoadEvalFile reads and parses the eval file named by the run configuration.
func LoadEvalFile(cfg *RunConfig) (*evalfile.File, error) { return loadEvalFile(cfg, false) }

// LoadEvalFileForJudging is LoadEvalFile for a reader that only judges (the collector). When the manager found
// that every case is judged by its id and the evaluators all inherit (cfg.SharedEvaluators), only the file's header
// is parsed: the cases are cfg.CaseIDs, which the file must hold as many items as, else it is parsed whole. The
// launcher, which hands cases' messages to the runner, and the judge container, which runs code judges on whole
// cases, read the whole file.
func LoadEvalFileForJudging(cfg *RunConfig) (*evalfile.File, error) {
	// Keeping records takes each case's runner view: the whole file.
	return loadEvalFile(cfg, cfg.SharedEvaluators && len(cfg.CaseIDs) > 0 && cfg.Records == nil)
}

// loadEvalFile reads the eval file and parses its header only (headerOnly, when the file allows) or all of it.
func loadEvalFile(cfg *RunConfig, headerOnly bool) (*evalfile.File, error) {
	data, err := os.ReadFile(cfg.EvalFile)
	if err != nil {
		return nil, fmt.Errorf("read eval file: %w", err)
	}
	// data is this function's alone: the File may refer to it instead of a copy.
	opts := []evalfile.ParseOption{evalfile.WithDefaultEvaluators(cfg.DefaultEvaluators), evalfile.WithOwnedData()}
	if b := cfg.Bundle; b != nil {
		// A 4.42 suite's other files (its tests files, assertion templates) are read from the bundle, confined to it.
		root, err := os.OpenRoot(b.Dir)
		if err != nil {
			return nil, fmt.Errorf("the eval bundle: %w", err)
		}
		defer func() { _ = root.Close() }()
		opts = append(opts, evalfile.WithFiles(root.FS(), b.EvalFile))
	}
	var f *evalfile.File
	parsed := false
	if headerOnly {
		f, parsed, err = evalfile.ParseShared(data, cfg.CaseIDs, opts...)
	}
	if !parsed {
		f, err = evalfile.Parse(data, opts...)
	}
	if err != nil {
		return nil, fmt.Errorf("eval file %s: %w", cfg.EvalFile, err)
	}
	return f, nil
}

// LoadRunnerConfig reads the runner's configuration (written by WriteRunnerView) and checks it.
func LoadRunnerConfig(path string) (*RunnerConfig, error) {
	var cfg RunnerConfig
	if err := ReadJSON(path, &cfg); err != nil {
		return nil, fmt.Errorf("read the runner configuration: %w", err)
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("runner configuration %s: %w", path, err)
	}
	return &cfg, nil
}

// LoadRunnerEvalFile reads and parses the runner's eval file (the launcher builds PerCase prompts from it).
func LoadRunnerEvalFile(cfg *RunnerConfig) (*evalfile.File, error) {
	data, err := os.ReadFile(cfg.EvalFile)
	if err != nil {
		return nil, fmt.Errorf("read eval file: %w", err)
	}
	f, err := evalfile.Parse(data, evalfile.WithOwnedData())
	if err != nil {
		return nil, fmt.Errorf("eval file %s: %w", cfg.EvalFile, err)
	}
	return f, nil
}
