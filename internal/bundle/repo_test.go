package bundle

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestForEvalFile: a local eval file's bundle is its repository's root (the nearest .git above it, a directory or a
// worktree's file), else its own directory.
func TestForEvalFile(t *testing.T) {
	tmp := t.TempDir()
	for _, d := range []string{"repo/.git", "repo/suites/math", "wt/evals", "loose"} {
		if err := os.MkdirAll(filepath.Join(tmp, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(tmp, "wt", ".git"), []byte("gitdir: ../repo/.git/worktrees/wt\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		file string
		want Dir
	}{
		"in a repository": {"repo/suites/math/eval.yaml", Dir{Root: filepath.Join(tmp, "repo"), EvalFile: "suites/math/eval.yaml"}},
		"in a worktree":   {"wt/evals/e.yaml", Dir{Root: filepath.Join(tmp, "wt"), EvalFile: "evals/e.yaml"}},
		"in none":         {"loose/e.yaml", Dir{Root: filepath.Join(tmp, "loose"), EvalFile: "e.yaml"}},
	} {
		t.Run(name, func(t *testing.T) {
			if RepoRoot(filepath.Join(tmp, "loose")) != "" && name == "in none" {
				t.Skip("the temporary directory is inside a repository")
			}
			got, err := ForEvalFile(filepath.Join(tmp, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ForEvalFile (-want +got):\n%s", diff)
			}
		})
	}
}
