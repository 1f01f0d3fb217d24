package confine

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ShimMode is the hidden first argument under which the judge runner's binary is the shim (Shim): cmd/collector
// dispatches on it before anything else.
const ShimMode = "confined-exec"

// RulesetFD is the file descriptor on which the shim finds its ruleset (the first of exec.Cmd.ExtraFiles).
const RulesetFD = 3

// Access is what a rule allows beneath (or on) its path.
type Access uint8

const (
	// Read allows reading files and listing directories beneath the path, and executing its files.
	Read Access = iota + 1
	// ReadWrite allows everything beneath the path: create, write, remove, rename within, truncate.
	ReadWrite
	// Device allows reading, writing and ioctl on the device file itself (/dev/null).
	Device
	// List allows listing the directory and every directory beneath it (names, not contents).
	List
)

func (a Access) String() string {
	switch a {
	case Read:
		return "read"
	case ReadWrite:
		return "read-write"
	case Device:
		return "device"
	case List:
		return "list"
	}
	return fmt.Sprintf("Access(%d)", uint8(a))
}

// Rule allows Access on Path: beneath it when Path is a directory, on the file itself otherwise.
type Rule struct {
	Path   string
	Access Access
}

// Devices are the device files a script may open (read, write, ioctl): what shells and interpreters expect to
// find. No other device is reachable.
var Devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"}

// ImageRoots returns the top-level directories of the root file system at root that a script may read and
// execute beneath: every directory entry except the pod's own mounts (names starting with "evalrun": the eval
// ConfigMap, the shard, the bundle, the snapshot, the FIFOs, the judge runner), /dev, /proc and /sys (given
// one by one: Devices, /proc read-only), and symbolic links (their targets, when they are images' own
// directories, are entries themselves; a link into a pod mount is not followed).
func ImageRoots(root string) ([]string, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("list the image's root directory: %w", err)
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || strings.HasPrefix(name, "evalrun") || slices.Contains([]string{"dev", "proc", "sys"}, name) {
			continue
		}
		out = append(out, filepath.Join(root, name))
	}
	return out, nil
}

// Policy is what one case's scripts may do.
type Policy struct {
	// Image are the directories of the image read and executed beneath (ImageRoots).
	Image []string
	// Files are the bundle's files that are no case's key, and the case's own key files: read (and execute: a
	// script of the bundle) the file itself.
	Files []string
	// ListDirs are the directories whose names a script may list (the bundle's root: names, no contents).
	ListDirs []string
	// Scratch are the script's writable directories (its own volume, its /dev/shm), emptied after each case.
	Scratch []string
	// ReadOnly are further directories read beneath (/proc).
	ReadOnly []string
}

// Rules are the policy's rules, in a stable order.
func (p Policy) Rules() []Rule {
	var out []Rule
	add := func(paths []string, a Access) {
		for _, path := range paths {
			out = append(out, Rule{Path: path, Access: a})
		}
	}
	add(p.Image, Read)
	add(p.ReadOnly, Read)
	add(p.ListDirs, List)
	for _, f := range p.Files {
		out = append(out, Rule{Path: f, Access: Read})
	}
	add(Devices, Device)
	add(p.Scratch, ReadWrite)
	return out
}
