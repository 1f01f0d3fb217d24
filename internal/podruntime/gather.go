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
	Paths  layout.Paths
	// RunnerFinished is true when the done marker exists.
	RunnerFinished bool
	// PodName is recorded in status.collection.
	PodName string
	// Now is used for collectedAt only when no marker file gives a stable time.
	Now time.Time
	// EvalFile is the parsed eval file when the caller already has it; nil: Gather reads Config.EvalFile.
	EvalFile *evalfile.File
}

// Gathered is one collection: what to persist and the facts the termination message carries.
type Gathered struct {
	Output  *results.Output
	Outcome string
	Message string
	// Summary counts the results (also in Output.Section.Summary).
	Summary v1alpha1.RunSummary
}

// Gather parses the runner's output, judges every requested case (merging the launcher's code_judge results) and
// builds the status section and result chunks. It fails only when it cannot read its own inputs (run.json is
// already loaded; the eval file, for example); problems with the runner's output are results.
func Gather(ctx context.Context, in GatherInput) (*Gathered, error) {
	cfg, p := in.Config, in.Paths
	var rec *RunnerRecord
	var r RunnerRecord
	if err := readJSON(p.RunnerRecord(), &r); err == nil {
		rec = &r
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("read the runner record: %w", err)
	}
	var done DoneMarker
	if in.RunnerFinished {
		if err := readJSON(p.Done(), &done); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("read the done marker: %w", err)
		}
	}
	file, err := in.evalFile()
	if err != nil {
		return nil, err
	}
	threshold, err := evaluate.ParseThreshold(cfg.PassThreshold)
	if err != nil {
		return nil, err
	}
	recorded, err := readJudgeResults(p.JudgeResults())
	if err != nil {
		return nil, err
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
			invocationErrors[c.ID] = "the runner invocation for this case " + c.Describe() + stderrSuffix(c.StderrTail)
		}
	}

	var tail results.Tail
	var sha string
	noOutput := false
	if cfg.Batching == string(v1alpha1.BatchingPerCase) {
		sha, tail, err = g.perCase(p)
	} else {
		var br *jsonlresult.BatchResult
		pb := g.startParallel(runtime.GOMAXPROCS(0))
		br, err = jsonlresult.ParseBatchFile(p.BatchOutput(), ids, jsonlresult.Options{}, pb.add)
		if ferr := pb.finish(); err == nil && ferr != nil {
			err = ferr
		}
		switch {
		case errors.Is(err, jsonlresult.ErrNoOutputFile):
			noOutput, err = true, nil
		case err == nil:
			sha = br.OutputSHA256
			tail.ParseErrorCount = br.ParseErrorCount
			for _, le := range br.ParseErrors {
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
	outcome, message := classify(rec, in.RunnerFinished, done, tail, noOutput, cfg.Batching, sum.Total)
	apiSummary := toAPISummary(sum, tail)
	tail.Summary = apiSummary
	collectedAt := metav1.NewTime(collectionTime(p, in.RunnerFinished, in.Now))
	tail.Collection = v1alpha1.CollectionStatus{
		RunnerFinished: in.RunnerFinished,
		OutputSHA256:   sha,
		Outcome:        outcome,
		Message:        message,
		CollectedAt:    &collectedAt,
		PodName:        in.PodName,
	}
	if rec != nil {
		tail.Collection.HealthcheckFailed = rec.HealthcheckFailed
		if o := rec.Runner; o != nil {
			tail.Collection.RunnerExitCode = o.ExitCode
			tail.Collection.RunnerSignal = o.Signal
			tail.Collection.RunnerTimedOut = o.TimedOut
			tail.Collection.StderrTail = o.StderrTail
		}
		if h := rec.Healthcheck; rec.HealthcheckFailed && h != nil {
			tail.Collection.StderrTail = h.StderrTail
		}
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

// perCase parses one output file per requested case.
func (g *gatherer) perCase(p layout.Paths) (string, results.Tail, error) {
	var tail results.Tail
	h := sha256.New()
	var lenBuf [8]byte
	for i, id := range g.ids {
		data, err := readBounded(p.CaseOutput(id), maxCaseOutputBytes)
		if errors.Is(err, os.ErrNotExist) {
			continue // missing
		}
		h.Write([]byte(id))
		binary.BigEndian.PutUint64(lenBuf[:], uint64(len(data)))
		h.Write(lenBuf[:])
		h.Write(data)
		if err != nil {
			tail.ParseErrorCount++
			if len(tail.ParseErrors) < results.MaxStatusParseErrors {
				tail.ParseErrors = append(tail.ParseErrors, v1alpha1.ParseError{Message: fmt.Sprintf("case %s: %v", id, err)})
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

// classify decides the collection's outcome and its one-line message.
func classify(rec *RunnerRecord, finished bool, done DoneMarker, tail results.Tail, noOutput bool, batching string, total int) (string, string) {
	var notes []string
	if done.JudgeError != "" {
		notes = append(notes, "code judges: "+done.JudgeError)
	}
	with := func(msg string) string {
		if len(notes) > 0 {
			msg += "; " + strings.Join(notes, "; ")
		}
		return msg
	}
	switch {
	case rec == nil && !finished:
		return layout.OutcomeRunnerFailed, with("the runner did not finish and recorded nothing: the collector was stopped " +
			"before the launcher wrote its record (the container was killed, OOM-killed or ran past its deadline)")
	case rec == nil:
		return layout.OutcomeCollectorFailed, with("the launcher wrote its done marker but no runner record")
	case rec.Error != "":
		return layout.OutcomeRunnerFailed, with("the runner could not be started: " + rec.Error)
	case rec.HealthcheckFailed:
		msg := "the healthcheck failed"
		if h := rec.Healthcheck; h != nil {
			msg = "the healthcheck " + h.Describe() + stderrSuffix(h.StderrTail+h.StdoutTail)
		}
		return layout.OutcomeHealthcheckFailed, with(msg)
	}
	timedOut, failed := false, rec.FailedCases > 0
	if o := rec.Runner; o != nil {
		timedOut = o.TimedOut
		failed = failed || !o.Succeeded()
	}
	for _, c := range rec.Cases {
		timedOut = timedOut || c.TimedOut
	}
	what := "the runner"
	if batching == string(v1alpha1.BatchingPerCase) && rec.FailedCases > 0 {
		what = fmt.Sprintf("%d of %d runner invocations failed; the first", rec.FailedCases, rec.Invocations)
	}
	switch {
	case timedOut:
		return layout.OutcomeRunnerTimedOut, with(what + " " + rec.Runner.Describe())
	case failed && rec.Runner != nil:
		return layout.OutcomeRunnerFailed, with(what + " " + rec.Runner.Describe() + stderrSuffix(rec.Runner.StderrTail))
	case !finished:
		return layout.OutcomeRunnerFailed, with("the runner did not finish: the collector was stopped before the done marker and collected the partial output")
	case tail.ParseErrorCount > 0:
		first := tail.ParseErrors[0]
		return layout.OutcomeInvalidOutput, with(fmt.Sprintf("%d invalid output lines (first: line %d: %s)", tail.ParseErrorCount, first.Line, first.Message))
	case noOutput:
		return layout.OutcomeMissingResults, with("the runner exited 0 but wrote no output file")
	case tail.MissingCount > 0:
		noun := "cases have"
		if tail.MissingCount == 1 {
			noun = "case has"
		}
		return layout.OutcomeMissingResults, with(fmt.Sprintf("%d requested %s no result (first: %s)", tail.MissingCount, noun, tail.MissingIDs[0]))
	}
	return layout.OutcomeCompleted, with(fmt.Sprintf("collected the results of all %d cases", total))
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

func collectionTime(p layout.Paths, finished bool, now time.Time) time.Time {
	candidates := []string{p.RunnerRecord(), p.BatchOutput()}
	if finished {
		candidates = append([]string{p.Done()}, candidates...)
	}
	for _, f := range candidates {
		if fi, err := os.Stat(f); err == nil {
			return fi.ModTime().UTC().Truncate(time.Second)
		}
	}
	return now.UTC().Truncate(time.Second)
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
