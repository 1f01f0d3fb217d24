package suite42

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
)

// suiteName is where the test suites sit in their bundle.
const suiteName = "evals/suite.eval.yaml"

// bundleOf is a bundle holding text at suiteName and files (paths from the bundle's root).
func bundleOf(text string, files map[string]string) fstest.MapFS {
	fsys := fstest.MapFS{suiteName: {Data: []byte(text)}}
	for p, data := range files {
		fsys[p] = &fstest.MapFile{Data: []byte(data)}
	}
	return fsys
}

// parseSuite parses text as the suite at suiteName of a bundle with files.
func parseSuite(text string, files map[string]string, opts ...evalfile.ParseOption) (*evalfile.File, error) {
	return evalfile.Parse([]byte(text), append([]evalfile.ParseOption{evalfile.WithFiles(bundleOf(text, files), suiteName)}, opts...)...)
}

func mustParseSuite(t testing.TB, text string, files map[string]string, opts ...evalfile.ParseOption) *evalfile.File {
	t.Helper()
	f, err := parseSuite(text, files, opts...)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return f
}

// testView is a comparable projection of a 4.42 test.
type testView struct {
	ID, Criteria, Conversation string
	Form                       evalfile.InputForm
	Input, Expected            []string // role|kind|raw
	Evaluators                 []string // key:type:grader
	Source                     evalfile.EvaluatorSource
	Threshold                  string
	FailOnError                string
	Metadata                   string
}

func viewTest(c *evalfile.Case) testView {
	v := testView{ID: c.ID, Criteria: c.ExpectedOutcome, Conversation: c.ConversationID, Form: c.InputForm,
		Source: c.EvaluatorSource, Metadata: string(c.Metadata)}
	if c.Threshold != nil {
		v.Threshold = fmt.Sprint(*c.Threshold)
	}
	if c.FailOnError != nil {
		v.FailOnError = fmt.Sprint(*c.FailOnError)
	}
	msgs := func(ms []evalfile.Message) []string {
		var out []string
		for _, m := range ms {
			s := string(m.Role) + "|" + string(m.Content.Kind) + "|" + string(m.Content.Raw)
			if m.Name != "" {
				s += "|name=" + m.Name
			}
			for _, tc := range m.ToolCalls {
				s += "|" + tc.Tool
			}
			out = append(out, s)
		}
		return out
	}
	v.Input, v.Expected = msgs(c.InputMessages), msgs(c.ExpectedMessages)
	for _, e := range c.Evaluators {
		v.Evaluators = append(v.Evaluators, e.Key+":"+string(e.Type)+":"+e.Grader)
	}
	return v
}

func TestSuite42Format(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       evalfile.Format
	}{
		{"tests", "tests: [{id: a, input: hi, criteria: ok}]", evalfile.FormatSuite42},
		{"eval_cases", "eval_cases: [{id: a, input: hi, criteria: ok}]", evalfile.FormatSuite42},
		{"tests after eval_cases", "eval_cases: 7\ntests: [{id: a, input: hi, criteria: ok}]", evalfile.FormatSuite42},
		{"evalcases", "evalcases: [{id: a, input_messages: [{role: user, content: hi}]}]", evalfile.FormatV2},
		{"v2 schema wins", "$schema: agentv-eval-v2\ntests: [{id: x}]\nevalcases:\n  - id: a\n    input_messages: [{role: user, content: hi}]\n", evalfile.FormatV2},
		{"quoted key", "\"tests\":\n  - id: a\n    input: hi\n    criteria: ok\n", evalfile.FormatSuite42},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := evalfile.Parse([]byte(tc.text))
			if err != nil {
				t.Fatal(err)
			}
			if f.Format != tc.want {
				t.Errorf("Format = %q, want %q", f.Format, tc.want)
			}
			x, err := evalfile.Scan(strings.NewReader(tc.text))
			if err != nil {
				t.Fatal(err)
			}
			if x.Format != tc.want {
				t.Errorf("Scan Format = %q, want %q", x.Format, tc.want)
			}
		})
	}
}

func TestSuite42Mapping(t *testing.T) {
	one := 1.0
	_ = one
	for _, tc := range []struct {
		name  string
		text  string
		files map[string]string
		opts  []evalfile.ParseOption
		want  []testView
		// suite checks the File's suite-level fields.
		suite func(t *testing.T, f *evalfile.File)
	}{
		{
			name: "input forms",
			text: `tests:
  - id: text
    input: What is 2+2?
    criteria: Says 4.
  - id: object
    input: {zeta: 1, alpha: [2, 3]}
    criteria: Reads the object.
  - id: message
    input: {role: system, content: Be brief.}
    criteria: One message.
  - id: messages
    input:
      - role: system
        content: Be brief.
      - role: user
        content: ["plain", "", {type: text, value: typed}, {type: file, value: a.md}, {type: image, value: b.png}]
      - role: assistant
        content: Hello.
        tool_calls: [{tool: search, input: {q: x}}]
    criteria: Messages.
`,
			want: []testView{
				{ID: "text", Criteria: "Says 4.", Form: evalfile.InputText, Source: evalfile.SourceNone, Input: []string{`user|text|"What is 2+2?"`}},
				{ID: "object", Criteria: "Reads the object.", Form: evalfile.InputObject, Source: evalfile.SourceNone,
					Input: []string{`user|object|{"zeta":1,"alpha":[2,3]}`}},
				{ID: "message", Criteria: "One message.", Source: evalfile.SourceNone, Input: []string{`system|text|"Be brief."`}},
				{ID: "messages", Criteria: "Messages.", Source: evalfile.SourceNone, Input: []string{
					`system|text|"Be brief."`,
					`user|segments|[{"type":"text","value":"plain"},{"type":"text","value":"typed"},{"type":"file","value":"a.md"},{"type":"image","value":"b.png"}]`,
					`assistant|text|"Hello."|search`,
				}},
			},
		},
		{
			name: "suite input, input_files and skip_defaults",
			text: `input: You answer travel questions.
input_files: [guide.md]
tests:
  - id: merged
    input: When to go?
    criteria: Answers.
  - id: own-files
    input: Compare.
    input_files: [a.csv, b.csv]
    criteria: Compares.
  - id: skipped
    input: Currency?
    criteria: Answers.
    execution: {skip_defaults: true}
`,
			want: []testView{
				{ID: "merged", Criteria: "Answers.", Source: evalfile.SourceNone, Input: []string{
					`user|text|"You answer travel questions."`,
					`user|segments|[{"type":"file","value":"guide.md"},{"type":"text","value":"When to go?"}]`}},
				{ID: "own-files", Criteria: "Compares.", Source: evalfile.SourceNone, Input: []string{
					`user|text|"You answer travel questions."`,
					`user|segments|[{"type":"file","value":"a.csv"},{"type":"file","value":"b.csv"},{"type":"text","value":"Compare."}]`}},
				{ID: "skipped", Criteria: "Answers.", Form: evalfile.InputText, Source: evalfile.SourceNone, Input: []string{`user|text|"Currency?"`}},
			},
		},
		{
			name: "vars",
			text: `input: "Topic: {{ topic }}"
tests:
  - id: vars
    vars:
      topic: geography
      q: What is the capital of France?
      answer: {city: Paris, rank: 1}
      n: 3
      quote: 'say "hi" <b>'
    criteria: "Answers {{q}} in {{ n }} words, not {{missing}}; {{ answer.city }}"
    input: "{{ q }} / {{quote}} / {{answer}} / {{ answer.rank }}"
    expected_output: "{{ answer }}"
    input_files: ["{{ topic }}.md"]
  - id: list
    vars: {q: "Why?"}
    input: [{role: user, content: ["{{ q }}", {type: text, value: "{{q}}!"}]}]
    criteria: c
`,
			want: []testView{
				{ID: "vars", Criteria: "Answers What is the capital of France? in 3 words, not {{missing}}; Paris", Source: evalfile.SourceNone,
					Input: []string{`user|text|"Topic: geography"`,
						`user|segments|[{"type":"file","value":"geography.md"},{"type":"text","value":"What is the capital of France? / say \"hi\" \u003cb\u003e / {\"city\":\"Paris\",\"rank\":1} / 1"}]`},
					Expected: []string{`assistant|object|{"city":"Paris","rank":1}`},
				},
				{ID: "list", Criteria: "c", Source: evalfile.SourceNone, Input: []string{`user|text|"Topic: {{ topic }}"`,
					`user|segments|[{"type":"text","value":"Why?"},{"type":"text","value":"Why?!"}]`}},
			},
		},
		{
			name: "expected_output forms",
			text: `tests:
  - {id: s, input: q, expected_output: The answer.}
  - {id: o, input: q, expected_output: {decision: CLEAR}}
  - {id: m, input: q, expected_output: [{role: assistant, name: bot, content: [x, {type: file, value: ref.md}]}, {role: assistant, tool_calls: [{tool: lookup}]}]}
  - {id: l, input: q, expected_output: [{decision: A}, {decision: B}]}
  - {id: one, input: q, expected_output: {role: assistant, content: Done.}}
`,
			want: []testView{
				{ID: "s", Form: evalfile.InputText, Source: evalfile.SourceNone, Input: []string{`user|text|"q"`}, Expected: []string{`assistant|text|"The answer."`}},
				{ID: "o", Form: evalfile.InputText, Source: evalfile.SourceNone, Input: []string{`user|text|"q"`}, Expected: []string{`assistant|object|{"decision":"CLEAR"}`}},
				{ID: "m", Form: evalfile.InputText, Source: evalfile.SourceNone, Input: []string{`user|text|"q"`}, Expected: []string{
					`assistant|segments|[{"type":"text","value":"x"},{"type":"file","value":"ref.md"}]|name=bot`,
					`assistant|||lookup`}},
				{ID: "l", Form: evalfile.InputText, Source: evalfile.SourceNone, Input: []string{`user|text|"q"`}, Expected: []string{`assistant|list|[{"decision":"A"},{"decision":"B"}]`}},
				{ID: "one", Form: evalfile.InputText, Source: evalfile.SourceNone, Input: []string{`user|text|"q"`}, Expected: []string{`assistant|text|"Done."`}},
			},
		},
		{
			name: "execution, metadata, conversation_id and the deprecated expected_outcome",
			text: `name: travel
metadata: {team: eval, tags: [a, b], owner: {name: x, mail: y}}
governance: {risk: low}
execution: {threshold: 0.7, fail_on_error: true, target: runner}
tests:
  - id: t
    conversation_id: trip-1
    expected_outcome: Old criteria.
    input: q
    metadata: {tags: [b, c], owner: {name: z}, team: own}
    execution: {threshold: 0.9, failOnError: false}
`,
			want: []testView{{ID: "t", Criteria: "Old criteria.", Conversation: "trip-1", Form: evalfile.InputText, Source: evalfile.SourceNone,
				Input: []string{`user|text|"q"`}, Threshold: "0.9", FailOnError: "false",
				Metadata: `{"tags":["a","b","c"],"owner":{"name":"z","mail":"y"},"team":"own","governance":{"risk":"low"}}`}},
			suite: checkSuiteExecutionMetadata,
		},
		{
			name: "assertions: strings grouped, suite appended, skip_defaults, names made unique",
			text: `assertions:
  - Is polite.
  - {type: contains, value: thanks}
tests:
  - id: inherits
    input: q
    criteria: c
  - id: own
    input: q
    assertions:
      - Is short.
      - {type: is-json}
      - Is correct.
      - {type: contains, value: thanks}
  - id: skip
    input: q
    assertions: [{name: mine, type: equals, value: x}]
    execution: {skip_defaults: true}
  - id: none
    input: q
    criteria: c
    execution: {skip_defaults: true}
`,
			want: []testView{
				{ID: "inherits", Criteria: "c", Form: evalfile.InputText, Source: evalfile.SourceFile, Input: []string{`user|text|"q"`},
					Evaluators: []string{"rubrics:llm_judge:llm-grader", "contains-thanks:contains:contains"}},
				{ID: "own", Form: evalfile.InputText, Source: evalfile.SourceCase, Input: []string{`user|text|"q"`},
					Evaluators: []string{"rubrics:llm_judge:llm-grader", "is-json:is_json:is-json", "contains-thanks:contains:contains",
						"rubrics-2:llm_judge:llm-grader", "contains-thanks-2:contains:contains"}},
				{ID: "skip", Form: evalfile.InputText, Source: evalfile.SourceCase, Input: []string{`user|text|"q"`},
					Evaluators: []string{"mine:equals:equals"}},
				{ID: "none", Criteria: "c", Form: evalfile.InputText, Source: evalfile.SourceCase, Input: []string{`user|text|"q"`}},
			},
			suite: checkSuiteAssertions,
		},
		{
			name: "the EvalRun's judging.evaluators replace the suite's for tests without their own",
			text: `assertions: [{name: suite, type: contains, value: x}]
tests:
  - {id: a, input: q, criteria: c}
  - {id: b, input: q, assertions: [{name: own, type: regex, value: "^x", flags: i}]}
`,
			opts: []evalfile.ParseOption{evalfile.WithDefaultEvaluators([]map[string]any{{"name": "spec", "type": "latency", "threshold": 100}})},
			want: []testView{
				{ID: "a", Criteria: "c", Form: evalfile.InputText, Source: evalfile.SourceJudging, Input: []string{`user|text|"q"`},
					Evaluators: []string{"spec:latency:"}},
				{ID: "b", Form: evalfile.InputText, Source: evalfile.SourceCase, Input: []string{`user|text|"q"`},
					Evaluators: []string{"own:regex:regex", "suite:contains:contains"}},
			},
		},
		{
			name: "deprecated aliases",
			text: `target: legacy
assert: [{name: root, type: contains, value: x}]
eval_cases:
  - id: assert
    input: q
    assert: [{name: a, type: code_grader, script: ./check.sh, required: 0.6}]
  - id: exec-evaluators
    input: q
    criteria: c
    execution: {evaluators: [{name: e, type: rubric, rubrics: [{outcome: o, required_min_score: 7}]}]}
  - id: evaluators
    input: q
    criteria: c
    evaluators: [{name: t, type: tool_trajectory, mode: any_order, minimums: {search: 1}}]
    rubrics: [Is kind.]
`,
			want: []testView{
				{ID: "assert", Form: evalfile.InputText, Source: evalfile.SourceCase, Input: []string{`user|text|"q"`},
					Evaluators: []string{"a:code_judge:code-grader", "root:contains:contains"}},
				{ID: "exec-evaluators", Criteria: "c", Form: evalfile.InputText, Source: evalfile.SourceCase, Input: []string{`user|text|"q"`},
					Evaluators: []string{"e:llm_judge:llm-grader", "root:contains:contains"}},
				{ID: "evaluators", Criteria: "c", Form: evalfile.InputText, Source: evalfile.SourceCase, Input: []string{`user|text|"q"`},
					Evaluators: []string{"rubrics:llm_judge:llm-grader", "t:tool_trajectory:tool-trajectory", "root:contains:contains"}},
			},
			suite: checkSuiteDeprecatedAliases,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := mustParseSuite(t, tc.text, tc.files, tc.opts...)
			if f.Format != evalfile.FormatSuite42 {
				t.Fatalf("Format = %q", f.Format)
			}
			var got []testView
			for i := range f.NumCases() {
				got = append(got, viewTest(f.CaseAt(i)))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("tests (-want +got):\n%s", diff)
			}
			if tc.suite != nil {
				tc.suite(t, f)
			}
		})
	}
}

// checkSuiteExecutionMetadata checks the suite-level fields and the warning of TestSuite42Mapping's "execution,
// metadata, conversation_id and the deprecated expected_outcome".
func checkSuiteExecutionMetadata(t *testing.T, f *evalfile.File) {
	t.Helper()
	s := f.Suite
	if s.Name != "travel" || *s.Threshold != 0.7 || !*s.FailOnError || f.Target != "runner" ||
		string(s.Metadata) != `{"team":"eval","tags":["a","b"],"owner":{"name":"x","mail":"y"},"governance":{"risk":"low"}}` {
		t.Errorf("suite fields: %+v target %q metadata %s", s, f.Target, s.Metadata)
	}
	if len(f.Warnings) != 1 || !strings.Contains(f.Warnings[0].Message, "expected_outcome is deprecated") || f.Warnings[0].Line != 8 {
		t.Errorf("warnings: %v", f.Warnings)
	}
}

// checkSuiteAssertions checks the grouped strings, SharedEvaluators and LightCase of TestSuite42Mapping's
// "assertions: strings grouped, suite appended, skip_defaults, names made unique".
func checkSuiteAssertions(t *testing.T, f *evalfile.File) {
	t.Helper()
	if f.SharedEvaluators() {
		t.Errorf("SharedEvaluators is true with tests of their own")
	}
	own := f.CaseAt(1)
	if w := own.Evaluators[0].Weight; w == nil || *w != 2 || len(own.Evaluators[0].LLMJudge.Rubrics) != 2 {
		t.Errorf("the grouped strings: %+v", own.Evaluators[0])
	}
	if c, ok := f.LightCase(0); !ok || len(c.Evaluators) != 2 || c.EvaluatorSource != evalfile.SourceFile {
		t.Errorf("LightCase(0) = %+v, %v", c, ok)
	}
}

// checkSuiteDeprecatedAliases checks the target, the tests key, the deprecated forms read and the warnings of
// TestSuite42Mapping's "deprecated aliases".
func checkSuiteDeprecatedAliases(t *testing.T, f *evalfile.File) {
	t.Helper()
	if f.Target != "legacy" || f.Suite.TestsKey != "eval_cases" {
		t.Errorf("target %q key %q", f.Target, f.Suite.TestsKey)
	}
	a := f.CaseAt(0).Evaluators[0]
	if !a.Required || a.MinScore == nil || *a.MinScore != 0.6 || a.CodeJudge.Script != "./check.sh" {
		t.Errorf("code_grader with script and required: 0.6: %+v %+v", a, a.CodeJudge)
	}
	e := f.CaseAt(1).Evaluators[0].LLMJudge.Rubrics[0]
	if e.MinScore == nil || *e.MinScore != 0.7 {
		t.Errorf("required_min_score 7: %+v", e)
	}
	var msgs []string
	for _, w := range f.Warnings {
		msgs = append(msgs, fmt.Sprintf("%d %s", w.Line, w.Path))
	}
	want := []string{"1 target", "2 assert", "3 eval_cases", "6 eval_cases[0].assert",
		"6 eval_cases[0].assert[0].required", "6 eval_cases[0].assert[0].script",
		"10 eval_cases[1].execution.evaluators", "10 eval_cases[1].execution.evaluators[0].type",
		"10 eval_cases[1].execution.evaluators[0].rubrics[0].required_min_score",
		"15 eval_cases[2].rubrics", "14 eval_cases[2].evaluators"}
	if diff := cmp.Diff(want, msgs); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
}

// exampleBundle is the bundle of an AgentV example copied under testdata/agentv442: the example's directory.
func exampleBundle(t testing.TB, example string) (data []byte, opt evalfile.ParseOption) {
	t.Helper()
	root := filepath.Join("testdata", "agentv442", example)
	data, err := os.ReadFile(filepath.Join(root, "evals", "dataset.eval.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return data, evalfile.WithFiles(os.DirFS(root), "evals/dataset.eval.yaml")
}

// TestSuite42Examples parses AgentV 4.42.4's own example suites (testdata/agentv442, with AgentV's notice): the
// ones the operator supports read to their tests as AgentV reads them; the others are refused naming the key.
func TestSuite42Examples(t *testing.T) {
	type example struct {
		ids        []string
		evaluators map[string][]string // id -> key:type:grader, for the tests listed
		inputs     map[string][]string // id -> role|kind|raw, for the tests listed
		refused    []string            // line path of each problem
	}
	for name, want := range map[string]example{
		"basic": {
			ids: []string{"code-review-javascript", "code-gen-python-comprehensive", "feature-proposal-brainstorm",
				"coding-multiturn-debug-session", "shorthand-string-example", "shorthand-structured-output", "shorthand-array-syntax"},
			evaluators: map[string][]string{"code-gen-python-comprehensive": {"keyword_check:code_judge:code-grader",
				"code_correctness:llm_judge:llm-grader"}},
			inputs: map[string][]string{"shorthand-string-example": {`user|text|"What is 2+2?"`}},
		},
		"basic-jsonl": {
			ids: []string{"code-review-javascript", "code-gen-python", "feature-proposal-brainstorm", "multiturn-debug-session",
				"shorthand-string-example", "shorthand-structured-output", "shorthand-array-syntax"},
		},
		"test-vars-templating": {
			ids: []string{"capital-france", "greet-ada"},
			inputs: map[string][]string{"greet-ada": {`system|text|"You are a concise assistant answering etiquette questions."`,
				`user|text|"Say hello to Ada."`}},
		},
		"suite-level-input": {
			ids: []string{"japan-spring", "iceland-northern-lights", "skip-suite-input"},
			inputs: map[string][]string{
				"japan-spring":     {`user|segments|[{"type":"file","value":"./system-prompt.md"}]`, `user|text|"When is the best time to visit Japan?"`},
				"skip-suite-input": {`user|text|"What currency does Thailand use?"`}},
		},
		"suite-level-input-files": {
			ids: []string{"japan-spring", "iceland-northern-lights", "skip-suite-defaults"},
		},
		"external-datasets": {
			ids: []string{"inline-test", "accuracy-basic-math", "accuracy-capital", "regression-greeting", "regression-farewell"},
		},
		"default-graders": {
			ids: []string{"greeting", "with-custom-eval", "skip-defaults"},
			evaluators: map[string][]string{
				"greeting":         {"rubrics:llm_judge:llm-grader"},
				"with-custom-eval": {"helpfulness:llm_judge:llm-grader", "rubrics:llm_judge:llm-grader"},
				"skip-defaults":    {"urgency_check:llm_judge:llm-grader"}},
		},
		"composite": {
			ids:        []string{"weighted-average-example", "code-grader-safety-gate", "llm-grader-conflict-resolution", "nested-composite"},
			evaluators: map[string][]string{"weighted-average-example": {"release_gate:composite:composite"}},
		},
		"deterministic-graders": {
			ids: []string{"contains-basic", "regex-email", "equals-exact", "starts-with-prefix", "is-json-valid",
				"multi-assertion", "required-gate"},
		},
		"batch-cli": {
			ids: []string{"aml-001", "aml-002", "aml-003", "aml-004-not-exist"},
			evaluators: map[string][]string{"aml-001": {"decision-check:code_judge:code-grader",
				"tool-trajectory-check:tool_trajectory:tool-trajectory"}},
		},
		"rubric": {
			ids: []string{"code-explanation-simple", "technical-writing-detailed", "code-quality-multi-eval",
				"summary-task", "summary-multi-criteria-score-ranges-proposed"},
		},
		"tool-trajectory-simple": {
			ids: []string{"any-order-pass", "in-order-pass", "exact-auth-flow", "metrics-check", "partial-match",
				"exact-args-match", "skip-args-validation", "superset-mode", "subset-mode", "mixed-args-match",
				"field-list-match"},
		},
		"trials":            {refused: []string{"12 execution.trials.cost_limit_usd"}},
		"env-interpolation": {refused: []string{"13 description", "23 tests[0].expected_output", "30 tests[1].input[0].content"}},
	} {
		t.Run(name, func(t *testing.T) {
			data, opt := exampleBundle(t, name)
			f, err := evalfile.Parse(data, opt)
			if want.refused != nil {
				var verr *evalfile.ValidationError
				if !errors.As(err, &verr) {
					t.Fatalf("Parse = %v, want refused", err)
				}
				var got []string
				for _, p := range verr.Problems {
					got = append(got, fmt.Sprintf("%d %s", p.Line, p.Path))
				}
				if diff := cmp.Diff(want.refused, got); diff != "" {
					t.Errorf("problems (-want +got):\n%s\n%v", diff, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want.ids, f.CaseIDs()); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
			for id, evs := range want.evaluators {
				if diff := cmp.Diff(evs, viewTest(f.Case(id)).Evaluators); diff != "" {
					t.Errorf("%s evaluators (-want +got):\n%s", id, diff)
				}
			}
			for id, in := range want.inputs {
				if diff := cmp.Diff(in, viewTest(f.Case(id)).Input); diff != "" {
					t.Errorf("%s input (-want +got):\n%s", id, diff)
				}
			}
			checkSuiteView(t, data, opt)
		})
	}
}

// TestSuite42ExamplesRefusedWithoutFiles: a suite whose tests are in other files names the key that needs them when
// Parse has no files.
func TestSuite42ExamplesRefusedWithoutFiles(t *testing.T) {
	data, _ := exampleBundle(t, "suite-level-input")
	_, err := evalfile.Parse(data)
	var verr *evalfile.ValidationError
	if !errors.As(err, &verr) || len(verr.Problems) != 1 || verr.Problems[0].Path != "tests" || verr.Problems[0].Line != 21 ||
		!strings.Contains(verr.Problems[0].Message, "needs the suite's files") {
		t.Fatalf("Parse without files = %v", err)
	}
}
