package launcher

import (
	"fmt"
	"os"
	"testing"

	"github.com/evalrun-operator/evalrun-operator/internal/pod/reaper"
)

func TestMain(m *testing.M) {
	// launch runs as the container's PID 1 (or a subreaper); the tests run the same way so orphans are reaped here.
	if err := reaper.BecomeSubreaper(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}
