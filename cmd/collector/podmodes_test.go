package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/google/go-cmp/cmp"
)

// TestInstall runs the install mode with its flags: the launcher lands in --bin, this mode's judge runner in
// --judge-bin, one judge-end FIFO per --judges (internal/install tests the steps themselves).
func TestInstall(t *testing.T) {
	dir := t.TempDir()
	launcherSrc, judgeSrc := filepath.Join(dir, "launcher-src"), filepath.Join(dir, "collector-src")
	for path, content := range map[string]string{launcherSrc: "launcher\n", judgeSrc: "judge runner\n"} {
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	bin, judgeBin := filepath.Join(dir, "bin"), filepath.Join(dir, "judge-bin")
	var stderr bytes.Buffer
	args := []string{"--launcher", launcherSrc, "--judge-runner", judgeSrc, "--bin", bin, "--judge-bin", judgeBin, "--judges", "2"}
	if code := podMain(context.Background(), "install", args, &stderr); code != 0 {
		t.Fatalf("install exit code %d, stderr %q", code, stderr.String())
	}
	for path, want := range map[string]string{filepath.Join(bin, "launcher"): "launcher\n", filepath.Join(judgeBin, "collector"): "judge runner\n"} {
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, string(got)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", path, diff)
		}
	}
	for _, name := range []string{"runner-end", "judge-end-0", "judge-end-1"} {
		fifo, err := os.Stat(filepath.Join(bin, name))
		if err != nil || fifo.Mode()&os.ModeNamedPipe == 0 || fifo.Mode().Perm() != podwire.RunnerEndMode {
			t.Errorf("%s FIFO %v (%v), want a named pipe with mode %o", name, fifo, err, podwire.RunnerEndMode)
		}
	}
}

func TestInstallErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"unknown flag", []string{"--dest", "x"}, exitUsage},
		{"missing launcher", []string{"--launcher", filepath.Join(dir, "nope"), "--bin", filepath.Join(dir, "d")}, exitInfra},
		{"extra arguments", []string{"--bin", filepath.Join(dir, "d"), "extra"}, exitUsage},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			if got := podMain(context.Background(), "install", tc.args, &stderr); got != tc.want {
				t.Errorf("exit code = %d, want %d (stderr %q)", got, tc.want, stderr.String())
			}
		})
	}
}
