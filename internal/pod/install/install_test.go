package install

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/google/go-cmp/cmp"
)

// TestRun installs the binaries and makes the FIFOs, without and with code judges: the bin volume holds the
// launcher and the FIFOs only, the judge runner goes to the judge-bin volume and only with code judges, an existing
// binary is replaced, no temporary file is left behind.
func TestRun(t *testing.T) {
	tests := []struct {
		name         string
		judges       int
		wantBin      []string
		wantJudgeBin []string
	}{
		{name: "no code judges", wantBin: []string{"launcher", "runner-end"}},
		{name: "two judge containers", judges: 2, wantBin: []string{"judge-end-0", "judge-end-1", "launcher", "runner-end"},
			wantJudgeBin: []string{"collector"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			launcher, judgeRunner := filepath.Join(dir, "launcher-src"), filepath.Join(dir, "collector-src")
			write(t, launcher, "launcher\n", 0o600)
			write(t, judgeRunner, "judge runner\n", 0o600)
			pod := podwire.PodIn(filepath.Join(dir, "pod"))
			// An existing destination is replaced.
			write(t, pod.Launcher(), "old", 0o644)
			err := Run(context.Background(), Options{Pod: pod, Launcher: launcher, JudgeRunner: judgeRunner, Judges: tc.judges})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantBin, names(t, pod.Bin)); diff != "" {
				t.Errorf("bin volume (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantJudgeBin, names(t, pod.JudgeBin)); diff != "" {
				t.Errorf("judge-bin volume (-want +got):\n%s", diff)
			}
			installed := map[string]string{pod.Launcher(): "launcher\n"}
			if tc.judges > 0 {
				installed[pod.JudgeRunner()] = "judge runner\n"
			}
			for path, want := range installed {
				got, err := os.ReadFile(path)
				if err != nil || string(got) != want {
					t.Errorf("%s holds %q (%v), want %q", path, got, err, want)
				}
				if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o755 {
					t.Errorf("%s: %v (%v), want mode 0755", path, fi, err)
				}
			}
			for _, name := range tc.wantBin {
				if name == "launcher" {
					continue
				}
				// Writable by any uid, readable by the collector's only: a script can never read a judge's verdicts.
				fifo, err := os.Stat(filepath.Join(pod.Bin, name))
				if err != nil || fifo.Mode()&os.ModeNamedPipe == 0 || fifo.Mode().Perm() != podwire.RunnerEndMode {
					t.Errorf("%s FIFO %v (%v), want a named pipe with mode %o", name, fifo, err, podwire.RunnerEndMode)
				}
			}
		})
	}
}

// TestRunErrors: a missing binary is an error that names what could not be installed.
func TestRunErrors(t *testing.T) {
	dir := t.TempDir()
	present := filepath.Join(dir, "present")
	write(t, present, "x", 0o600)
	missing := filepath.Join(dir, "missing")
	tests := []struct {
		name string
		o    Options
		want string
	}{
		{"no launcher", Options{Launcher: missing, JudgeRunner: present, Judges: 1}, "install the launcher"},
		{"no judge runner", Options{Launcher: present, JudgeRunner: missing, Judges: 1}, "install the judge runner"},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.o.Pod = podwire.PodIn(filepath.Join(dir, "pod", string(rune('a'+i))))
			err := Run(context.Background(), tc.o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Run = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func write(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

// names lists a directory's entries (nil when it does not exist).
func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}
