package launcher

import (
	"os"
	"os/signal"
	"syscall"
)

// ShieldSignals keeps signals from ending the launcher before it reports. As the PID namespace's init, the
// launcher gets from the runner's processes (same uid) only the signals it handles, and the Go runtime handles
// several by exiting or crashing (SIGHUP, SIGQUIT, SIGABRT, ...): a runner could then end the launcher, and with it
// every process of the container, before its report. Handled here and dropped, they cannot. They are caught, not
// ignored, so the runner's processes still start with the default dispositions. SIGTERM and SIGINT stay with the
// caller (they stop the runner: an outcome only worse for it).
func ShieldSignals() {
	c := make(chan os.Signal, 16)
	signal.Notify(c, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGABRT, syscall.SIGTRAP, syscall.SIGSYS,
		syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGPIPE, syscall.SIGALRM, syscall.SIGVTALRM, syscall.SIGXCPU,
		syscall.SIGXFSZ, syscall.SIGSTKFLT, syscall.SIGPWR)
	go func() {
		for range c {
		}
	}()
}
