package controller

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/assess"

	"k8s.io/utils/ptr"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
)

// hiddenZoneinfoVar marks the child process of TestTimeZonesWithoutZoneinfo.
const hiddenZoneinfoVar = "EVALRUN_TEST_HIDDEN_ZONEINFO"

// TestTimeZonesWithoutZoneinfo: the manager's image has no zoneinfo on disk, so spec.timeZone works only because the
// zone database is compiled in (time/tzdata). The test runs itself again in a mount namespace where every zoneinfo
// the time package could read (the system's, GOROOT's) is hidden under an empty tmpfs.
func TestTimeZonesWithoutZoneinfo(t *testing.T) {
	if os.Getenv(hiddenZoneinfoVar) != "" {
		hideZoneinfo(t, os.Getenv(hiddenZoneinfoVar))
		spec := &evalsv1alpha1.EvalScheduleSpec{Schedule: "0 2 * * *", TimeZone: ptr.To("Europe/Paris")}
		sched, err := assess.ParseSchedule(spec)
		if err != nil {
			t.Fatalf("with no zoneinfo on disk: %v", err)
		}
		// 02:00 in Paris on 2026-07-01 (CEST, UTC+2) is 00:00 UTC.
		if got := sched.Next(time.Date(2026, 6, 30, 23, 0, 0, 0, time.UTC)); !got.Equal(time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)) {
			t.Errorf("next run %v, want 2026-07-01 00:00 UTC", got.UTC())
		}
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("hiding the zoneinfo on disk needs a mount namespace, which needs root (CI runs as root)")
	}
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env GOROOT (its lib/time/zoneinfo.zip is hidden too): %v", err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestTimeZonesWithoutZoneinfo$", "-test.v")
	cmd.Env = append(os.Environ(), hiddenZoneinfoVar+"="+strings.TrimSpace(string(goroot)), "ZONEINFO=")
	// Go makes the new namespace's mounts private, so nothing the child mounts reaches the host.
	cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the child without zoneinfo failed: %v\n%s", err, out)
	}
}

// hideZoneinfo mounts an empty tmpfs over every place the time package reads zone data from (the system's
// directories and goroot's lib/time), and checks that Europe/Paris can no longer be read from disk.
func hideZoneinfo(t *testing.T, goroot string) {
	t.Helper()
	for _, dir := range []string{"/usr/share/zoneinfo", "/usr/share/lib/zoneinfo", "/usr/lib/locale/TZ", "/etc/zoneinfo",
		filepath.Join(goroot, "lib", "time")} {
		if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=1m"); err != nil {
			t.Fatalf("hiding %s: %v", dir, err)
		}
	}
	if _, err := os.Stat("/usr/share/zoneinfo/Europe/Paris"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the system's zoneinfo is still readable (%v): the test would prove nothing", err)
	}
}
