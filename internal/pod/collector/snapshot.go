package collector

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/safefile"
)

// defaultMaxOutputBytes bounds the Batched output when run.json does not.
const defaultMaxOutputBytes = 1 << 30

// Snapshot says what TakeSnapshot copied from the runner's output directory, and what it could not.
type Snapshot struct {
	// OutputErr says why the runner's output could not be copied at all (a symlink, a FIFO, a directory ...);
	// nil when it was copied or does not exist.
	OutputErr error
	// OutputMissing is true when the Batched output file does not exist.
	OutputMissing bool
	// CaseErrors holds the PerCase outputs that could not be copied, by case id.
	CaseErrors map[string]error
}

// TakeSnapshot copies the runner's final output from src into dst, a directory the runner cannot reach, so that
// the collector and the code judges read the same bytes and nothing the runner does later can change them. Every
// file is opened beneath src without following a symlink at any path component, must be a regular file, and is
// read up to a bound.
func TakeSnapshot(cfg *podwire.RunConfig, src, dst podwire.Output) *Snapshot {
	s := &Snapshot{CaseErrors: map[string]error{}}
	if err := os.MkdirAll(dst.CaseOutputDir(), 0o755); err != nil {
		s.OutputErr = fmt.Errorf("prepare the snapshot directory: %w", err)
		return s
	}
	dir, err := safefile.OpenDir(src.Root)
	if err != nil {
		s.OutputErr = fmt.Errorf("open the output directory: %w", err)
		return s
	}
	defer func() { _ = dir.Close() }()

	if cfg.Batching == string(evalsv1alpha1.BatchingPerCase) {
		for _, id := range cfg.CaseIDs {
			err := copyOut(dir, podwire.CaseOutputName(id), dst.CaseOutput(id), maxCaseOutputBytes)
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				s.CaseErrors[id] = err
			}
		}
	} else {
		max := cfg.MaxOutputBytes
		if max <= 0 {
			max = defaultMaxOutputBytes
		}
		err := copyOut(dir, podwire.BatchOutputName, dst.BatchOutput(), max)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			s.OutputMissing = true
		case err != nil:
			s.OutputErr = err
		}
	}
	return s
}

// copyOut copies src (relative to dir) to dst. A file larger than max is refused (a *safefile.TooLargeError).
func copyOut(dir *safefile.Dir, rel, dst string, max int64) (err error) {
	f, err := dir.Open(rel, max)
	if err != nil {
		return err
	}
	// Read-only: a close error cannot lose data.
	defer func() { _ = f.Close() }()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("prepare the snapshot directory: %w", err)
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("create the snapshot of %s: %w", rel, err)
	}
	// Holes stay holes: a sparse output within the bound costs the snapshot what it stores, not its size.
	_, cerr := f.CopyTo(out)
	if err := out.Close(); cerr == nil && err != nil {
		cerr = fmt.Errorf("write the snapshot of %s: %w", rel, err)
	}
	return cerr
}
