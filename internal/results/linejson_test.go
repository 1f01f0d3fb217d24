package results

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/evalrun-operator/evalrun-operator/internal/jsonlresult"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
	"github.com/google/go-cmp/cmp"
)

func TestAppendJSONMatchesEncodingJSON(t *testing.T) {
	tricky := "quote\" back\\ <b>&amp; \b\f\n\r\t\x00\x1f\x7f é 中 \u2028\u2029 \xff\xfe bad \xe2\x82 end"
	tests := map[string]Line{
		"zero":    {},
		"missing": {CaseResult: verdict.MissingCase("case-1")},
		"full": {
			CaseResult: verdict.CaseResult{
				ID: "case-2", Score: 0.8125, Verdict: verdict.VerdictFail, Error: tricky, Reason: "below threshold",
				ModelUsage: &verdict.Usage{Calls: 3, PromptTokens: 1234, CompletionTokens: 56, TotalTokens: 1290, LatencyMs: 987},
				Evaluators: []verdict.EvaluatorResult{
					{Name: "tools", Type: "tool_trajectory", Score: 1, Verdict: verdict.VerdictPass, Hits: []string{"a", tricky}, Misses: []string{}, Weight: 1},
					{Name: "c", Type: "composite", Key: "k", Score: 1e-7, Verdict: verdict.VerdictFail, Reasoning: tricky, Weight: 2.5,
						Members: []verdict.EvaluatorResult{{Name: "m", Type: "latency", Score: 1e21, Weight: -1e-9,
							Usage: &verdict.Usage{Calls: 1, TotalTokens: 9}}},
						Usage: &verdict.Usage{Calls: 2, PromptTokens: 7, CompletionTokens: 1, TotalTokens: 8, LatencyMs: 1}},
					{Name: "judge", Type: "llm_judge", Verdict: verdict.VerdictSkipped, SkipCause: verdict.SkipBudgetSpent, Reasoning: tricky},
				},
				BudgetUnjudged: true,
			},
			Answer: tricky, Line: 12345,
			TokenUsage: &jsonlresult.TokenUsage{Input: 1200, Output: 0.5, Cached: ptrTo(3e-5)},
			CostUSD:    ptrTo(0.00731), DurationMs: ptrTo(123456789012.0), CarriedFrom: tricky, AnsweredBy: tricky, Trial: 100,
		},
		"negative trial": {CaseResult: verdict.CaseResult{ID: "t"}, Trial: -3},
		"floats": {
			CaseResult: verdict.CaseResult{ID: "f", Score: math.Copysign(0, -1), Verdict: verdict.VerdictPass},
			TokenUsage: &jsonlresult.TokenUsage{Input: 1e20, Output: 123456789e-15},
			CostUSD:    ptrTo(math.SmallestNonzeroFloat64), DurationMs: ptrTo(math.MaxFloat64),
		},
	}
	for name, r := range tests {
		t.Run(name, func(t *testing.T) {
			want, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			got, err := r.AppendJSON([]byte("prefix"))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff("prefix"+string(want), string(got)); diff != "" {
				t.Errorf("AppendJSON differs from encoding/json (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAppendFullResultRejectsNonFinite(t *testing.T) {
	for name, r := range map[string]Line{
		"NaN score":     {CaseResult: verdict.CaseResult{Score: math.NaN()}},
		"infinite cost": {CostUSD: ptrTo(math.Inf(1))},
		"member weight": {CaseResult: verdict.CaseResult{Evaluators: []verdict.EvaluatorResult{{Members: []verdict.EvaluatorResult{{Weight: math.Inf(-1)}}}}}},
		"cached tokens": {TokenUsage: &jsonlresult.TokenUsage{Cached: ptrTo(math.NaN())}},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := json.Marshal(r); err == nil {
				t.Fatal("encoding/json accepted the value; the case is wrong")
			}
			if _, err := r.AppendJSON(nil); err == nil {
				t.Error("AppendJSON accepted a value encoding/json rejects")
			}
		})
	}
}

// TestAppendJSONFloatMatchesEncodingJSON compares float formatting over random magnitudes, boundaries included.
func TestAppendJSONFloatMatchesEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	vals := []float64{0, 1, -1, 1e-6, 9.999999999999999e-7, 1e21, 9.99999999999999e20, 5e-324, 1e-100, 1e100, 0.1, 1.0 / 3,
		// Whole numbers, which take the integer path below 2^53.
		math.Copysign(0, -1), 1800, -526, 1 << 53, 1<<53 - 1, -(1<<53 - 1), 1<<53 + 2, 1e15, 1e16, 123456789012345}
	for range 20000 {
		vals = append(vals, math.Float64frombits(rng.Uint64()))
		vals = append(vals, rng.NormFloat64()*math.Pow(10, float64(rng.IntN(60)-30)))
		vals = append(vals, math.Trunc(rng.NormFloat64()*math.Pow(10, float64(rng.IntN(18)))))
	}
	for _, f := range vals {
		want, werr := json.Marshal(f)
		got, gerr := appendJSONFloat(nil, f)
		if (werr != nil) != (gerr != nil) || (werr == nil && string(want) != string(got)) {
			t.Fatalf("float %v: encoding/json %q (%v), appendJSONFloat %q (%v)", f, want, werr, got, gerr)
		}
	}
}

func FuzzAppendJSON(f *testing.F) {
	f.Add("case-1", "answer <&> \u2028", "reason", 0.5, 1e-7, int64(3))
	f.Add("\xff", "\x00\"\\", "", math.Inf(1), 1e21, int64(-1))
	f.Fuzz(func(t *testing.T, id, answer, reasoning string, score, cost float64, line int64) {
		r := Line{
			CaseResult: verdict.CaseResult{ID: id, Score: score, Verdict: verdict.Verdict(reasoning), BudgetUnjudged: line%2 == 0,
				Evaluators: []verdict.EvaluatorResult{{Name: answer, Type: id, Key: reasoning, Score: cost, Hits: []string{answer}, Reasoning: reasoning,
					SkipCause: verdict.SkipCause(answer)}}},
			Answer: answer, Line: line, CostUSD: &cost, CarriedFrom: reasoning, AnsweredBy: id, Trial: int(line % 200),
		}
		want, werr := json.Marshal(r)
		got, gerr := r.AppendJSON(nil)
		if (werr != nil) != (gerr != nil) {
			t.Fatalf("encoding/json error %v, AppendJSON error %v", werr, gerr)
		}
		if werr == nil && string(want) != string(got) {
			t.Fatalf("encoding differs:\nencoding/json     %s\nAppendJSON  %s", want, got)
		}
	})
}

// benchLine is a typical stored result: three evaluators with hits, misses and reasoning, an answer and usage.
func benchLine() *Line {
	ev := func(name string) verdict.EvaluatorResult {
		return verdict.EvaluatorResult{Name: name, Type: "llm_judge", Score: 0.75, Verdict: verdict.VerdictPass, Weight: 1,
			Hits: []string{"names the capital", "cites the source"}, Misses: []string{"no date"},
			Reasoning: "The answer names Paris and cites the atlas, but gives no date for the figure it quotes."}
	}
	return &Line{
		CaseResult: verdict.CaseResult{ID: "case-00042", Score: 0.8125, Verdict: verdict.VerdictPass,
			Evaluators: []verdict.EvaluatorResult{ev("accuracy"), ev("sources"), ev("style")}},
		Answer:     `{"decision":"CLEAR","reason":"the amount is small and the origin is domestic"}`,
		Line:       42,
		TokenUsage: &jsonlresult.TokenUsage{Input: 1234, Output: 56},
	}
}

// BenchmarkAppendJSON encodes one typical result line: AppendJSON against encoding/json.Marshal.
func BenchmarkAppendJSON(b *testing.B) {
	l := benchLine()
	b.Run("AppendJSON", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 4096)
		for b.Loop() {
			var err error
			if buf, err = l.AppendJSON(buf[:0]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(l); err != nil {
				b.Fatal(err)
			}
		}
	})
}
