package collector

import (
	"fmt"
	"os"

	"github.com/evalrun-operator/evalrun-operator/internal/bundle"
	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/layout"
	"github.com/evalrun-operator/evalrun-operator/internal/records"
)

// viewDigests gives each case's runner-view digest (records.Digest) from the pod's eval file: the case's view and,
// in a bundle run, the bundle path and content digest of each of its input files as the manifest pins them (what
// install copied for the runner). It is safe for concurrent use.
type viewDigests struct {
	file     *evalfile.File
	manifest *bundle.Manifest
}

// newViewDigests reads the bundle's manifest, when the run has a bundle; file must be fully parsed (not by its
// header only).
func newViewDigests(cfg *layout.RunConfig, file *evalfile.File) (*viewDigests, error) {
	d := &viewDigests{file: file}
	if cfg.Bundle != nil {
		data, err := os.ReadFile(cfg.Bundle.ManifestFile)
		if err != nil {
			return nil, fmt.Errorf("read the bundle's manifest: %w", err)
		}
		if d.manifest, err = bundle.DecodeManifest(data); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// of is the digest of case id (hint: its likely position in the eval file).
func (d *viewDigests) of(id string, hint int) (string, error) {
	i, ok := d.file.Find(id, hint)
	if !ok {
		return "", fmt.Errorf("the case is not in the eval file")
	}
	view, err := d.file.CaseView(i)
	if err != nil {
		return "", err
	}
	if d.manifest == nil {
		// Without a bundle the runner's input files are in its image: their references are in the view.
		return records.Digest(view, nil), nil
	}
	var files []records.InputFile
	for _, ref := range d.file.CaseAt(i).InputFileRefs() {
		f, err := d.manifest.Resolve(ref)
		if err != nil {
			return "", fmt.Errorf("input file %q: %w", ref, err)
		}
		files = append(files, records.InputFile{Ref: ref, Path: f.Path, SHA256: f.SHA256})
	}
	return records.Digest(view, files), nil
}
