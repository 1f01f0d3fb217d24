package grade42

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/evalrun-operator/evalrun-operator/internal/bundle"
	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/evaluate"
	"github.com/evalrun-operator/evalrun-operator/internal/jsonlresult"
	"github.com/evalrun-operator/evalrun-operator/internal/llm"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// scriptedModel answers each request with reply(n, req) (n counts from 1) and records the requests.
type scriptedModel struct {
	mu       sync.Mutex
	requests []llm.Request
	reply    func(n int, req llm.Request) (llm.Reply, error)
}

func (m *scriptedModel) Complete(_ context.Context, req llm.Request) (llm.Reply, error) {
	m.mu.Lock()
	m.requests = append(m.requests, req)
	n := len(m.requests)
	m.mu.Unlock()
	r, err := m.reply(n, req)
	r.Usage.Calls++
	return r, err
}

// replies is a model that answers the n-th request with the n-th content (the last one after that).
func replies(contents ...string) *scriptedModel {
	return &scriptedModel{reply: func(n int, _ llm.Request) (llm.Reply, error) {
		return llm.Reply{Content: contents[min(n, len(contents))-1], FinishReason: "stop",
			Usage: verdict.Usage{PromptTokens: 10, CompletionTokens: 2, TotalTokens: 12}}, nil
	}}
}

// suite42 parses a 4.42 suite and returns its tests.
func suite42(t testing.TB, doc string) *evalfile.File {
	t.Helper()
	f, err := evalfile.Parse([]byte(doc))
	if err != nil {
		t.Fatalf("the suite: %v", err)
	}
	if f.Format != evalfile.FormatSuite42 {
		t.Fatalf("not a 4.42 suite: %s", f.Format)
	}
	return f
}

// judged42 is a comparable projection of a 4.42 case result.
type judged42 struct {
	Score   float64
	Verdict verdict.Verdict
	Graders []grader42View
	Error   string
}

type grader42View struct {
	Name    string
	Type    string
	Score   float64
	Verdict verdict.Verdict
	Hits    []string
	Misses  []string
	Members []grader42View
}

func view42(r verdict.CaseResult) judged42 {
	var views func([]verdict.EvaluatorResult) []grader42View
	views = func(rs []verdict.EvaluatorResult) []grader42View {
		var out []grader42View
		for _, e := range rs {
			out = append(out, grader42View{Name: e.Name, Type: e.Type, Score: e.Score, Verdict: e.Verdict,
				Hits: nilIfEmpty(e.Hits), Misses: nilIfEmpty(e.Misses), Members: views(e.Members)})
		}
		return out
	}
	return judged42{Score: r.Score, Verdict: r.Verdict, Graders: views(r.Evaluators), Error: r.Error}
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

// judgeText42 judges the first test of doc with the answer text and model m (nil: none).
func judgeText42(t *testing.T, doc, answer string, m evaluate.Model) verdict.CaseResult {
	t.Helper()
	f := suite42(t, doc)
	j := &evaluate.Judge{Threshold: verdict.DefaultThreshold, Grader42: Graders{}}
	if m != nil {
		j.LLM = m
	}
	return j.JudgeCase(context.Background(), f.CaseAt(0), &jsonlresult.Response{ID: f.CaseAt(0).ID, Text: answer}, nil)
}

func oneGrader(grader string) string {
	return "tests:\n  - id: t\n    input: q\n    criteria: c\n    assertions:\n      - " +
		strings.ReplaceAll(grader, "\n", "\n        ") + "\n"
}

func TestDeterministicGraders42(t *testing.T) {
	for _, tc := range []struct {
		name, grader, answer string
		want                 grader42View
	}{
		{"contains", `{type: contains, value: Hello}`, "Hello world",
			grader42View{Name: "contains-Hello", Type: "contains", Score: 1, Verdict: verdict.VerdictPass, Hits: []string{`Output contains "Hello"`}}},
		{"contains is case-sensitive", `{type: contains, value: Hello}`, "hello",
			grader42View{Name: "contains-Hello", Type: "contains", Verdict: verdict.VerdictFail, Misses: []string{`Output does not contain "Hello"`}}},
		{"icontains", `{type: icontains, value: HELLO}`, "say hello",
			grader42View{Name: "icontains-HELLO", Type: "icontains", Score: 1, Verdict: verdict.VerdictPass, Hits: []string{`Output contains "HELLO" (case-insensitive)`}}},
		{"contains-any names the first match", `{type: contains-any, value: [x, b, a]}`, "ab",
			grader42View{Name: "contains-any-3", Type: "contains-any", Score: 1, Verdict: verdict.VerdictPass, Hits: []string{`Output contains "b"`}}},
		{"contains-any none", `{type: contains-any, value: [x, y]}`, "ab",
			grader42View{Name: "contains-any-2", Type: "contains-any", Verdict: verdict.VerdictFail, Misses: []string{`Output does not contain any of: "x", "y"`}}},
		{"contains-all missing", `{type: contains-all, value: [a, x, y]}`, "ab",
			grader42View{Name: "contains-all-3", Type: "contains-all", Verdict: verdict.VerdictFail, Misses: []string{`Output missing: "x", "y"`}}},
		{"icontains-all", `{type: icontains-all, value: [A, B]}`, "ab",
			grader42View{Name: "icontains-all-2", Type: "icontains-all", Score: 1, Verdict: verdict.VerdictPass, Hits: []string{"Output contains all 2 expected strings (case-insensitive)"}}},
		{"icontains-any none", `{type: icontains-any, value: [X]}`, "ab",
			grader42View{Name: "icontains-any-1", Type: "icontains-any", Verdict: verdict.VerdictFail, Misses: []string{`Output does not contain any of: "X" (case-insensitive)`}}},
		{"starts-with trims both", `{type: starts-with, value: " Dear"}`, "\n  Dear Sir",
			grader42View{Name: "starts-with- Dear", Type: "starts-with", Score: 1, Verdict: verdict.VerdictPass, Hits: []string{`Output starts with " Dear"`}}},
		{"ends-with trims a byte order mark too", `{type: ends-with, value: end}`, "the end\uFEFF",
			grader42View{Name: "ends-with-end", Type: "ends-with", Score: 1, Verdict: verdict.VerdictPass, Hits: []string{`Output ends with "end"`}}},
		{"equals trims", `{type: equals, value: "42"}`, " 42\n",
			grader42View{Name: "equals-42", Type: "equals", Score: 1, Verdict: verdict.VerdictPass, Hits: []string{`Output equals "42"`}}},
		{"is-json refuses a fenced block", `{type: is-json}`, "```json\n{}\n```",
			grader42View{Name: "is-json", Type: "is-json", Verdict: verdict.VerdictFail, Misses: []string{"Output is not valid JSON"}}},
		{"is-json", `{type: is-json}`, ` {"a": [1]} `,
			grader42View{Name: "is-json", Type: "is-json", Score: 1, Verdict: verdict.VerdictPass, Hits: []string{"Output is valid JSON"}}},
		{"regex with flags", `{type: regex, value: "^hello$", flags: im}`, "x\nHELLO\ny",
			grader42View{Name: "regex-^hello$", Type: "regex", Score: 1, Verdict: verdict.VerdictPass, Hits: []string{"Output matches pattern /^hello$/im (flags: im)"}}},
		{"regex without m: $ is the end", `{type: regex, value: "^hello$"}`, "hello\n",
			grader42View{Name: "regex-^hello$", Type: "regex", Verdict: verdict.VerdictFail, Misses: []string{"Output does not match pattern /^hello$/"}}},
		{"regex s lets . match a newline", `{type: regex, value: "a.b", flags: s}`, "a\nb",
			grader42View{Name: "regex-a.b", Type: "regex", Score: 1, Verdict: verdict.VerdictPass, Hits: []string{"Output matches pattern /a.b/s (flags: s)"}}},
		{"regex sticky anchors at the start", `{type: regex, value: b, flags: y}`, "ab",
			grader42View{Name: "regex-b", Type: "regex", Verdict: verdict.VerdictFail, Misses: []string{"Output does not match pattern /b/y (flags: y)"}}},
		{"regex RE2 cannot run is an Error", `{type: regex, value: "a(?=b)"}`, "ab",
			grader42View{Name: "regex-a(?=b)", Type: "regex", Verdict: verdict.VerdictError,
				Misses: []string{"the regex /a(?=b)/ cannot be run: error parsing regexp: invalid or unsupported Perl syntax: `(?=`"}}},
		{"regex with a flag JavaScript lacks is an Error", `{type: regex, value: a, flags: x}`, "a",
			grader42View{Name: "regex-a", Type: "regex", Verdict: verdict.VerdictError, Misses: []string{`the regex /a/x cannot be run: invalid flag 'x'`}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := view42(judgeText42(t, oneGrader(tc.grader), tc.answer, nil))
			if len(got.Graders) != 1 {
				t.Fatalf("graders: %+v", got)
			}
			if diff := cmp.Diff(tc.want, got.Graders[0]); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestScoreRules42(t *testing.T) {
	for _, tc := range []struct {
		name, doc, answer string
		want              judged42
	}{
		{"negate flips the score, the verdict and each assertion",
			oneGrader(`{type: contains, value: rude, negate: true}`), "polite",
			judged42{Score: 1, Verdict: verdict.VerdictPass, Graders: []grader42View{{Name: "contains-rude", Type: "contains", Score: 1,
				Verdict: verdict.VerdictPass, Hits: []string{`Output does not contain "rude"`}}}}},
		{"the weighted mean of the graders; weight 0 counts nothing",
			"tests:\n  - id: t\n    input: q\n    criteria: c\n    assertions:\n      - {type: contains, value: a, weight: 3}\n" +
				"      - {type: contains, value: x}\n      - {type: contains, value: y, weight: 0}\n", "a",
			judged42{Score: 0.75, Verdict: verdict.VerdictFail, Graders: []grader42View{
				{Name: "contains-a", Type: "contains", Score: 1, Verdict: verdict.VerdictPass, Hits: []string{`Output contains "a"`}},
				{Name: "contains-x", Type: "contains", Verdict: verdict.VerdictFail, Misses: []string{`Output does not contain "x"`}},
				{Name: "contains-y", Type: "contains", Verdict: verdict.VerdictFail, Misses: []string{`Output does not contain "y"`}}}}},
		{"the test's threshold decides",
			"tests:\n  - id: t\n    input: q\n    criteria: c\n    execution: {threshold: 0.5}\n    assertions:\n" +
				"      - {type: contains, value: a}\n      - {type: contains, value: x}\n", "a",
			judged42{Score: 0.5, Verdict: verdict.VerdictPass, Graders: []grader42View{
				{Name: "contains-a", Type: "contains", Score: 1, Verdict: verdict.VerdictPass, Hits: []string{`Output contains "a"`}},
				{Name: "contains-x", Type: "contains", Verdict: verdict.VerdictFail, Misses: []string{`Output does not contain "x"`}}}}},
		{"else the suite's",
			"execution: {threshold: 0.5}\ntests:\n  - id: t\n    input: q\n    criteria: c\n    assertions:\n" +
				"      - {type: contains, value: a}\n      - {type: contains, value: x}\n", "a",
			judged42{Score: 0.5, Verdict: verdict.VerdictPass, Graders: []grader42View{
				{Name: "contains-a", Type: "contains", Score: 1, Verdict: verdict.VerdictPass, Hits: []string{`Output contains "a"`}},
				{Name: "contains-x", Type: "contains", Verdict: verdict.VerdictFail, Misses: []string{`Output does not contain "x"`}}}}},
		{"a required grader below the test's threshold makes the score 0",
			"tests:\n  - id: t\n    input: q\n    criteria: c\n    assertions:\n" +
				"      - {type: contains, value: a, weight: 9}\n      - {type: contains, value: x, required: true}\n", "a",
			judged42{Score: 0, Verdict: verdict.VerdictFail, Graders: []grader42View{
				{Name: "contains-a", Type: "contains", Score: 1, Verdict: verdict.VerdictPass, Hits: []string{`Output contains "a"`}},
				{Name: "contains-x", Type: "contains", Verdict: verdict.VerdictFail, Misses: []string{`Output does not contain "x"`}}}}},
		{"required with min_score",
			"tests:\n  - id: t\n    input: q\n    criteria: c\n    execution: {threshold: 0.1}\n    assertions:\n" +
				"      - {name: m, type: execution-metrics, max_tool_calls: 0, max_duration_ms: 1, required: true, min_score: 0.5}\n", "a",
			judged42{Score: 0.5, Verdict: verdict.VerdictPass, Graders: []grader42View{{Name: "m", Type: "execution-metrics", Score: 0.5,
				Verdict: verdict.VerdictFail, Hits: []string{"Tool calls 0 <= 0 max"}, Misses: []string{"Duration data not available"}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, view42(judgeText42(t, tc.doc, tc.answer, nil))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestNegateIsBinaryFloat keeps AgentV's 1 - score in binary floating point (0.19999999999999996, not 0.2).
func TestNegateIsBinaryFloat(t *testing.T) {
	g := negate42(grade42{score: 0.8, verdict: pass42, assertions: []assertion42{{Text: "x", Passed: true, Evidence: ptr("why")}}})
	want := grade42{score: 0.19999999999999996, verdict: fail42, assertions: []assertion42{{Text: "x", Evidence: ptr("[Negated] why")}}}
	if diff := cmp.Diff(want, g, cmp.AllowUnexported(grade42{})); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func ptr[T any](v T) *T { return &v }

const freeformReply = `{"score": 0.9, "assertions": [{"text": "a", "passed": true, "evidence": "e"}, {"text": "b", "passed": false}], "details": {"z": 1, "a": 2}}`

func TestLLMGraderPrompts42(t *testing.T) {
	doc := `tests:
  - id: t
    criteria: Says hello.
    input:
      - role: system
        content: Be kind.
      - role: user
        content: Greet me.
    expected_output: Hello!
    assertions:
      - {name: plain, type: llm-grader}
      - {name: inline-criteria, type: llm-grader, prompt: ../prompts/x.md}
      - {name: inline-template, type: llm-grader, prompt: "Grade {{ output }} against {{criteria}}; {{unknown}} stays"}
`
	m := replies(freeformReply)
	res := judgeText42(t, doc, "  Hello there  ", m)
	question := "@[System]:\nBe kind.\n\n@[User]:\nGreet me."
	want := []llm.Request{
		{System: outputSchema42, User: strings.NewReplacer("{{criteria}}", "Says hello.", "{{input}}", question,
			"{{expected_output}}", "Hello!", "{{output}}", "Hello there").Replace(defaultGraderTemplate)},
		{System: outputSchema42, User: strings.NewReplacer("{{criteria}}", "../prompts/x.md", "{{input}}", question,
			"{{expected_output}}", "Hello!", "{{output}}", "Hello there").Replace(defaultGraderTemplate)},
		{System: outputSchema42, User: "Grade Hello there against Says hello.; {{unknown}} stays"},
	}
	if diff := cmp.Diff(want, m.requests); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	grader := grader42View{Type: "llm-grader", Score: 0.9, Verdict: verdict.VerdictPass, Hits: []string{"a: e"}, Misses: []string{"b"}}
	wantRes := judged42{Score: 0.9, Verdict: verdict.VerdictPass}
	for _, n := range []string{"plain", "inline-criteria", "inline-template"} {
		g := grader
		g.Name = n
		wantRes.Graders = append(wantRes.Graders, g)
	}
	if diff := cmp.Diff(wantRes, view42(res)); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	if got := res.Evaluators[0].Reasoning; got != `details: {"z":1,"a":2}` {
		t.Errorf("details in reply order: %s", got)
	}
}

func TestLLMGraderReplies42(t *testing.T) {
	doc := oneGrader(`{name: g, type: llm-grader}`)
	nine := `{"score": 1, "assertions": [` + strings.Repeat(`{"text": "x", "passed": "TRUE"},`, 8) + `{"text": "ninth", "passed": yes}]}`
	for _, tc := range []struct {
		name     string
		replies  []string
		want     judged42
		requests int
	}{
		{"the first 8 assertions, passed repaired to booleans", []string{"```json\n" + nine + "\n```"},
			judged42{Score: 1, Verdict: verdict.VerdictPass, Graders: []grader42View{{Name: "g", Type: "llm-grader", Score: 1,
				Verdict: verdict.VerdictPass, Hits: []string{"x", "x", "x", "x", "x", "x", "x", "x"}}}}, 1},
		{"a score out of range is invalid; the next reply is read", []string{`{"score": 7}`, `{"score": 0.5}`},
			judged42{Score: 0.5, Verdict: verdict.VerdictFail, Graders: []grader42View{{Name: "g", Type: "llm-grader", Score: 0.5,
				Verdict: verdict.VerdictFail}}}, 2},
		{"three invalid replies, then the repair request", []string{"no", "still no", "nope", `{"score": 0.8}`},
			judged42{Score: 0.8, Verdict: verdict.VerdictPass, Graders: []grader42View{{Name: "g", Type: "llm-grader", Score: 0.8,
				Verdict: verdict.VerdictPass}}}, 4},
		{"unreadable after the repair: the grader is skipped and the test an Error", []string{"no"},
			judged42{Verdict: verdict.VerdictError, Error: `grader "g" was not judged, so the test is not judged: the judge's ` +
				`replies are not valid after 3 replies and a repair request: the reply is not valid JSON: invalid character 'o' in literal null (expecting 'u')`,
				Graders: []grader42View{{Name: "g", Type: "llm-grader", Verdict: verdict.VerdictSkipped,
					Misses: []string{"Grader parse failure after 3 attempts: the reply is not valid JSON: invalid character 'o' in literal null (expecting 'u')"}}}}, 4},
		{"an empty reply has nothing to repair", []string{" "},
			judged42{Verdict: verdict.VerdictError, Error: `grader "g" was not judged, so the test is not judged: the judge's ` +
				`replies are not valid after 3 replies and a repair request: the reply is not valid JSON: EOF`,
				Graders: []grader42View{{Name: "g", Type: "llm-grader", Verdict: verdict.VerdictSkipped,
					Misses: []string{"Grader parse failure after 3 attempts: the reply is not valid JSON: EOF"}}}}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := replies(tc.replies...)
			if diff := cmp.Diff(tc.want, view42(judgeText42(t, doc, "answer", m))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if len(m.requests) != tc.requests {
				t.Errorf("%d requests, want %d", len(m.requests), tc.requests)
			}
		})
	}
	t.Run("the repair request quotes the last invalid reply", func(t *testing.T) {
		m := replies("first", "second", "third {", `{"score": 1}`)
		judgeText42(t, doc, "answer", m)
		got := m.requests[3]
		if got.System != outputSchema42 || !strings.Contains(got.User, "Invalid response:\nthird {") ||
			!strings.HasPrefix(got.User, "The following evaluation response has useful grading content but invalid JSON structure.") {
			t.Errorf("repair request %+v", got)
		}
	})
}

func TestLLMGraderFailures42(t *testing.T) {
	doc := oneGrader(`{name: g, type: llm-grader}`)
	t.Run("a call that fails is an Error", func(t *testing.T) {
		m := &scriptedModel{reply: func(int, llm.Request) (llm.Reply, error) { return llm.Reply{}, errors.New("connection refused") }}
		got := view42(judgeText42(t, doc, "a", m))
		want := judged42{Verdict: verdict.VerdictError, Error: `grader "g" could not judge the test: the model could not be asked: connection refused`,
			Graders: []grader42View{{Name: "g", Type: "llm-grader", Verdict: verdict.VerdictError,
				Misses: []string{"the model could not be asked: connection refused"}}}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("the budget spent skips the grader and makes the test an Error", func(t *testing.T) {
		m := &scriptedModel{reply: func(int, llm.Request) (llm.Reply, error) {
			return llm.Reply{}, fmt.Errorf("not asked: %w", llm.ErrBudgetSpent)
		}}
		res := judgeText42(t, doc, "a", m)
		if res.Verdict != verdict.VerdictError || !res.BudgetUnjudged || res.Evaluators[0].SkipCause != verdict.SkipBudgetSpent {
			t.Errorf("%+v", res)
		}
	})
	t.Run("without a model a test without assertions is Skipped", func(t *testing.T) {
		res := judgeText42(t, "tests:\n  - id: t\n    input: q\n    criteria: c\n", "a", nil)
		if res.Verdict != verdict.VerdictSkipped || !strings.Contains(res.Reason, "llm-grader") {
			t.Errorf("%+v", res)
		}
	})
	t.Run("an answer larger than an LLM grader sends is an Error", func(t *testing.T) {
		res := judgeText42(t, doc, strings.Repeat("a", evaluate.MaxJudgedAnswerBytes+1), replies(freeformReply))
		if res.Verdict != verdict.VerdictError || !strings.Contains(res.Error, "more than the") {
			t.Errorf("%+v", res)
		}
	})
}

func TestRubrics42(t *testing.T) {
	doc := `tests:
  - id: t
    input: q
    criteria: c
    assertions:
      - {type: contains, value: a}
      - Mentions apples
      - Mentions bananas
      - name: graded
        type: rubrics
        criteria:
          - {id: acc, outcome: Accurate, weight: 2, operator: correctness}
          - {id: tone, outcome: Kind, required: false}
      - name: ranges
        type: rubrics
        criteria:
          - id: depth
            outcome: Deep
            min_score: 0.6
            score_ranges: {0: Shallow, 5: Fair, 8: Deep}
          - id: form
            weight: 0.5
            required: true
            score_ranges: {0: Bad, 7: Good}
`
	m := &scriptedModel{reply: func(_ int, req llm.Request) (llm.Reply, error) {
		switch {
		case strings.Contains(req.User, "[[ ## scoring_criteria ## ]]"):
			return llm.Reply{Content: `{"checks": [{"id": "depth", "score": 6}, {"id": "form", "score": 9, "reasoning": "ok"}, {"id": "ghost", "score": 10}]}`}, nil
		case strings.Contains(req.User, "[acc]"):
			return llm.Reply{Content: `{"checks": [{"id": "acc", "satisfied": true, "reasoning": "r1"}, {"id": "tone", "satisfied": false, "reasoning": "r2"}], "overall_reasoning": "o"}`}, nil
		}
		return llm.Reply{Content: `{"checks": [{"id": "rubric-1", "satisfied": true, "reasoning": "r"}, {"id": "rubric-2", "satisfied": false, "reasoning": "no"}], "overall_reasoning": "o"}`}, nil
	}}
	res := judgeText42(t, doc, "apples", m)
	if len(m.requests) != 3 {
		t.Fatalf("%d requests", len(m.requests))
	}
	wantChecklist := "You are an expert grader. Evaluate the candidate answer against each rubric item below.\n\n" +
		"[[ ## question ## ]]\nq\n\n[[ ## criteria ## ]]\nc\n\n[[ ## answer ## ]]\napples\n\n[[ ## rubrics ## ]]\n\n" +
		"Operator guidance:\n- " + operatorGuidance42["correctness"] + "\n\n" +
		"- [acc] (REQUIRED) (weight: 2) (operator: correctness): Accurate\n- [tone]: Kind\n\n" +
		"For each rubric, determine if it is satisfied and provide brief reasoning."
	if diff := cmp.Diff(llm.Request{System: rubricSchema42, User: wantChecklist}, m.requests[1]); diff != "" {
		t.Errorf("checklist request (-want +got):\n%s", diff)
	}
	wantRanges := "You are an expert grader. Score the candidate answer on each criterion below using the provided score ranges.\n" +
		"For each criterion, output an integer score from 0 to 10 based on which score range best matches the answer.\n\n" +
		"[[ ## question ## ]]\nq\n\n[[ ## criteria ## ]]\nc\n\n[[ ## answer ## ]]\napples\n\n[[ ## scoring_criteria ## ]]\n\n" +
		"### Criterion: depth [REQUIRED: min score 0.6]\nDescription: Deep\nScore ranges:\n  - Score 0-4: Shallow\n" +
		"  - Score 5-7: Fair\n  - Score 8-10: Deep\n\n### Criterion: form (weight: 0.5)\nScore ranges:\n  - Score 0-6: Bad\n" +
		"  - Score 7-10: Good\n\nFor each criterion, provide an integer score 0-10 that matches one of its defined score ranges."
	if diff := cmp.Diff(llm.Request{System: scoreRangeSchema42, User: wantRanges}, m.requests[2]); diff != "" {
		t.Errorf("score-range request (-want +got):\n%s", diff)
	}
	// contains 1 (weight 1), the strings 1/2 (weight 2), graded 2/3 (weight 1), ranges (0.6*1+0.9*0.5)/1.5 = 0.7;
	// form is required without min_score, which means 10/10 in a score range: it fails at 9.
	graded, ranges := 2.0/3, 0.7000000000000001
	want := judged42{Score: (1 + 0.5*2 + graded + ranges) / 5, Verdict: verdict.VerdictFail, Graders: []grader42View{
		{Name: "contains-a", Type: "contains", Score: 1, Verdict: verdict.VerdictPass, Hits: []string{`Output contains "a"`}},
		{Name: "rubrics", Type: "llm-grader", Score: 0.5, Verdict: verdict.VerdictFail, Hits: []string{"[rubric-1] Mentions apples: r"},
			Misses: []string{"[rubric-2] Mentions bananas: no"}},
		{Name: "graded", Type: "llm-grader", Score: graded, Verdict: verdict.VerdictFail, Hits: []string{"[acc] Accurate: r1"},
			Misses: []string{"[tone] Kind: r2"}},
		{Name: "ranges", Type: "llm-grader", Score: ranges, Verdict: verdict.VerdictFail,
			Misses: []string{"[depth] Deep - Score: 6/10 (Fair)", "[form] form - Score: 9/10 (Good): ok"}},
	}}
	if diff := cmp.Diff(want, view42(res)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if r := res.Evaluators[3].Reasoning; r != `details: {"raw_scores":{"depth":6,"form":9},"normalization":"score / 10","aggregation":"weighted_average"}` {
		t.Errorf("score-range details: %s", r)
	}
}

// TestRubricReplyMustCheckEvery: a reply that leaves a rubric out is not valid (AgentV leaves its weight out, so a
// required rubric left out would pass): it is asked again, then repaired, then the grader is skipped.
func TestRubricReplyMustCheckEvery(t *testing.T) {
	doc := oneGrader("{name: r, type: rubrics, criteria: [Safe, Kind]}")
	m := replies(`{"checks": [{"id": "rubric-2", "satisfied": true, "reasoning": "r"}], "overall_reasoning": "o"}`)
	res := judgeText42(t, doc, "a", m)
	if res.Verdict != verdict.VerdictError || res.Evaluators[0].SkipCause != verdict.SkipUnreadableReply || len(m.requests) != 4 ||
		!strings.Contains(res.Error, "does not check rubric(s) rubric-1") {
		t.Errorf("%d requests, %+v", len(m.requests), res)
	}
}

// TestQuestion42 builds the question as AgentV 4.42 does for a CLI target: role markers only with an assistant or
// tool message or more than one message that shows something; an input message without content (tool calls only)
// dropped before; files as references to their absolute path.
func TestQuestion42(t *testing.T) {
	for _, tc := range []struct {
		name, input, want string
	}{
		{"one message: its text", `[{role: user, content: "  Hi  "}]`, "Hi"},
		{"a message of tool calls only is dropped", `[{role: assistant, tool_calls: [{tool: t}]}, {role: user, content: q}]`, "q"},
		{"two messages with content: role markers", `[{role: system, content: s}, {role: user, content: q}]`, "@[System]:\ns\n\n@[User]:\nq"},
		{"an assistant message: role markers", `[{role: user, content: q}, {role: assistant, content: a}, {role: user, content: "  "}]`,
			"@[User]:\nq\n\n@[Assistant]:\na"},
		{"structured content as indented JSON", `[{role: user, content: {b: 1, a: [x]}}]`, "{\n  \"b\": 1,\n  \"a\": [\n    \"x\"\n  ]\n}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := "tests:\n  - id: t\n    criteria: c\n    input: " + tc.input + "\n"
			f := suite42(t, doc)
			in, err := buildInputs42(bundle.Dir{}, f.CaseAt(0), false)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, in.question); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
