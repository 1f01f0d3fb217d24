package grade42

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/evaluate"
	"github.com/evalrun-operator/evalrun-operator/internal/jsonlresult"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// judgeRecord42 judges the first test of doc with the runner's batch record (JSON), parsed as the collector parses it.
func judgeRecord42(t *testing.T, doc, record string, m evaluate.Model) verdict.CaseResult {
	t.Helper()
	f := suite42(t, doc)
	resp, why := jsonlresult.ParseLine([]byte(strings.ReplaceAll(record, "\n", " ")), jsonlresult.Options{})
	if resp == nil {
		t.Fatalf("the record: %s", why)
	}
	j := &evaluate.Judge{Threshold: verdict.DefaultThreshold, Grader42: Graders{}}
	if m != nil {
		j.LLM = m
	}
	return j.JudgeCase(context.Background(), f.CaseAt(0), resp, nil)
}

const trajectoryRecord = `{"id": "t", "text": "ignored: output wins", "output": [
  {"role": "assistant", "tool_calls": [
    {"tool": "search", "input": {"q": "weather", "lang": "en"}, "duration_ms": 40},
    {"tool": "fetch", "input": {"url": "a"}, "duration_ms": 900},
    {"tool": "search", "input": {"q": "paris"}}]},
  {"role": "assistant", "content": [{"type": "text", "text": "It is"}, {"type": "text", "text": "sunny"}]}],
  "duration_ms": 1200, "cost_usd": 0.0123, "token_usage": {"input": 100, "output": 20, "cached": 5}}`

func TestTrajectory42(t *testing.T) {
	for _, tc := range []struct {
		name, grader string
		want         grader42View
	}{
		{"any_order", `{name: g, type: tool-trajectory, mode: any_order, minimums: {search: 2, fetch: 2}}`,
			grader42View{Score: 0.5, Verdict: verdict.VerdictFail, Hits: []string{"search: called 2 times (required >=2)"},
				Misses: []string{"fetch: called 1 times (required >=2)"}}},
		{"in_order with exact args by default", `{name: g, type: tool-trajectory, mode: in_order, expected: [{tool: search, args: {q: weather}}, {tool: search}]}`,
			grader42View{Score: 0.5, Verdict: verdict.VerdictFail, Hits: []string{"Found search at position 2"},
				Misses: []string{"Expected search at position 0: tool found at 0 but args mismatch"}}},
		{"in_order with superset args and latency", `{name: g, type: tool-trajectory, mode: in_order, args_match: superset, expected: [{tool: search, args: {q: weather}, max_duration_ms: 50}, {tool: fetch, max_duration_ms: 500}, {tool: search, max_duration_ms: 1}]}`,
			// search within 50ms, fetch over 500ms; the last search has no duration: its latency check is left out.
			grader42View{Score: 4.0 / 5, Verdict: verdict.VerdictPass, Hits: []string{"Found search at position 0",
				"search completed in 40ms (max: 50ms)", "Found fetch at position 1", "Found search at position 2"},
				Misses: []string{"fetch took 900ms (max: 500ms)"}}},
		{"exact", `{name: g, type: tool-trajectory, mode: exact, expected: [{tool: search, args: any}, {tool: search}]}`,
			grader42View{Score: 0.5, Verdict: verdict.VerdictFail, Hits: []string{"Position 0: search"},
				Misses: []string{"Expected 2 tool calls, got 3", "Position 1: expected search, got fetch"}}},
		{"args_match by fields", `{name: g, type: tool-trajectory, mode: superset, expected: [{tool: search, args: {q: paris, lang: fr}, args_match: [q]}]}`,
			grader42View{Score: 1, Verdict: verdict.VerdictPass, Hits: []string{"Found search at position 2"}}},
		{"superset", `{name: g, type: tool-trajectory, mode: superset, expected: [{tool: fetch}, {tool: fetch}]}`,
			grader42View{Score: 0.5, Verdict: verdict.VerdictFail, Hits: []string{"Found fetch at position 1"},
				Misses: []string{"Expected fetch not found in actual trajectory"}}},
		{"subset with subset args", `{name: g, type: tool-trajectory, mode: subset, args_match: subset, expected: [{tool: search, args: {q: paris, lang: en}}, {tool: fetch, args: {url: b}}]}`,
			grader42View{Score: 1.0 / 3, Verdict: verdict.VerdictFail, Hits: []string{"Position 2: search is in allowed set"},
				Misses: []string{"Position 0: search is not in allowed set", "Position 1: fetch is not in allowed set"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := judgeRecord42(t, oneGrader(tc.grader), trajectoryRecord, nil)
			tc.want.Name, tc.want.Type = "g", "tool-trajectory"
			if diff := cmp.Diff(tc.want, view42(res).Graders[0]); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestMetricGraders42(t *testing.T) {
	for _, tc := range []struct {
		name, grader string
		want         grader42View
	}{
		{"execution-metrics", `{name: g, type: execution-metrics, max_tool_calls: 2, max_llm_calls: 2, max_tokens: 120, max_cost_usd: 0.01, max_duration_ms: 2000, target_exploration_ratio: 0.6, exploration_tolerance: 0.1}`,
			grader42View{Type: "execution-metrics", Score: 4.0 / 6, Verdict: verdict.VerdictFail,
				Hits: []string{"LLM calls 2 <= 2 max", "Total tokens 120 <= 120 max", "Duration 1200ms <= 2000ms max",
					"Exploration ratio 0.67 within tolerance of target 0.6"},
				Misses: []string{"Tool calls 3 > 2 max", "Cost $0.0123 > $0.0100 max"}}},
		{"latency", `{name: g, type: latency, threshold: 1000}`,
			grader42View{Type: "latency", Verdict: verdict.VerdictFail, Misses: []string{"Duration 1200ms > 1000ms threshold"}}},
		{"cost", `{name: g, type: cost, budget: 0.05}`,
			grader42View{Type: "cost", Score: 1, Verdict: verdict.VerdictPass, Hits: []string{"Cost $0.0123 <= $0.0500 budget"}}},
		{"token-usage counts cached tokens in the total", `{name: g, type: token-usage, max_input: 100, max_total: 120}`,
			grader42View{Type: "token-usage", Verdict: verdict.VerdictFail, Hits: []string{"Input tokens 100 <= 100"},
				Misses: []string{"Total tokens 125 > 120"}}},
		{"skill-trigger: not found", `{name: g, type: skill-trigger, skill: deploy}`,
			grader42View{Type: "skill-trigger", Verdict: verdict.VerdictFail, Misses: []string{`Skill "deploy" not found in 3 tool call(s)`}}},
		{"skill-trigger: should not", `{name: g, type: skill-trigger, skill: deploy, should_trigger: false}`,
			grader42View{Type: "skill-trigger", Score: 1, Verdict: verdict.VerdictPass, Hits: []string{`Skill "deploy" correctly did not trigger`}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := judgeRecord42(t, oneGrader(tc.grader), trajectoryRecord, nil)
			tc.want.Name = "g"
			if diff := cmp.Diff(tc.want, view42(res).Graders[0]); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	t.Run("skill-trigger finds a Read of the skill's file", func(t *testing.T) {
		rec := `{"id": "t", "output": [{"role": "assistant", "content": "ok", "tool_calls": [{"tool": "read", "input": {"path": "/w/skills/deploy/SKILL.md"}}]}]}`
		got := view42(judgeRecord42(t, oneGrader(`{type: skill-trigger, skill: deploy}`), rec, nil)).Graders[0]
		want := grader42View{Name: "skill-trigger-deploy", Type: "skill-trigger", Score: 1, Verdict: verdict.VerdictPass,
			Hits: []string{"Read tool loaded skill file: /w/skills/deploy/SKILL.md"}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
}

// TestAnswerOf42: the answer graders read is the last assistant message of output (else output_messages), else the
// record's text.
func TestAnswerOf42(t *testing.T) {
	grader := oneGrader(`{type: equals, value: "It is\nsunny"}`)
	for _, tc := range []struct {
		name, record string
		pass         bool
	}{
		{"output's content blocks, text ignored", trajectoryRecord, true},
		{"output_messages when there is no output", `{"id": "t", "output_messages": [{"role": "assistant", "content": "It is\nsunny"}, {"role": "user", "content": "x"}]}`, true},
		{"output wins over output_messages", `{"id": "t", "output": [{"role": "assistant", "content": "no"}], "output_messages": [{"role": "assistant", "content": "It is\nsunny"}]}`, false},
		{"text", `{"id": "t", "text": "It is\nsunny"}`, true},
		{"a structured content is no answer", `{"id": "t", "text": "It is\nsunny", "output": [{"role": "assistant", "content": {"a": 1}}]}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := judgeRecord42(t, grader, tc.record, nil)
			if (res.Verdict == verdict.VerdictPass) != tc.pass {
				t.Errorf("verdict %s, want pass %v (%+v)", res.Verdict, tc.pass, res.Evaluators)
			}
		})
	}
}

func TestComposite42(t *testing.T) {
	doc := `tests:
  - id: t
    input: q
    criteria: c
    assertions:
      - name: weighted
        type: composite
        assertions:
          - {name: a, type: contains, value: a}
          - {name: x, type: contains, value: x}
        aggregator: {type: weighted_average, weights: {a: 3}}
      - name: gate
        type: composite
        assertions:
          - {name: a, type: contains, value: a}
          - {name: x, type: contains, value: x}
          - {name: y, type: contains, value: y}
        aggregator: {type: threshold, threshold: 0.3}
      - name: judged
        type: composite
        assertions:
          - {name: a, type: contains, value: a}
        aggregator: {type: llm-grader}
`
	m := replies("not json at all")
	res := judgeRecord42(t, doc, `{"id": "t", "text": "a"}`, m)
	member := func(name string, pass bool) grader42View {
		if pass {
			return grader42View{Name: name, Type: "contains", Score: 1, Verdict: verdict.VerdictPass, Hits: []string{`Output contains "` + name + `"`}}
		}
		return grader42View{Name: name, Type: "contains", Verdict: verdict.VerdictFail, Misses: []string{`Output does not contain "` + name + `"`}}
	}
	want := judged42{Score: (0.75 + 1.0/3 + 0) / 3, Verdict: verdict.VerdictFail, Graders: []grader42View{
		{Name: "weighted", Type: "composite", Score: 0.75, Verdict: verdict.VerdictFail, Hits: []string{`[a] Output contains "a"`},
			Misses: []string{`[x] Output does not contain "x"`}, Members: []grader42View{member("a", true), member("x", false)}},
		{Name: "gate", Type: "composite", Score: 1.0 / 3, Verdict: verdict.VerdictPass,
			Hits:    []string{"1/3 evaluators passed (threshold: 0.3)", `[a] Output contains "a"`},
			Misses:  []string{`[x] Output does not contain "x"`, `[y] Output does not contain "y"`},
			Members: []grader42View{member("a", true), member("x", false), member("y", false)}},
		// The llm-grader aggregator asks once; a reply that does not parse fails the composite with 0, as in AgentV.
		{Name: "judged", Type: "composite", Verdict: verdict.VerdictFail, Misses: []string{"LLM aggregator failed"},
			Members: []grader42View{member("a", true)}},
	}}
	if diff := cmp.Diff(want, view42(res)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if w := res.Evaluators[0].Members[0].Weight; w != 3 {
		t.Errorf("member weight %v, want the aggregator's 3", w)
	}
	if len(m.requests) != 1 || !strings.HasPrefix(m.requests[0].User, "Review the following evaluation results:\n{\n  \"a\": {\n    \"score\": 1,") {
		t.Errorf("aggregator requests %+v", m.requests)
	}
}

// TestJudgeMissing42: a 4.42 test whose record the batch output lacks is graded with AgentV's answer for it; it
// stays Missing, and never passes.
func TestJudgeMissing42(t *testing.T) {
	j := &evaluate.Judge{Threshold: verdict.DefaultThreshold, Grader42: Graders{}}
	f := suite42(t, "tests:\n  - id: t\n    input: q\n    criteria: c\n    assertions:\n      - {type: contains, value: Error}\n"+
		"  - id: u\n    input: q\n    criteria: c\n    assertions:\n      - {type: contains, value: ok}\n")
	passing := j.JudgeMissing(context.Background(), f.CaseAt(0))
	if !passing.Missing || passing.Verdict != verdict.VerdictError || passing.Score != 1 ||
		!strings.Contains(passing.Error, `"Error: Batch output missing id 't'"`) {
		t.Errorf("%+v", passing)
	}
	failing := j.JudgeMissing(context.Background(), f.CaseAt(1))
	want := judged42{Verdict: verdict.VerdictFail, Graders: []grader42View{{Name: "contains-ok", Type: "contains",
		Verdict: verdict.VerdictFail, Misses: []string{`Output does not contain "ok"`}}}}
	if diff := cmp.Diff(want, view42(failing)); diff != "" || !failing.Missing {
		t.Errorf("(-want +got):\n%s", diff)
	}
	v2, err := evalfile.Parse([]byte("evalcases:\n  - id: a\n    expected_outcome: x\n    input_messages: [{role: user, content: q}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := j.JudgeMissing(context.Background(), v2.CaseAt(0)); got.Verdict != verdict.VerdictError || !got.Missing || len(got.Evaluators) != 0 {
		t.Errorf("an agentv-eval-v2 case: %+v", got)
	}
}

// BenchmarkJudgeCase42 judges one 4.42 test with its deterministic graders and builds a code grader's stdin of it.
func BenchmarkJudgeCase42(b *testing.B) {
	f := suite42(b, `tests:
  - id: t
    input: [{role: system, content: s}, {role: user, content: q}]
    criteria: c
    expected_output: {decision: CLEAR}
    assertions:
      - {type: contains, value: sunny}
      - {type: regex, value: "It (is|was)", flags: i}
      - {name: traj, type: tool-trajectory, mode: in_order, args_match: superset, expected: [{tool: search, args: {q: weather}, max_duration_ms: 50}, {tool: fetch}]}
      - {name: m, type: execution-metrics, max_tool_calls: 5, max_tokens: 500, target_exploration_ratio: 0.6}
`)
	resp, why := jsonlresult.ParseLine([]byte(strings.ReplaceAll(trajectoryRecord, "\n", " ")), jsonlresult.Options{})
	if resp == nil {
		b.Fatal(why)
	}
	j := &evaluate.Judge{Threshold: verdict.DefaultThreshold, Grader42: Graders{}}
	run := &caseRun42{judge: j, ctx: context.Background(), c: f.CaseAt(0), resp: resp, out: outputOf42(resp)}
	ev := &evalfile.EvaluatorConfig{Name: "code", Type: evalfile.TypeCodeJudge, CodeJudge: &evalfile.CodeJudgeConfig{Script: "true"}}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if r := j.JudgeCase(context.Background(), f.CaseAt(0), resp, nil); r.Verdict != verdict.VerdictPass {
			b.Fatalf("verdict %s: %+v", r.Verdict, r.Evaluators)
		}
		in, err := run.codeGraderInput(ev)
		if err != nil || len(in.Stdin("")) == 0 {
			b.Fatal(err)
		}
	}
}
