package launcher

import (
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/reaper"
)

// killLeftovers kills and reaps every process the runner left behind (internal/reaper); it returns how many it
// killed and how many survived its timeout.
func killLeftovers(timeout time.Duration) (killed, survived int) {
	return reaper.KillLeftovers(timeout)
}

// childrenOf lists the live children of ppid.
func childrenOf(ppid int) []int { return reaper.ChildrenOf(ppid) }

// Harden makes the launcher non-dumpable: no process of the runner (same uid, no capabilities) can then ptrace
// it, read its memory or open its descriptors through /proc, so none can make it close the runner-end FIFO early
// or change what it reports.
func Harden() error { return reaper.Harden() }
