package collector

import (
	"fmt"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"

	"github.com/evalrun-operator/evalrun-operator/internal/pipeline"
	"github.com/evalrun-operator/evalrun-operator/internal/records"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
)

// statusSink encodes each judged case into its result line and its status form, and adds them to the builder in
// order; with a keeper, it also keeps each answered case's record as the runner wrote it, with its view digest.
type statusSink struct {
	builder *results.Builder
	// keeper, when set, keeps the records (internal/records); digest gives each case's runner-view digest.
	keeper *records.Keeper
	digest *viewDigests
	// mode is how the records were read (ModeLine for a batch file, ModeSingle for one file per case).
	mode records.Mode
	// answeredBy, in a re-judge, names the source run on every answered case's result.
	answeredBy string
	// trial, in a run with trials, is the pod's trial from 2 on, set on every result (0: trial 1, omitted).
	trial int
}

// preparedCase is a case encoded by Prepare: its result and, when it is kept, its record's line.
type preparedCase struct {
	rc     results.Case
	record []byte
}

// Prepare encodes a judged case, and its status form when the section may still show it; it is safe for
// concurrent use (MayShow is the builder's one method that is). The encoded lines are appended to *buf, so one
// buffer holds the lines of a whole batch; the builder and the keeper keep nothing of a line once it is added.
func (s *statusSink) Prepare(buf *[]byte, c pipeline.Case) (preparedCase, error) {
	full := results.Line{CaseResult: c.Result, Trial: s.trial}
	if resp := c.Response; resp != nil {
		full.Answer, full.Line = resp.Text, resp.Line
		full.TokenUsage, full.CostUSD, full.DurationMs = resp.TokenUsage, resp.CostUSD, resp.DurationMs
		full.AnsweredBy = s.answeredBy
	}
	start := len(*buf)
	b, err := full.AppendJSON(*buf)
	if err != nil {
		return preparedCase{}, fmt.Errorf("encode the result of case %q: %w", c.Result.ID, err)
	}
	*buf = b
	line := b[start:len(b):len(b)]
	rc := results.Case{Index: c.Index, Missing: c.Result.Missing, Line: line, Usage: full.Usage()}
	// Most cases of a large run are past what the status can show: their status form is never built.
	if v := evalsv1alpha1.Verdict(c.Result.Verdict); !rc.Missing && s.builder.MayShow(c.Index, v) {
		rc.Status = full.Status()
	} else {
		rc.Status.Verdict = v
	}
	p := preparedCase{rc: rc}
	if s.keeper != nil && c.Response != nil && c.Response.Raw != nil {
		// The record is filed under the id the pipeline claimed it for: the parser's, never the runner's say. The
		// case's view is rendered in the batch buffer's spare room, then overwritten by the record's line.
		digest, b, err := s.digest.of(*buf, c.Result.ID, c.Index)
		if err != nil {
			return preparedCase{}, fmt.Errorf("the runner-view digest of case %q: %w", c.Result.ID, err)
		}
		start := len(b)
		b = records.AppendLine(b, c.Result.ID, digest, s.mode, c.Response.Raw)
		*buf = b
		p.record = b[start:len(b):len(b)]
	}
	return p, nil
}

// Commit adds a prepared case to the builder and its record to the keeper, in output order.
func (s *statusSink) Commit(p preparedCase) error {
	if err := s.builder.Add(p.rc); err != nil {
		return err
	}
	if p.record != nil {
		return s.keeper.AddLine(p.record)
	}
	return nil
}
