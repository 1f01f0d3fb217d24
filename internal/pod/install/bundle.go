package install

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/evalrun-operator/evalrun-operator/internal/bundle"
	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/objstore"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
)

// WriteBundle materializes the run's eval bundle (cfg.Bundle) in the bundle volume, every file at its bundle path,
// read-only, and each verified against the pinned manifest (its size and sha256) before it is there: from the
// manager's pinned copy of a ConfigMap bundle, or downloaded from the bucket with the credentials mounted in
// credentialsDir. A file that is not the pinned one fails the install, naming it, so a source changed after
// pinning never changes the run. It returns the manifest.
func WriteBundle(ctx context.Context, cfg *podwire.RunConfig, credentialsDir string) (*bundle.Manifest, error) {
	b := cfg.Bundle
	data, err := os.ReadFile(b.ManifestFile)
	if err != nil {
		return nil, fmt.Errorf("read the eval bundle's manifest: %w", err)
	}
	m, err := bundle.DecodeManifest(data)
	if err != nil {
		return nil, err
	}
	if m.SHA256 != b.SHA256 || m.EvalFile != b.EvalFile {
		return nil, fmt.Errorf("the eval bundle's manifest is of %s (eval file %s), not the run's %s (eval file %s)", m.SHA256, m.EvalFile, b.SHA256, b.EvalFile)
	}
	var store *objstore.Store
	if o := b.Objects; o != nil {
		oc, err := objstore.ConfigFromDir(credentialsDir, objstore.Config{Endpoint: o.Endpoint, Region: o.Region, Bucket: o.Bucket,
			Prefix: o.Prefix, PathStyle: true})
		if err != nil {
			return nil, fmt.Errorf("the eval bundle's bucket credentials: %w", err)
		}
		if store, err = objstore.Open(oc); err != nil {
			return nil, err
		}
	}
	for _, f := range m.Files {
		dst := filepath.Join(b.Dir, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return nil, fmt.Errorf("create the eval bundle's directory for %s: %w", f.Path, err)
		}
		if store != nil {
			// Verified on the way: nothing is at dst unless it is the pinned file.
			if err := store.GetVerifiedFile(ctx, f.Path, f.SHA256, max(f.Size, 1), dst, 0o444); err != nil {
				return nil, fmt.Errorf("download %s of the eval bundle: %w", f.Path, err)
			}
			continue
		}
		content, err := readPinnedCopy(b.SourceDir, f)
		if err != nil {
			return nil, err
		}
		if err := podwire.WriteFileAtomic(dst, 0o444, func(w io.Writer) error {
			_, err := w.Write(content)
			return err
		}); err != nil {
			return nil, fmt.Errorf("write %s of the eval bundle: %w", f.Path, err)
		}
	}
	return m, nil
}

// readPinnedCopy reads file f from the pinned copy of a ConfigMap bundle mounted at dir (its key the escaped
// path) and verifies it.
func readPinnedCopy(dir string, f bundle.File) ([]byte, error) {
	key, err := bundle.KeyFor(f.Path)
	if err != nil {
		return nil, err
	}
	src, err := os.Open(filepath.Join(dir, key))
	if err != nil {
		return nil, fmt.Errorf("read %s of the eval bundle: %w", f.Path, err)
	}
	defer func() { _ = src.Close() }()
	content, err := io.ReadAll(io.LimitReader(src, f.Size+1))
	if err != nil {
		return nil, fmt.Errorf("read %s of the eval bundle: %w", f.Path, err)
	}
	if err := f.Verify(content); err != nil {
		return nil, err
	}
	return content, nil
}

// WriteRunnerInputs copies into the runner's bundle (cfg.Bundle.RunnerDir, in the view volume) the input files of
// the pod's cases, the `type: file` segments of their input messages resolved in the bundle as the judges resolve
// them (bundle.Manifest.Resolve), at their bundle paths, read-only. Nothing else of the bundle reaches the
// runner: not its prompt files, reference files, scripts or the eval file (its runner view is written by
// WriteRunnerView). It returns how many files it copied.
func WriteRunnerInputs(cfg *podwire.RunConfig, m *bundle.Manifest) (int, error) {
	data, err := os.ReadFile(cfg.EvalFile)
	if err != nil {
		return 0, fmt.Errorf("read the eval file for the runner's input files: %w", err)
	}
	f, err := evalfile.Parse(data, evalfile.WithDefaultEvaluators(cfg.DefaultEvaluators), evalfile.WithOwnedData())
	if err != nil {
		return 0, fmt.Errorf("the pod's eval file does not parse: %w", err)
	}
	b := cfg.Bundle
	copied := map[string]bool{}
	for i := range f.NumCases() {
		c := f.CaseAt(i)
		for _, ref := range c.InputFileRefs() {
			file, err := m.Resolve(ref)
			if err != nil {
				return 0, fmt.Errorf("case %s: input file: %w", c.ID, err)
			}
			if file.Path == m.EvalFile {
				return 0, fmt.Errorf("case %s: input file %q is the eval file itself", c.ID, ref)
			}
			if copied[file.Path] {
				continue
			}
			if err := copyVerified(filepath.Join(b.Dir, filepath.FromSlash(file.Path)), filepath.Join(b.RunnerDir, filepath.FromSlash(file.Path)), file); err != nil {
				return 0, err
			}
			copied[file.Path] = true
		}
	}
	return len(copied), nil
}

// copyVerified copies the bundle file f from src to dst (read-only), verifying it once more.
func copyVerified(src, dst string, f bundle.File) error {
	content, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("read the input file %s: %w", f.Path, err)
	}
	if err := f.Verify(content); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("create the runner's directory for %s: %w", f.Path, err)
	}
	if err := podwire.WriteFileAtomic(dst, 0o444, func(w io.Writer) error {
		_, err := w.Write(content)
		return err
	}); err != nil {
		return fmt.Errorf("write the runner's input file %s: %w", f.Path, err)
	}
	return nil
}
