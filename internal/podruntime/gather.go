package podruntime

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	v1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/evaluate"
	"github.com/evalrun-operator/evalrun-operator/internal/jsonlresult"
	"github.com/evalrun-operator/evalrun-operator/internal/layout"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// maxCaseOutputBytes bounds each PerCase output file.
const maxCaseOutputBytes = jsonlresult.DefaultMaxSingleBytes

// GatherInput is what Gather reads.
type GatherInput struct {
	Config *layout.RunConfig
	// Output is the collector's snapshot of the runner's output tree (see TakeSnapshot).
	Output layout.Output
	// Snapshot says what could not be copied, and carries the launcher's report; nil means nothing was.
	Snapshot *Snapshot
	// JudgeResults is the judge container's judges.jsonl ("" when code judges did not run); JudgeError says why
	// they did not, if they did not.
	JudgeResults, JudgeError string
	// RunnerEnded is true when every process of the runner container had ended before the snapshot;
	// EndReason says why the collector stopped waiting otherwise.
	RunnerEnded bool
	EndReason   string
	// PodName is recorded in status.collection.
	PodName string
	// Now is collectedAt.
	Now time.Time
	// EvalFile is the parsed eval file when the caller already has it; nil: Gather reads Config.EvalFile.
	EvalFile *evalfile.File
}

// Gathered is one collection: what to persist and the facts the termination message carries.
type Gathered struct {
	Output  *results.Output
	Outcome v1alpha1.CollectionOutcome
	Message string
	// Summary counts the results (also in Output.Section.Summary).
	Summary v1alpha1.RunSummary
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
	rec := snap.Launcher
	file, err := in.evalFile()
	if err != nil {
		return nil, err
	}
	threshold, err := evaluate.ParseThreshold(cfg.PassThreshold)
	if err != nil {
		return nil, err
	}
	var recorded map[string]map[string]evaluate.EvaluatorResult
	if in.JudgeResults != "" {
		if recorded, err = readJudgeResults(in.JudgeResults); err != nil {
			return nil, err
		}
	}
	ids := cfg.CaseIDs
	if len(ids) == 0 {
		ids = file.CaseIDs()
	}
	g := &gatherer{
		cases:    caseIndex(file),
		ids:      ids,
		index:    make(map[string]int, len(ids)),
		seen:     make([]bool, len(ids)),
		recorded: recorded,
		judge:    &evaluate.Judge{Threshold: threshold, MissingCodeJudge: evaluate.VerdictError},
		builder: results.NewBuilder(results.Options{
			BudgetBytes: cfg.StatusBudgetBytes,
			ConfigMaps:  cfg.ResultConfigMaps,
		}),
		ctx: ctx,
	}
	for i, id := range ids {
		g.index[id] = i
	}
	invocationErrors := map[string]string{}
	if rec != nil {
		for _, c := range rec.Cases {
			invocationErrors[c.ID] = "the launcher reports that the runner invocation for this case " + c.Describe() + stderrSuffix(c.StderrTail)
		}
	}

	var tail results.Tail
	var sha string
	noOutput := false
	switch {
	case cfg.Batching == string(v1alpha1.BatchingPerCase):
		sha, tail, err = g.perCase(in.Output, snap.CaseErrors)
	case snap.OutputErr != nil:
		noOutput = true
		tail.ParseErrorCount = 1
		tail.ParseErrors = []v1alpha1.ParseError{{Message: results.Excerpt("the output cannot be read: "+snap.OutputErr.Error(), 1024)}}
	case snap.OutputMissing:
		noOutput = true
	default:
		var br *jsonlresult.BatchResult
		pb := g.startParallel(runtime.GOMAXPROCS(0))
		br, err = jsonlresult.ParseBatchFile(in.Output.BatchOutput(), ids, jsonlresult.Options{}, pb.add)
		if ferr := pb.finish(); err == nil && ferr != nil {
			err = ferr
		}
		switch {
		case errors.Is(err, jsonlresult.ErrNoOutputFile):
			noOutput, err = true, nil
		case err == nil:
			sha = br.OutputSHA256
			tail.ParseErrorCount += br.ParseErrorCount
			for _, le := range br.ParseErrors {
				if len(tail.ParseErrors) >= results.MaxStatusParseErrors {
					break
				}
				tail.ParseErrors = append(tail.ParseErrors, v1alpha1.ParseError{Line: le.Line, Excerpt: le.Excerpt, Message: le.Message})
			}
			tail.UnexpectedIDs, tail.UnexpectedCount = br.UnexpectedIDs, br.UnexpectedCount
		}
	}
	if err != nil {
		return nil, err
	}
	// Requested cases without a record, in request order.
	for i, id := range ids {
		if g.seen[i] {
			continue
		}
		res := evaluate.MissingCase(id)
		if why, ok := invocationErrors[id]; ok {
			res.Error = results.Excerpt(why, evaluate.MaxReasoningLength)
		}
		if err := g.emit(i, res, nil); err != nil {
			return nil, err
		}
		if len(tail.MissingIDs) < results.MaxStatusMissingIDs {
			tail.MissingIDs = append(tail.MissingIDs, id)
		}
		tail.MissingCount++
	}

	sum := g.summary.Summary()
	outcome, message := classify(rec, in, tail, noOutput, sum.Total)
	apiSummary := toAPISummary(sum, tail)
	tail.Summary = apiSummary
	collectedAt := metav1.NewTime(in.Now.UTC().Truncate(time.Second))
	tail.Collection = v1alpha1.CollectionStatus{
		RunnerFinished: in.RunnerEnded,
		OutputSHA256:   sha,
		Outcome:        outcome,
		Message:        message,
		CollectedAt:    &collectedAt,
		PodName:        in.PodName,
		Launcher:       launcherStatus(rec),
	}
	out, err := g.builder.Finish(tail)
	if err != nil {
		return nil, err
	}
	return &Gathered{Output: out, Outcome: outcome, Message: out.Section.Collection.Message, Summary: apiSummary}, nil
}

// evalFile returns the parsed eval file: the caller's, or Config.EvalFile read and parsed.
func (in GatherInput) evalFile() (*evalfile.File, error) {
	if in.EvalFile != nil {
		return in.EvalFile, nil
	}
	file, err := loadEvalFile(in.Config)
	if err != nil {
		return nil, err
	}
	// Reading a large eval file leaves its whole YAML tree as garbage; return it before the output streams in,
	// so the heap (and the pod's RSS) does not grow from that high-water mark.
	debug.FreeOSMemory()
	return file, nil
}

type gatherer struct {
	ctx      context.Context
	cases    map[string]*evalfile.Case
	ids      []string
	index    map[string]int
	seen     []bool
	recorded map[string]map[string]evaluate.EvaluatorResult
	judge    *evaluate.Judge
	summary  evaluate.SummaryBuilder
	builder  *results.Builder
}

// add judges one response as it streams from the parser, on the calling goroutine.
func (g *gatherer) add(resp *jsonlresult.Response) error {
	i, ok := g.claim(resp)
	if !ok {
		return nil
	}
	pc, err := g.prepare(nil, i, g.judgeOne(resp), resp)
	if err != nil {
		return err
	}
	return g.commit(pc)
}

// claim marks a response's case as seen; false for a response that is not requested or already seen.
func (g *gatherer) claim(resp *jsonlresult.Response) (int, bool) {
	i, ok := g.index[resp.ID]
	if !ok || g.seen[i] {
		return 0, false
	}
	g.seen[i] = true
	return i, true
}

// judgeOne judges one response; it is safe for concurrent use.
func (g *gatherer) judgeOne(resp *jsonlresult.Response) evaluate.CaseResult {
	c := g.cases[resp.ID]
	if c == nil {
		return evaluate.ErrorCase(resp.ID, "the case is not in the eval file")
	}
	return g.judge.JudgeCase(g.ctx, c, resp, g.recorded[resp.ID])
}

// fullResult is one line of the result ConfigMaps: the case's judgement, its answer and metrics.
type fullResult struct {
	evaluate.CaseResult
	Answer     string                  `json:"answer,omitempty"`
	Line       int64                   `json:"line,omitempty"`
	TokenUsage *jsonlresult.TokenUsage `json:"tokenUsage,omitempty"`
	CostUSD    *float64                `json:"costUsd,omitempty"`
	DurationMs *float64                `json:"durationMs,omitempty"`
}

// prepared is a judged case ready for the summary and the builder.
type prepared struct {
	res   evaluate.CaseResult
	rcase results.Case
}

// prepare encodes a judged case; it is safe for concurrent use. The encoded line is appended to *buf (a nil buf
// gives the line its own allocation), so one buffer can hold the lines of a whole batch.
func (g *gatherer) prepare(buf *[]byte, i int, res evaluate.CaseResult, resp *jsonlresult.Response) (prepared, error) {
	full := fullResult{CaseResult: res}
	if resp != nil {
		full.Answer, full.Line = resp.Text, resp.Line
		full.TokenUsage, full.CostUSD, full.DurationMs = resp.TokenUsage, resp.CostUSD, resp.DurationMs
	}
	var own []byte
	if buf == nil {
		buf = &own
	}
	start := len(*buf)
	b, err := appendFullResult(*buf, &full)
	if err != nil {
		return prepared{}, fmt.Errorf("encode the result of case %q: %w", res.ID, err)
	}
	*buf = b
	line := b[start:len(b):len(b)]
	res.Evaluators = nil // the summary needs only the verdict and score
	return prepared{res: res, rcase: results.Case{Index: i, Status: toAPICase(full.CaseResult, full.Answer), Missing: res.Missing, Line: line}}, nil
}

// commit adds a prepared case to the summary and the builder, in output order.
func (g *gatherer) commit(pc prepared) error {
	g.summary.Add(pc.res)
	return g.builder.Add(pc.rcase)
}

func (g *gatherer) emit(i int, res evaluate.CaseResult, resp *jsonlresult.Response) error {
	pc, err := g.prepare(nil, i, res, resp)
	if err != nil {
		return err
	}
	return g.commit(pc)
}

// parallelBatch judges and encodes the parser's responses on several goroutines and commits them in output
// order. Memory stays bounded: at most a few batches are in flight.
type parallelBatch struct {
	g       *gatherer
	batch   []claimed
	jobs    chan batchJob
	pending chan chan batchResult
	done    chan error
	failed  chan struct{}
}

type claimed struct {
	i    int
	resp *jsonlresult.Response
}

type batchJob struct {
	items []claimed
	out   chan batchResult
}

type batchResult struct {
	items []prepared
	err   error
}

const parallelBatchSize = 256

func (g *gatherer) startParallel(workers int) *parallelBatch {
	pb := &parallelBatch{
		g:       g,
		jobs:    make(chan batchJob, workers),
		pending: make(chan chan batchResult, 2*workers),
		done:    make(chan error, 1),
		failed:  make(chan struct{}),
	}
	for range workers {
		go func() {
			// Each batch's lines share one buffer, sized from the previous batch: one allocation per batch
			// instead of one per case. The buffer is not reused: its lines live until the batch is committed.
			lineBytes := 0
			for job := range pb.jobs {
				var br batchResult
				br.items = make([]prepared, 0, len(job.items))
				buf := make([]byte, 0, lineBytes+lineBytes/8)
				for _, c := range job.items {
					pc, err := g.prepare(&buf, c.i, g.judgeOne(c.resp), c.resp)
					if err != nil {
						br.err = err
						break
					}
					br.items = append(br.items, pc)
				}
				lineBytes = len(buf)
				job.out <- br
			}
		}()
	}
	go func() {
		var err error
		for out := range pb.pending {
			br := <-out
			if err != nil {
				continue
			}
			if err = br.err; err == nil {
				for _, pc := range br.items {
					if err = g.commit(pc); err != nil {
						break
					}
				}
			}
			if err != nil {
				close(pb.failed)
			}
		}
		pb.done <- err
	}()
	return pb
}

// add is the parser's callback.
func (pb *parallelBatch) add(resp *jsonlresult.Response) error {
	i, ok := pb.g.claim(resp)
	if !ok {
		return nil
	}
	pb.batch = append(pb.batch, claimed{i, resp})
	if len(pb.batch) < parallelBatchSize {
		return nil
	}
	return pb.flush()
}

func (pb *parallelBatch) flush() error {
	if len(pb.batch) == 0 {
		return nil
	}
	out := make(chan batchResult, 1)
	select {
	case pb.pending <- out:
	case <-pb.failed:
		return errors.New("judging the results failed")
	}
	pb.jobs <- batchJob{items: pb.batch, out: out}
	pb.batch = nil
	return nil
}

// finish commits what is left and returns the first error.
func (pb *parallelBatch) finish() error {
	ferr := pb.flush()
	close(pb.jobs)
	close(pb.pending)
	if err := <-pb.done; err != nil {
		return err
	}
	return ferr
}

// perCase parses one output file per requested case from the snapshot; copyErrors are the cases whose output
// could not be copied (a symlink, a FIFO, too large ...).
func (g *gatherer) perCase(out layout.Output, copyErrors map[string]error) (string, results.Tail, error) {
	var tail results.Tail
	h := sha256.New()
	var lenBuf [8]byte
	for i, id := range g.ids {
		var data []byte
		err := copyErrors[id]
		if err == nil {
			data, err = readBounded(out.CaseOutput(id), maxCaseOutputBytes)
			if errors.Is(err, os.ErrNotExist) {
				continue // missing
			}
		}
		h.Write([]byte(id))
		binary.BigEndian.PutUint64(lenBuf[:], uint64(len(data)))
		h.Write(lenBuf[:])
		h.Write(data)
		if err != nil {
			tail.ParseErrorCount++
			if len(tail.ParseErrors) < results.MaxStatusParseErrors {
				tail.ParseErrors = append(tail.ParseErrors, v1alpha1.ParseError{Message: results.Excerpt(fmt.Sprintf("case %s: %v", id, err), 1024)})
			}
			g.seen[i] = true
			if err := g.emit(i, evaluate.ErrorCase(id, err.Error()), nil); err != nil {
				return "", tail, err
			}
			continue
		}
		if err := g.add(jsonlresult.ParseSingle(id, data)); err != nil {
			return "", tail, err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), tail, nil
}

func readBounded(path string, max int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	// Read-only: a close error cannot lose data.
	defer func() { _ = f.Close() }()
	data, err := io.ReadAll(io.LimitReader(f, int64(max)+1))
	if err != nil {
		return nil, fmt.Errorf("read the output file: %w", err)
	}
	if len(data) > max {
		return data[:max], fmt.Errorf("the output file is larger than the limit of %d bytes", max)
	}
	return data, nil
}

// classify decides the collection's outcome and its one-line message. The launcher's report can only make it
// worse: it names a timeout, a failed healthcheck or failed invocations, never a success the output does not show.
func classify(rec *LauncherReport, in GatherInput, tail results.Tail, noOutput bool, total int) (v1alpha1.CollectionOutcome, string) {
	var notes []string
	if in.JudgeError != "" {
		notes = append(notes, "code judges: "+in.JudgeError)
	}
	if s := in.Snapshot; s != nil && s.LauncherErr != nil {
		notes = append(notes, "the launcher's report is unusable: "+s.LauncherErr.Error())
	}
	with := func(msg string) string {
		if len(notes) > 0 {
			msg += "; " + strings.Join(notes, "; ")
		}
		return msg
	}
	if !in.RunnerEnded {
		if strings.Contains(in.EndReason, "did not end within") {
			return v1alpha1.OutcomeRunnerTimedOut, with(in.EndReason + "; its output was collected as it was then")
		}
		return v1alpha1.OutcomeRunnerFailed, with("the runner did not finish (" + in.EndReason + "); the output was collected as it was then")
	}
	if rec != nil {
		switch {
		case rec.Error != "":
			return v1alpha1.OutcomeRunnerFailed, with("the launcher reports that the runner could not be started: " + rec.Error)
		case rec.HealthcheckFailed:
			msg := "the launcher reports that the healthcheck failed"
			if h := rec.Healthcheck; h != nil {
				msg = "the launcher reports that the healthcheck " + h.Describe() + stderrSuffix(h.StderrTail+h.StdoutTail)
			}
			return v1alpha1.OutcomeHealthcheckFailed, with(msg)
		}
		timedOut, failed := false, rec.FailedCases > 0
		if o := rec.Runner; o != nil {
			timedOut = o.TimedOut
			failed = failed || !o.Succeeded()
		}
		for _, c := range rec.Cases {
			timedOut = timedOut || c.TimedOut
		}
		what := "the launcher reports that the runner"
		if in.Config.Batching == string(v1alpha1.BatchingPerCase) && rec.FailedCases > 0 {
			what = fmt.Sprintf("the launcher reports that %d of %d runner invocations failed; the first", rec.FailedCases, rec.Invocations)
		}
		switch {
		case timedOut && rec.Runner != nil:
			return v1alpha1.OutcomeRunnerTimedOut, with(what + " " + rec.Runner.Describe())
		case failed && rec.Runner != nil:
			return v1alpha1.OutcomeRunnerFailed, with(what + " " + rec.Runner.Describe() + stderrSuffix(rec.Runner.StderrTail))
		}
	}
	switch {
	case tail.ParseErrorCount > 0:
		first := tail.ParseErrors[0]
		if first.Line == 0 {
			return v1alpha1.OutcomeInvalidOutput, with(fmt.Sprintf("%d output problems (first: %s)", tail.ParseErrorCount, first.Message))
		}
		return v1alpha1.OutcomeInvalidOutput, with(fmt.Sprintf("%d invalid output lines (first: line %d: %s)", tail.ParseErrorCount, first.Line, first.Message))
	case noOutput:
		return v1alpha1.OutcomeMissingResults, with("the runner wrote no output file")
	case tail.MissingCount > 0:
		noun := "cases have"
		if tail.MissingCount == 1 {
			noun = "case has"
		}
		return v1alpha1.OutcomeMissingResults, with(fmt.Sprintf("%d requested %s no result (first: %s)", tail.MissingCount, noun, tail.MissingIDs[0]))
	}
	return v1alpha1.OutcomeCompleted, with(fmt.Sprintf("collected the results of all %d cases", total))
}

// launcherStatus is the launcher's report as recorded in status: labelled as the launcher's, bounded.
func launcherStatus(rec *LauncherReport) *v1alpha1.LauncherReport {
	if rec == nil {
		return nil
	}
	out := &v1alpha1.LauncherReport{
		HealthcheckFailed: rec.HealthcheckFailed,
		Invocations:       clampInt32(rec.Invocations),
		FailedInvocations: clampInt32(rec.FailedCases),
		Leftovers:         clampInt32(rec.Leftovers),
	}
	if o := rec.Runner; o != nil {
		out.ExitCode = o.ExitCode
		out.Signal = results.Excerpt(o.Signal, 32)
		out.TimedOut = o.TimedOut
		out.StderrTail = lastBytes(o.StderrTail, 4096)
	}
	if h := rec.Healthcheck; rec.HealthcheckFailed && h != nil {
		out.StderrTail = lastBytes(h.StderrTail, 4096)
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

// lastBytes keeps at most n bytes of the end of s, as valid UTF-8.
func lastBytes(s string, n int) string {
	if len(s) <= n {
		return strings.ToValidUTF8(s, "\uFFFD")
	}
	return validTail([]byte(s[len(s)-n:]), true)
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
	return ": " + results.Excerpt(s, 512)
}

var apiVerdicts = map[evaluate.Verdict]v1alpha1.Verdict{
	evaluate.VerdictPass:    v1alpha1.VerdictPass,
	evaluate.VerdictFail:    v1alpha1.VerdictFail,
	evaluate.VerdictError:   v1alpha1.VerdictError,
	evaluate.VerdictSkipped: v1alpha1.VerdictSkipped,
}

func apiVerdict(v evaluate.Verdict) v1alpha1.Verdict {
	if av, ok := apiVerdicts[v]; ok {
		return av
	}
	return v1alpha1.VerdictError
}

// toAPICase converts a case result to its status form (the results package bounds its strings).
func toAPICase(r evaluate.CaseResult, answer string) v1alpha1.CaseResult {
	out := v1alpha1.CaseResult{ID: r.ID, Verdict: apiVerdict(r.Verdict), Answer: results.Excerpt(answer, 512)}
	if r.Verdict == evaluate.VerdictPass || r.Verdict == evaluate.VerdictFail {
		out.Score = evaluate.FormatScore(r.Score)
	}
	if r.Verdict == evaluate.VerdictError {
		out.Error = results.Excerpt(r.Error, 1024)
	}
	for i, e := range r.Evaluators {
		if i == results.MaxStatusEvaluators {
			break
		}
		es := v1alpha1.EvaluatorSummary{Name: e.Name, Type: e.Type, Verdict: apiVerdict(e.Verdict)}
		if e.Verdict != evaluate.VerdictSkipped {
			es.Score = evaluate.FormatScore(e.Score)
		}
		switch {
		case len(e.Misses) > 0:
			es.Message = results.Excerpt(strings.Join(e.Misses, "; "), 512)
		case e.Reasoning != "":
			es.Message = results.Excerpt(e.Reasoning, 512)
		}
		out.Evaluators = append(out.Evaluators, es)
	}
	return out
}

func toAPISummary(s evaluate.Summary, t results.Tail) v1alpha1.RunSummary {
	out := v1alpha1.RunSummary{
		Total:       int32(s.Total),
		Passed:      int32(s.Passed),
		Failed:      int32(s.Failed),
		Errored:     int32(s.Errored),
		Skipped:     int32(s.Skipped),
		Missing:     int32(s.Missing),
		ParseErrors: int32(t.ParseErrorCount),
		Unexpected:  int32(t.UnexpectedCount),
		PassRate:    evaluate.FormatScore(s.PassRate()),
	}
	if s.Judged > 0 {
		out.MeanScore = evaluate.FormatScore(s.MeanScore)
		out.MedianScore = evaluate.FormatScore(s.MedianScore)
		out.MinScore = evaluate.FormatScore(s.MinScore)
		out.MaxScore = evaluate.FormatScore(s.MaxScore)
		out.Histogram = make([]int32, len(s.Histogram))
		for i, n := range s.Histogram {
			out.Histogram[i] = int32(n)
		}
	}
	return out
}
