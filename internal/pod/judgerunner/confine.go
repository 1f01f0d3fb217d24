package judgerunner

import (
	"fmt"
	"path/filepath"

	"github.com/evalrun-operator/evalrun-operator/internal/bundle"
	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/pod/confine"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
)

// Confinement is how the judge runner confines each case's scripts with Landlock (internal/confine).
type Confinement struct {
	// Shim is the binary that runs as the shim (this binary: "<Shim> confine.ShimMode -- sh -c script").
	Shim string
	// Image are the directories of the judge image that scripts read and execute beneath (confine.ImageRoots).
	Image []string
	// ReadOnly are further directories read beneath (/proc).
	ReadOnly []string
}

// casePolicies builds the Landlock policy of each case: the image, the scratch directories, /proc, and in a
// bundle run the bundle's files that are no case's key (scripts, prompts, templates, input files) plus the case's
// own key files (its expected messages' `type: file` references). Never the eval file, the eval ConfigMap, the
// shard, the snapshot, the FIFOs or another case's reference files: those are the pod's mounts under /evalrun*.
type casePolicies struct {
	base confine.Policy
	// dir resolves a case's references in a bundle run (nil otherwise).
	dir *bundle.Dir
}

// newCasePolicies reads the bundle's manifest (a bundle run) and sets the files every case's scripts may read.
func newCasePolicies(c *Confinement, cfg *podwire.RunConfig, file *evalfile.File, scratch []string) (*casePolicies, error) {
	p := &casePolicies{base: confine.Policy{Image: c.Image, ReadOnly: c.ReadOnly, Scratch: scratch}}
	b := cfg.Bundle
	if b == nil {
		return p, nil
	}
	var m bundle.Manifest
	if err := podwire.ReadJSON(b.ManifestFile, &m); err != nil {
		return nil, fmt.Errorf("the bundle's manifest: %w", err)
	}
	d := bundle.Dir{Root: b.Dir, EvalFile: b.EvalFile}
	p.dir = &d
	keys := map[string]bool{filepath.Clean(filepath.Join(b.Dir, b.EvalFile)): true}
	for _, id := range file.CaseIDs() {
		for _, ref := range file.Case(id).ExpectedFileRefs() {
			if rel, err := d.Resolve(ref); err == nil {
				keys[filepath.Clean(filepath.Join(b.Dir, filepath.FromSlash(rel)))] = true
			}
		}
	}
	for _, f := range m.Files {
		if path := filepath.Clean(filepath.Join(b.Dir, filepath.FromSlash(f.Path))); !keys[path] {
			p.base.Files = append(p.base.Files, path)
		}
	}
	p.base.ListDirs = []string{b.Dir}
	return p, nil
}

// forCase is the policy of case c's scripts: the base plus its own key files.
func (p *casePolicies) forCase(c *evalfile.Case) confine.Policy {
	pol := p.base
	if p.dir == nil {
		return pol
	}
	pol.Files = append([]string(nil), p.base.Files...)
	for _, ref := range c.ExpectedFileRefs() {
		if rel, err := p.dir.Resolve(ref); err == nil {
			pol.Files = append(pol.Files, filepath.Join(p.dir.Root, filepath.FromSlash(rel)))
		}
	}
	return pol
}
