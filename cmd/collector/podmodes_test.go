package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/evalrun-operator/evalrun-operator/internal/podfiles"
	"github.com/google/go-cmp/cmp"
)

func TestInstall(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	content := []byte("#!/bin/sh\necho hi\n")
	if err := os.WriteFile(src, content, 0o600); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "bin")
	dest := filepath.Join(bin, "collector")
	// An existing destination is replaced.
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dest, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	if code := podMain(context.Background(), "install", []string{"--src", src, "--bin", bin, "--judges", "2"}, &bytes.Buffer{}, &stderr); code != 0 {
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
	if len(entries) != 4 {
		t.Errorf("bin directory holds %d entries, want the binary, the runner-end FIFO and two judge-end FIFOs (no temporary files)", len(entries))
	}
	for _, name := range []string{"runner-end", "judge-end-0", "judge-end-1"} {
		// Writable by any uid, readable by the collector's only: a script can never read a judge's verdicts.
		fifo, err := os.Stat(filepath.Join(bin, name))
		if err != nil || fifo.Mode()&os.ModeNamedPipe == 0 || fifo.Mode().Perm() != podfiles.RunnerEndMode {
			t.Errorf("%s FIFO %v (%v), want a named pipe with mode %o", name, fifo, err, podfiles.RunnerEndMode)
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
		{"missing source", []string{"--src", filepath.Join(dir, "nope"), "--bin", filepath.Join(dir, "d")}, exitInfra},
		{"extra arguments", []string{"--bin", filepath.Join(dir, "d"), "extra"}, exitUsage},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			if got := podMain(context.Background(), "install", tc.args, &bytes.Buffer{}, &stderr); got != tc.want {
				t.Errorf("exit code = %d, want %d (stderr %q)", got, tc.want, stderr.String())
			}
		})
	}
}
