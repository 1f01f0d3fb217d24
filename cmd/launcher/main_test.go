package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalrun-operator/evalrun-operator/internal/pod/launcher"
)

// TestRunRefuses covers every way the launcher ends before it launches anything: usage errors exit 2, an
// unreadable runner configuration exits launcher.ExitLaunchFailed, each with a message that says why.
func TestRunRefuses(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "launch.json")
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStderr string
	}{
		{"no --config", nil, exitUsage, "--config is required"},
		{"unknown flag", []string{"--src", "x"}, exitUsage, "flag provided but not defined"},
		{"extra arguments", []string{"--config", missing, "launch"}, exitUsage, `unexpected arguments ["launch"]`},
		{"missing configuration", []string{"--config", missing}, launcher.ExitLaunchFailed, "read the runner configuration"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if got := run(context.Background(), tc.args, &stdout, &stderr); got != tc.wantCode {
				t.Errorf("exit code = %d, want %d (stderr %q)", got, tc.wantCode, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.wantStderr) {
				t.Errorf("stderr %q does not say %q", stderr.String(), tc.wantStderr)
			}
		})
	}
}
