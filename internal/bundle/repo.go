package bundle

import (
	"os"
	"path/filepath"
)

// RepoRoot returns the repository root of dir as AgentV finds it: the nearest of dir and its parents that holds a
// .git entry (a directory, or the file of a worktree), as an absolute path; "" when there is none. AgentV searches
// its config (ConfigPath) and an eval file's references from the eval file's directory up to that root.
func RepoRoot(dir string) string {
	d, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}

// ForEvalFile is the bundle of a local eval file without a bundle directory given: its repository's root
// (RepoRoot) when it is in one, else its own directory; EvalFile is its path from there.
func ForEvalFile(evalPath string) (Dir, error) {
	abs, err := filepath.Abs(evalPath)
	if err != nil {
		return Dir{}, err
	}
	root := RepoRoot(filepath.Dir(abs))
	if root == "" {
		return Dir{Root: filepath.Dir(abs), EvalFile: filepath.Base(abs)}, nil
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil {
		return Dir{}, err
	}
	return Dir{Root: root, EvalFile: filepath.ToSlash(rel)}, nil
}
