package bundle

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Scan lists the files of the bundle in directory root, for making a bundle from a local directory: every regular
// file under it as a File (hashed), in path order. Hidden entries (a name starting with ".") are left out, as
// version-control directories are, but for the root's .agentv directory (AgentV's config and templates); a
// symbolic link, device, socket or FIFO is an error naming it (a bundle holds
// files only, and a link could lead out of the directory). It stops with an error past MaxFiles files or MaxBytes.
func Scan(root string) ([]File, error) {
	// The bundle root's .agentv directory is kept: AgentV's config (ConfigPath) and a 4.42 suite's assertion
	// templates (.agentv/templates) are read from it.
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("opening the bundle directory: %w", err)
	}
	defer func() { _ = r.Close() }()
	var files []File
	var total int64
	err = fs.WalkDir(r.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != "." && strings.HasPrefix(d.Name(), ".") && (!d.IsDir() || p != agentvDir) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		switch {
		case d.IsDir():
			return nil
		case !d.Type().IsRegular():
			return fmt.Errorf("%s is not a regular file (%s): a bundle holds regular files only", filepath.Join(root, p), d.Type())
		}
		if err := CheckPath(p); err != nil {
			return err
		}
		if len(files) == MaxFiles {
			return fmt.Errorf("the bundle directory holds more than %d files", MaxFiles)
		}
		f, err := r.Open(p)
		if err != nil {
			return err
		}
		defer func() { _ = f.Close() }()
		h, err := Hash(p, f, MaxBytes-total)
		if err != nil {
			if errors.Is(err, ErrTooLarge) {
				return fmt.Errorf("the bundle directory holds more than %d bytes", MaxBytes)
			}
			return err
		}
		total += h.Size
		files = append(files, h)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the bundle directory %s: %w", root, err)
	}
	slices.SortFunc(files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	return files, nil
}

// agentvDir is AgentV's directory at the bundle's root, the one hidden directory a bundle keeps.
const agentvDir = ".agentv"
