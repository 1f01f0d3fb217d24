package podfiles

import (
	"errors"
	"fmt"
	"os"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/layout"
)

// LoadRunConfig reads run.json and checks that every default is resolved.
func LoadRunConfig(path string) (*layout.RunConfig, error) {
	var cfg layout.RunConfig
	if err := ReadJSON(path, &cfg); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("run configuration %s does not exist", path)
		}
		return nil, fmt.Errorf("read run configuration: %w", err)
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("run configuration %s: %w", path, err)
	}
	return &cfg, nil
}

// LoadEvalFile reads and parses the eval file named by the run configuration.
func LoadEvalFile(cfg *layout.RunConfig) (*evalfile.File, error) {
	data, err := os.ReadFile(cfg.EvalFile)
	if err != nil {
		return nil, fmt.Errorf("read eval file: %w", err)
	}
	f, err := evalfile.Parse(data, evalfile.WithDefaultEvaluators(cfg.DefaultEvaluators))
	if err != nil {
		return nil, fmt.Errorf("eval file %s: %w", cfg.EvalFile, err)
	}
	return f, nil
}
