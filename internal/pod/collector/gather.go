package collector

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/bundle"
	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/evaluate"
	"github.com/evalrun-operator/evalrun-operator/internal/evaluate/grade42"
	"github.com/evalrun-operator/evalrun-operator/internal/jsonlresult"
	"github.com/evalrun-operator/evalrun-operator/internal/llm"
	"github.com/evalrun-operator/evalrun-operator/internal/outcome"
	"github.com/evalrun-operator/evalrun-operator/internal/pipeline"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/records"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// maxCaseOutputBytes bounds each PerCase output file.
const maxCaseOutputBytes = jsonlresult.DefaultMaxSingleBytes

// GatherInput is what Gather reads.
type GatherInput struct {
	Config *podwire.RunConfig
	// Output is the collector's snapshot of the runner's output tree (see TakeSnapshot).
	Output podwire.Output
	// Snapshot says what could not be copied; nil means nothing was.
	Snapshot *Snapshot
	// JudgeResults are the code judges' verdicts the collector accepted from the judge containers (nil when code
	// judges did not run); JudgeError says what went wrong with them, if anything did.
	JudgeResults Verdicts
	JudgeError   string
	// LandlockABI is the lowest Landlock ABI the judge containers confined their scripts with (nil: none reported).
	LandlockABI *int32
	// EndCause is how the collector's wait for the runner ended (outcome.EndEnded: every process of the runner
	// container had ended before the snapshot; the zero value: it did not end); EndReason says it to people.
	EndCause  outcome.End
	EndReason string
	// Launcher is the launcher's report, as it arrived through the runner-end FIFO (nil: none).
	Launcher *podwire.LauncherReport
	// LauncherMissing, when set, says why no usable launcher report ended the runner-end FIFO although the runner
	// ended: the runner's end is then unaccounted for, a failure.
	LauncherMissing error
	// PodName is recorded in status.collection.
	PodName string
	// Now is collectedAt.
	Now time.Time
	// EvalFile is the parsed eval file when the caller already has it; nil: Gather reads Config.EvalFile.
	EvalFile *evalfile.File
	// ResultsObject, when set, is the bucket object (s3:// URI) that is to hold every result as one gzip'd JSONL
	// chunk, instead of the result ConfigMaps.
	ResultsObject string
	// RecordsObject, with ResultsObject and Config.Records, is the bucket object (s3:// URI) that is to hold the
	// kept records as one gzip'd JSONL chunk, instead of the record ConfigMaps.
	RecordsObject string
	// Log receives the LLM client's retry lines (nil: none).
	Log io.Writer
	// MissingReasons, in a re-judge, are the errors of the cases it did not judge (Rejudged.MissingReasons);
	// AnsweredBy is the source run, named on every answered case's result; Note is added to the collection's
	// message.
	MissingReasons map[string]string
	AnsweredBy     string
	Note           string
}

// Gathered is one collection: what to persist and the facts the termination message carries.
type Gathered struct {
	Output  *results.Output
	Outcome evalsv1alpha1.CollectionOutcome
	Message string
	// Summary counts the results (also in Output.Section.Summary).
	Summary evalsv1alpha1.RunSummary
	// Records are the kept records' chunks (Config.Records; Output.Section.Records counts them).
	Records []results.Chunk
}

// Gather parses the snapshot of the runner's output, judges every requested case (merging the judge container's
// code_judge results) and builds the status section and result chunks. It fails only when it cannot read its own
// inputs (the eval file, for example); problems with the runner's output are results.
func Gather(ctx context.Context, in GatherInput) (*Gathered, error) {
	cfg := in.Config
	snap := in.Snapshot
	if snap == nil {
		snap = &Snapshot{}
	}
	rec := in.Launcher
	file, loadFile, err := in.readEvalFile()
	if err != nil {
		return nil, err
	}
	threshold, err := verdict.ParseThreshold(cfg.PassThreshold)
	if err != nil {
		return nil, err
	}
	recorded := in.JudgeResults
	ids := cfg.CaseIDs
	if len(ids) == 0 {
		ids = file.CaseIDs()
	}
	pin := pipeline.Input{
		IDs: ids, File: file, LoadFile: loadFile, Recorded: recorded, MissingReasons: invocationErrors(rec, in.MissingReasons),
		MaxListed: evalsv1alpha1.MaxStatusMissingIDs, MeasuredDurationsMs: measuredDurations(rec, len(ids)),
		// A code_judge the judge container did not report is an error in the cluster (the judge crashed or ran
		// out of time), not a skip.
		Judge: &evaluate.Judge{Threshold: threshold, MissingCodeJudge: verdict.VerdictError, Bundle: judgingBundle(cfg),
			InputFiles: evaluate.InputFiles(cfg.InputFiles), Grader42: grade42.Graders{}},
	}
	var budget *llm.Budget
	if cfg.LLM != nil {
		// LLM judges have their own deadline, sized by the manager from the pod's requests; the cases of a batch
		// are judged as many at once as the endpoint takes requests.
		budget = llm.NewBudget(cfg.LLM.MaxRequests, cfg.LLM.MaxTokens)
		pin.Judge.LLM = judgeModel(cfg.LLM, budget, time.Now().Add(podwire.Seconds(cfg.LLMJudgeDeadlineSeconds)), in.Log)
		if cfg.LLM.NonceDelimiters() {
			if cfg.UID == "" {
				return nil, errors.New("spec.judging.llm.answerDelimiters is Nonce, but the run's UID that keys the markers is unknown")
			}
			pin.Judge.AnswerNonceKey = evaluate.AnswerNonceKey(cfg.UID)
		}
		pin.CaseParallelism = int(cfg.LLM.MaxConcurrentRequests)
	}
	opts := results.Options{BudgetBytes: cfg.StatusBudgetBytes, ConfigMaps: cfg.ResultConfigMaps, NoCases: cfg.HasShardConfigMaps()}
	if in.ResultsObject != "" {
		opts.Objects = []string{in.ResultsObject}
	}
	sink := &statusSink{builder: results.NewBuilder(opts), answeredBy: in.AnsweredBy, trial: cfg.LineTrial()}
	if cfg.Records != nil {
		if err := in.keepRecords(sink, file); err != nil {
			return nil, err
		}
	}
	var tail results.Tail
	noOutput := false
	shape := pipeline.Output{Batching: evalsv1alpha1.BatchingMode(cfg.Batching), BatchPath: in.Output.BatchOutput(),
		ReadCase: func(id string) ([]byte, error) {
			if err := snap.CaseErrors[id]; err != nil {
				return nil, err
			}
			return pipeline.ReadBounded(in.Output.CaseOutput(id), maxCaseOutputBytes)
		}}
	src := pipeline.SourceFor(shape)
	switch {
	case shape.PerCase():
		// Each case's own copy says whether it has output.
	case snap.OutputErr != nil:
		noOutput = true
		tail.ParseErrorCount = 1
		msg := textbound.Head("the output cannot be read: "+snap.OutputErr.Error(), results.MaxParseErrorMessageBytes)
		tail.ParseErrors = []evalsv1alpha1.ParseError{{Message: msg}}
		src = noOutputSource
	case snap.OutputMissing:
		noOutput = true
		src = noOutputSource
	}
	pr, err := pipeline.Run(ctx, pin, src, sink)
	if err != nil {
		return nil, err
	}
	noOutput = noOutput || pr.NoOutput
	sha := pr.OutputSHA256
	if noOutput {
		sha = ""
	}
	tail.ParseErrorCount += pr.ParseErrorCount
	for _, le := range pr.ParseErrors {
		if len(tail.ParseErrors) >= evalsv1alpha1.MaxStatusParseErrors {
			break
		}
		tail.ParseErrors = append(tail.ParseErrors, evalsv1alpha1.ParseError{Line: le.Line, Excerpt: le.Excerpt, Message: le.Message})
	}
	tail.UnexpectedIDs, tail.UnexpectedCount = pr.UnexpectedIDs, pr.UnexpectedCount
	tail.MissingIDs, tail.MissingCount = pr.MissingIDs, pr.MissingCount
	tail.Budgets = reachedBudgets(budget, rec)

	sum := pr.Summary
	decided, message := classify(rec, in, tail, noOutput, sum.Total)
	apiSummary := results.SummaryStatus(sum, tail.ParseErrorCount, tail.UnexpectedCount)
	tail.Summary = apiSummary
	collectedAt := metav1.NewTime(in.Now.UTC().Truncate(time.Second))
	tail.Collection = evalsv1alpha1.CollectionStatus{
		RunnerFinished: in.runnerEnded(),
		OutputSHA256:   sha,
		Outcome:        decided,
		Message:        message,
		CollectedAt:    &collectedAt,
		PodName:        in.PodName,
		Launcher:       launcherStatus(rec, in.LauncherMissing),
		// Only when code judges ran: then the judges' word on their confinement.
		CodeJudgeLandlockABI: in.LandlockABI,
	}
	out, err := sink.builder.Finish(tail)
	if err != nil {
		return nil, err
	}
	g := &Gathered{Output: out, Outcome: decided, Message: out.Section.Collection.Message, Summary: apiSummary}
	if sink.keeper != nil {
		if g.Records, out.Section.Records, err = sink.keeper.Finish(); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// keepRecords makes sink keep each answered case's record, with its runner-view digest from file: in the shard's
// record ConfigMaps, each within podwire.MaxRecordConfigMapBytes, or in its one bucket object, within
// podwire.MaxRecordObjectBytes (docs/rejudge.md, the storage budget).
func (in GatherInput) keepRecords(sink *statusSink, file *evalfile.File) error {
	cfg := in.Config
	digests, err := newViewDigests(cfg, file)
	if err != nil {
		return err
	}
	sink.digest = digests
	sink.mode = records.ModeLine
	if cfg.Batching == string(evalsv1alpha1.BatchingPerCase) {
		sink.mode = records.ModeSingle
	}
	if in.ResultsObject != "" {
		sink.keeper = records.NewKeeper(evalsv1alpha1.RecordsInBucket, []string{in.RecordsObject}, podwire.MaxRecordObjectBytes)
		return nil
	}
	sink.keeper = records.NewKeeper(evalsv1alpha1.RecordsInConfigMaps, cfg.Records.ConfigMaps, podwire.MaxRecordConfigMapBytes)
	return nil
}

// readEvalFile returns the parsed eval file, or a loader of it that the pipeline calls. A header-only read
// (cfg.SharedEvaluators) of an eval file whose case ids are known is light: it overlaps the start of the output's
// parse. Any other read comes first, so that its garbage and the responses in flight do not peak together; kept
// records need the whole file (each case's view).
func (in GatherInput) readEvalFile() (*evalfile.File, func() (*evalfile.File, error), error) {
	cfg := in.Config
	if in.EvalFile == nil && cfg.SharedEvaluators && len(cfg.CaseIDs) > 0 && cfg.Records == nil {
		return nil, in.evalFile, nil
	}
	file, err := in.evalFile()
	return file, nil, err
}

// runnerEnded reports whether every process of the runner container had ended before the snapshot.
func (in GatherInput) runnerEnded() bool { return in.EndCause == outcome.EndEnded }

// evalFile returns the parsed eval file: the caller's, or Config.EvalFile read and parsed.
func (in GatherInput) evalFile() (*evalfile.File, error) {
	if in.EvalFile != nil {
		return in.EvalFile, nil
	}
	file, err := podwire.LoadEvalFileForJudging(in.Config)
	if err != nil {
		return nil, err
	}
	if file.WholeTree() {
		// A file read as one YAML document leaves its whole node tree as garbage: collect it before the output
		// streams in, so that the heap's next goal follows what is live, not that high-water mark. Its pages are
		// kept for the output's records: returning them to the OS (debug.FreeOSMemory) only to fault them in again
		// costs 0.3 s of CPU at 100,000 cases (huge pages split, then zeroed page by page). A file read item by
		// item leaves little garbage, and a forced collection would only cost the marking of what is live.
		runtime.GC()
	}
	return file, nil
}

// noOutputSource is the source of a runner that left no readable output: every case is missing.
var noOutputSource = pipeline.PerCase{Read: func(string) ([]byte, error) { return nil, os.ErrNotExist }}

// classify decides the collection's outcome (outcome.Collection, from typed facts) and says it in one line.
func classify(rec *podwire.LauncherReport, in GatherInput, tail results.Tail, noOutput bool, total int) (evalsv1alpha1.CollectionOutcome, string) {
	var notes []string
	if in.Note != "" {
		notes = append(notes, in.Note)
	}
	if in.JudgeError != "" {
		notes = append(notes, "code judges: "+in.JudgeError)
	}
	if rec != nil && rec.Leftovers > 0 {
		notes = append(notes, fmt.Sprintf("the launcher killed %s the runner left behind", plural(rec.Leftovers, "process", "processes")))
	}
	d := outcome.Collection(collectionFacts(rec, in, tail, noOutput))
	msg := ""
	switch d.Cause {
	case outcome.CauseRunnerDeadline:
		msg = in.EndReason + "; its output was collected as it was then"
	case outcome.CauseNotStopped:
		msg = notStopped(rec)
		if !in.runnerEnded() {
			msg += "; the output was collected as it was then"
		}
	case outcome.CauseRunnerNotEnded:
		msg = "the runner did not finish (" + in.EndReason + "); the output was collected as it was then"
	case outcome.CauseReportMissing:
		// The launcher writes its report last, after every runner process is gone; without it nothing says how the
		// runner's invocations ended (a timeout, leftovers), so the run cannot count as finished.
		msg = "the launcher's report did not arrive (" + in.LauncherMissing.Error() + "): how the runner ended is unaccounted for"
	case outcome.CauseStartFailed:
		msg = "the launcher reports that the runner could not be started: " + rec.Error
	case outcome.CauseHealthcheckFailed:
		msg = "the launcher reports that the healthcheck failed"
		if h := rec.Healthcheck; h != nil {
			msg = "the launcher reports that the healthcheck " + h.Describe() + stderrSuffix(h.StderrTail+h.StdoutTail)
		}
	case outcome.CauseCostBudget:
		msg = costBudgetMessage(rec.CostBudget, tail.MissingCount)
	case outcome.CauseRunnerTimedOut:
		msg = launcherRunner(rec, in) + " " + rec.Runner.Describe()
	case outcome.CauseRunnerFailed:
		msg = launcherRunner(rec, in) + " " + rec.Runner.Describe() + stderrSuffix(rec.Runner.StderrTail)
	case outcome.CauseInvalidOutput:
		first := tail.ParseErrors[0]
		msg = fmt.Sprintf("%d invalid output lines (first: line %d: %s)", tail.ParseErrorCount, first.Line, first.Message)
		if first.Line == 0 {
			msg = fmt.Sprintf("%d output problems (first: %s)", tail.ParseErrorCount, first.Message)
		}
	case outcome.CauseNoOutput:
		msg = "the runner wrote no output file"
	case outcome.CauseMissingResults:
		noun := "cases have"
		if tail.MissingCount == 1 {
			noun = "case has"
		}
		msg = fmt.Sprintf("%d requested %s no result (first: %s)", tail.MissingCount, noun, tail.MissingIDs[0])
	default:
		msg = fmt.Sprintf("collected the results of all %d cases", total)
	}
	if len(notes) > 0 {
		msg += "; " + strings.Join(notes, "; ")
	}
	return d.Outcome, msg
}

// collectionFacts are the typed facts the outcome is decided on: how the wait for the runner ended, the
// launcher's report, the output.
func collectionFacts(rec *podwire.LauncherReport, in GatherInput, tail results.Tail, noOutput bool) outcome.CollectionFacts {
	f := outcome.CollectionFacts{End: in.EndCause, Output: outcome.Output{ParseErrors: tail.ParseErrorCount, NoOutput: noOutput, Missing: tail.MissingCount}}
	f.Launcher.Missing = in.LauncherMissing != nil
	if rec == nil {
		return f
	}
	f.Launcher.Survivors = rec.Survivors
	f.Launcher.StartFailed = rec.Error != ""
	f.Launcher.HealthcheckFailed = rec.HealthcheckFailed
	f.Launcher.Failed = rec.FailedCases > 0
	f.Launcher.CostBudgetExceeded = rec.CostBudget != nil
	if o := rec.Runner; o != nil {
		f.Launcher.RunnerReported = true
		f.Launcher.TimedOut = o.TimedOut
		f.Launcher.Failed = f.Launcher.Failed || !o.Succeeded()
	}
	for _, c := range rec.Cases {
		f.Launcher.TimedOut = f.Launcher.TimedOut || c.TimedOut
	}
	return f
}

// launcherRunner is how the launcher's report names the runner's process: the runner (Batch), or the first of the
// failed invocations (PerCase).
func launcherRunner(rec *podwire.LauncherReport, in GatherInput) string {
	if in.Config.Batching == string(evalsv1alpha1.BatchingPerCase) && rec.FailedCases > 0 {
		return fmt.Sprintf("the launcher reports that %d of %d runner invocations failed; the first", rec.FailedCases, rec.Invocations)
	}
	return "the launcher reports that the runner"
}

// costBudgetMessage says that the launcher stopped the runner for its cost budget: the figure it read, the budget,
// and what became of the cases the runner had not answered.
func costBudgetMessage(s *podwire.CostBudgetStop, missing int) string {
	msg := fmt.Sprintf("the launcher stopped the runner: the cost its records reported (%s USD over %s) passed "+
		"the cost budget (%s USD, spec.target.maxCostUSD or this shard's share)",
		results.FormatUSDNanos(s.CostNanoUSD), plural(max(s.Cases, 0), "case", "cases"), results.FormatUSDNanos(s.MaxCostNanoUSD))
	if missing > 0 {
		msg += fmt.Sprintf("; the records written by then were judged, %s no result", plural(missing, "case has", "cases have"))
	}
	return msg
}

// notStopped says that processes of the runner survived SIGKILL.
func notStopped(rec *podwire.LauncherReport) string {
	if rec == nil || rec.Survivors == 0 {
		return "the launcher reports processes of the runner that survived SIGKILL for its kill grace"
	}
	return fmt.Sprintf("the launcher reports %s of the runner that survived SIGKILL for its kill grace", plural(rec.Survivors, "process", "processes"))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// launcherStatus is the launcher's report as recorded in status: labelled as the launcher's, bounded; a report
// that should have arrived and did not is recorded as Missing.
func launcherStatus(rec *podwire.LauncherReport, missing error) *evalsv1alpha1.LauncherReport {
	if rec == nil {
		if missing != nil {
			return &evalsv1alpha1.LauncherReport{Delivery: ptr.To(evalsv1alpha1.LauncherReportMissing)}
		}
		return nil
	}
	out := &evalsv1alpha1.LauncherReport{
		HealthcheckFailed: rec.HealthcheckFailed,
		Invocations:       clampInt32(rec.Invocations),
		FailedInvocations: clampInt32(rec.FailedCases),
		Leftovers:         clampInt32(rec.Leftovers),
		Survivors:         optionalCount(rec.Survivors),
		Delivery:          ptr.To(evalsv1alpha1.LauncherReportDelivered),
	}
	if o := rec.Runner; o != nil {
		out.ExitCode = o.ExitCode
		out.Signal = textbound.Head(o.Signal, results.MaxSignalBytes)
		out.TimedOut = o.TimedOut
		out.StderrTail = textbound.Tail(o.StderrTail, results.MaxStderrTailBytes)
	}
	if h := rec.Healthcheck; rec.HealthcheckFailed && h != nil {
		out.StderrTail = textbound.Tail(h.StderrTail, results.MaxStderrTailBytes)
	}
	if c := rec.CostBudget; c != nil {
		out.CostBudget = &evalsv1alpha1.CostBudgetStop{CostUSD: results.FormatUSDNanos(c.CostNanoUSD),
			MaxCostUSD: results.FormatUSDNanos(c.MaxCostNanoUSD), Cases: clampInt32(c.Cases)}
	}
	return out
}

func clampInt32(n int) int32 {
	switch {
	case n < 0:
		return 0
	case n > 1<<31-1:
		return 1<<31 - 1
	}
	return int32(n)
}

// stderrSuffix is ": <last line of the output>" or "".
func stderrSuffix(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return ": " + textbound.Head(s, 512)
}

// optionalCount is n clamped to int32, nil when zero (the status field is then omitted).
func optionalCount(n int) *int32 {
	if n <= 0 {
		return nil
	}
	return ptr.To(clampInt32(n))
}

// judgingBundle is the run's eval bundle as the judges read it (install materialized it in the bundle volume,
// every file verified); the zero Dir without a bundle.
func judgingBundle(cfg *podwire.RunConfig) bundle.Dir {
	if cfg.Bundle == nil {
		return bundle.Dir{}
	}
	return bundle.Dir{Root: cfg.Bundle.Dir, EvalFile: cfg.Bundle.EvalFile}
}

// invocationErrors is each case's error that no record can replace: the launcher's word on a failed PerCase
// invocation, and the reasons the caller knows (missing).
func invocationErrors(rec *podwire.LauncherReport, missing map[string]string) map[string]string {
	out := map[string]string{}
	if rec != nil {
		for _, c := range rec.Cases {
			out[c.ID] = "the launcher reports that the runner invocation for this case " + c.Describe() + stderrSuffix(c.StderrTail)
		}
	}
	for id, why := range missing {
		out[id] = why
	}
	return out
}

// measuredDurations is every case's wall time as the launcher measured it (PerCase), which latency judges instead
// of the runner's claims; nil otherwise, and for a report whose durations do not decode (latency's notes then say
// that they judged claims).
func measuredDurations(rec *podwire.LauncherReport, cases int) []int64 {
	if rec == nil || rec.Batching != string(evalsv1alpha1.BatchingPerCase) || rec.CaseDurations == "" {
		return nil
	}
	d, err := podwire.DecodeCaseDurations(rec.CaseDurations, cases)
	if err != nil {
		return nil
	}
	return d
}

// reachedBudgets lists the budgets the collection reached: the LLM judges' requests and tokens, the runner's cost.
func reachedBudgets(budget *llm.Budget, rec *podwire.LauncherReport) []evalsv1alpha1.BudgetKind {
	var out []evalsv1alpha1.BudgetKind
	requests, tokens := budget.Reached()
	if requests {
		out = append(out, evalsv1alpha1.BudgetJudgeRequests)
	}
	if tokens {
		out = append(out, evalsv1alpha1.BudgetJudgeTokens)
	}
	if rec != nil && rec.CostBudget != nil {
		out = append(out, evalsv1alpha1.BudgetRunnerCost)
	}
	return out
}
