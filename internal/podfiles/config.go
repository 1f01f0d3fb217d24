package podfiles

import (
	"errors"
	"fmt"
	"os"
	"time"

	v1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/layout"
)

// Defaults for run.json fields the manager left at zero.
const (
	DefaultKillGrace          = 10 * time.Second
	DefaultHealthcheckTimeout = 60 * time.Second
	DefaultCodeJudgeTimeout   = 60 * time.Second
	DefaultCodeJudgeWorkers   = 2
	DefaultResultsDeadline    = 300 * time.Second
	DefaultJudgeDeadline      = 30 * time.Minute
	DefaultCollectorStart     = 2 * time.Minute
)

// LoadRunConfig reads and checks run.json.
func LoadRunConfig(path string) (*layout.RunConfig, error) {
	var cfg layout.RunConfig
	if err := ReadJSON(path, &cfg); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("run configuration %s does not exist", path)
		}
		return nil, fmt.Errorf("read run configuration: %w", err)
	}
	switch cfg.Batching {
	case "":
		cfg.Batching = string(v1alpha1.BatchingBatched)
	case string(v1alpha1.BatchingBatched), string(v1alpha1.BatchingPerCase):
	default:
		return nil, fmt.Errorf("run configuration %s: batching %q is neither Batched nor PerCase", path, cfg.Batching)
	}
	if cfg.CommandTemplate == "" {
		return nil, fmt.Errorf("run configuration %s has no commandTemplate", path)
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

func Seconds(n int32, def time.Duration) time.Duration {
	if n <= 0 {
		return def
	}
	return time.Duration(n) * time.Second
}

func Workers(n int32, def int) int {
	if n <= 0 {
		return def
	}
	return int(n)
}
