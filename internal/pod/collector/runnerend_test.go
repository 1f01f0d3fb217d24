package collector

import (
	"context"
	"io"
	"os"
	"testing"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/outcome"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"golang.org/x/sys/unix"
)

// endOf runs waitForRunner against a launcher stand-in that writes stream into the runner-end FIFO and closes it.
func endOf(t *testing.T, f *fixture, stream []byte) RunnerEnd {
	t.Helper()
	if err := podwire.CreateRunnerEnd(f.Pod.RunnerEnd()); err != nil {
		t.Fatal(err)
	}
	go func() {
		fd, err := podwire.HoldRunnerEnd(context.Background(), f.Pod.RunnerEnd(), 5*time.Second)
		if err != nil {
			return
		}
		_ = podwire.WriteRunnerEnd(fd, stream, 5*time.Second)
		_ = unix.Close(fd)
	}()
	return waitForRunner(t.Context(), Options{Config: f.Config, Pod: f.Pod, Log: io.Discard})
}

func TestWaitForRunnerTakesTheReport(t *testing.T) {
	f := newFixture(t)
	end := endOf(t, f, append([]byte("runner junk"), podwire.EncodeFrame(podwire.FrameEnd, []byte(`{"batching":"Batched","exitCode":7,"leftovers":1}`))...))
	if end.Cause != outcome.EndEnded || end.ReportMissing != nil || end.Report == nil || end.Report.ExitCode != 7 || end.Report.Leftovers != 1 {
		t.Fatalf("end %+v, want the launcher's report", end)
	}
	// A restarted collector finds the runner's end noted, and its copy of the report.
	again := waitForRunner(t.Context(), Options{Config: f.Config, Pod: f.Pod, Log: io.Discard})
	if again.Cause != outcome.EndEnded || again.Report == nil || again.Report.ExitCode != 7 {
		t.Errorf("resumed end %+v, want the kept report", again)
	}
}

// The FIFO ends without the launcher's frame (a runner's bytes last): the report is missing, a fact.
func TestWaitForRunnerReportMissing(t *testing.T) {
	f := newFixture(t)
	end := endOf(t, f, []byte("the runner's last words\n"))
	if end.Cause != outcome.EndEnded || end.Report != nil || end.ReportMissing == nil {
		t.Fatalf("end %+v, want a missing report", end)
	}
	if err := os.Remove(f.Pod.LauncherReport()); err == nil {
		t.Error("a copy of a report that never arrived was kept")
	}
}

// A stuck frame (processes survive SIGKILL) ends the wait while the FIFO is still held open.
func TestWaitForRunnerNotStopped(t *testing.T) {
	f := newFixture(t)
	if err := podwire.CreateRunnerEnd(f.Pod.RunnerEnd()); err != nil {
		t.Fatal(err)
	}
	hold := make(chan struct{})
	defer close(hold)
	go func() {
		fd, err := podwire.HoldRunnerEnd(context.Background(), f.Pod.RunnerEnd(), 5*time.Second)
		if err != nil {
			return
		}
		_ = podwire.WriteRunnerEnd(fd, podwire.EncodeFrame(podwire.FrameStuck, []byte(`{"survivors":2}`)), 5*time.Second)
		<-hold
		_ = unix.Close(fd)
	}()
	end := waitForRunner(t.Context(), Options{Config: f.Config, Pod: f.Pod, Log: io.Discard})
	if end.Cause != outcome.EndNotStopped || end.Report == nil || end.Report.Survivors != 2 {
		t.Fatalf("end %+v, want NotStopped with 2 survivors", end)
	}
}
