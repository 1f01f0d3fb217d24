package main

import (
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strconv"
	"strings"
)

// Spec describes one image.
type Spec struct {
	// Name is the image reference the import registers (repository:tag).
	Name string
	// RootFS, when set, is a directory whose whole tree (directories, regular files, symlinks) goes into the layer
	// at /, owned by root, with its permission bits less setuid and setgid; Files, Dirs and the defaults below
	// override its entries of the same name.
	RootFS string
	// Files are copied into the layer.
	Files []FileEntry
	// Dirs are empty directories created in the layer.
	Dirs []DirEntry
	// BusyboxPath, when set, is installed at /bin/busybox with a symlink in /bin per applet.
	BusyboxPath string
	// Applets to link; empty means every applet the busybox binary lists.
	Applets []string
	// Entrypoint, Cmd, Env, User, WorkingDir and Labels go into the image config.
	Entrypoint []string
	Cmd        []string
	Env        []string
	User       string
	WorkingDir string
	Labels     map[string]string
}

// FileEntry is one file copied from the host into the image.
type FileEntry struct {
	// Dest is the absolute path in the image.
	Dest string
	// Src is the path on the host.
	Src string
	// Mode overrides the source file's permission bits when non-zero.
	Mode fs.FileMode
}

// DirEntry is one empty directory in the image.
type DirEntry struct {
	Dest string
	Mode fs.FileMode
}

// Reference is a parsed image name.
type Reference struct {
	Repository string
	Tag        string
}

var (
	repoRE = regexp.MustCompile(`^[a-z0-9]+([._-][a-z0-9]+)*(:[0-9]+)?(/[a-z0-9]+([._-][a-z0-9]+)*)*$`)
	tagRE  = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)
)

// parseReference splits "repo[:port]/path:tag" into repository and tag. A tag is required: the local cluster's
// pods use imagePullPolicy IfNotPresent with a fixed tag, never :latest by default.
func parseReference(name string) (Reference, error) {
	slash := strings.LastIndex(name, "/")
	colon := strings.LastIndex(name, ":")
	if colon <= slash {
		return Reference{}, fmt.Errorf("image name %q needs a tag (for example %s:dev)", name, name)
	}
	ref := Reference{Repository: name[:colon], Tag: name[colon+1:]}
	if !repoRE.MatchString(ref.Repository) {
		return Reference{}, fmt.Errorf("image name %q: invalid repository %q", name, ref.Repository)
	}
	if !tagRE.MatchString(ref.Tag) {
		return Reference{}, fmt.Errorf("image name %q: invalid tag %q", name, ref.Tag)
	}
	return ref, nil
}

// parseFileFlag parses DEST=SRC[:MODE].
func parseFileFlag(v string) (FileEntry, error) {
	dest, src, ok := strings.Cut(v, "=")
	if !ok || dest == "" || src == "" {
		return FileEntry{}, fmt.Errorf("--file %q: want DEST=SRC[:MODE]", v)
	}
	e := FileEntry{Dest: dest, Src: src}
	if i := strings.LastIndex(src, ":"); i >= 0 {
		mode, err := strconv.ParseUint(src[i+1:], 8, 32)
		if err != nil || mode == 0 || mode > 0o7777 {
			return FileEntry{}, fmt.Errorf("--file %q: mode %q is not an octal permission", v, src[i+1:])
		}
		e.Src, e.Mode = src[:i], fs.FileMode(mode)
	}
	if err := checkDest(dest); err != nil {
		return FileEntry{}, fmt.Errorf("--file %q: %w", v, err)
	}
	return e, nil
}

// parseDirFlag parses DEST[:MODE].
func parseDirFlag(v string) (DirEntry, error) {
	dest, modeText, hasMode := strings.Cut(v, ":")
	e := DirEntry{Dest: dest, Mode: 0o755}
	if hasMode {
		mode, err := strconv.ParseUint(modeText, 8, 32)
		if err != nil || mode > 0o7777 {
			return DirEntry{}, fmt.Errorf("--dir %q: mode %q is not an octal permission", v, modeText)
		}
		e.Mode = fs.FileMode(mode)
	}
	if err := checkDest(dest); err != nil {
		return DirEntry{}, fmt.Errorf("--dir %q: %w", v, err)
	}
	return e, nil
}

func checkDest(dest string) error {
	if !strings.HasPrefix(dest, "/") {
		return fmt.Errorf("destination %q must be absolute", dest)
	}
	if path.Clean(dest) != dest || dest == "/" {
		return fmt.Errorf("destination %q must be a clean path below /", dest)
	}
	return nil
}
