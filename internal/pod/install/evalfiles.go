package install

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/objstore"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
)

// WriteShardEvalFile writes the pod's eval file when it is not the pinned one: the cases of cfg.SourceEvalFile
// that are the pod's (its shard's), to cfg.EvalFile (atomically, read-only). When the eval file is a bucket
// object, it first downloads it into cfg.SourceEvalFile, verifying its size and sha256, with the credentials
// mounted in credentialsDir. It checks that the pod's file holds exactly its case ids. Nothing is written when the
// pod's eval file is the pinned one.
func WriteShardEvalFile(ctx context.Context, cfg *podwire.RunConfig, credentialsDir string) error {
	if cfg.SourceEvalFile == "" || cfg.NothingToRun {
		// A pod with nothing to run (a trial of a resumed run whose shard's cases are all carried) has no eval file.
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
	// The source holds the run's cases in order (CaseIDs before the shard was taken), or, for a resumed run whose
	// eval file stays in a bucket (an eval file object, or a bundle's), every case of the file (AllCaseIDs), of
	// which the pod keeps its own: its shard's, or, in a trial of a resumed run, those of its shard that its trial
	// runs (CaseIndexes).
	lo, hi := cfg.ShardOffset, cfg.ShardOffset+len(cfg.CaseIDs)
	keep := func(i int) bool { return i >= lo && i < hi }
	if cfg.CaseIndexes != nil {
		mine := make(map[int]bool, len(cfg.CaseIndexes))
		for _, i := range cfg.CaseIndexes {
			mine[i] = true
		}
		keep = func(i int) bool { return mine[i] }
	}
	if cfg.EvalFileInBucket() && len(cfg.AllCaseIDs) > 0 {
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
	return podwire.WriteFileAtomic(cfg.EvalFile, 0o444, func(w io.Writer) error {
		_, err := w.Write(shard)
		return err
	})
}

// downloadEvalFile downloads the eval file's object into path, verifying its size and sha256 on the way; nothing
// is at path unless it verified.
func downloadEvalFile(ctx context.Context, o *podwire.EvalObject, credentialsDir, path string) error {
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
func WriteRunnerView(cfg *podwire.RunConfig) (int, error) {
	if cfg.NothingToRun {
		// No eval file: only the runner's configuration, which tells the launcher not to start the runner.
		return 0, writeRunnerConfig(cfg)
	}
	data, err := os.ReadFile(cfg.EvalFile)
	if err != nil {
		return 0, fmt.Errorf("read the eval file for the runner: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(cfg.RunnerEvalFile), 0o755); err != nil {
		return 0, fmt.Errorf("create the runner's view directory: %w", err)
	}
	n := 0
	err = podwire.WriteFileAtomic(cfg.RunnerEvalFile, 0o444, func(w io.Writer) error {
		if cfg.EvalFileView == podwire.EvalFileViewFull {
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
	return n, writeRunnerConfig(cfg)
}

// writeRunnerConfig writes the runner's RunnerConfig at cfg.RunnerConfigFile, read-only.
func writeRunnerConfig(cfg *podwire.RunConfig) error {
	rc := cfg.RunnerConfig(cfg.RunnerEvalFile)
	if err := rc.Validate(); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(cfg.RunnerConfigFile), 0o755); err != nil {
		return fmt.Errorf("create the runner's view directory: %w", err)
	}
	if err := podwire.WriteFileAtomic(cfg.RunnerConfigFile, 0o444, func(w io.Writer) error {
		return json.NewEncoder(w).Encode(rc)
	}); err != nil {
		return fmt.Errorf("write the runner's configuration: %w", err)
	}
	return nil
}
