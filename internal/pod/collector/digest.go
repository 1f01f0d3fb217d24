package collector

import (
	"errors"
	"fmt"
	"os"

	"github.com/evalrun-operator/evalrun-operator/internal/bundle"
	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/records"
)

// viewDigests gives each case's runner-view digest (records.Sum) from the pod's eval file: the case's view and,
// in a bundle run, the bundle path and content digest of each of its input files as the manifest pins them (what
// install copied for the runner). Everything it reads is the trusted side's (the eval file, the pinned manifest),
// never the runner's output. It is safe for concurrent use.
type viewDigests struct {
	file     *evalfile.File
	manifest *bundle.Manifest
}

// newViewDigests reads the bundle's manifest, when the run has a bundle; file must be fully parsed (not by its
// header only).
func newViewDigests(cfg *podwire.RunConfig, file *evalfile.File) (*viewDigests, error) {
	if file == nil {
		return nil, errors.New("the runner-view digests need the whole eval file")
	}
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

// of is the digest of case id (hint: its likely position in the eval file). The case's view is rendered into
// scratch's spare capacity (its length is kept), so that it costs no allocation; scratch's bytes beyond its
// length are overwritten, and the possibly grown buffer is returned for the next case.
func (d *viewDigests) of(scratch []byte, id string, hint int) (records.ViewDigest, []byte, error) {
	i, ok := d.file.Find(id, hint)
	if !ok {
		return records.ViewDigest{}, scratch, errors.New("the case is not in the eval file")
	}
	start := len(scratch)
	b, err := d.file.AppendCaseView(scratch, i)
	if err != nil {
		return records.ViewDigest{}, scratch, err
	}
	view := b[start:]
	if d.manifest == nil {
		// Without a bundle the runner's input files are in its image: their references are in the view.
		return records.Sum(view, nil), b[:start], nil
	}
	var files []records.InputFile
	for _, ref := range d.file.CaseAt(i).InputFileRefs() {
		f, err := d.manifest.Resolve(ref)
		if err != nil {
			return records.ViewDigest{}, b[:start], fmt.Errorf("input file %q: %w", ref, err)
		}
		files = append(files, records.InputFile{Ref: ref, Path: f.Path, SHA256: f.SHA256})
	}
	return records.Sum(view, files), b[:start], nil
}
