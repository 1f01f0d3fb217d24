package collector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/outcome"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Options configure Collect.
type Options struct {
	Config *podwire.RunConfig
	// Pod is the pod's directory layout.
	Pod podwire.Pod
	// Client writes the result ConfigMaps and the EvalRun status; nil with Config.BucketOnly (no API call).
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
	// BucketCredentialsDir holds the bucket's credentials when the run stores its results in a bucket (default
	// podwire.BucketCredentialsDir).
	BucketCredentialsDir string
}

// terminationWait is how long the collector, asked to stop before the runner ended, still waits for the runner's
// end: the kubelet stops the pod's containers together, so the runner is usually gone a moment later.
const terminationWait = 5 * time.Second

// Collect is the collector (a regular container of the pod, restarted by the kubelet should it fail): it waits
// for every process of the runner container to be gone (the runner-end FIFO), copies the runner's output into its
// own volume (never following a symlink, regular files only, size-bounded), hands that snapshot to the judge
// containers and waits for the code judges' verdicts, judges the rest, and persists the results. It then notes
// that it is done (which ends the judge containers) and returns, so the pod finishes only once the results are
// persisted (or the collector gave up). A collector restarted after that note returns at once.
func Collect(ctx context.Context, o Options) error {
	if o.Now == nil {
		o.Now = time.Now
	}
	if _, err := os.Stat(o.Pod.Collected()); err == nil {
		podwire.Logf(o.Log, "Already collected\n")
		return nil
	}
	var bucket *shardBucket
	var bucketErr error
	var err error
	if o.Config.Bucket != nil {
		if o.BucketCredentialsDir == "" {
			o.BucketCredentialsDir = podwire.BucketCredentialsDir
		}
		bucket, bucketErr = openShardBucket(o.Config, o.Namespace, o.Name, o.UID, o.BucketCredentialsDir)
	}
	if o.Config.NothingToRun {
		// A trial of a resumed run whose every case of the shard is carried: no runner ran, nothing is judged.
		podwire.Logf(o.Log, "Nothing to run: every case of this pod's shard has its result for this trial carried\n")
		g := NothingToRun(o.Config, o.PodName, collectionTime(o))
		// The judge containers see a snapshot that is not final: they judge nothing and wait for the collection.
		if err := podwire.WriteJSONAtomic(o.Pod.SnapshotReady(), podwire.SnapshotMarker{Reason: nothingToRunMessage}); err != nil {
			podwire.Logf(o.Log, "Cannot release the judge containers error=%q\n", err.Error())
		}
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), podwire.Seconds(o.Config.ResultsDeadlineSeconds))
		defer cancel()
		return finishCollection(pctx, o, g, true, bucket, bucketErr)
	}
	var end RunnerEnd
	var snap *Snapshot
	var rejudged *Rejudged
	var rejudgeErr error
	var rejudgeFile *evalfile.File
	if o.Config.Rejudge != nil {
		// A re-judge runs no runner: its "output" is the source's kept records, written into the snapshot.
		podwire.Logf(o.Log, "Reading the kept records of EvalRun %s\n", o.Config.Rejudge.From)
		end = RunnerEnd{Cause: outcome.EndEnded}
		if o.Config.Rejudge.InBucket && bucketErr != nil {
			rejudgeErr = fmt.Errorf("opening the bucket to read the source's records: %w", bucketErr)
		} else {
			rejudgeFile, rejudged, rejudgeErr = rejudgeSnapshot(ctx, o, rejudgeRecords(o, bucket))
		}
		snap = &Snapshot{} // rejudged.apply sets the re-judge's
	} else {
		end = waitForRunner(ctx, o)
	}
	ended, why := end.Cause == outcome.EndEnded, end.Reason
	switch {
	case o.Config.Rejudge != nil:
		// No runner: rejudgeSnapshot logged what it read.
	case ended:
		podwire.Logf(o.Log, "The runner ended; collecting its output\n")
	default:
		podwire.Logf(o.Log, "Collecting without the runner's end reason=%q\n", why)
	}

	at := collectionTime(o)
	if o.Config.Rejudge == nil {
		snap = TakeSnapshot(o.Config, o.Pod.Output(), o.Pod.SnapshotOutput())
	}
	in := GatherInput{Config: o.Config, Output: o.Pod.SnapshotOutput(), Snapshot: snap,
		EndCause: end.Cause, EndReason: why, Launcher: end.Report, LauncherMissing: end.ReportMissing,
		PodName: o.PodName, Now: at, ResultsObject: bucket.resultsURI(), RecordsObject: bucket.recordsURI(), Log: o.Log,
		EvalFile: rejudgeFile}
	rejudged.apply(&in, o.Config.Rejudge)
	// Judging is bounded by its own deadline (the manager sizes it from the code judges' timeout, workers and
	// case count), not by the termination signal.
	jctx, jcancel := context.WithTimeout(context.WithoutCancel(ctx), podwire.Seconds(o.Config.JudgeDeadlineSeconds))
	// The kubelet stops the judge with the rest of the pod: once asked to stop, wait only briefly for it.
	stopJudgeWait := context.AfterFunc(ctx, func() {
		t := time.NewTimer(terminationWait)
		defer t.Stop()
		select {
		case <-t.C:
			jcancel()
		case <-jctx.Done():
		}
	})
	if o.Config.CodeJudges && ended && in.EvalFile == nil {
		// The judges' shares are computed from the eval file; Gather judges with the same parse.
		if in.EvalFile, err = podwire.LoadEvalFileForJudging(o.Config); err != nil {
			podwire.Logf(o.Log, "Cannot read the eval file error=%q\n", err.Error())
			in.EvalFile = nil
		}
	}
	in.JudgeResults, in.JudgeError, in.LandlockABI = handOffToJudge(jctx, o, in.EvalFile, ended, why)
	stopJudgeWait()
	jcancel()

	// LLM judging (within Gather) is bounded by its own deadline and persisting by the results deadline, not by
	// the termination signal: the kubelet's grace period is the outer bound.
	deadline := podwire.Seconds(o.Config.LLMJudgeDeadlineSeconds) + podwire.Seconds(o.Config.ResultsDeadlineSeconds)
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), deadline)
	defer cancel()
	g, gerr := (*Gathered)(nil), rejudgeErr
	if gerr == nil {
		g, gerr = Gather(pctx, in)
	}
	if gerr != nil {
		podwire.Logf(o.Log, "Collection failed error=%q\n", textbound.Head(gerr.Error(), 512))
		g = failedCollection(o, at, ended, gerr)
	}
	return finishCollection(pctx, o, g, ended, bucket, bucketErr)
}

// finishCollection persists the collection g within pctx (see persist), writes the termination message before
// and after, and notes that the collection is done (which ends the judge containers).
func finishCollection(pctx context.Context, o Options, g *Gathered, ended bool, bucket *shardBucket, bucketErr error) error {
	// The termination message is written before the API writes start, so that the manager can end the run from
	// it even if the collector is killed while it retries; it is rewritten once they are done.
	writeTermination(o, terminationMessage(g, ended, errPersisting))
	perr := persist(pctx, o, g, bucket, bucketErr)
	term := terminationMessage(g, ended, perr)
	writeTermination(o, term)
	if perr != nil {
		podwire.Logf(o.Log, "Results not persisted error=%q\n", textbound.Head(perr.Error(), 1024))
	} else {
		podwire.Logf(o.Log, "Results persisted outcome=%s total=%d\n", g.Outcome, g.Summary.Total)
	}
	if err := podwire.WriteJSONAtomic(o.Pod.Collected(), term); err != nil {
		podwire.Logf(o.Log, "Cannot note the end of the collection error=%q\n", err.Error())
	}
	return perr
}

// rejudgeSnapshot reads the eval file and writes the source's kept records of the pod's shard into the snapshot
// (WriteRejudgeSnapshot), read from src (rejudgeRecords). Its error is the collection's: the source's records
// could not be read.
func rejudgeSnapshot(ctx context.Context, o Options, src RecordSource) (*evalfile.File, *Rejudged, error) {
	file, err := podwire.LoadEvalFileForJudging(o.Config)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the eval file: %w", err)
	}
	// Reading the records is bounded by the results deadline, as writing them is.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), podwire.Seconds(o.Config.ResultsDeadlineSeconds))
	defer cancel()
	rj, err := WriteRejudgeSnapshot(rctx, o.Config, file, src, o.Pod.SnapshotOutput())
	if err != nil {
		return nil, nil, fmt.Errorf("reading the kept records of EvalRun %s: %w", o.Config.Rejudge.From, err)
	}
	podwire.Logf(o.Log, "Records written into the snapshot judged=%d inputChanged=%d notKept=%d unreadable=%d\n",
		rj.Judged, rj.InputChanged, rj.NotKept, rj.Unreadable)
	return file, rj, nil
}

// collectionTime is when this pod's output was first collected: the collector's note of it, written the first
// time, so that a collector restarted while persisting writes the same collectedAt (and, its output being final,
// the same objects) again.
func collectionTime(o Options) time.Time {
	var noted time.Time
	if err := podwire.ReadJSON(o.Pod.CollectionTime(), &noted); err == nil && !noted.IsZero() {
		return noted
	}
	now := o.Now().UTC().Truncate(time.Second)
	if err := podwire.WriteJSONAtomic(o.Pod.CollectionTime(), now); err != nil {
		podwire.Logf(o.Log, "Cannot note the collection time error=%q\n", err.Error())
	}
	return now
}

// errPersisting is the persist error of the termination message written before the API writes.
var errPersisting = errors.New("the collector was still writing the results")

func writeTermination(o Options, t podwire.TerminationMessage) {
	if o.TerminationLog == "" {
		return
	}
	if err := writeTerminationLog(o.TerminationLog, t); err != nil {
		podwire.Logf(o.Log, "Cannot write the termination message error=%q\n", err.Error())
	}
}

// RunnerEnd is the end of the collector's wait for the runner, with the launcher's report when one arrived.
type RunnerEnd struct {
	Cause  outcome.End
	Reason string
	// Report is the launcher's report (the frame that ended the runner-end FIFO's stream, or its FrameStuck).
	Report *podwire.LauncherReport
	// ReportMissing says why no usable report ended the stream although the runner's end was seen: a failure.
	ReportMissing error
}

// waitForRunner waits for the runner container's processes to be gone, and takes the launcher's report from the
// end of the runner-end FIFO's stream. It stops waiting first when the collector is asked to stop, the runner
// outlives its own timeouts, or the launcher reports processes it cannot kill. Its notes in the snapshot volume
// (and its copy of the report) let a restarted collector resume.
func waitForRunner(ctx context.Context, o Options) RunnerEnd {
	if _, err := os.Stat(o.Pod.RunnerEnded()); err == nil {
		return endedWith(savedLauncherReport(o))
	}
	_, err := os.Stat(o.Pod.RunnerStarted())
	w := podwire.WatchRunnerEnd(o.Pod.RunnerEnd(), err == nil)
	started := w.Started
	var deadline <-chan time.Time
	if s := o.Config.RunnerDeadlineSeconds; s > 0 {
		t := time.NewTimer(time.Duration(s) * time.Second)
		defer t.Stop()
		deadline = t.C
	}
	podwire.Logf(o.Log, "Waiting for the runner to end\n")
	for {
		select {
		case <-started:
			started = nil
			if err := podwire.WriteBytesAtomic(o.Pod.RunnerStarted(), nil); err != nil {
				podwire.Logf(o.Log, "Cannot note the runner's start error=%q\n", err.Error())
			}
			continue
		case <-w.Ended:
			return runnerEnded(o, w)
		case payload := <-w.Stuck:
			rep, _ := decodeLauncherReport(payload)
			return RunnerEnd{Cause: outcome.EndNotStopped, Report: rep,
				Reason: "the launcher reports processes of the runner that survived SIGKILL; the runner container has not ended"}
		case err := <-w.Failed:
			return RunnerEnd{Cause: outcome.EndWatchFailed, Reason: "the collector could not watch the runner's end: " + err.Error()}
		case <-deadline:
			return RunnerEnd{Cause: outcome.EndDeadline,
				Reason: fmt.Sprintf("the runner container did not end within %ds (its timeouts plus a margin)", o.Config.RunnerDeadlineSeconds)}
		case <-ctx.Done():
		}
		break
	}
	t := time.NewTimer(terminationWait)
	defer t.Stop()
	select {
	case <-w.Ended:
		return runnerEnded(o, w)
	case <-t.C:
		return RunnerEnd{Cause: outcome.EndPodStopped, Reason: "the pod was stopped before the runner ended"}
	}
}

// runnerEnded takes the launcher's report from the end of the stream, keeps a copy of it, and notes the end.
func runnerEnded(o Options, w *podwire.RunnerEndWatch) RunnerEnd {
	_, payload, err := w.Final()
	if err == nil {
		if werr := podwire.WriteBytesAtomic(o.Pod.LauncherReport(), payload); werr != nil {
			podwire.Logf(o.Log, "Cannot keep the launcher's report error=%q\n", werr.Error())
		}
	}
	if err := podwire.WriteBytesAtomic(o.Pod.RunnerEnded(), nil); err != nil {
		podwire.Logf(o.Log, "Cannot note the runner's end error=%q\n", err.Error())
	}
	if err != nil {
		return endedWith(nil, err)
	}
	return endedWith(decodeLauncherReport(payload))
}

// savedLauncherReport is the copy of the launcher's report a collector that saw the runner's end kept.
func savedLauncherReport(o Options) (*podwire.LauncherReport, error) {
	data, err := os.ReadFile(o.Pod.LauncherReport())
	if err != nil {
		return nil, fmt.Errorf("the collector restarted without a copy of it: %w", err)
	}
	return decodeLauncherReport(data)
}

func endedWith(rep *podwire.LauncherReport, err error) RunnerEnd {
	if err != nil {
		return RunnerEnd{Cause: outcome.EndEnded, ReportMissing: err}
	}
	return RunnerEnd{Cause: outcome.EndEnded, Report: rep}
}

// handOffToJudge, when some case has a code_judge (else the pod has no judge container and it does nothing), tells
// the judge containers the snapshot is complete and reads their verdicts. It returns the verdicts it accepted (nil
// when there are none), what went wrong with them and the Landlock ABI the judges confined their scripts with (nil
// when no judge reported one).
//
// Before the snapshot is marked ready it connects to every judge container's judge-end FIFO and reads its judge
// runner's key (no script exists yet); then it reads each judge's authenticated frames until its end frame and
// accepts only results that name an invocation it expects from that container (podwire.Expected, computed here
// from the eval file), the first of each. Nothing any judge writes in a file is read. All of it is bounded by
// ctx (the judge deadline).
func handOffToJudge(ctx context.Context, o Options, file *evalfile.File, final bool, why string) (Verdicts, string, *int32) {
	if !o.Config.CodeJudges {
		return nil, "", nil // the pod has no judge container
	}
	if !final {
		if err := podwire.WriteJSONAtomic(o.Pod.SnapshotReady(), podwire.SnapshotMarker{Final: final, Reason: why}); err != nil {
			return nil, "the collector could not hand the output to the judge containers: " + err.Error(), nil
		}
		return nil, "not run, because the runner's output was not final: " + why, nil
	}
	if note, err := readVerdictsNote(o.Pod); err == nil {
		return note.Verdicts, strings.Join(note.Problems, "; "), note.LandlockABI
	}
	if _, err := os.Stat(o.Pod.SnapshotReady()); err == nil {
		// A restarted collector: the judges' keys were in its predecessor's memory, and scripts may exist now,
		// so no key read from here on can be trusted.
		return nil, "the collector restarted while the code judges ran; their verdicts are lost", nil
	}
	file, err := ensureEvalFile(o, file)
	if err != nil {
		return nil, "the collector could not read the eval file: " + err.Error(), nil
	}
	ids := o.Config.CaseIDs
	if len(ids) == 0 {
		ids = file.CaseIDs()
	}
	n := int(o.Config.JudgeContainers)
	podwire.Logf(o.Log, "Connecting to the judge containers count=%d\n", n)
	cctx, cancel := context.WithTimeout(ctx, judgeConnectTimeout)
	readers, problems := connectJudges(cctx, o.Pod, n)
	cancel()
	if err := podwire.WriteJSONAtomic(o.Pod.SnapshotReady(), podwire.SnapshotMarker{Final: true}); err != nil {
		for _, r := range readers {
			if r != nil {
				_ = r.Close()
			}
		}
		return nil, "the collector could not hand the output to the judge containers: " + err.Error(), nil
	}
	podwire.Logf(o.Log, "Waiting for the code judges\n")
	verdicts, more, abi := collectVerdicts(ctx, file, ids, readers)
	problems = append(problems, more...)
	if err := noteVerdicts(o.Pod, verdicts, problems, abi); err != nil {
		podwire.Logf(o.Log, "Cannot note the code judges' verdicts error=%q\n", err.Error())
	}
	return verdicts, strings.Join(problems, "; "), abi
}

// judgeConnectTimeout bounds the wait for the judge containers' judge runners to connect once the runner ended:
// they start with the pod and connect as soon as the collector opens their FIFOs, so only a judge container that
// has not started by then (its image still pulling) waits here; its cases' code judges are then Errors.
var judgeConnectTimeout = 60 * time.Second

// ensureEvalFile returns file, or the eval file read for judging.
func ensureEvalFile(o Options, file *evalfile.File) (*evalfile.File, error) {
	if file != nil {
		return file, nil
	}
	return podwire.LoadEvalFileForJudging(o.Config)
}

// persist writes the results (result ConfigMaps, or the bucket's objects), then the status or shard ConfigMap
// that references them, retrying API errors; with bucketOnly, only the bucket's objects.
func persist(ctx context.Context, o Options, g *Gathered, bucket *shardBucket, bucketErr error) error {
	if o.Config.BucketOnly {
		// No API call at all: the bucket's objects are the collection. Should they not land, the termination
		// message (persisted: false, with the error) tells the manager.
		if bucketErr != nil {
			return fmt.Errorf("storing the results in the bucket: %w", bucketErr)
		}
		if err := bucket.put(ctx, g.Output.Chunks, g.Output.Section); err != nil {
			return fmt.Errorf("storing the results in the bucket: %w", err)
		}
		return nil
	}
	if o.Client == nil {
		return fmt.Errorf("no API client")
	}
	if o.Config.Bucket != nil {
		// The store retries transient failures itself, within ctx.
		err := bucketErr
		if err == nil {
			// The records first: the summary names them as kept.
			err = bucket.putRecords(ctx, g.Records)
		}
		if err == nil {
			err = bucket.put(ctx, g.Output.Chunks, g.Output.Section)
		}
		if err != nil {
			// The results did not reach the bucket: the shard's collection says why, so the shard ends with it.
			err = fmt.Errorf("storing the results in the bucket: %w", err)
			c := g.Output.Section.Collection
			failed := failedCollection(o, c.CollectedAt.Time, c.RunnerFinished, err)
			werr := retry(ctx, o.Backoff, func(ctx context.Context) error {
				return WriteShardSection(ctx, o.Client, o.Namespace, o.Config.ShardConfigMap(), failed.Output.Section)
			})
			return errors.Join(err, werr)
		}
	} else {
		err := retry(ctx, o.Backoff, func(ctx context.Context) error {
			return WriteResultConfigMaps(ctx, o.Client, o.Namespace, o.Config.ResultConfigMaps, g.Output.Chunks)
		})
		if err != nil {
			return err
		}
		if r := o.Config.Records; r != nil && len(r.ConfigMaps) > 0 {
			err := retry(ctx, o.Backoff, func(ctx context.Context) error {
				return WriteRecordConfigMaps(ctx, o.Client, o.Namespace, r.ConfigMaps, g.Records)
			})
			if err != nil {
				return err
			}
		}
	}
	if shard := o.Config.ShardConfigMap(); shard != "" {
		// A shard of a sharded or resumed run: the manager merges the shards into the EvalRun's status.
		return retry(ctx, o.Backoff, func(ctx context.Context) error {
			return WriteShardSection(ctx, o.Client, o.Namespace, shard, g.Output.Section)
		})
	}
	return retry(ctx, o.Backoff, func(ctx context.Context) error {
		return ApplyStatus(ctx, o.Client, o.Namespace, o.Name, o.UID, g.Output.Section)
	})
}

// failedCollection is the section recorded when the collector could not gather results at all.
func failedCollection(o Options, now time.Time, finished bool, err error) *Gathered {
	at := metav1.NewTime(now.UTC().Truncate(time.Second))
	msg := textbound.Head("the collector could not gather the results: "+err.Error(), results.MaxCollectionMessageBytes)
	b := results.NewBuilder(results.Options{BudgetBytes: o.Config.StatusBudgetBytes})
	out, ferr := b.Finish(results.Tail{Collection: evalsv1alpha1.CollectionStatus{
		RunnerFinished: finished, Outcome: evalsv1alpha1.OutcomeCollectorFailed, Message: msg, CollectedAt: &at, PodName: o.PodName,
	}})
	if ferr != nil {
		// An empty section always fits; keep a minimal one should it not.
		minimal := &evalsv1alpha1.CollectionStatus{Outcome: evalsv1alpha1.OutcomeCollectorFailed, Message: msg, CollectedAt: &at, PodName: o.PodName}
		out = &results.Output{Section: results.Section{Collection: minimal}}
	}
	return &Gathered{Output: out, Outcome: evalsv1alpha1.OutcomeCollectorFailed, Message: msg}
}

func terminationMessage(g *Gathered, finished bool, perr error) podwire.TerminationMessage {
	s := g.Summary
	t := podwire.TerminationMessage{
		Outcome: string(g.Outcome), Message: textbound.Head(g.Message, 1024), RunnerFinished: finished, Persisted: perr == nil,
		Total: s.Total, Passed: s.Passed, Failed: s.Failed, Errored: s.Errored, Skipped: s.Skipped, Missing: s.Missing,
		BudgetUnjudged: s.UnjudgedByBudget(), ParseErrors: s.ParseErrors, Unexpected: s.Unexpected,
	}
	if c := g.Output.Section.Collection; c != nil {
		t.OutputSHA256 = c.OutputSHA256
	}
	if perr != nil {
		t.PersistError = textbound.Head(perr.Error(), 512)
	}
	return t
}

func writeTerminationLog(path string, t podwire.TerminationMessage) error {
	data, err := json.Marshal(t)
	if err != nil {
		return err
	}
	for len(data) > podwire.MaxTerminationMessageBytes && len(t.Message) > 0 {
		t.Message = textbound.Head(t.Message, len(t.Message)/2)
		t.PersistError = textbound.Head(t.PersistError, len(t.PersistError)/2)
		if data, err = json.Marshal(t); err != nil {
			return err
		}
	}
	// The termination log is a file the kubelet provides; it is written in place, not renamed.
	return os.WriteFile(path, data, 0o644)
}
