package suite42

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/evalfile/yamltree"
)

// An AgentV 4.42 suite may name other files that are part of it: its tests as a YAML or JSONL file or a directory
// of case.yaml files, test entries "file://PATH" (globs included), and assertion templates (include). The reader
// reads them through an fs.FS rooted at the eval bundle's root (the directory AgentV would search up to), the eval
// file's own path given with it (WithFiles): the same files, at the same relative paths, as the v2 path's file
// references (internal/bundle). Every path stays inside that root: ".." beyond it, or a path the FS refuses, is a
// problem naming the key, never a read elsewhere. Input files, prompt files and code-grader commands stay
// references, resolved where they are used, as in agentv-eval-v2.

// maxSuiteFilesBytes bounds what a suite's other files may hold together: MaxWholeBytes, the most text the
// manager holds whole (a 4.42 suite is always read whole, its parts included).
const maxSuiteFilesBytes = evalfile.MaxWholeBytes

// maxSuiteFiles bounds how many files one suite may read (its tests' files and templates), and maxGlobWalk the
// directory entries a glob may visit.
const (
	maxSuiteFiles = 1000
	maxGlobWalk   = 10000
)

// suiteFiles reads a suite's other files.
type suiteFiles struct {
	fsys fs.FS
	// name is the eval file's path in fsys, dir its directory ("." at the root).
	name, dir string
	// read counts the bytes read, files the files read.
	read  int64
	files int
}

func newSuiteFiles(fsys fs.FS, name string) *suiteFiles {
	n := path.Clean(strings.TrimLeft(strings.ReplaceAll(name, `\`, "/"), "/"))
	return &suiteFiles{fsys: fsys, name: n, dir: path.Dir(n)}
}

// errNoFiles says that the reader was given no files.
var errNoFiles = errors.New("the suite's files are not available (they are read from its eval bundle)")

// join resolves ref against dir as AgentV's path.resolve(dir, ref) does, within the root: a reference starting with
// "/" is relative to the root (as in internal/bundle). Backslashes count as separators.
func (s *suiteFiles) join(dir, ref string) (string, error) {
	r := strings.ReplaceAll(strings.TrimSpace(ref), `\`, "/")
	if r == "" {
		return "", errors.New("the path is empty")
	}
	var p string
	if strings.HasPrefix(r, "/") {
		p = path.Clean(strings.TrimLeft(r, "/"))
	} else {
		p = path.Clean(path.Join(dir, r))
	}
	if p == ".." || strings.HasPrefix(p, "../") {
		return "", fmt.Errorf("%q leads outside the eval bundle", ref)
	}
	if !fs.ValidPath(p) {
		return "", fmt.Errorf("%q is not a path inside the eval bundle", ref)
	}
	return p, nil
}

// stat returns what is at p, or nil.
func (s *suiteFiles) stat(p string) fs.FileInfo {
	if s.fsys == nil {
		return nil
	}
	fi, err := fs.Stat(s.fsys, p)
	if err != nil {
		return nil
	}
	return fi
}

func (s *suiteFiles) isDir(p string) bool {
	fi := s.stat(p)
	return fi != nil && fi.IsDir()
}

func (s *suiteFiles) isFile(p string) bool {
	fi := s.stat(p)
	return fi != nil && fi.Mode().IsRegular()
}

// readFile reads the regular file p, within what the suite may still read (maxSuiteFilesBytes, maxSuiteFiles).
func (s *suiteFiles) readFile(p string) ([]byte, error) {
	if s.fsys == nil {
		return nil, errNoFiles
	}
	if s.files++; s.files > maxSuiteFiles {
		return nil, fmt.Errorf("the suite reads more than %d files", maxSuiteFiles)
	}
	fi, err := fs.Stat(s.fsys, p)
	if err != nil {
		return nil, fmt.Errorf("%s is not in the eval bundle: %w", p, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", p)
	}
	left := maxSuiteFilesBytes - s.read
	if fi.Size() > left {
		return nil, s.tooMuch(p)
	}
	f, err := s.fsys.Open(p)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", p, err)
	}
	defer func() { _ = f.Close() }() // read only
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", p)
	}
	data, err := io.ReadAll(io.LimitReader(f, left+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", p, err)
	}
	if int64(len(data)) > left {
		return nil, s.tooMuch(p)
	}
	s.read += int64(len(data))
	return data, nil
}

func (s *suiteFiles) tooMuch(p string) error {
	return fmt.Errorf("reading %s, the suite's files would hold more than %s together (the most a suite and its "+
		"files may hold is what is read whole)", p, yamltree.SizeText(maxSuiteFilesBytes))
}

// subdirs returns the names of the directories in directory p, sorted.
func (s *suiteFiles) subdirs(p string) ([]string, error) {
	if s.fsys == nil {
		return nil, errNoFiles
	}
	entries, err := fs.ReadDir(s.fsys, p)
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", p, err)
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, e.Name())
		}
	}
	slices.Sort(dirs)
	return dirs, nil
}

// searchDirs are the directories a reference is looked for in, nearest first: dir and each of its parents up to the
// root (AgentV's search roots, from the eval file's directory up to the repository root).
func searchDirs(dir string) []string {
	var out []string
	for d := dir; ; d = path.Dir(d) {
		out = append(out, d)
		if d == "." || d == "/" {
			return out
		}
	}
}

// search returns the first of ref joined to each of dirs that is a regular file, and the paths tried.
func (s *suiteFiles) search(dirs []string, ref string) (string, []string) {
	var tried []string
	for _, d := range dirs {
		p, err := s.join(d, strings.TrimLeft(ref, `/\`))
		if err != nil || slices.Contains(tried, p) {
			continue
		}
		tried = append(tried, p)
		if s.isFile(p) {
			return p, tried
		}
	}
	return "", tried
}

// isGlob reports whether a file:// reference is a glob pattern (AgentV: it contains '*', '?' or '{').
func isGlob(p string) bool { return strings.ContainsAny(p, "*?{") }

// maxGlobAlternatives bounds the patterns a glob's braces expand to.
const maxGlobAlternatives = 256

// glob returns the regular files under the root that pattern (a slash path inside it, as join returns) matches,
// sorted, as fast-glob matches them: '*' and '?' within one path segment, '**' any number of segments, {a,b}
// alternatives, [...] classes; a name starting with '.' only where the pattern's segment does.
func (s *suiteFiles) glob(pattern string) ([]string, error) {
	if s.fsys == nil {
		return nil, errNoFiles
	}
	alternatives, err := expandBraces(pattern)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, pat := range alternatives {
		segs := strings.Split(pat, "/")
		// Walk from the longest prefix without glob characters.
		base := 0
		for base < len(segs)-1 && !strings.ContainsAny(segs[base], "*?[") {
			base++
		}
		root := path.Join(segs[:base]...)
		if root == "" {
			root = "."
		}
		if !s.isDir(root) {
			continue
		}
		visited := 0
		err := fs.WalkDir(s.fsys, root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil //nolint:nilerr // an unreadable directory matches nothing, as with fast-glob
			}
			if visited++; visited > maxGlobWalk {
				return fmt.Errorf("the glob %q visits more than %d entries", pattern, maxGlobWalk)
			}
			if d.Type().IsRegular() && globMatch(segs, strings.Split(p, "/")) && !slices.Contains(out, p) {
				out = append(out, p)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	slices.Sort(out)
	return out, nil
}

// globMatch matches a path's segments against a pattern's.
func globMatch(pat, name []string) bool {
	if len(pat) == 0 {
		return len(name) == 0
	}
	if pat[0] == "**" {
		for i := 0; i <= len(name); i++ {
			if i > 0 && strings.HasPrefix(name[i-1], ".") {
				return false // ** does not enter hidden directories
			}
			if globMatch(pat[1:], name[i:]) {
				return true
			}
		}
		return false
	}
	if len(name) == 0 {
		return false
	}
	if strings.HasPrefix(name[0], ".") && !strings.HasPrefix(pat[0], ".") {
		return false
	}
	ok, err := path.Match(pat[0], name[0])
	return err == nil && ok && globMatch(pat[1:], name[1:])
}

// expandBraces expands {a,b} alternatives (nested ones included) into patterns without braces.
func expandBraces(p string) ([]string, error) {
	open := strings.IndexByte(p, '{')
	if open < 0 {
		return []string{p}, nil
	}
	depth, close := 0, -1
	var commas []int
	for i := open; i < len(p) && close < 0; i++ {
		switch p[i] {
		case '{':
			depth++
		case '}':
			if depth--; depth == 0 {
				close = i
			}
		case ',':
			if depth == 1 {
				commas = append(commas, i)
			}
		}
	}
	if close < 0 || len(commas) == 0 {
		// An unclosed brace, or braces without alternatives, are literal: fast-glob leaves them.
		rest, err := expandBraces(p[open+1:])
		if err != nil {
			return nil, err
		}
		out := make([]string, len(rest))
		for i, r := range rest {
			out[i] = p[:open+1] + r
		}
		return out, nil
	}
	var out []string
	start := open + 1
	for _, end := range append(commas, close) {
		expanded, err := expandBraces(p[:open] + p[start:end] + p[close+1:])
		if err != nil {
			return nil, err
		}
		out = append(out, expanded...)
		if len(out) > maxGlobAlternatives {
			return nil, fmt.Errorf("the glob %q expands to more than %d patterns", p, maxGlobAlternatives)
		}
		start = end + 1
	}
	return out, nil
}
