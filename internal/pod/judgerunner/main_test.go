package judgerunner

import (
	"fmt"
	"os"
	"testing"

	"github.com/evalrun-operator/evalrun-operator/internal/pod/confine"
	"github.com/evalrun-operator/evalrun-operator/internal/pod/reaper"
)

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == confine.ShimMode {
		os.Exit(confine.Shim(os.Args[2:], os.Stderr))
	}
	// The judge runner is its container's PID 1; the tests run as a subreaper, so what scripts leave behind is
	// re-parented here and killed as the judge runner kills it.
	if err := reaper.BecomeSubreaper(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}
