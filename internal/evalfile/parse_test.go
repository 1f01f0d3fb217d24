package evalfile

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func mustParseFile(t *testing.T, name string, opts ...ParseOption) *File {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	f, err := Parse(data, opts...)
	if err != nil {
		t.Fatalf("Parse(%s): %v", name, err)
	}
	return f
}

// caseView is a comparable projection of a Case.
type caseView struct {
	ID, Outcome, Conversation string
	Input, Expected           []msgView
	Evaluators                []string // key:type
	Source                    EvaluatorSource
	Question, Reference       string
	Files                     []string
}

type msgView struct {
	Role      Role
	Kind      ContentKind
	Content   string // Raw as a string
	Segments  []Segment
	ToolCalls []string // tool|input|output
}

func viewCase(c *Case) caseView {
	v := caseView{ID: c.ID, Outcome: c.ExpectedOutcome, Conversation: c.ConversationID, Source: c.EvaluatorSource,
		Question: c.Question(), Reference: c.ReferenceAnswer(), Files: c.InputFiles()}
	msgs := func(ms []Message) []msgView {
		var out []msgView
		for _, m := range ms {
			mv := msgView{Role: m.Role, Kind: m.Content.Kind, Content: string(m.Content.Raw)}
			for _, s := range m.Content.Segments {
				mv.Segments = append(mv.Segments, Segment{Type: s.Type, Value: s.Value})
			}
			for _, tc := range m.ToolCalls {
				mv.ToolCalls = append(mv.ToolCalls, tc.Tool+"|"+string(tc.Input)+"|"+string(tc.Output))
			}
			out = append(out, mv)
		}
		return out
	}
	v.Input, v.Expected = msgs(c.InputMessages), msgs(c.ExpectedMessages)
	for _, e := range c.Evaluators {
		v.Evaluators = append(v.Evaluators, e.Key+":"+string(e.Type))
	}
	return v
}

func TestParseScreeningExample(t *testing.T) {
	f := mustParseFile(t, "testdata/screening.yaml")
	if diff := cmp.Diff([]string{"case-001", "case-002"}, f.CaseIDs()); diff != "" {
		t.Errorf("CaseIDs (-want +got):\n%s", diff)
	}
	if f.Case("case-002") == nil || f.Case("case-002").Index != 1 || f.Case("case-002").ID != "case-002" || f.Case("case-003") != nil {
		t.Errorf("Case(id) does not find cases by id")
	}
	if f.Schema != SchemaV2 || f.Target != "batch_cli" || f.Description != "Batch CLI demo using structured input_messages" {
		t.Errorf("file fields: schema=%q target=%q description=%q", f.Schema, f.Target, f.Description)
	}
	want := caseView{
		ID:      "case-001",
		Outcome: "Batch runner returns JSON with decision=CLEAR.",
		Input: []msgView{
			{Role: RoleSystem, Kind: ContentText, Content: `"You are a batch processor."`},
			{Role: RoleUser, Kind: ContentObject,
				Content: `{"request":{"type":"screening_check","jurisdiction":"AU"},"row":{"id":"case-001","name":"Example A","amount":5000}}`},
		},
		Expected:   []msgView{{Role: RoleAssistant, Kind: ContentObject, Content: `{"decision":"CLEAR"}`}},
		Evaluators: []string{"decision-check:code_judge"},
		Source:     SourceCase,
		Question: "{\n  \"request\": {\n    \"type\": \"screening_check\",\n    \"jurisdiction\": \"AU\"\n  },\n" +
			"  \"row\": {\n    \"id\": \"case-001\",\n    \"name\": \"Example A\",\n    \"amount\": 5000\n  }\n}",
		Reference: "{\n  \"decision\": \"CLEAR\"\n}",
	}
	if diff := cmp.Diff(want, viewCase(f.CaseAt(0))); diff != "" {
		t.Errorf("case-001 (-want +got):\n%s", diff)
	}
	ev := f.CaseAt(1).Evaluators[0]
	wantJudge := &CodeJudgeConfig{Script: "bun run ./scripts/check-output.ts", Cwd: "."}
	if diff := cmp.Diff(wantJudge, ev.CodeJudge); diff != "" {
		t.Errorf("code_judge config (-want +got):\n%s", diff)
	}
}

func TestParseEveryFieldAndContentForm(t *testing.T) {
	f := mustParseFile(t, "testdata/full.yaml")
	if f.Dataset != "coverage" || f.Description != "Every field and content form" {
		t.Errorf("dataset=%q description=%q", f.Dataset, f.Description)
	}
	wantCases := []caseView{
		{
			ID: "structured", Outcome: "Returns CLEAR with two checks.", Conversation: "conv-1",
			Input: []msgView{
				{Role: RoleSystem, Kind: ContentText, Content: `"You are a screening agent."`},
				{Role: RoleUser, Kind: ContentObject, Content: `{"zeta":1,"alpha":{"nested":true,"list":[3,1,2]},"middle":"text"}`},
			},
			Expected: []msgView{
				{Role: RoleAssistant, ToolCalls: []string{`lookup|{"country":"NZ"}|{"hit":false}`, "score||"}},
				{Role: RoleAssistant, Kind: ContentObject, Content: `{"decision":"CLEAR","score":0.93,"date":"2025-01-15"}`},
			},
			Evaluators: []string{"trajectory-any:tool_trajectory", "trajectory-order:tool_trajectory",
				"trajectory-exact:tool_trajectory", "fields:field_accuracy", "tokens:token_usage"},
			Source: SourceCase,
			Question: "{\n  \"zeta\": 1,\n  \"alpha\": {\n    \"nested\": true,\n    \"list\": [\n      3,\n      1,\n      2\n" +
				"    ]\n  },\n  \"middle\": \"text\"\n}",
			Reference: "{\n  \"decision\": \"CLEAR\",\n  \"score\": 0.93,\n  \"date\": \"2025-01-15\"\n}",
		},
		{
			ID: "text.case_2", Outcome: "A polite answer.",
			Input: []msgView{
				{Role: RoleUser, Kind: ContentText, Content: `"  What is the decision?  "`},
				{Role: RoleAssistant, Kind: ContentText, Content: `"Let me check."`},
				{Role: RoleTool, Kind: ContentText, Content: `"lookup done"`},
				{Role: RoleUser, Kind: ContentText, Content: `"Please answer."`},
			},
			Expected:   []msgView{{Role: RoleAssistant, Kind: ContentText, Content: `"CLEAR"`}},
			Evaluators: []string{"judge:code_judge", "combo:composite", "agg:composite", "llm:llm_judge", "rubric:rubric"},
			Source:     SourceCase,
			Question:   "What is the decision? Please answer.",
			Reference:  "CLEAR",
		},
		{
			ID: "segments-3",
			Input: []msgView{{Role: RoleUser, Kind: ContentSegments,
				Content: `[{"type":"text","value":"Read the attached file."},{"type":"file","value":"./data/input.csv"},{"type":"text","value":"Then answer."}]`,
				Segments: []Segment{{Type: SegmentText, Value: "Read the attached file."}, {Type: SegmentFile, Value: "./data/input.csv"},
					{Type: SegmentText, Value: "Then answer."}}}},
			Expected: []msgView{{Role: RoleAssistant, Kind: ContentSegments, Content: `[{"type":"text","value":"done"}]`,
				Segments: []Segment{{Type: SegmentText, Value: "done"}}}},
			Evaluators: []string{"rubrics:llm_judge", "file-latency:latency", "file-cost:cost"},
			Source:     SourceFile,
			Question:   "Read the attached file. Then answer.",
			Reference:  "[\n  {\n    \"type\": \"text\",\n    \"value\": \"done\"\n  }\n]",
			Files:      []string{"./data/input.csv"},
		},
		{
			ID:         "4",
			Input:      []msgView{{Role: RoleUser, Kind: ContentText, Content: `"hi"`}},
			Expected:   []msgView{{Role: RoleAssistant, ToolCalls: []string{`greet|{"name":"bob"}|`}}},
			Evaluators: []string{"shared:field_accuracy"},
			Source:     SourceCase,
			Question:   "hi",
			Reference:  "[\n  {\n    \"tool\": \"greet\",\n    \"input\": {\n      \"name\": \"bob\"\n    }\n  }\n]",
		},
	}
	var got []caseView
	for _, c := range allCases(f) {
		got = append(got, viewCase(c))
	}
	if diff := cmp.Diff(wantCases, got); diff != "" {
		t.Errorf("cases (-want +got):\n%s", diff)
	}

	evs := func(c int) map[string]*EvaluatorConfig {
		m := map[string]*EvaluatorConfig{}
		for _, e := range f.CaseAt(c).Evaluators {
			m[e.Name] = e
		}
		return m
	}
	c0 := evs(0)
	if diff := cmp.Diff(&ToolTrajectoryConfig{Mode: ModeAnyOrder, Minimums: []ToolMinimum{{"lookup", 1}, {"score", 1}}},
		c0["trajectory-any"].ToolTrajectory); diff != "" {
		t.Errorf("any_order (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(&ToolTrajectoryConfig{Mode: ModeInOrder, Expected: []ExpectedCall{
		{Tool: "lookup", Args: json.RawMessage(`{"country":"NZ"}`)}, {Tool: "score", AnyArgs: true}}},
		c0["trajectory-order"].ToolTrajectory); diff != "" {
		t.Errorf("in_order (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(&FieldAccuracyConfig{Aggregation: AggregationAllOrNothing, Fields: []FieldSpec{
		{Path: "decision", Match: MatchExact, Required: true, Weight: 1},
		{Path: "date", Match: MatchDate, Required: true, Weight: 1, Formats: []string{"DD/MM/YYYY"}},
		{Path: "extras[0].name", Match: MatchExact, Required: false, Weight: 1},
	}}, c0["fields"].FieldAccuracy); diff != "" {
		t.Errorf("field_accuracy (-want +got):\n%s", diff)
	}
	thousand, twoHundred, zero := 1000.0, 200.0, 0.0
	if diff := cmp.Diff(&TokenUsageConfig{MaxTotal: &thousand, MaxOutput: &twoHundred}, c0["tokens"].TokenUsage); diff != "" {
		t.Errorf("token_usage (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(&zero, c0["tokens"].Weight); diff != "" {
		t.Errorf("token_usage weight (-want +got):\n%s", diff)
	}

	c1 := evs(1)
	if diff := cmp.Diff(&CodeJudgeConfig{Script: "python3 judge.py --mode 'strict mode'", Cwd: "scripts",
		Config: json.RawMessage(`{"threshold":0.7,"labels":{"team":"risk"}}`)}, c1["judge"].CodeJudge); diff != "" {
		t.Errorf("code_judge (-want +got):\n%s", diff)
	}
	combo := c1["combo"]
	var memberKeys []string
	for _, m := range combo.Composite.Members {
		memberKeys = append(memberKeys, m.Key)
	}
	if diff := cmp.Diff([]string{"combo/lat", "combo/inner-judge"}, memberKeys); diff != "" {
		t.Errorf("composite member keys (-want +got):\n%s", diff)
	}
	if combo.Composite.Aggregator != AggregatorWeightedAverage || combo.Composite.Weights["lat"] != 3 || combo.EffectiveWeight() != 2 {
		t.Errorf("composite combo: aggregator=%q weights=%v weight=%v", combo.Composite.Aggregator, combo.Composite.Weights, combo.EffectiveWeight())
	}
	if diff := cmp.Diff(&CodeJudgeConfig{Script: "./aggregate.sh", Cwd: "agg", Config: json.RawMessage(`{"mode":"strict"}`)},
		c1["agg"].Composite.Script); diff != "" {
		t.Errorf("code_judge aggregator (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(&LLMJudgeConfig{Prompt: json.RawMessage(`"prompts/judge.md"`), Model: "gpt-x",
		Config: json.RawMessage(`{"temperature":0.2,"style":"terse"}`)}, c1["llm"].LLMJudge); diff != "" {
		t.Errorf("llm_judge (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Rubric{
		{ID: "tone", Outcome: "Polite", Weight: 2, Required: true, Raw: json.RawMessage(`{"id":"tone","expected_outcome":"Polite","weight":2}`)},
		{ID: "rubric-2", Outcome: "Mentions the decision", Weight: 1, Required: false,
			Raw: json.RawMessage(`{"description":"Mentions the decision","required":false}`)},
	}, c1["rubric"].LLMJudge.Rubrics); diff != "" {
		t.Errorf("rubric (-want +got):\n%s", diff)
	}

	inline := f.CaseAt(2).Evaluators[0]
	if diff := cmp.Diff([]Rubric{
		{ID: "rubric-1", Outcome: "Answers the question", Weight: 1, Required: true, Raw: json.RawMessage(`"Answers the question"`)},
		{ID: "cites", Outcome: "Cites the file", Weight: 1, Required: false,
			Raw: json.RawMessage(`{"id":"cites","expected_outcome":"Cites the file","required":false}`)},
	}, inline.LLMJudge.Rubrics); diff != "" {
		t.Errorf("inline rubrics (-want +got):\n%s", diff)
	}
	// File-level evaluators are shared, not copied.
	if f.CaseAt(2).Evaluators[1] != f.Evaluators[0] {
		t.Errorf("inherited evaluator is not the file-level one")
	}
	if diff := cmp.Diff([]FieldSpec{
		{Path: "decision", Match: MatchExact, Required: true, Weight: 1},
		{Path: "score", Match: MatchNumericTolerance, Required: true, Weight: 2, Tolerance: 0.1, Relative: true},
	}, f.CaseAt(3).Evaluators[0].FieldAccuracy.Fields); diff != "" {
		t.Errorf("anchored fields (-want +got):\n%s", diff)
	}
}

func TestParseKeepsKeyOrderAndScalars(t *testing.T) {
	const doc = `
evalcases:
  - id: a
    input_messages:
      - role: user
        content:
          z: 1
          a: 0x1F
          m: 1_000
          f: 2.50
          big: 12345678901234567890
          n: ~
          b: yes
          t: true
          d: 2025-01-15
          s: "007"
          q: 'it''s'
          list: [b, a]
          merged:
            <<: &base {x: 1, y: 2}
            y: 3
`
	f, err := Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"z":1,"a":31,"m":1000,"f":2.5,"big":12345678901234567890,"n":null,"b":"yes","t":true,` +
		`"d":"2025-01-15","s":"007","q":"it's","list":["b","a"],"merged":{"x":1,"y":3}}`
	if diff := cmp.Diff(want, string(f.CaseAt(0).InputMessages[0].Content.Raw)); diff != "" {
		t.Errorf("content (-want +got):\n%s", diff)
	}
}

func TestParseProblems(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want []Problem
	}{
		{
			name: "empty",
			doc:  "  \n",
			want: []Problem{{CaseIndex: -1, Message: "the eval file is empty"}},
		},
		{
			name: "not a mapping",
			doc:  "- a\n- b\n",
			want: []Problem{{CaseIndex: -1, Line: 1, Message: "the eval file must be a mapping with evalcases, got an array"}},
		},
		{
			name: "missing evalcases",
			doc:  "description: x\n",
			want: []Problem{{CaseIndex: -1, Path: "evalcases", Message: "is required: the file has no evalcases"}},
		},
		{
			name: "empty evalcases and bad schema",
			doc:  "$schema: agentv-eval-v1\nevalcases: []\n",
			want: []Problem{
				{CaseIndex: -1, Path: "$schema", Line: 1, Message: `unsupported schema "agentv-eval-v1": only agentv-eval-v2 is supported`},
				{CaseIndex: -1, Path: "evalcases", Line: 2, Message: "is empty: the file has no eval cases"},
			},
		},
		{
			name: "ids: missing, empty, numeric, unsafe, duplicate",
			doc: `evalcases:
  - input_messages: [{role: user, content: a}]
  - id: ""
    input_messages: [{role: user, content: a}]
  - id: 7
    input_messages: [{role: user, content: a}]
  - id: ../etc/passwd
    input_messages: [{role: user, content: a}]
  - id: ok
    input_messages: [{role: user, content: a}]
  - id: ok
    input_messages: [{role: user, content: a}]
`,
			want: []Problem{
				{CaseIndex: 0, Path: "evalcases[0].id", Line: 2, Message: "is required"},
				{CaseIndex: 1, Path: "evalcases[1].id", Line: 3, Message: "must not be empty"},
				{CaseIndex: 2, Path: "evalcases[2].id", Line: 5, Message: "must be a string, got a number (quote it)"},
				{CaseIndex: 3, Path: "evalcases[3].id", Line: 7, Message: `"../etc/passwd" is not a safe id: ids become file names and object keys, so they must match ^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`},
				{CaseIndex: 5, CaseID: "ok", Path: "evalcases[5].id", Line: 11, Message: `duplicate id "ok": evalcases[4] has it too`},
			},
		},
		{
			name: "messages: missing input, bad roles, bad content, tool calls",
			doc: `evalcases:
  - id: a
  - id: b
    input_messages:
      - role: robot
        content: 5
      - content: x
      - role: user
        content: [{type: image, value: x}, {type: file, value: ""}, plain]
        tool_calls: [{tool: t}]
    expected_messages:
      - role: assistant
        tool_calls: [{input: {}}]
  - id: c
    input_messages: []
`,
			want: []Problem{
				{CaseIndex: 0, CaseID: "a", Path: "evalcases[0].input_messages", Line: 2, Message: "is required"},
				{CaseIndex: 1, CaseID: "b", Path: "evalcases[1].input_messages[0].role", Line: 5, Message: `invalid role "robot": must be system, user, assistant or tool`},
				{CaseIndex: 1, CaseID: "b", Path: "evalcases[1].input_messages[0].content", Line: 6, Message: "must be a string, a mapping or a list of segments, got a number"},
				{CaseIndex: 1, CaseID: "b", Path: "evalcases[1].input_messages[1].role", Line: 7, Message: "is required"},
				{CaseIndex: 1, CaseID: "b", Path: "evalcases[1].input_messages[2].content[0].type", Line: 9, Message: "must be text or file"},
				{CaseIndex: 1, CaseID: "b", Path: "evalcases[1].input_messages[2].content[1].value", Line: 9, Message: "a file segment needs a path"},
				{CaseIndex: 1, CaseID: "b", Path: "evalcases[1].input_messages[2].content[2]", Line: 9, Message: "a content segment must be a mapping {type: text|file, value}, got a string"},
				{CaseIndex: 1, CaseID: "b", Path: "evalcases[1].input_messages[2].tool_calls", Line: 10, Message: "only assistant messages may carry tool_calls"},
				{CaseIndex: 1, CaseID: "b", Path: "evalcases[1].expected_messages[0].tool_calls[0].tool", Line: 13, Message: "is required and must be a non-empty string"},
				{CaseIndex: 2, CaseID: "c", Path: "evalcases[2].input_messages", Line: 15, Message: "must have at least one message"},
			},
		},
		{
			name: "evaluators: unknown type and invalid configs per type",
			doc: `execution:
  evaluators:
    - {name: f, type: regex}
evalcases:
  - id: a
    input_messages: [{role: user, content: q}]
    execution:
      evaluators:
        - {type: latency, threshold: 1}
        - {name: t1, type: tool_trajectory, mode: sometimes}
        - {name: t2, type: tool_trajectory, mode: any_order, minimums: {x: 1.5}}
        - {name: t3, type: tool_trajectory, mode: exact, expected: [{tool: x, args: [1]}, {args: {}}]}
        - {name: t4, type: tool_trajectory, mode: in_order}
        - {name: fa, type: field_accuracy, fields: [{path: "a..b", match: fuzzy}], aggregation: max}
        - {name: fb, type: field_accuracy, fields: []}
        - {name: l, type: latency}
        - {name: c, type: cost, budget: -1}
        - {name: tu, type: token_usage}
        - {name: cj, type: code_judge, script: "  "}
        - {name: r, type: rubric}
        - {name: co, type: composite, evaluators: [{name: m, type: cost, budget: 1}], aggregator: {type: vote}}
        - {name: co2, type: composite, evaluators: [{name: m, type: cost, budget: 1}], aggregator: {type: weighted_average, weights: {n: 1}}}
        - {name: co3, type: composite, evaluators: [{name: m, type: nope}], aggregator: {type: code_judge}}
        - {name: w, type: latency, threshold: 1, weight: -2}
        - {name: dup, type: latency, threshold: 1}
        - {name: dup, type: cost, budget: 1}
        - {name: a/b, type: cost, budget: 1}
`,
			want: []Problem{
				{CaseIndex: -1, Path: "execution.evaluators[0].type", Line: 3, Message: `unknown evaluator type "regex": must be one of code_judge, llm_judge, rubric, composite, tool_trajectory, field_accuracy, latency, cost, token_usage`},
				{CaseIndex: 0, CaseID: "a", Path: "evalcases[0].execution.evaluators[0].name", Line: 9, Message: "is required"},
				{CaseIndex: 0, CaseID: "a", Path: "evalcases[0].execution.evaluators[1].mode", Line: 10, Message: `unknown mode "sometimes": must be any_order, in_order or exact`},
				{CaseIndex: 0, CaseID: "a", Path: "evalcases[0].execution.evaluators[2].minimums.x", Line: 11, Message: "must be a non-negative whole number"},
				{CaseIndex: 0, CaseID: "a", Path: "evalcases[0].execution.evaluators[3].expected[0].args", Line: 12, Message: "must be a mapping of expected argument values or the string any"},
				{CaseIndex: 0, CaseID: "a", Path: "evalcases[0].execution.evaluators[3].expected[1].tool", Line: 12, Message: "is required and must be a non-empty string"},
				{CaseIndex: 0, CaseID: "a", Path: "evalcases[0].execution.evaluators[4].expected", Line: 13, Message: "is required in in_order mode: a list of {tool, args}"},
				{CaseIndex: 0, CaseID: "a", Path: "evalcases[0].execution.evaluators[5].fields[0].path", Line: 14, Message: `path "a..b" has an empty key at offset 2`},
				{CaseIndex: 0, CaseID: "a", Path: "evalcases[0].execution.evaluators[5].fields[0].match", Line: 14, Message: `unknown match "fuzzy": must be exact, numeric_tolerance or date (use a code_judge for fuzzy matching)`},
				{CaseIndex: 0, CaseID: "a", Path: "evalcases[0].execution.evaluators[5].aggregation", Line: 14, Message: "must be weighted_average or all_or_nothing"},
				{CaseIndex: 0, CaseID: "a", Path: "evalcases[0].execution.evaluators[6].fields", Line: 15, Message: "must have at least one field"},
				{CaseIndex: 0, CaseID: "a", Path: "evalcases[0].execution.evaluators[7].threshold", Line: 16, Message: "is required (the largest allowed duration_ms)"},
				{CaseIndex: 0, CaseID: "a", Path: "evalcases[0].execution.evaluators[8].budget", Line: 17, Message: "must not be negative, got -1"},
				{CaseIndex: 0, CaseID: "a", Path: "evalcases[0].execution.evaluators[9]", Line: 18, Message: "a token_usage evaluator needs at least one of max_total, max_input, max_output"},
				{CaseIndex: 0, CaseID: "a", Path: "evalcases[0].execution.evaluators[10].script", Line: 19, Message: "must not be empty"},
				{CaseIndex: 0, CaseID: "a", Path: "evalcases[0].execution.evaluators[11].rubrics", Line: 20, Message: "a rubric evaluator needs a non-empty rubrics list"},
				{CaseIndex: 0, CaseID: "a", Path: "evalcases[0].execution.evaluators[12].aggregator.type", Line: 21, Message: `unknown aggregator "vote": must be weighted_average, code_judge or llm_judge`},
				{CaseIndex: 0, CaseID: "a", Path: "evalcases[0].execution.evaluators[13].aggregator.weights.n", Line: 22, Message: `no member evaluator is named "n"`},
				{CaseIndex: 0, CaseID: "a", Path: "evalcases[0].execution.evaluators[14].evaluators[0].type", Line: 23, Message: `unknown evaluator type "nope": must be one of code_judge, llm_judge, rubric, composite, tool_trajectory, field_accuracy, latency, cost, token_usage`},
				{CaseIndex: 0, CaseID: "a", Path: "evalcases[0].execution.evaluators[14].aggregator.path", Line: 23, Message: "is required: the command that judges the case"},
				{CaseIndex: 0, CaseID: "a", Path: "evalcases[0].execution.evaluators[15].weight", Line: 24, Message: "must not be negative, got -2"},
				{CaseIndex: 0, CaseID: "a", Path: "evalcases[0].execution.evaluators[18].name", Line: 27, Message: "must not contain '/' (it separates composite members in result keys)"},
				{CaseIndex: 0, CaseID: "a", Path: "evalcases[0].execution.evaluators", Line: 9, Message: `evaluator name "dup" is used more than once: names must be unique within a list`},
			},
		},
		{
			name: "both evaluator keys, rubric clash, duplicate yaml key",
			doc: `execution:
  evaluators: [{name: rubrics, type: latency, threshold: 1}]
evalcases:
  - id: a
    input_messages: [{role: user, content: q}]
    execution: {evaluators: [{name: x, type: cost, budget: 1}]}
    evaluators: [{name: y, type: cost, budget: 1}]
  - id: b
    input_messages: [{role: user, content: q}]
    rubrics: [be nice]
  - id: c
    id: d
    input_messages: [{role: user, content: q}]
`,
			want: []Problem{
				{CaseIndex: -1, Path: "evalcases[2].id", Line: 12, Message: `key "id" is defined twice (first at line 11)`},
				{CaseIndex: 0, CaseID: "a", Path: "evalcases[0].evaluators", Line: 7, Message: "both execution.evaluators and evaluators are set: use one of them"},
				{CaseIndex: 1, CaseID: "b", Path: "evalcases[1].rubrics", Line: 10, Message: `the case's inline rubrics are judged by an evaluator named "rubrics", which clashes with an evaluator of the same name: rename that evaluator`},
			},
		},
		{
			name: "yaml syntax error has its line",
			doc:  "evalcases:\n  - id: a\n    input_messages: [\n  bad: : :\n",
			want: []Problem{{CaseIndex: -1, Line: 3, Message: "not valid YAML: yaml: line 3: did not find expected node content"}},
		},
		{
			name: "non-finite number",
			doc:  "evalcases:\n  - id: a\n    input_messages: [{role: user, content: {x: .inf}}]\n",
			want: []Problem{{CaseIndex: -1, Path: "evalcases[0].input_messages[0].content.x", Line: 3, Message: `".inf" is not a finite number and cannot be represented in JSON`}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse([]byte(tt.doc))
			var verr *ValidationError
			if !errors.As(err, &verr) {
				t.Fatalf("Parse() = %v, %v; want a *ValidationError", f, err)
			}
			if f != nil {
				t.Errorf("Parse() returned a File with a validation error")
			}
			if diff := cmp.Diff(tt.want, verr.Problems); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 9; i++ {
		b.WriteString("a" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " [")
		for j := 0; j < 10; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*a" + string(rune('0'+i-1)))
		}
		b.WriteString("]\n")
	}
	b.WriteString("evalcases: []\n")
	_, err := Parse([]byte(b.String()))
	var verr *ValidationError
	if !errors.As(err, &verr) || len(verr.Problems) != 1 || !strings.Contains(verr.Problems[0].Message, "expands the file by more than 16 MiB") {
		t.Fatalf("Parse(alias bomb) = %v; want one expansion problem", err)
	}
}

func TestValidationErrorIsBounded(t *testing.T) {
	var problems []Problem
	for i := 0; i < 25; i++ {
		problems = append(problems, Problem{CaseIndex: i, Path: "p", Message: "bad"})
	}
	msg := (&ValidationError{Problems: problems}).Error()
	if !strings.HasPrefix(msg, "invalid eval file: 25 problems: ") || !strings.HasSuffix(msg, "; ... and 5 more") ||
		strings.Count(msg, "p: bad") != 20 {
		t.Errorf("Error() = %q", msg)
	}
	one := (&ValidationError{Problems: []Problem{{CaseIndex: 0, CaseID: "x", Path: "evalcases[0].id", Line: 3, Message: "bad"}}}).Error()
	if want := `invalid eval file: 1 problem: line 3: evalcases[0].id (case "x"): bad`; one != want {
		t.Errorf("Error() = %q, want %q", one, want)
	}
}

func TestDefaultEvaluators(t *testing.T) {
	const doc = `execution:
  evaluators: [{name: file-level, type: latency, threshold: 10}]
evalcases:
  - id: own
    input_messages: [{role: user, content: q}]
    evaluators: [{name: mine, type: cost, budget: 1}]
  - id: inherits
    input_messages: [{role: user, content: q}]
  - id: inherits-with-rubrics
    input_messages: [{role: user, content: q}]
    rubrics: [be right]
`
	defaults := []map[string]any{
		{"name": "spec-judge", "type": "code_judge", "script": "./judge.sh", "zeta": 1.0, "alpha": "x"},
		{"name": "spec-tokens", "type": "token_usage", "max_total": 100.0},
	}
	f, err := Parse([]byte(doc), WithDefaultEvaluators(defaults))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, c := range allCases(f) {
		got[c.ID] = viewCase(c).Evaluators
	}
	want := map[string][]string{
		"own":                   {"mine:cost"},
		"inherits":              {"spec-judge:code_judge", "spec-tokens:token_usage"},
		"inherits-with-rubrics": {"rubrics:llm_judge", "spec-judge:code_judge", "spec-tokens:token_usage"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("effective evaluators (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(json.RawMessage(`{"alpha":"x","zeta":1}`), f.DefaultEvaluators[0].CodeJudge.Config); diff != "" {
		t.Errorf("spec code_judge config (-want +got):\n%s", diff)
	}

	_, err = Parse([]byte(doc), WithDefaultEvaluators([]map[string]any{{"name": "x", "type": "llm"}}))
	var verr *ValidationError
	if !errors.As(err, &verr) {
		t.Fatalf("Parse() = %v, want a validation error", err)
	}
	wantProblems := []Problem{{CaseIndex: -1, Path: "judging.evaluators[0].type",
		Message: `unknown evaluator type "llm": must be one of code_judge, llm_judge, rubric, composite, tool_trajectory, field_accuracy, latency, cost, token_usage`}}
	if diff := cmp.Diff(wantProblems, verr.Problems); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

func TestValidID(t *testing.T) {
	tests := map[string]bool{
		"case-001": true, "A.b_c-9": true, "7": true, strings.Repeat("a", 128): true,
		"": false, "-a": false, ".hidden": false, "..": false, "a/b": false, "a b": false, "é": false,
		strings.Repeat("a", 129): false, "a:b": false,
	}
	for id, want := range tests {
		if got := ValidID(id); got != want {
			t.Errorf("ValidID(%q) = %v, want %v", id, got, want)
		}
	}
	// The hand-written check accepts exactly what idPattern does.
	rng := rand.New(rand.NewPCG(7, 8))
	alphabet := []byte("aZ09._-/ :é\x00\n")
	for range 20000 {
		b := make([]byte, rng.IntN(132))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
			if rng.IntN(4) > 0 {
				b[i] = "abcXYZ0189"[rng.IntN(10)]
			}
		}
		if id := string(b); ValidID(id) != idPattern.MatchString(id) {
			t.Fatalf("ValidID(%q) = %v, idPattern says %v", id, ValidID(id), idPattern.MatchString(id))
		}
	}
}

func TestSplitFieldPath(t *testing.T) {
	tests := []struct {
		path    string
		want    []string
		wantErr string
	}{
		{path: "a", want: []string{"a"}},
		{path: "invoice.items[0].amount", want: []string{"invoice", "items", "0", "amount"}},
		{path: "[2].x", want: []string{"2", "x"}},
		{path: "m[0][1]", want: []string{"m", "0", "1"}},
		{path: "a.0", want: []string{"a", "0"}},
		{path: "", wantErr: "the path is empty"},
		{path: "a.", wantErr: `path "a." ends with '.'`},
		{path: ".a", wantErr: `path ".a" has an empty key at offset 0`},
		{path: "a[x]", wantErr: `path "a[x]" has a non-numeric index [x]`},
		{path: "a[1", wantErr: `path "a[1" has an unclosed '['`},
		{path: "a]", wantErr: `path "a]" needs a '.' before "]"`},
		{path: "a[0]b", wantErr: `path "a[0]b" needs a '.' before "b"`},
		{path: "a.[0]", wantErr: `path "a.[0]" has an empty key before [0]`},
	}
	for _, tt := range tests {
		got, err := SplitFieldPath(tt.path)
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		if diff := cmp.Diff(tt.want, got); diff != "" || gotErr != tt.wantErr {
			t.Errorf("SplitFieldPath(%q) = %v, %q; want %v, %q", tt.path, got, gotErr, tt.want, tt.wantErr)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, name := range []string{"testdata/screening.yaml", "testdata/full.yaml"} {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("evalcases: [{id: a, input_messages: [{role: user, content: [{type: text, value: x}]}]}]"))
	hostile, err := os.ReadFile("suite42/testdata/hostile.eval.yaml") // the 4.42 reader's hostile suite
	if err != nil {
		f.Fatal(err)
	}
	f.Add(hostile)
	f.Add([]byte("tests:\n  - {id: a, input: [{role: user, content: [x, {type: image, value: p.png}]}], expected_output: [{a: 1}], assertions: [y]}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse(data)
		if err != nil {
			var verr *ValidationError
			if !errors.As(err, &verr) || len(verr.Problems) == 0 {
				t.Fatalf("Parse error is not a non-empty *ValidationError: %v", err)
			}
			return
		}
		seen := map[string]bool{}
		for _, c := range allCases(file) {
			if !ValidID(c.ID) || seen[c.ID] || len(c.InputMessages) == 0 {
				t.Fatalf("accepted invalid case %q", c.ID)
			}
			seen[c.ID] = true
			for _, m := range c.InputMessages {
				if m.Content.Raw != nil && !json.Valid(m.Content.Raw) {
					t.Fatalf("content is not valid JSON: %s", m.Content.Raw)
				}
			}
		}
	})
}
