package results

import (
	"fmt"
	"math"
	"strconv"

	"github.com/evalrun-operator/evalrun-operator/internal/jsonenc"
	"github.com/evalrun-operator/evalrun-operator/internal/jsonlresult"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// AppendJSON appends the JSON encoding of r to b: byte for byte what encoding/json.Marshal produces for a Line
// (field order, omitempty, HTML-safe string escapes, float formatting), without reflection or an allocation per
// field. One result line is encoded per case, so this is on the collector's hot path (BenchmarkAppendJSON: the
// figure against encoding/json is in docs/design/hand-written-code.md); TestAppendJSONMatchesEncodingJSON and
// FuzzAppendJSON hold it to encoding/json.
func (r *Line) AppendJSON(b []byte) ([]byte, error) {
	var err error
	b = append(b, `{"id":`...)
	b = jsonenc.AppendString(b, r.ID)
	b = append(b, `,"score":`...)
	if b, err = appendJSONFloat(b, r.Score); err != nil {
		return b, fmt.Errorf("score: %w", err)
	}
	b = append(b, `,"verdict":`...)
	b = jsonenc.AppendString(b, string(r.Verdict))
	if len(r.Evaluators) > 0 {
		b = append(b, `,"evaluators":`...)
		if b, err = appendEvaluatorResults(b, r.Evaluators); err != nil {
			return b, err
		}
	}
	if r.Error != "" {
		b = append(b, `,"error":`...)
		b = jsonenc.AppendString(b, r.Error)
	}
	if r.Reason != "" {
		b = append(b, `,"reason":`...)
		b = jsonenc.AppendString(b, r.Reason)
	}
	if r.Missing {
		b = append(b, `,"missing":true`...)
	}
	if r.ModelUsage != nil {
		b = append(b, `,"modelUsage":`...)
		b = appendModelUsage(b, r.ModelUsage)
	}
	if r.BudgetUnjudged {
		b = append(b, `,"budgetUnjudged":true`...)
	}
	if r.Answer != "" {
		b = append(b, `,"answer":`...)
		b = jsonenc.AppendString(b, r.Answer)
	}
	if r.Line != 0 {
		b = append(b, `,"line":`...)
		b = strconv.AppendInt(b, r.Line, 10)
	}
	if r.TokenUsage != nil {
		b = append(b, `,"tokenUsage":`...)
		if b, err = appendTokenUsage(b, r.TokenUsage); err != nil {
			return b, err
		}
	}
	if r.CostUSD != nil {
		b = append(b, `,"costUsd":`...)
		if b, err = appendJSONFloat(b, *r.CostUSD); err != nil {
			return b, fmt.Errorf("costUsd: %w", err)
		}
	}
	if r.DurationMs != nil {
		b = append(b, `,"durationMs":`...)
		if b, err = appendJSONFloat(b, *r.DurationMs); err != nil {
			return b, fmt.Errorf("durationMs: %w", err)
		}
	}
	if r.CarriedFrom != "" {
		b = append(b, `,"carriedFrom":`...)
		b = jsonenc.AppendString(b, r.CarriedFrom)
	}
	if r.AnsweredBy != "" {
		b = append(b, `,"answeredBy":`...)
		b = jsonenc.AppendString(b, r.AnsweredBy)
	}
	if r.Trial != 0 {
		b = append(b, `,"trial":`...)
		b = strconv.AppendInt(b, int64(r.Trial), 10)
	}
	return append(b, '}'), nil
}

func appendEvaluatorResults(b []byte, rs []verdict.EvaluatorResult) ([]byte, error) {
	b = append(b, '[')
	for i := range rs {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = appendEvaluatorResult(b, &rs[i]); err != nil {
			return b, err
		}
	}
	return append(b, ']'), nil
}

func appendEvaluatorResult(b []byte, r *verdict.EvaluatorResult) ([]byte, error) {
	var err error
	b = append(b, `{"name":`...)
	b = jsonenc.AppendString(b, r.Name)
	b = append(b, `,"type":`...)
	b = jsonenc.AppendString(b, r.Type)
	if r.Key != "" {
		b = append(b, `,"key":`...)
		b = jsonenc.AppendString(b, r.Key)
	}
	b = append(b, `,"score":`...)
	if b, err = appendJSONFloat(b, r.Score); err != nil {
		return b, fmt.Errorf("evaluator %q score: %w", r.Name, err)
	}
	b = append(b, `,"verdict":`...)
	b = jsonenc.AppendString(b, string(r.Verdict))
	b = append(b, `,"hits":`...)
	b = appendJSONStrings(b, r.Hits)
	b = append(b, `,"misses":`...)
	b = appendJSONStrings(b, r.Misses)
	if r.Reasoning != "" {
		b = append(b, `,"reasoning":`...)
		b = jsonenc.AppendString(b, r.Reasoning)
	}
	b = append(b, `,"weight":`...)
	if b, err = appendJSONFloat(b, r.Weight); err != nil {
		return b, fmt.Errorf("evaluator %q weight: %w", r.Name, err)
	}
	if len(r.Members) > 0 {
		b = append(b, `,"members":`...)
		if b, err = appendEvaluatorResults(b, r.Members); err != nil {
			return b, err
		}
	}
	if r.Usage != nil {
		b = append(b, `,"modelUsage":`...)
		b = appendModelUsage(b, r.Usage)
	}
	if r.SkipCause != "" {
		b = append(b, `,"skipCause":`...)
		b = jsonenc.AppendString(b, string(r.SkipCause))
	}
	return append(b, '}'), nil
}

func appendModelUsage(b []byte, u *verdict.Usage) []byte {
	b = append(b, `{"calls":`...)
	b = strconv.AppendInt(b, u.Calls, 10)
	b = append(b, `,"promptTokens":`...)
	b = strconv.AppendInt(b, u.PromptTokens, 10)
	b = append(b, `,"completionTokens":`...)
	b = strconv.AppendInt(b, u.CompletionTokens, 10)
	b = append(b, `,"totalTokens":`...)
	b = strconv.AppendInt(b, u.TotalTokens, 10)
	b = append(b, `,"latencyMs":`...)
	b = strconv.AppendInt(b, u.LatencyMs, 10)
	return append(b, '}')
}

func appendTokenUsage(b []byte, t *jsonlresult.TokenUsage) ([]byte, error) {
	var err error
	b = append(b, `{"input":`...)
	if b, err = appendJSONFloat(b, t.Input); err != nil {
		return b, fmt.Errorf("tokenUsage.input: %w", err)
	}
	b = append(b, `,"output":`...)
	if b, err = appendJSONFloat(b, t.Output); err != nil {
		return b, fmt.Errorf("tokenUsage.output: %w", err)
	}
	if t.Cached != nil {
		b = append(b, `,"cached":`...)
		if b, err = appendJSONFloat(b, *t.Cached); err != nil {
			return b, fmt.Errorf("tokenUsage.cached: %w", err)
		}
	}
	return append(b, '}'), nil
}

// appendJSONStrings encodes a string slice; nil is null, as encoding/json has it.
func appendJSONStrings(b []byte, l []string) []byte {
	if l == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range l {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonenc.AppendString(b, s)
	}
	return append(b, ']')
}

// appendJSONFloat formats f as encoding/json does: shortest representation, exponent form below 1e-6 and from
// 1e21 on, with a two-digit negative exponent shortened (1e-07 becomes 1e-7). NaN and infinities are errors.
func appendJSONFloat(b []byte, f float64) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return b, fmt.Errorf("unsupported value %s", strconv.FormatFloat(f, 'g', -1, 64))
	}
	// Whole numbers below 2^53 (scores of 0 and 1, weights, token counts, milliseconds) have their integer digits
	// as shortest form; -0 keeps its sign.
	if f == math.Trunc(f) && math.Abs(f) < 1<<53 && (f != 0 || !math.Signbit(f)) {
		return strconv.AppendInt(b, int64(f), 10), nil
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	start := len(b)
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		if n := len(b); n-start >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}
