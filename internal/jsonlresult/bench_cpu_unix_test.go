//go:build unix

package jsonlresult

import (
	"syscall"
	"time"
)

// processCPUTime returns the user plus system CPU time the process has used so far.
func processCPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
