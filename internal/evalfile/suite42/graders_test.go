package suite42

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/evalfile/yamltree"
)

func ptr[T any](v T) *T { return &v }

// ignoreRaw leaves out the JSON kept as written, which TestSuite42GraderRaw checks.
var ignoreRaw = cmp.Options{
	cmpopts.IgnoreFields(evalfile.EvaluatorConfig{}, "Raw"),
	cmpopts.IgnoreFields(evalfile.Rubric{}, "Raw"),
	cmpopts.EquateEmpty(),
}

// graderOf parses a suite whose one test has the grader entry (flow YAML) and returns its evaluator.
func graderOf(t *testing.T, entry string, files map[string]string) *evalfile.EvaluatorConfig {
	t.Helper()
	f := mustParseSuite(t, "tests:\n  - id: a\n    input: q\n    assertions:\n      - "+entry+"\n", files)
	evs := f.CaseAt(0).Evaluators
	if len(evs) != 1 {
		t.Fatalf("%d evaluators", len(evs))
	}
	return evs[0]
}

func TestSuite42Graders(t *testing.T) {
	for _, tc := range []struct {
		name, entry string
		want        *evalfile.EvaluatorConfig
	}{
		{"code-grader, a command string", `{type: code-grader, command: "  bun run check.ts  ", cwd: ./graders, threshold: 3, config: {threshold: 4, mode: strict}, weight: 2, required: true, min_score: 0.5, negate: true}`,
			&evalfile.EvaluatorConfig{Name: "code-grader", Key: "code-grader", Type: evalfile.TypeCodeJudge, Grader: "code-grader", Weight: ptr(2.0),
				Required: true, MinScore: ptr(0.5), Negate: true,
				CodeJudge: &evalfile.CodeJudgeConfig{Script: "bun run check.ts", Cwd: "./graders", Config: json.RawMessage(`{"threshold":4,"mode":"strict"}`)}}},
		{"code-grader, a list of arguments", `{name: check, type: code_grader, command: [uv, run, "my check.py"]}`,
			&evalfile.EvaluatorConfig{Name: "check", Key: "check", Type: evalfile.TypeCodeJudge, Grader: "code-grader",
				CodeJudge: &evalfile.CodeJudgeConfig{Script: "uv run 'my check.py'", Argv: []string{"uv", "run", "my check.py"}}}},
		{"llm-grader, inline prompt", `{type: llm-grader, prompt: judge.md, model: gpt-x, temperature: 0.2, max_steps: 5, rubrics: [{outcome: Is right., operator: correctness, weight: 2, min_score: 0.8}], tone: formal}`,
			&evalfile.EvaluatorConfig{Name: "llm-grader", Key: "llm-grader", Type: evalfile.TypeLLMJudge, Grader: "llm-grader",
				LLMJudge: &evalfile.LLMJudgeConfig{Prompt: json.RawMessage(`"judge.md"`), Model: "gpt-x", Temperature: ptr(0.2), MaxSteps: 5,
					Rubrics: []evalfile.Rubric{{ID: "rubric-1", Outcome: "Is right.", Operator: "correctness", Weight: 2, Required: true, MinScore: ptr(0.8)}},
					Config:  json.RawMessage(`{"tone":"formal"}`)}}},
		{"llm-grader, prompt file", `{name: g, type: llm_grader, prompt: "file://prompts/g.md"}`,
			&evalfile.EvaluatorConfig{Name: "g", Key: "g", Type: evalfile.TypeLLMJudge, Grader: "llm-grader",
				LLMJudge: &evalfile.LLMJudgeConfig{Prompt: json.RawMessage(`"file://prompts/g.md"`), PromptFile: "prompts/g.md"}}},
		{"rubrics", `{type: rubrics, criteria: [Is short., {id: depth, criteria: Explains why., required: false}, {outcome: Overall, score_ranges: {0: Bad, 4: OK, 8: Good}}]}`,
			&evalfile.EvaluatorConfig{Name: "rubrics", Key: "rubrics", Type: evalfile.TypeLLMJudge, Grader: "llm-grader",
				LLMJudge: &evalfile.LLMJudgeConfig{Rubrics: []evalfile.Rubric{
					{ID: "rubric-1", Outcome: "Is short.", Weight: 1, Required: true},
					{ID: "depth", Outcome: "Explains why.", Weight: 1},
					{ID: "rubric-3", Outcome: "Overall", Weight: 1, ScoreRanges: []evalfile.ScoreRange{{Min: 0, Max: 3, Outcome: "Bad"}, {Min: 4, Max: 7, Outcome: "OK"}, {Min: 8, Max: 10, Outcome: "Good"}}}}}}},
		{"composite, weighted average", `{name: gate, type: composite, assertions: [{name: a, type: is-json}, {name: b, type: equals, value: x}], aggregator: {type: weighted_average, weights: {a: 1, b: 3}}}`,
			&evalfile.EvaluatorConfig{Name: "gate", Key: "gate", Type: evalfile.TypeComposite, Grader: "composite",
				Composite: &evalfile.CompositeConfig{Aggregator: evalfile.AggregatorWeightedAverage, Weights: map[string]float64{"a": 1, "b": 3}, Members: []*evalfile.EvaluatorConfig{
					{Name: "a", Key: "gate/a", Type: evalfile.TypeIsJSON, Grader: "is-json", Assertion: &evalfile.AssertionConfig{}},
					{Name: "b", Key: "gate/b", Type: evalfile.TypeEquals, Grader: "equals", Assertion: &evalfile.AssertionConfig{Values: []string{"x"}}}}}}},
		{"composite, threshold", `{name: gate, type: composite, evaluators: [{name: a, type: is-json}], aggregator: {type: threshold, threshold: 0.6}}`,
			&evalfile.EvaluatorConfig{Name: "gate", Key: "gate", Type: evalfile.TypeComposite, Grader: "composite",
				Composite: &evalfile.CompositeConfig{Aggregator: evalfile.AggregatorThreshold, Threshold: 0.6, Members: []*evalfile.EvaluatorConfig{
					{Name: "a", Key: "gate/a", Type: evalfile.TypeIsJSON, Grader: "is-json", Assertion: &evalfile.AssertionConfig{}}}}}},
		{"composite, code-grader and llm-grader aggregators", `{name: outer, type: composite, assertions: [{name: inner, type: composite, assertions: [{name: m, type: is-json}], aggregator: {type: code_grader, path: ./agg.py}}], aggregator: {type: llm-grader, prompt: "file://agg.md"}}`,
			&evalfile.EvaluatorConfig{Name: "outer", Key: "outer", Type: evalfile.TypeComposite, Grader: "composite",
				Composite: &evalfile.CompositeConfig{Aggregator: evalfile.AggregatorLLMJudge, Prompt: "file://agg.md", PromptFile: "agg.md", Members: []*evalfile.EvaluatorConfig{
					{Name: "inner", Key: "outer/inner", Type: evalfile.TypeComposite, Grader: "composite", Composite: &evalfile.CompositeConfig{
						Aggregator: evalfile.AggregatorCodeJudge, Script: &evalfile.CodeJudgeConfig{Script: "./agg.py"}, Members: []*evalfile.EvaluatorConfig{
							{Name: "m", Key: "outer/inner/m", Type: evalfile.TypeIsJSON, Grader: "is-json", Assertion: &evalfile.AssertionConfig{}}}}}}}}},
		{"tool-trajectory", `{type: tool-trajectory, mode: superset, args_match: [query, opts.limit], expected: [{tool: search, args: {q: x}, max_duration_ms: 200, argsMatch: subset}, {tool: fetch, args: any}]}`,
			&evalfile.EvaluatorConfig{Name: "tool-trajectory", Key: "tool-trajectory", Type: evalfile.TypeToolTrajectory, Grader: "tool-trajectory",
				ToolTrajectory: &evalfile.ToolTrajectoryConfig{Mode: evalfile.ModeSuperset, ArgsMatch: &evalfile.ArgsMatch{Fields: []string{"query", "opts.limit"}}, Expected: []evalfile.ExpectedCall{
					{Tool: "search", Args: json.RawMessage(`{"q":"x"}`), MaxDurationMs: ptr(200.0), ArgsMatch: &evalfile.ArgsMatch{Mode: "subset"}},
					{Tool: "fetch", AnyArgs: true}}}}},
		{"field-accuracy", `{type: field_accuracy, fields: [{path: invoice.total, match: numeric_tolerance, tolerance: 0.01, relative: true}], aggregation: all_or_nothing}`,
			&evalfile.EvaluatorConfig{Name: "field-accuracy", Key: "field-accuracy", Type: evalfile.TypeFieldAccuracy, Grader: "field-accuracy",
				FieldAccuracy: &evalfile.FieldAccuracyConfig{Aggregation: evalfile.AggregationAllOrNothing, Fields: []evalfile.FieldSpec{
					{Path: "invoice.total", Match: evalfile.MatchNumericTolerance, Required: true, Weight: 1, Tolerance: 0.01, Relative: true}}}}},
		{"latency", `{type: latency, threshold: 1500}`,
			&evalfile.EvaluatorConfig{Name: "latency", Key: "latency", Type: evalfile.TypeLatency, Grader: "latency", Latency: &evalfile.LatencyConfig{ThresholdMs: 1500}}},
		{"cost", `{type: cost, budget: 0.05}`,
			&evalfile.EvaluatorConfig{Name: "cost", Key: "cost", Type: evalfile.TypeCost, Grader: "cost", Cost: &evalfile.CostConfig{BudgetUSD: 0.05}}},
		{"token-usage", `{type: token-usage, maxTotal: 900, max_output: 300}`,
			&evalfile.EvaluatorConfig{Name: "token-usage", Key: "token-usage", Type: evalfile.TypeTokenUsage, Grader: "token-usage",
				TokenUsage: &evalfile.TokenUsageConfig{MaxTotal: ptr(900.0), MaxOutput: ptr(300.0)}}},
		{"execution-metrics", `{type: execution_metrics, max_tool_calls: 5, maxDurationMs: 2000, target_exploration_ratio: 0.3, exploration_tolerance: 0.1}`,
			&evalfile.EvaluatorConfig{Name: "execution-metrics", Key: "execution-metrics", Type: evalfile.TypeExecutionMetrics, Grader: "execution-metrics",
				ExecutionMetrics: &evalfile.ExecutionMetricsConfig{MaxToolCalls: ptr(5.0), MaxDurationMs: ptr(2000.0), TargetExplorationRatio: ptr(0.3), ExplorationTolerance: ptr(0.1)}}},
		{"skill-trigger", `{type: skill-trigger, skill: pdf, should_trigger: false}`,
			&evalfile.EvaluatorConfig{Name: "skill-trigger-pdf", Key: "skill-trigger-pdf", Type: evalfile.TypeSkillTrigger, Grader: "skill-trigger",
				SkillTrigger: &evalfile.SkillTriggerConfig{Skill: "pdf", ShouldTrigger: ptr(false)}}},
		{"contains, named after its value", `{type: contains, value: "@scope/pkg"}`,
			&evalfile.EvaluatorConfig{Name: "contains-@scope/pkg", Key: "contains-@scope/pkg", Type: evalfile.TypeContains, Grader: "contains",
				Assertion: &evalfile.AssertionConfig{Values: []string{"@scope/pkg"}}}},
		{"icontains-all, named after its count", `{type: icontains_all, value: [a, b, c]}`,
			&evalfile.EvaluatorConfig{Name: "icontains-all-3", Key: "icontains-all-3", Type: evalfile.TypeIContainsAll, Grader: "icontains-all",
				Assertion: &evalfile.AssertionConfig{Values: []string{"a", "b", "c"}}}},
		{"regex, named after 30 characters", `{type: regex, value: "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}$", flags: i}`,
			&evalfile.EvaluatorConfig{Name: "regex-^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0", Key: "regex-^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0", Type: evalfile.TypeRegex, Grader: "regex",
				Assertion: &evalfile.AssertionConfig{Values: []string{"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}$"}, Flags: "i"}}},
		{"starts-with", `{type: starts-with, value: "Dear"}`,
			&evalfile.EvaluatorConfig{Name: "starts-with-Dear", Key: "starts-with-Dear", Type: evalfile.TypeStartsWith, Grader: "starts-with",
				Assertion: &evalfile.AssertionConfig{Values: []string{"Dear"}}}},
		{"rubric (deprecated)", `{name: r, type: rubric, rubrics: [{outcome: Kind., required: false, weight: 0.5}]}`,
			&evalfile.EvaluatorConfig{Name: "r", Key: "r", Type: evalfile.TypeLLMJudge, Grader: "llm-grader",
				LLMJudge: &evalfile.LLMJudgeConfig{Rubrics: []evalfile.Rubric{{ID: "rubric-1", Outcome: "Kind.", Weight: 0.5}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := graderOf(t, tc.entry, nil)
			if diff := cmp.Diff(tc.want, got, ignoreRaw); diff != "" {
				t.Errorf("evaluator (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSuite42GraderRaw: an evaluator keeps its entry as written, as JSON; the strings' rubrics grader is written as
// AgentV makes it.
func TestSuite42GraderRaw(t *testing.T) {
	f := mustParseSuite(t, "tests:\n  - id: a\n    input: q\n    assertions: [First., {type: contains, value: x, weight: 2}, Second.]\n", nil)
	var got []string
	for _, ev := range f.CaseAt(0).Evaluators {
		got = append(got, string(ev.Raw))
	}
	want := []string{`{"type":"rubrics","criteria":["First.","Second."],"weight":2}`, `{"type":"contains","value":"x","weight":2}`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Raw (-want +got):\n%s", diff)
	}
}

func TestSuite42Includes(t *testing.T) {
	files := map[string]string{
		// Found from the eval file's directory up: evals/.agentv first, then the root's.
		"evals/.agentv/templates/safety.yaml": "assertions:\n  - {name: no-secrets, type: regex, value: secret, negate: true}\n  - {include: ./nested/tone.yml}\n",
		".agentv/templates/safety.yaml":       "assertions: [{name: shadowed, type: is-json}]\n",
		// A nested include resolves from its template's directory first.
		"evals/.agentv/templates/nested/tone.yml": "assertions: [Is polite.]\n",
		"evals/shared/format.yaml":                "assertions: [{name: json, type: is-json}]\n",
	}
	f := mustParseSuite(t, `assertions: [{include: ./shared/format.yaml}]
tests:
  - id: a
    input: q
    assertions:
      - {include: safety}
      - Is short.
      - name: combo
        type: composite
        assertions: [{include: ./shared/format.yaml}, {name: len, type: contains, value: x}]
        aggregator: {type: weighted_average}
`, files)
	var got []string
	for _, ev := range f.CaseAt(0).Evaluators {
		got = append(got, ev.Key+":"+ev.Grader)
		if ev.Composite != nil {
			for _, m := range ev.Composite.Members {
				got = append(got, "  "+m.Key+":"+m.Grader)
			}
		}
	}
	want := []string{"no-secrets:regex", "rubrics:llm-grader", "combo:composite", "  combo/json:is-json", "  combo/len:contains", "json:is-json"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("evaluators (-want +got):\n%s", diff)
	}
	if rb := f.CaseAt(0).Evaluators[1].LLMJudge.Rubrics; len(rb) != 2 || rb[0].Outcome != "Is polite." || rb[1].Outcome != "Is short." {
		t.Errorf("the strings of the template and the test make one rubrics grader: %+v", rb)
	}
	if !f.CaseAt(0).Evaluators[0].Negate {
		t.Errorf("negate was not read")
	}
}

func TestSuite42TestsFiles(t *testing.T) {
	files := map[string]string{
		"evals/cases/a-first/case.yaml":  "input: q\ncriteria: c\n",
		"evals/cases/b-named/case.yml":   "id: own-id\ninput: q\ncriteria: c\n",
		"evals/cases/c-empty/notes.md":   "no case here",
		"evals/cases/.hidden/case.yaml":  "id: hidden\ninput: q\ncriteria: c\n",
		"evals/more/x/one.yaml":          "- &base {id: y1, input: q, criteria: c}\n- {<<: *base, id: y2}\n",
		"evals/more/x/two.jsonl":         "\ufeff\n{\"id\": \"j1\", \"input\": \"q\", \"criteria\": \"c\"}\r\n   \n{\"id\": \"j2\", \"input\": \"q\", \"criteria\": \"c\"}\u00a0\n",
		"evals/more/x/.skip.yaml":        "- {id: hidden, input: q, criteria: c}\n",
		"evals/more/x/three.yml":         "",
		"evals/other/z.yaml":             "- {id: z, input: q, criteria: c}\n",
		"evals/other/deeper/in/w.yaml":   "- {id: w, input: q, criteria: c}\n",
		"evals/dir-of-cases/k/case.yaml": "input: q\ncriteria: c\n",
	}
	for _, tc := range []struct {
		name, tests string
		ids         []string
		warnings    int
	}{
		{"a directory", "./cases", []string{"hidden", "a-first", "own-id"}, 1},
		{"globs", "\n  - file://more/**/*.{yaml,yml,jsonl}\n  - file://other/*.yaml\n  - file://other/**/w.yaml",
			[]string{"y1", "y2", "j1", "j2", "z", "w"}, 1},
		{"a path from the root", "/evals/other/z.yaml", []string{"z"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := mustParseSuite(t, "tests: "+tc.tests+"\n", files)
			if diff := cmp.Diff(tc.ids, f.CaseIDs()); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
			if len(f.Warnings) != tc.warnings {
				t.Errorf("warnings: %v", f.Warnings)
			}
		})
	}
}

func TestSuite42GlobMatch(t *testing.T) {
	for _, tc := range []struct {
		pattern, name string
		want          bool
	}{
		{"a/*.yaml", "a/b.yaml", true},
		{"a/*.yaml", "a/b/c.yaml", false},
		{"a/**/*.yaml", "a/c.yaml", true},
		{"a/**/*.yaml", "a/b/c/d.yaml", true},
		{"a/**/*.yaml", "a/.b/c.yaml", false},
		{"a/*.yaml", "a/.b.yaml", false},
		{"a/.*.yaml", "a/.b.yaml", true},
		{"a/?.yaml", "a/b.yaml", true},
		{"a/[bc].yaml", "a/c.yaml", true},
	} {
		alts, err := expandBraces(tc.pattern)
		if err != nil {
			t.Fatal(err)
		}
		got := false
		for _, a := range alts {
			got = got || globMatch(splitSlash(a), splitSlash(tc.name))
		}
		if got != tc.want {
			t.Errorf("%q ~ %q = %v, want %v", tc.pattern, tc.name, got, tc.want)
		}
	}
	alts, err := expandBraces("x/{a,b{c,d}}/{e,f}.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"x/a/e.yaml", "x/a/f.yaml", "x/bc/e.yaml", "x/bc/f.yaml", "x/bd/e.yaml", "x/bd/f.yaml"}, alts); diff != "" {
		t.Errorf("braces (-want +got):\n%s", diff)
	}
	if _, err := expandBraces("{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}"); err == nil {
		t.Errorf("512 alternatives were expanded")
	}
}

func splitSlash(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == '/' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return out
}

// TestSuite42Vars holds the templating to AgentV's interpolateTemplateVars.
func TestSuite42Vars(t *testing.T) {
	vars, err := yamltree.DecodeJSON([]byte(`{"s": "text", "n": 1.5, "b": true, "z": null, "o": {"k": "v", "list": [1, "<&>"]},
		"q": "quote \" back \\ nl \n tab \t ctl \u0001 ls \u2028", "dotted": {"a": {"b": "deep"}}, "arr": [{"x": 1}]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ in, want string }{
		{`"{{ s }}"`, `"text"`},
		{`"{{n}}"`, `1.5`},
		{`"{{ b }}"`, `true`},
		{`"{{ z }}"`, `null`},
		{`"{{ o }}"`, `{"k":"v","list":[1,"\u003c\u0026\u003e"]}`},
		{`"a {{ o }} b"`, `"a {\"k\":\"v\",\"list\":[1,\"\u003c\u0026\u003e\"]} b"`},
		{`"{{ n }}/{{ b }}/{{ z }}"`, `"1.5/true/null"`},
		{`"[{{ q }}]"`, `"[quote \" back \\ nl \n tab \t ctl \u0001 ls \u2028]"`},
		{`"{{ dotted.a.b }} {{ dotted.a }} {{ arr.0 }} {{ missing }} {{ s.x }}"`, `"deep {\"b\":\"deep\"} {{ arr.0 }} {{ missing }} {{ s.x }}"`},
		{`"{{ missing }}"`, `"{{ missing }}"`},
		{`"{{s}}{{s}}"`, `"texttext"`},
		{"\"{{\\u00a0s\\u3000}}\"", `"text"`},
		{`["{{ s }}", {"k": "{{ n }}"}]`, `["text",{"k":1.5}]`},
		{`"${{ s }}"`, `"$text"`},
	} {
		in, err := yamltree.DecodeJSON([]byte(tc.in))
		if err != nil {
			t.Fatal(err)
		}
		tm := &templater{vars: vars}
		if got := string(tm.fill(in).Raw()); got != tc.want {
			t.Errorf("fill(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
	// JavaScript's JSON.stringify, which fills a placeholder inside text with a value that is not a string.
	q, _ := yamltree.DecodeJSON([]byte(`{"s": "<\u2028\"\u0007é>", "n": [1e21, -0.5, 1.5e-7, 0.000001, 100, 2.50]}`))
	if got, want := string(jsStringify(nil, q)), "{\"s\":\"<\u2028\\\"\\u0007é>\",\"n\":[1e+21,-0.5,1.5e-7,0.000001,100,2.5]}"; got != want {
		t.Errorf("jsStringify = %s, want %s", got, want)
	}
}
