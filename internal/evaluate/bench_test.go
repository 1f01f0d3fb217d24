package evaluate

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/jsonlresult"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// BenchmarkJudgeCase judges one case with every deterministic evaluator type.
func BenchmarkJudgeCase(b *testing.B) {
	f, err := evalfile.Parse([]byte(`evalcases:
  - id: c1
    input_messages: [{role: user, content: q}]
    expected_messages: [{role: assistant, content: {decision: CLEAR, amount: 100, date: "2025-01-15"}}]
    evaluators:
      - {name: t, type: tool_trajectory, mode: in_order, expected: [{tool: a, args: {k: 1}}, {tool: b}]}
      - {name: f, type: field_accuracy, fields: [{path: decision, match: exact}, {path: amount, match: numeric_tolerance, tolerance: 1}, {path: date, match: date}]}
      - {name: l, type: latency, threshold: 100}
      - {name: c, type: cost, budget: 1}
      - {name: u, type: token_usage, max_total: 100}
`))
	if err != nil {
		b.Fatal(err)
	}
	resp := &jsonlresult.Response{Text: `{"decision":"CLEAR","amount":100.5,"date":"2025-01-15"}`, OutputMessages: calls(`a {"k":1}`, "x", "b"),
		DurationMs: f64(10), CostUSD: f64(0.1), TokenUsage: &jsonlresult.TokenUsage{Input: 10, Output: 10}}
	j := &Judge{Threshold: verdict.DefaultThreshold}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if r := j.JudgeCase(context.Background(), f.CaseAt(0), resp, nil); r.Verdict != verdict.VerdictPass {
			b.Fatalf("verdict %s", r.Verdict)
		}
	}
}

// BenchmarkParse10k parses an eval file of 10,000 screening cases.
func BenchmarkParse10k(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("$schema: agentv-eval-v2\nexecution:\n  evaluators: [{name: fields, type: field_accuracy, fields: [{path: decision, match: exact}]}]\nevalcases:\n")
	for i := 0; i < 10000; i++ {
		fmt.Fprintf(&sb, "  - id: case-%05d\n    expected_messages: [{role: assistant, content: {decision: CLEAR}}]\n"+
			"    input_messages:\n      - {role: system, content: You are a batch processor.}\n"+
			"      - {role: user, content: {request: {type: screening_check, jurisdiction: AU}, row: {id: case-%05d, amount: %d}}}\n", i, i, i)
	}
	data := []byte(sb.String())
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f, err := evalfile.Parse(data)
		if err != nil || f.NumCases() != 10000 {
			b.Fatal(err)
		}
	}
}

// BenchmarkCodeJudgePayload builds one code_judge payload.
func BenchmarkCodeJudgePayload(b *testing.B) {
	f, err := evalfile.Parse([]byte(payloadDoc))
	if err != nil {
		b.Fatal(err)
	}
	c := f.CaseAt(0)
	resp := &jsonlresult.Response{Text: `{"decision":"CLEAR"}`, OutputMessages: calls(`screen {"country":"NZ"}`)}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		raw, err := CodeJudgePayload(c, c.Evaluators[0], resp)
		if err != nil || !json.Valid(raw) {
			b.Fatal(err)
		}
	}
}

// BenchmarkJudgeCaseScreening judges a case of the collector's 100,000-case benchmark: file-level tool_trajectory
// (any_order with minimums), latency and cost evaluators over a response with three tool calls and metrics.
func BenchmarkJudgeCaseScreening(b *testing.B) {
	f, err := evalfile.Parse([]byte("$schema: agentv-eval-v2\nexecution:\n  evaluators:\n" +
		"    - {name: tools, type: tool_trajectory, mode: any_order, minimums: {search_registry: 1, score_risk: 1}}\n" +
		"    - {name: fast, type: latency, threshold: 1800}\n" +
		"    - {name: cheap, type: cost, budget: 0.008}\n" +
		"evalcases:\n  - id: case-000001\n    input_messages: [{role: user, content: \"screen row 1\"}]\n"))
	if err != nil {
		b.Fatal(err)
	}
	resp := &jsonlresult.Response{Text: `{"decision":"CLEAR"}`, OutputMessages: calls(`search_registry {"id":"case-000001"}`, `fetch_profile {"id":"case-000001"}`, `score_risk {"id":"case-000001"}`),
		DurationMs: f64(1234), CostUSD: f64(0.00512), TokenUsage: &jsonlresult.TokenUsage{Input: 1200, Output: 70}}
	j := &Judge{Threshold: verdict.DefaultThreshold}
	c := f.CaseAt(0)
	b.ReportAllocs()
	for b.Loop() {
		if r := j.JudgeCase(context.Background(), c, resp, nil); r.Verdict != verdict.VerdictPass {
			b.Fatalf("verdict %s", r.Verdict)
		}
	}
}
