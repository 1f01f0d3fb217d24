package podruntime

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	v1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/layout"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CollectOptions configure Collect.
type CollectOptions struct {
	Config *layout.RunConfig
	Paths  layout.Paths
	// Client writes the result ConfigMaps and the EvalRun status.
	Client client.Client
	// Namespace, Name and UID identify the EvalRun; PodName is recorded in status.
	Namespace, Name, UID, PodName string
	// TerminationLog is where the termination message goes ("" skips it).
	TerminationLog string
	// Log receives the collector's progress lines.
	Log io.Writer
	// Backoff paces retries of API writes; they stop at the results deadline.
	Backoff Backoff
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Collect is the sidecar: it signals readiness, waits for the launcher's done marker (or for ctx to end, the
// termination signal, in which case it collects the partial output), gathers and persists the results, writes
// its termination message and acknowledges to the launcher. It then waits for ctx to end. The error says why
// the results could not be persisted; the acknowledgement carries it to the launcher too.
func Collect(ctx context.Context, o CollectOptions) error {
	if o.Now == nil {
		o.Now = time.Now
	}
	p := o.Paths
	if err := os.MkdirAll(p.StateDir(), 0o755); err != nil {
		return fmt.Errorf("prepare the work volume: %w", err)
	}
	if err := writeBytesAtomic(p.CollectorReady(), []byte("ready\n")); err != nil {
		return fmt.Errorf("signal readiness: %w", err)
	}
	logf(o.Log, "Waiting for the runner to finish\n")
	finished := waitForFile(ctx, p.Done(), 0) == nil
	if !finished {
		logf(o.Log, "Terminating without a done marker: collecting the partial output\n")
	}

	// Persisting is bounded by the results deadline, not by the termination signal: the kubelet's grace period
	// is the outer bound.
	deadline := seconds(o.Config.ResultsDeadlineSeconds, defaultResultsDeadline)
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), deadline)
	defer cancel()

	g, gerr := Gather(pctx, GatherInput{Config: o.Config, Paths: p, RunnerFinished: finished, PodName: o.PodName, Now: o.Now()})
	if gerr != nil {
		logf(o.Log, "Collection failed error=%q\n", results.Excerpt(gerr.Error(), 512))
		g = failedCollection(o, finished, gerr)
	}
	perr := persist(pctx, o, g)
	term := terminationMessage(g, finished, perr)
	if o.TerminationLog != "" {
		if err := writeTerminationLog(o.TerminationLog, term); err != nil {
			logf(o.Log, "Cannot write the termination message error=%q\n", err.Error())
		}
	}
	ack := Ack{Persisted: perr == nil}
	if perr != nil {
		ack.Reason = results.Excerpt(perr.Error(), 1024)
		logf(o.Log, "Results not persisted error=%q\n", ack.Reason)
	} else {
		logf(o.Log, "Results persisted outcome=%s total=%d\n", g.Outcome, g.Summary.Total)
	}
	if err := writeJSONAtomic(p.Ack(), ack); err != nil {
		return fmt.Errorf("write the acknowledgement: %w", err)
	}
	<-ctx.Done()
	return perr
}

// persist writes the result ConfigMaps, then the status that references them, retrying API errors.
func persist(ctx context.Context, o CollectOptions, g *Gathered) error {
	if o.Client == nil {
		return fmt.Errorf("no API client")
	}
	err := retry(ctx, o.Backoff, func(ctx context.Context) error {
		return WriteResultConfigMaps(ctx, o.Client, o.Namespace, o.Config.ResultConfigMaps, g.Output.Chunks)
	})
	if err != nil {
		return err
	}
	return retry(ctx, o.Backoff, func(ctx context.Context) error {
		return ApplyStatus(ctx, o.Client, o.Namespace, o.Name, o.UID, g.Output.Section)
	})
}

// failedCollection is the section recorded when the collector could not gather results at all.
func failedCollection(o CollectOptions, finished bool, err error) *Gathered {
	at := metav1.NewTime(collectionTime(o.Paths, finished, o.Now()))
	msg := results.Excerpt("the collector could not gather the results: "+err.Error(), 2048)
	b := results.NewBuilder(results.Options{BudgetBytes: o.Config.StatusBudgetBytes})
	out, ferr := b.Finish(results.Tail{Collection: v1alpha1.CollectionStatus{
		RunnerFinished: finished, Outcome: layout.OutcomeCollectorFailed, Message: msg, CollectedAt: &at, PodName: o.PodName,
	}})
	if ferr != nil {
		// An empty section always fits; keep a minimal one should it not.
		minimal := &v1alpha1.CollectionStatus{Outcome: layout.OutcomeCollectorFailed, Message: msg, CollectedAt: &at}
		out = &results.Output{Section: results.Section{Collection: minimal}}
	}
	return &Gathered{Output: out, Outcome: layout.OutcomeCollectorFailed, Message: msg}
}

func terminationMessage(g *Gathered, finished bool, perr error) layout.TerminationMessage {
	s := g.Summary
	t := layout.TerminationMessage{
		Outcome: g.Outcome, Message: results.Excerpt(g.Message, 1024), RunnerFinished: finished, Persisted: perr == nil,
		Total: s.Total, Passed: s.Passed, Failed: s.Failed, Errored: s.Errored, Skipped: s.Skipped, Missing: s.Missing,
		ParseErrors: s.ParseErrors, Unexpected: s.Unexpected,
	}
	if c := g.Output.Section.Collection; c != nil {
		t.RunnerExitCode = c.RunnerExitCode
		t.OutputSHA256 = c.OutputSHA256
	}
	if perr != nil {
		t.PersistError = results.Excerpt(perr.Error(), 512)
	}
	return t
}

func writeTerminationLog(path string, t layout.TerminationMessage) error {
	data, err := json.Marshal(t)
	if err != nil {
		return err
	}
	for len(data) > layout.MaxTerminationMessageBytes && len(t.Message) > 0 {
		t.Message = results.Excerpt(t.Message, len(t.Message)/2)
		t.PersistError = results.Excerpt(t.PersistError, len(t.PersistError)/2)
		if data, err = json.Marshal(t); err != nil {
			return err
		}
	}
	// The termination log is a file the kubelet provides; it is written in place, not renamed.
	return os.WriteFile(path, data, 0o644)
}
