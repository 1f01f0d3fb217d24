package podfiles

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

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

// WriteShardEvalFile writes the pod's shard of a sharded run's eval file: the cases of cfg.SourceEvalFile from
// cfg.ShardOffset on, as many as the shard's case ids, to cfg.EvalFile (atomically, read-only). It checks that
// the shard's file holds exactly the shard's case ids. Nothing is written when the run is not split.
func WriteShardEvalFile(cfg *layout.RunConfig) error {
	if cfg.SourceEvalFile == "" {
		return nil
	}
	data, err := os.ReadFile(cfg.SourceEvalFile)
	if err != nil {
		return fmt.Errorf("read the eval file to split: %w", err)
	}
	lo, hi := cfg.ShardOffset, cfg.ShardOffset+len(cfg.CaseIDs)
	shard, err := evalfile.Subset(data, func(i int) bool { return i >= lo && i < hi })
	if err != nil {
		return fmt.Errorf("split eval file %s for shard %d: %w", cfg.SourceEvalFile, cfg.ShardIndex, err)
	}
	f, err := evalfile.Parse(shard, evalfile.WithDefaultEvaluators(cfg.DefaultEvaluators))
	if err != nil {
		return fmt.Errorf("the eval file of shard %d does not parse: %w", cfg.ShardIndex, err)
	}
	if got := f.CaseIDs(); !slices.Equal(got, cfg.CaseIDs) {
		return fmt.Errorf("the eval file of shard %d holds %d cases that are not the shard's %d", cfg.ShardIndex, len(got), len(cfg.CaseIDs))
	}
	if err := os.MkdirAll(filepath.Dir(cfg.EvalFile), 0o755); err != nil {
		return fmt.Errorf("create the shard's directory: %w", err)
	}
	return WriteFileAtomic(cfg.EvalFile, 0o444, func(w io.Writer) error {
		_, err := w.Write(shard)
		return err
	})
}
