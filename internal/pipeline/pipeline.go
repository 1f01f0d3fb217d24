// Package pipeline is the one collection pipeline: it reads a runner's output (a JSONL batch file or one file per
// case), claims the requested case ids, judges each case, finds the missing ones and counts the summary. The
// in-pod collector and `collector check` both call Run, so a local check gives exactly the verdicts the cluster
// gives; each only says what to do with a judged case (a Sink): the collector encodes it into the status and the
// result ConfigMaps, the check command renders it.
//
// The package does no I/O beyond reading the output it is given, and imports no client-go.
package pipeline

import (
	"context"
	"errors"
	"fmt"
	"runtime"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/evaluate"
	"github.com/evalrun-operator/evalrun-operator/internal/idindex"
	"github.com/evalrun-operator/evalrun-operator/internal/jsonlresult"
	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// Input says which cases to collect and how to judge them.
type Input struct {
	// IDs are the requested case ids, in order, each once.
	IDs []string
	// File is the eval file the cases come from; nil collects without judging, unless LoadFile is set.
	File *evalfile.File
	// LoadFile, when File is nil, loads the eval file while the output is read: the workers wait for it before
	// judging their first batch (the responses read meanwhile stay within the bytes in flight). Its error ends the
	// run.
	LoadFile func() (*evalfile.File, error)
	// Judge judges each case with File's evaluators; nil collects without judging.
	Judge *evaluate.Judge
	// Recorded are evaluator results judged elsewhere (the judge container's code_judge verdicts), by case id and
	// evaluator key; the Judge uses them instead of running those evaluators.
	Recorded map[string]map[string]verdict.EvaluatorResult
	// MissingReasons replace the error of a missing case (for example the launcher's report that the case's
	// invocation failed), by case id.
	MissingReasons map[string]string
	// MeasuredDurationsMs are the cases' invocation wall times as the launcher measured them (PerCase), by
	// position in IDs, -1 for a case it did not measure; nil without measurements. Each case's Response carries its
	// own (MeasuredDurationMs) to the judge.
	MeasuredDurationsMs []int64
	// Workers judge cases concurrently (0: GOMAXPROCS).
	Workers int
	// CaseParallelism is how many cases of one batch a worker judges at once (0 or 1: one after the other). LLM
	// judges wait on the network, not the CPU: with the model endpoint's concurrency bound here, its requests
	// stay in flight even when all cases fit in one batch.
	CaseParallelism int
	// MaxListed bounds the listed missing ids (0: jsonlresult.DefaultMaxListedIDs); MissingCount counts all.
	MaxListed int
}

// judging reports whether the input judges its cases.
func (in *Input) judging() bool { return (in.File != nil || in.LoadFile != nil) && in.Judge != nil }

// Case is one requested case as the pipeline hands it to a Sink.
type Case struct {
	// Index is the case's position in Input.IDs.
	Index int
	// Response is the runner's response; nil when the case is missing or its output could not be read.
	Response *jsonlresult.Response
	// Result is the case's judgement. Without judging it carries only the ID, Missing and, for an unreadable
	// output, Error.
	Result verdict.CaseResult
}

// Sink receives every requested case exactly once: Prepare, possibly on several goroutines at once, then Commit
// on one goroutine in order (the cases with a response in output order, then the others in request order).
// Prepare may append bytes it wants to keep until Commit to *buf (one buffer serves a batch of cases, and is
// reused for another batch once they are committed, so nothing may refer to those bytes after Commit returns);
// what it returns must not alias the Case's Result.Evaluators past Commit.
type Sink[T any] interface {
	Prepare(buf *[]byte, c Case) (T, error)
	Commit(T) error
}

// Result is what a run of the pipeline found, besides the cases the Sink received.
type Result struct {
	// Requested is the number of requested ids; Present those with a response.
	Requested, Present int
	// MissingIDs are the requested ids without a response or a read error, in request order (bounded by
	// Input.MaxListed); MissingCount counts all of them.
	MissingIDs   []string
	MissingCount int
	// UnexpectedIDs are ids of valid records nobody requested (bounded); UnexpectedCount counts all.
	UnexpectedIDs   []string
	UnexpectedCount int
	// ParseErrors are the line errors of a batch output, or the cases whose own output could not be read
	// (Line 0, the message naming the case), bounded; ParseErrorCount counts all.
	ParseErrors     []jsonlresult.LineError
	ParseErrorCount int
	// NoOutput is set when there was no output file at all (every case is missing); NoOutputErr says which.
	NoOutput    bool
	NoOutputErr error
	// OutputSHA256 is the hex SHA-256 of the output read (for one file per case: of each case's id, length and
	// bytes, in request order).
	OutputSHA256 string
	// Summary counts the judged cases (all zero without judging).
	Summary verdict.Summary
}

// OK reports whether every requested case has a response and nothing in the output was invalid.
func (r *Result) OK() bool { return r.MissingCount == 0 && r.ParseErrorCount == 0 && !r.NoOutput }

// Run collects the responses of src for in's requested ids and hands each requested case to sink. It returns an
// error only when reading the output fails or sink does; what is wrong with the output itself is in the Result.
func Run[T any](ctx context.Context, in Input, src Source, sink Sink[T]) (*Result, error) {
	if in.Workers <= 0 {
		in.Workers = runtime.GOMAXPROCS(0)
	}
	if in.MaxListed <= 0 {
		in.MaxListed = jsonlresult.DefaultMaxListedIDs
	}
	r := &run{
		ctx:  ctx,
		in:   &in,
		ids:  idindex.New(in.IDs),
		seen: make([]bool, len(in.IDs)),
		res:  &Result{Requested: len(in.IDs)},
	}
	if r.ids == nil || !r.ids.Distinct() {
		// Ids given more than once (against Input's contract) keep their last position, as they always have.
		r.index = make(map[string]int, len(in.IDs))
		for i, id := range in.IDs {
			r.index[id] = i
		}
	}
	if in.File == nil && in.LoadFile != nil {
		r.fileLoaded = make(chan struct{})
		go func() {
			defer close(r.fileLoaded)
			r.in.File, r.fileErr = in.LoadFile()
		}()
	}
	p := startParallel(r, sink, in.Workers)
	r.emit = p.add
	err := src.read(ctx, r)
	// A failed worker or sink stops the source with a generic error; the cause is the one finish returns.
	if ferr := p.finish(); ferr != nil {
		err = ferr
	}
	if ferr := r.waitFile(); ferr != nil {
		err = ferr
	}
	if err != nil {
		return nil, err
	}
	// The requested cases without a response, in request order. A batch output's missing record of an AgentV 4.42
	// test is graded as AgentV 4.42 grades it (Judge.JudgeMissing); any other missing case is an Error.
	_, batched := src.(Batch)
	for i, id := range in.IDs {
		if r.seen[i] {
			continue
		}
		res := verdict.MissingCase(id)
		why, explained := in.MissingReasons[id]
		if explained {
			res.Error = textbound.Head(why, verdict.MaxReasoningLength)
		}
		if !in.judging() {
			res = verdict.CaseResult{ID: id, Missing: true}
		} else if c := in.File.CaseNear(id, i); batched && !explained && !r.res.NoOutput && c != nil && c.Suite != nil {
			res = in.Judge.JudgeMissing(ctx, c)
		}
		if err := commitOne(r, sink, Case{Index: i, Result: res}); err != nil {
			return nil, err
		}
		if len(r.res.MissingIDs) < in.MaxListed {
			r.res.MissingIDs = append(r.res.MissingIDs, id)
		}
		r.res.MissingCount++
	}
	r.res.Summary = r.summary.Summary()
	return r.res, nil
}

// run is the state of one Run.
type run struct {
	ctx context.Context
	in  *Input
	// ids finds requested ids (index instead when they are not distinct); next is where the next response's id is
	// expected (responses in request order).
	ids     *idindex.Index
	index   map[string]int
	next    int
	seen    []bool
	res     *Result
	summary verdict.SummaryBuilder
	// emit hands a claimed case to the workers.
	emit func(Case) error
	// fileLoaded is closed once Input.LoadFile returned (nil without LoadFile); in.File and fileErr are set then.
	fileLoaded chan struct{}
	fileErr    error
}

// waitFile waits until the eval file is loaded and returns the error of loading it.
func (r *run) waitFile() error {
	if r.fileLoaded == nil {
		return nil
	}
	<-r.fileLoaded
	if r.fileErr != nil {
		return r.fileErr
	}
	if r.in.File == nil {
		return errors.New("loading the eval file returned none")
	}
	return nil
}

// claim marks a response's case as seen; false for an id that is not requested or already seen.
func (r *run) claim(id string) (int, bool) {
	var i int
	var ok bool
	if r.index != nil {
		i, ok = r.index[id]
	} else {
		i, ok = r.ids.Find(id, r.next)
	}
	if !ok || r.seen[i] {
		return 0, false
	}
	r.seen[i], r.next = true, i+1
	return i, true
}

// respond hands on a requested case's response.
func (r *run) respond(resp *jsonlresult.Response) error {
	i, ok := r.claim(resp.ID)
	if !ok {
		return nil
	}
	r.res.Present++
	return r.emit(Case{Index: i, Response: resp})
}

// caseError records that case i's own output could not be read.
func (r *run) caseError(i int, id string, err error) error {
	r.seen[i] = true
	r.res.ParseErrorCount++
	if len(r.res.ParseErrors) < jsonlresult.DefaultMaxParseErrors {
		r.res.ParseErrors = append(r.res.ParseErrors, jsonlresult.LineError{Message: textbound.Head(fmt.Sprintf("case %s: %v", id, err), 1024)})
	}
	res := verdict.ErrorCase(id, err.Error())
	return r.emit(Case{Index: i, Result: res})
}

// judge judges a claimed case (Result already set for read errors); safe for concurrent use.
func (r *run) judge(c *Case) {
	if c.Response == nil {
		if !r.in.judging() {
			c.Result = verdict.CaseResult{ID: r.in.IDs[c.Index], Error: c.Result.Error}
		}
		return
	}
	id := c.Response.ID
	if d := r.in.MeasuredDurationsMs; c.Index < len(d) && d[c.Index] >= 0 {
		ms := d[c.Index]
		c.Response.MeasuredDurationMs = &ms
	}
	if !r.in.judging() {
		c.Result = verdict.CaseResult{ID: id}
		return
	}
	// The requested ids are usually the eval file's, in its order.
	i, ok := r.in.File.Find(id, c.Index)
	if !ok {
		c.Result = verdict.ErrorCase(id, "the case is not in the eval file")
		return
	}
	// Evaluators that read nothing of the case judge it by its id and evaluators alone.
	ec, light := r.in.File.LightCase(i)
	if !light || r.in.Judge.NeedsCase(ec.Evaluators) {
		ec = r.in.File.CaseAt(i)
	}
	c.Result = r.in.Judge.JudgeCase(r.ctx, ec, c.Response, r.in.Recorded[id])
}
