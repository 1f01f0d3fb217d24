package collector

import (
	"fmt"

	"github.com/evalrun-operator/evalrun-operator/internal/pipeline"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
)

// statusSink encodes each judged case into its result line and its status form, and adds them to the builder in
// order.
type statusSink struct {
	builder *results.Builder
}

// Prepare encodes a judged case, and its status form when the section may still show it; it is safe for
// concurrent use (MayShow is the builder's one method that is). The encoded line is appended to *buf, so one
// buffer holds the lines of a whole batch; the builder keeps nothing of a line once it is added.
func (s *statusSink) Prepare(buf *[]byte, c pipeline.Case) (results.Case, error) {
	full := results.Line{CaseResult: c.Result}
	if resp := c.Response; resp != nil {
		full.Answer, full.Line = resp.Text, resp.Line
		full.TokenUsage, full.CostUSD, full.DurationMs = resp.TokenUsage, resp.CostUSD, resp.DurationMs
	}
	start := len(*buf)
	b, err := full.AppendJSON(*buf)
	if err != nil {
		return results.Case{}, fmt.Errorf("encode the result of case %q: %w", c.Result.ID, err)
	}
	*buf = b
	line := b[start:len(b):len(b)]
	rc := results.Case{Index: c.Index, Missing: c.Result.Missing, Line: line, Usage: full.Usage()}
	// Most cases of a large run are past what the status can show: their status form is never built.
	if verdict := c.Result.Verdict; !rc.Missing && s.builder.MayShow(c.Index, verdict) {
		rc.Status = full.Status()
	} else {
		rc.Status.Verdict = verdict
	}
	return rc, nil
}

// Commit adds a prepared case to the builder, in output order.
func (s *statusSink) Commit(rc results.Case) error { return s.builder.Add(rc) }
