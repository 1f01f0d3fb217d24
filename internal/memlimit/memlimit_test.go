package memlimit

import (
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCgroupMemoryLimit(t *testing.T) {
	tests := []struct {
		name   string
		files  map[string]string // file name -> content; absent files are not created
		want   int64
		wantOK bool
	}{
		{name: "v2 limit", files: map[string]string{"v2": "268435456\n"}, want: 268435456, wantOK: true},
		{name: "v2 unlimited", files: map[string]string{"v2": "max\n", "v1": "1048576\n"}},
		{name: "v1 limit", files: map[string]string{"v1": "1048576\n"}, want: 1048576, wantOK: true},
		{name: "v1 unlimited", files: map[string]string{"v1": "9223372036854771712\n"}},
		{name: "unreadable value", files: map[string]string{"v2": "lots\n"}},
		{name: "zero", files: map[string]string{"v2": "0\n"}},
		{name: "no cgroup files"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range tt.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, ok := cgroupLimit([]string{filepath.Join(dir, "v2"), filepath.Join(dir, "v1")})
			if diff := cmp.Diff([]any{tt.want, tt.wantOK}, []any{got, ok}); diff != "" {
				t.Errorf("cgroupLimit() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestApply(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	file := filepath.Join(t.TempDir(), "memory.max")
	if err := os.WriteFile(file, []byte("1000000000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOMEMLIMIT", "")
	if got := Apply([]string{file}); got != 900_000_000 || debug.SetMemoryLimit(-1) != 900_000_000 {
		t.Errorf("applyContainerMemoryLimit() = %d, runtime limit %d; want 900000000", got, debug.SetMemoryLimit(-1))
	}
	debug.SetMemoryLimit(math.MaxInt64)
	t.Setenv("GOMEMLIMIT", "64MiB")
	if got := Apply([]string{file}); got != 0 || debug.SetMemoryLimit(-1) != math.MaxInt64 {
		t.Errorf("with GOMEMLIMIT set, Apply() = %d, runtime limit %d; want it untouched", got, debug.SetMemoryLimit(-1))
	}
}
