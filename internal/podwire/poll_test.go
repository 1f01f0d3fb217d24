package podwire

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestWriteEndPollsEnd: while no reader holds a FIFO, HoldRunnerEnd and OpenJudgeEnd poll; they end with the
// timeout (naming it), the caller's context, the judge runner's stop, or at once for a path that is no FIFO.
func TestWriteEndPollsEnd(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "end")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing")
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name    string
		open    func() (bool, error) // whether it returned a descriptor or writer
		wantErr string               // "" for no error
		wantIs  error
	}{
		{name: "runner end: no reader within the timeout", wantErr: "the collector did not open the runner-end FIFO within 120ms",
			open: func() (bool, error) {
				fd, err := HoldRunnerEnd(context.Background(), fifo, 120*time.Millisecond)
				return fd >= 0, err
			}},
		{name: "runner end: the context ends", wantIs: context.Canceled,
			open: func() (bool, error) { fd, err := HoldRunnerEnd(canceled, fifo, time.Minute); return fd >= 0, err }},
		{name: "runner end: no FIFO", wantErr: "open the runner-end FIFO " + missing,
			open: func() (bool, error) {
				fd, err := HoldRunnerEnd(context.Background(), missing, time.Minute)
				return fd >= 0, err
			}},
		{name: "judge end: stopped", open: func() (bool, error) {
			calls := 0
			w, err := OpenJudgeEnd(context.Background(), fifo, func() bool { calls++; return calls == 3 })
			return w != nil, err
		}},
		{name: "judge end: the context ends", wantIs: context.Canceled,
			open: func() (bool, error) { w, err := OpenJudgeEnd(canceled, fifo, nil); return w != nil, err }},
		{name: "judge end: no FIFO", wantErr: "open the judge-end FIFO " + missing,
			open: func() (bool, error) { w, err := OpenJudgeEnd(context.Background(), missing, nil); return w != nil, err }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opened, err := tc.open()
			if opened {
				t.Fatalf("opened the write end without a reader")
			}
			switch {
			case tc.wantIs != nil && !errors.Is(err, tc.wantIs):
				t.Errorf("error = %v, want %v", err, tc.wantIs)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("error = %v, want one containing %q", err, tc.wantErr)
			case tc.wantIs == nil && tc.wantErr == "" && err != nil:
				t.Errorf("error = %v, want none", err)
			}
		})
	}
}
