package podfiles

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/layout"
	"github.com/evalrun-operator/evalrun-operator/internal/objstore"
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
func LoadEvalFile(cfg *layout.RunConfig) (*evalfile.File, error) { return loadEvalFile(cfg, false) }

// LoadEvalFileForJudging is LoadEvalFile for a reader that only judges (the collector). When the manager found
// that every case is judged by its id and the evaluators all inherit (cfg.SharedEvaluators), only the file's header
// is parsed: the cases are cfg.CaseIDs, which the file must hold as many items as, else it is parsed whole. The
// launcher, which hands cases' messages to the runner, and the judge container, which runs code judges on whole
// cases, read the whole file.
func LoadEvalFileForJudging(cfg *layout.RunConfig) (*evalfile.File, error) {
	return loadEvalFile(cfg, cfg.SharedEvaluators && len(cfg.CaseIDs) > 0)
}

// loadEvalFile reads the eval file and parses its header only (headerOnly, when the file allows) or all of it.
func loadEvalFile(cfg *layout.RunConfig, headerOnly bool) (*evalfile.File, error) {
	data, err := os.ReadFile(cfg.EvalFile)
	if err != nil {
		return nil, fmt.Errorf("read eval file: %w", err)
	}
	// data is this function's alone: the File may refer to it instead of a copy.
	opts := []evalfile.ParseOption{evalfile.WithDefaultEvaluators(cfg.DefaultEvaluators), evalfile.WithOwnedData()}
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

// WriteShardEvalFile writes the pod's eval file when it is not the pinned one: the cases of cfg.SourceEvalFile
// that are the pod's (its shard's), to cfg.EvalFile (atomically, read-only). When the eval file is a bucket
// object, it first downloads it into cfg.SourceEvalFile, verifying its size and sha256, with the credentials
// mounted in credentialsDir. It checks that the pod's file holds exactly its case ids. Nothing is written when the
// pod's eval file is the pinned one.
func WriteShardEvalFile(ctx context.Context, cfg *layout.RunConfig, credentialsDir string) error {
	if cfg.SourceEvalFile == "" {
		return nil
	}
	if o := cfg.EvalObject; o != nil {
		if err := downloadEvalFile(ctx, o, credentialsDir, cfg.SourceEvalFile); err != nil {
			return err
		}
	}
	data, err := os.ReadFile(cfg.SourceEvalFile)
	if err != nil {
		return fmt.Errorf("read the eval file to split: %w", err)
	}
	// The source holds the run's cases in order (CaseIDs before the shard was taken), or, downloaded for a
	// resumed run, every case of the file (AllCaseIDs), of which the pod keeps its own.
	lo, hi := cfg.ShardOffset, cfg.ShardOffset+len(cfg.CaseIDs)
	keep := func(i int) bool { return i >= lo && i < hi }
	if cfg.EvalObject != nil && len(cfg.AllCaseIDs) > 0 {
		mine := make(map[string]bool, len(cfg.CaseIDs))
		for _, id := range cfg.CaseIDs {
			mine[id] = true
		}
		keep = func(i int) bool { return i < len(cfg.AllCaseIDs) && mine[cfg.AllCaseIDs[i]] }
	}
	shard, err := evalfile.Subset(data, keep)
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

// downloadEvalFile downloads the eval file's object into path, verifying its size and sha256 on the way; nothing
// is at path unless it verified.
func downloadEvalFile(ctx context.Context, o *layout.EvalObject, credentialsDir, path string) error {
	oc, err := objstore.ConfigFromDir(credentialsDir, objstore.Config{Endpoint: o.Bucket.Endpoint, Region: o.Bucket.Region,
		Bucket: o.Bucket.Bucket, Prefix: o.Bucket.Prefix, PathStyle: true})
	if err != nil {
		return fmt.Errorf("the eval file's bucket credentials: %w", err)
	}
	store, err := objstore.Open(oc)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create the eval file's directory: %w", err)
	}
	if err := store.GetVerifiedFile(ctx, o.Key, o.SHA256, o.MaxBytes, path, 0o444); err != nil {
		return fmt.Errorf("download the eval file: %w", err)
	}
	return nil
}

// WriteRunnerView writes what the runner reads of the run into the view volume: its eval file at
// cfg.RunnerEvalFile, the runner view of cfg.EvalFile (evalfile.WriteView) or, with evalFileView Full, a copy of
// it, and its RunnerConfig at cfg.RunnerConfigFile, both read-only. cfg is narrowed to the pod's shard, whose eval
// file WriteShardEvalFile has written. It returns the number of cases in the view (0 for Full).
func WriteRunnerView(cfg *layout.RunConfig) (int, error) {
	data, err := os.ReadFile(cfg.EvalFile)
	if err != nil {
		return 0, fmt.Errorf("read the eval file for the runner: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(cfg.RunnerEvalFile), 0o755); err != nil {
		return 0, fmt.Errorf("create the runner's view directory: %w", err)
	}
	n := 0
	err = WriteFileAtomic(cfg.RunnerEvalFile, 0o444, func(w io.Writer) error {
		if cfg.EvalFileView == evalsv1alpha1.EvalFileViewFull {
			_, err := w.Write(data)
			return err
		}
		// data is this function's alone; the evaluators do not matter to the view.
		var err error
		n, err = evalfile.WriteView(w, data, evalfile.WithOwnedData())
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("write the runner's eval file: %w", err)
	}
	rc := cfg.RunnerConfig(cfg.RunnerEvalFile)
	if err := rc.Validate(); err != nil {
		return 0, err
	}
	if err := os.MkdirAll(filepath.Dir(cfg.RunnerConfigFile), 0o755); err != nil {
		return 0, fmt.Errorf("create the runner's view directory: %w", err)
	}
	if err := WriteFileAtomic(cfg.RunnerConfigFile, 0o444, func(w io.Writer) error {
		return json.NewEncoder(w).Encode(rc)
	}); err != nil {
		return 0, fmt.Errorf("write the runner's configuration: %w", err)
	}
	return n, nil
}

// LoadRunnerConfig reads the runner's configuration (written by WriteRunnerView) and checks it.
func LoadRunnerConfig(path string) (*layout.RunnerConfig, error) {
	var cfg layout.RunnerConfig
	if err := ReadJSON(path, &cfg); err != nil {
		return nil, fmt.Errorf("read the runner configuration: %w", err)
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("runner configuration %s: %w", path, err)
	}
	return &cfg, nil
}

// LoadRunnerEvalFile reads and parses the runner's eval file (the launcher builds PerCase prompts from it).
func LoadRunnerEvalFile(cfg *layout.RunnerConfig) (*evalfile.File, error) {
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
