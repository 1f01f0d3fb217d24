package launcher

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"golang.org/x/sys/unix"
)

func int32p(v int32) *int32 { return &v }

func TestRunOutcomes(t *testing.T) {
	tests := []struct {
		name   string
		cmd    Command
		want   podwire.Outcome
		stdout string
	}{
		{
			name:   "exit 0 with output passed through",
			cmd:    Command{Script: "echo out; echo err >&2"},
			want:   podwire.Outcome{ExitCode: int32p(0), StdoutTail: "out\n", StderrTail: "err\n"},
			stdout: "out\n",
		},
		{
			name: "exit 1 is an exit code, not an error",
			cmd:  Command{Script: "echo boom >&2; exit 1"},
			want: podwire.Outcome{ExitCode: int32p(1), StderrTail: "boom\n"},
		},
		{
			name: "exit 137 from the script is an exit code",
			cmd:  Command{Script: "exit 137"},
			want: podwire.Outcome{ExitCode: int32p(137)},
		},
		{
			name: "killed by a signal",
			cmd:  Command{Script: "kill -KILL $$"},
			want: podwire.Outcome{Signal: "SIGKILL"},
		},
		{
			name: "segfault signal",
			cmd:  Command{Script: "kill -SEGV $$"},
			want: podwire.Outcome{Signal: "SIGSEGV"},
		},
		{
			name: "no shell in the image",
			cmd:  Command{Script: "true", Shell: "/nonexistent/sh"},
			want: podwire.Outcome{StartError: "the runner image has no /nonexistent/sh: command templates run with /nonexistent/sh -c, so the image needs a POSIX shell"},
		},
		{
			name: "environment and working directory",
			cmd:  Command{Script: `printf '%s %s' "$FOO" "$(pwd)"`, Env: []string{"FOO=bar"}, Dir: "/"},
			want: podwire.Outcome{ExitCode: int32p(0), StdoutTail: "bar /"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout bytes.Buffer
			tc.cmd.Stdout = &stdout
			tc.cmd.KillGrace = time.Second
			got := Run(context.Background(), tc.cmd)
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(podwire.Outcome{}, "DurationMs")); diff != "" {
				t.Errorf("Run (-want +got):\n%s", diff)
			}
			if tc.stdout != "" && stdout.String() != tc.stdout {
				t.Errorf("passed-through stdout = %q, want %q", stdout.String(), tc.stdout)
			}
		})
	}
}

func TestRunTailIsBounded(t *testing.T) {
	// 10,000 lines of output; the tail keeps the last TailBytes only, cut on a rune boundary.
	got := Run(context.Background(), Command{Script: `i=0; while [ $i -lt 10000 ]; do echo "é line $i"; i=$((i+1)); done`})
	if len(got.StdoutTail) > TailBytes {
		t.Errorf("stdout tail is %d bytes, want at most %d", len(got.StdoutTail), TailBytes)
	}
	if !strings.HasSuffix(got.StdoutTail, "é line 9999\n") {
		t.Errorf("stdout tail does not end with the last line: %q", got.StdoutTail[len(got.StdoutTail)-40:])
	}
	if strings.ContainsRune(got.StdoutTail, '\uFFFD') {
		t.Errorf("stdout tail starts inside a rune")
	}
}

func TestTail(t *testing.T) {
	tests := []struct {
		name   string
		writes []string
		max    int
		want   string
	}{
		{"fits", []string{"ab", "cd"}, 8, "abcd"},
		{"overflow across writes", []string{"abcdef", "gh"}, 4, "…h"},
		{"one large write", []string{"abcdefgh"}, 3, "…"},
		{"the mark and the end", []string{"abcdef", "ghijkl"}, 6, "…jkl"},
		{"cut inside a rune", []string{"éa"}, 2, "a"},
		{"invalid bytes replaced", []string{"a\xffb"}, 8, "a\uFFFDb"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tl := newTail(tc.max)
			for _, w := range tc.writes {
				_, _ = tl.Write([]byte(w))
			}
			if got := tl.String(); got != tc.want {
				t.Errorf("tail = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestRunTimeoutKillsProcessGroup proves that a timed-out invocation takes its whole process group with it: the
// script starts a grandchild that ignores SIGTERM, so only the SIGKILL after the grace period can end it.
func TestRunTimeoutKillsProcessGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "grandchild.pid")
	script := `sh -c 'trap "" TERM; echo $$ > ` + pidFile + `; while :; do sleep 1; done' & wait`
	got := Run(context.Background(), Command{Script: script, Timeout: 300 * time.Millisecond, KillGrace: 300 * time.Millisecond})
	if !got.TimedOut {
		t.Fatalf("outcome %+v, want a timeout", got)
	}
	if got.ExitCode != nil && *got.ExitCode == 0 {
		t.Errorf("a timed-out invocation reported exit code 0")
	}
	pid := readPid(t, pidFile)
	assertGone(t, pid)
}

// TestRunLeftoverProcessesEnd checks that background processes a finished command left behind are ended.
func TestRunLeftoverProcessesEnd(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "bg.pid")
	got := Run(context.Background(), Command{Script: `sleep 1000 >/dev/null 2>&1 & echo $! > ` + pidFile + `; exit 3`, KillGrace: time.Second})
	if got.ExitCode == nil || *got.ExitCode != 3 {
		t.Fatalf("outcome %+v, want exit code 3", got)
	}
	assertGone(t, readPid(t, pidFile))
}

func TestRunContextCancelForwardsTermination(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	got := Run(ctx, Command{Script: "sleep 1000", KillGrace: time.Second})
	if !got.Terminated || got.Signal != "SIGTERM" {
		t.Errorf("outcome %+v, want Terminated by SIGTERM", got)
	}
}

func readPid(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		data, err := os.ReadFile(path)
		if err == nil && strings.TrimSpace(string(data)) != "" {
			pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
			if err != nil {
				t.Fatal(err)
			}
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid file %s was never written", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// assertGone waits briefly for pid to be reaped (by this process or by init) and fails if it still runs.
func assertGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := unix.Kill(pid, 0)
		if errors.Is(err, unix.ESRCH) {
			return
		}
		if zombie(pid) || time.Now().After(deadline) {
			if zombie(pid) {
				return // killed, waiting for its parent to reap it
			}
			t.Fatalf("process %d is still alive", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func zombie(pid int) bool {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && i+2 < len(s) && s[i+2] == 'Z'
}
