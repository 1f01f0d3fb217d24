// Package memlimit sets the Go runtime's soft memory limit from the container's cgroup memory limit, so the
// garbage collector works harder before the kernel's OOM killer steps in. The collector and the manager call it
// at start (GOMEMLIMIT, when set, wins).
package memlimit

import (
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// CgroupFiles hold the container's memory limit: cgroup v2 first, then v1.
var CgroupFiles = []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}

// noCgroupLimit is the smallest value cgroup v1 reports for "no limit" (the page-rounded maximum int64).
const noCgroupLimit = 1 << 62

// cgroupLimit returns the first memory limit found in files, in bytes; false when none is set ("max" in
// cgroup v2, a value near the maximum int64 in v1) or none can be read.
func cgroupLimit(files []string) (int64, bool) {
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			continue
		}
		s := strings.TrimSpace(string(data))
		if s == "max" {
			return 0, false
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 || n >= noCgroupLimit {
			return 0, false
		}
		return n, true
	}
	return 0, false
}

// Soft is the Go runtime's soft limit for a container limit: 90%, leaving room for memory the runtime
// does not account for, so the garbage collector works harder before the kernel's OOM killer steps in.
func Soft(containerLimit int64) int64 { return containerLimit / 10 * 9 }

// Apply sets the runtime's soft memory limit from the container's cgroup limit, unless
// GOMEMLIMIT sets it already. It returns the limit it set, or 0.
func Apply(files []string) int64 {
	if os.Getenv("GOMEMLIMIT") != "" {
		return 0
	}
	limit, ok := cgroupLimit(files)
	if !ok {
		return 0
	}
	soft := Soft(limit)
	debug.SetMemoryLimit(soft)
	return soft
}
