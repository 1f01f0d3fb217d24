package podruntime

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestInstall(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	content := []byte("#!/bin/sh\necho hi\n")
	if err := os.WriteFile(src, content, 0o600); err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(dir, "work", "bin", "collector")
	// An existing destination is replaced.
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dest, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	if code := Main(context.Background(), "install", []string{"--src", src, "--dest", dest}, &bytes.Buffer{}, &stderr); code != 0 {
		t.Fatalf("install exit code %d, stderr %q", code, stderr.String())
	}
	got, err := os.ReadFile(dest)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(content, got); diff != "" {
		t.Errorf("installed content (-want +got):\n%s", diff)
	}
	fi, err := os.Stat(dest)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o755 {
		t.Errorf("mode = %v, want 0755", fi.Mode().Perm())
	}
	entries, err := os.ReadDir(filepath.Dir(dest))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("destination directory holds %d entries, want only the binary (no temporary files)", len(entries))
	}
}

func TestInstallErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"missing dest", []string{}, exitUsage},
		{"missing source", []string{"--src", filepath.Join(dir, "nope"), "--dest", filepath.Join(dir, "d")}, exitInfra},
		{"extra arguments", []string{"--dest", filepath.Join(dir, "d"), "extra"}, exitUsage},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			if got := Main(context.Background(), "install", tc.args, &bytes.Buffer{}, &stderr); got != tc.want {
				t.Errorf("exit code = %d, want %d (stderr %q)", got, tc.want, stderr.String())
			}
		})
	}
}

func TestProbe(t *testing.T) {
	dir := t.TempDir()
	ready := filepath.Join(dir, "collector-ready")
	run := func() int {
		return Main(context.Background(), "probe", []string{"--ready-file", ready}, &bytes.Buffer{}, &bytes.Buffer{})
	}
	if got := run(); got != exitInfra {
		t.Errorf("probe before the ready file exists: exit %d, want %d", got, exitInfra)
	}
	if err := os.WriteFile(ready, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := run(); got != exitOK {
		t.Errorf("probe after the ready file exists: exit %d, want 0", got)
	}
	if got := Main(context.Background(), "probe", nil, &bytes.Buffer{}, &bytes.Buffer{}); got != exitUsage {
		t.Errorf("probe without --ready-file: exit %d, want %d", got, exitUsage)
	}
}
