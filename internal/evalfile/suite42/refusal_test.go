package suite42

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
)

// wantProblem is a problem a refusal must report: where (file, line, path) and words of its message.
type wantProblem struct {
	File     string
	Line     int
	Path     string
	Contains string
}

// problemsOf returns err's problems as wantProblems, each with the want's Contains when its message holds it (so
// that a diff shows the message that does not).
func problemsOf(t *testing.T, err error, want []wantProblem) []wantProblem {
	t.Helper()
	var verr *evalfile.ValidationError
	if !errors.As(err, &verr) {
		t.Fatalf("the error is not a *ValidationError: %v", err)
	}
	var got []wantProblem
	for i, p := range verr.Problems {
		g := wantProblem{File: p.File, Line: p.Line, Path: p.Path, Contains: p.Message}
		if i < len(want) && strings.Contains(p.Message, want[i].Contains) {
			g.Contains = want[i].Contains
		}
		got = append(got, g)
	}
	return got
}

// refusals are suites AgentV 4.42 reads (or skips parts of) that the operator refuses, with the problems that say
// where and why.
var refusals = []struct {
	name  string
	text  string
	files map[string]string
	want  []wantProblem
}{
	{name: "workspace", text: "workspace:\n  template: ./ws\ntests: [{id: a, input: q, criteria: c}]\n",
		want: []wantProblem{{Line: 1, Path: "workspace", Contains: "not supported: a workspace"}}},
	{name: "workspace of a test", text: "tests:\n  - id: a\n    input: q\n    criteria: c\n    workspace: {hooks: {before_all: {command: [sh]}}}\n",
		want: []wantProblem{{Line: 5, Path: "tests[0].workspace", Contains: "hooks"}}},
	{name: "a case directory's workspace", text: "tests: ./cases\n",
		files: map[string]string{"evals/cases/one/case.yaml": "input: q\ncriteria: c\n", "evals/cases/one/workspace/f.txt": "x"},
		want:  []wantProblem{{File: "evals/cases/one/case.yaml", Line: 1, Path: "tests[0]", Contains: "workspace directory"}}},
	{name: "suite preprocessors", text: "preprocessors: [{type: xlsx, command: [conv]}]\ntests: [{id: a, input: q, criteria: c}]\n",
		want: []wantProblem{{Line: 1, Path: "preprocessors", Contains: "preprocessors run commands"}}},
	{name: "grader preprocessors", text: "tests:\n  - id: a\n    input: q\n    assertions:\n      - type: llm-grader\n        preprocessors: [{type: x, command: [c]}]\n",
		want: []wantProblem{{Line: 6, Path: "tests[0].assertions[0].preprocessors", Contains: "preprocessors"}}},
	{name: "a top-level evaluators list", text: "evaluators: [{type: is-json}]\ntests: [{id: a, input: q, criteria: c}]\n",
		want: []wantProblem{{Line: 1, Path: "evaluators", Contains: "does not read a top-level evaluators"}}},
	{name: "tests and evalcases", text: "tests: [{id: a, input: q, criteria: c}]\nevalcases: [{id: b}]\n",
		want: []wantProblem{{Line: 2, Path: "evalcases", Contains: "keep one of them"}}},
	{name: "conversation mode", text: "tests:\n  - id: a\n    criteria: c\n    input: q\n    mode: conversation\n    turns: [{input: hi}]\n    aggregation: mean\n    on_turn_failure: stop\n    window_size: 2\n",
		want: []wantProblem{{Line: 5, Path: "tests[0].mode", Contains: "conversation mode"}, {Line: 6, Path: "tests[0].turns", Contains: "conversation mode"},
			{Line: 7, Path: "tests[0].aggregation", Contains: "turns"}, {Line: 8, Path: "tests[0].on_turn_failure", Contains: "turns"},
			{Line: 9, Path: "tests[0].window_size", Contains: "turns"}}},
	{name: "depends_on", text: "tests:\n  - {id: a, input: q, criteria: c}\n  - id: b\n    input: q\n    criteria: c\n    depends_on: [a]\n    on_dependency_failure: skip\n",
		want: []wantProblem{{Line: 6, Path: "tests[1].depends_on", Contains: "depends on others"}, {Line: 7, Path: "tests[1].on_dependency_failure", Contains: "depends_on"}}},
	{name: "a matrix of targets", text: "execution:\n  targets: [a, b]\ntests: [{id: a, input: q, criteria: c}]\n",
		want: []wantProblem{{Line: 2, Path: "execution.targets[0]", Contains: "names 2 targets"}}},
	{name: "a target with hooks", text: "execution:\n  targets:\n    - {name: a, hooks: {before_each: {command: x}}}\ntests: [{id: a, input: q, criteria: c}]\n",
		want: []wantProblem{{Line: 3, Path: "execution.targets[0]", Contains: "hooks"}}},
	{name: "a test on another target", text: "execution: {target: runner}\ntests:\n  - id: a\n    input: q\n    criteria: c\n    execution:\n      targets: [other]\n",
		want: []wantProblem{{Line: 7, Path: "tests[0].execution.targets[0]", Contains: `target "other" is not the suite's target "runner"`}}},
	{name: "a code-grader's target", text: "tests:\n  - id: a\n    input: q\n    assertions:\n      - type: code-grader\n        command: [./g.sh]\n        target: {max_calls: 3}\n",
		want: []wantProblem{{Line: 7, Path: "tests[0].assertions[0].target", Contains: "proxy"}}},
	{name: "an llm-grader's target", text: "tests:\n  - id: a\n    input: q\n    assertions:\n      - {type: llm-grader, target: gpt}\n",
		want: []wantProblem{{Line: 5, Path: "tests[0].assertions[0].target", Contains: "judging model"}}},
	{name: "a custom grader type", text: "tests:\n  - id: a\n    input: q\n    assertions:\n      - {type: word-count, max: 3}\n",
		want: []wantProblem{{Line: 5, Path: "tests[0].assertions[0].type", Contains: ".agentv/assertions"}}},
	{name: "inline-assert", text: "tests:\n  - id: a\n    input: q\n    assertions: [{type: inline-assert}]\n",
		want: []wantProblem{{Line: 4, Path: "tests[0].assertions[0].type", Contains: "TypeScript"}}},
	{name: "v2 grader types", text: "tests:\n  - id: a\n    input: q\n    assertions:\n      - {name: x, type: code_judge, script: ./x}\n      - {name: y, type: llm-judge}\n",
		want: []wantProblem{{Line: 5, Path: "tests[0].assertions[0].type", Contains: "write code-grader"},
			{Line: 6, Path: "tests[0].assertions[1].type", Contains: "write llm-grader"}}},
	{name: "trials", text: "execution:\n  trials: {count: 3, strategy: mean}\ntests:\n  - id: a\n    input: q\n    criteria: c\n    execution: {trials: {count: 2}}\n",
		want: []wantProblem{{Line: 2, Path: "execution.trials.strategy", Contains: "strategy mean decides a test by an aggregate"},
			{Line: 7, Path: "tests[0].execution.trials", Contains: "at the suite level only"}}},
	{name: "environment interpolation", text: "description: ${{ HOME }}\ntests:\n  - id: a\n    input: [{role: user, content: 'key ${{API_KEY}}'}]\n    criteria: c\n  - file://more.jsonl\n",
		files: map[string]string{"evals/more.jsonl": `{"id": "b", "input": "${{ SECRET }}", "criteria": "c"}`},
		want: []wantProblem{{Line: 1, Path: "description", Contains: "${{ HOME }}"},
			{Line: 4, Path: "tests[0].input[0].content", Contains: "${{ API_KEY }}"},
			{File: "evals/more.jsonl", Line: 1, Path: "tests[1].input", Contains: "${{ SECRET }}"}}},
	{name: "environment interpolation in a template", text: "tests:\n  - id: a\n    input: q\n    assertions: [{include: t}]\n",
		files: map[string]string{".agentv/templates/t.yaml": "assertions:\n  - {type: contains, value: '${{ TOKEN }}'}\n"},
		want:  []wantProblem{{File: ".agentv/templates/t.yaml", Line: 2, Path: "assertions[0].value", Contains: "${{ TOKEN }}"}}},
	{name: "budgets", text: "execution:\n  budget_usd: 5\n  total_budget_usd: 5\ntests: [{id: a, input: q, criteria: c}]\n",
		want: []wantProblem{{Line: 2, Path: "execution.budget_usd", Contains: "cost budget"}, {Line: 3, Path: "execution.total_budget_usd", Contains: "renamed"}}},
	{name: "a prompt script", text: "tests:\n  - id: a\n    input: q\n    assertions:\n      - type: llm-grader\n        prompt: {command: [bun, p.ts]}\n",
		want: []wantProblem{{Line: 6, Path: "tests[0].assertions[0].prompt", Contains: "script"}}},
	{name: "v2 keys in a test", text: "tests:\n  - id: a\n    criteria: c\n    input_messages: [{role: user, content: q}]\n    expected_messages: [{role: assistant, content: x}]\n",
		want: []wantProblem{{Line: 4, Path: "tests[0].input_messages", Contains: "write input"},
			{Line: 5, Path: "tests[0].expected_messages", Contains: "write expected_output"}, {Line: 2, Path: "tests[0].input", Contains: "is required"}}},
	{name: "a test's execution.assertions", text: "tests:\n  - id: a\n    input: q\n    criteria: c\n    execution:\n      assertions: [{type: is-json}]\n",
		want: []wantProblem{{Line: 6, Path: "tests[0].execution.assertions", Contains: "does not read"}}},
	{name: "two lists of assertions", text: "assertions: [{type: is-json}]\nassert: [{type: is-json}]\ntests:\n  - {id: a, input: q, assertions: [x], assert: [y]}\n",
		want: []wantProblem{{Line: 2, Path: "assert", Contains: "reads only assertions"}, {Line: 4, Path: "tests[0].assert", Contains: "reads only tests[0].assertions"}}},
	{name: "a test with nothing to judge it by", text: "tests:\n  - id: a\n    input: q\n    evaluators: [{type: is-json}]\n",
		want: []wantProblem{{Line: 2, Path: "tests[0]", Contains: "no criteria, expected_output or assertions"}}},
	{name: "no input", text: "tests:\n  - {id: a, criteria: c}\n",
		want: []wantProblem{{Line: 2, Path: "tests[0].input", Contains: "is required"}}},
	{name: "input_files with a list input", text: "input_files: [a.md]\ntests:\n  - id: a\n    criteria: c\n    input: [{role: user, content: q}]\n",
		want: []wantProblem{{Line: 5, Path: "tests[0].input", Contains: "only with a string input"}}},
	{name: "a suite-level input AgentV drops, once", text: "input: [{role: narrator, content: x}]\ninput_files: {a: b}\ntests:\n  - {id: a, input: q, criteria: c}\n  - {id: b, input: q, criteria: c}\n",
		want: []wantProblem{{Line: 2, Path: "input_files", Contains: "non-empty list of file paths"},
			{Line: 1, Path: "input[0].role", Contains: "invalid role"}}},
	{name: "a default grader AgentV would use", text: "evaluator: code-grader\ntests:\n  - {id: a, input: q, criteria: c}\n",
		want: []wantProblem{{Line: 3, Path: "tests[0]", Contains: "llm-grader only"}}},
	{name: "composite members", text: "tests:\n  - id: a\n    input: q\n    assertions:\n      - name: all\n        type: composite\n        assertions:\n          - {type: is-json}\n          - {name: b, type: tool_trajectory, mode: any_order, minimums: {x: 1}}\n        aggregator: {type: weighted_average}\n",
		want: []wantProblem{{Line: 8, Path: "tests[0].assertions[0].assertions[0].name", Contains: "without a name"},
			{Line: 9, Path: "tests[0].assertions[0].assertions[1].type", Contains: "write tool-trajectory"}}},
	{name: "a composite without an aggregator", text: "tests:\n  - id: a\n    input: q\n    assertions:\n      - {name: c, type: composite, assertions: [{name: m, type: is-json}]}\n",
		want: []wantProblem{{Line: 5, Path: "tests[0].assertions[0].aggregator", Contains: "is required"}}},
	{name: "include depth", text: "tests:\n  - id: a\n    input: q\n    assertions: [{include: t1}]\n",
		files: map[string]string{".agentv/templates/t1.yaml": "assertions: [{include: t2}]", ".agentv/templates/t2.yaml": "assertions: [{include: t3}]",
			".agentv/templates/t3.yaml": "assertions: [{include: t4}]", ".agentv/templates/t4.yaml": "assertions: [{type: is-json}]"},
		want: []wantProblem{{File: ".agentv/templates/t3.yaml", Line: 1, Path: "assertions[0].include", Contains: "deeper than 3 templates (.agentv/templates/t1.yaml -> .agentv/templates/t2.yaml -> .agentv/templates/t3.yaml -> t4)"}}},
	{name: "include cycle", text: "tests:\n  - id: a\n    input: q\n    assertions: [{include: ./a.yaml}]\n",
		files: map[string]string{"evals/a.yaml": "assertions: [{include: ./b.yaml}]", "evals/b.yaml": "assertions: [{include: ./a.yaml}]"},
		want:  []wantProblem{{File: "evals/b.yaml", Line: 1, Path: "assertions[0].include", Contains: "evals/a.yaml -> evals/b.yaml -> evals/a.yaml"}}},
	{name: "include not found", text: "tests:\n  - id: a\n    input: q\n    assertions:\n      - include: missing\n",
		want: []wantProblem{{Line: 5, Path: "tests[0].assertions[0].include", Contains: "evals/.agentv/templates/missing.yaml, .agentv/templates/missing.yaml, evals/.agentv/templates/missing.yml"}}},
	{name: "include with other keys", text: "tests:\n  - id: a\n    input: q\n    assertions: [{include: t, weight: 2}]\n",
		want: []wantProblem{{Line: 4, Path: "tests[0].assertions[0]", Contains: "only the key include"}}},
	{name: "tests outside the bundle", text: "tests: ../../elsewhere.yaml\n",
		want: []wantProblem{{Line: 1, Path: "tests", Contains: "leads outside the eval bundle"}}},
	{name: "a tests file of another kind", text: "tests: ./cases.json\n", files: map[string]string{"evals/cases.json": "[]"},
		want: []wantProblem{{Line: 1, Path: "tests", Contains: `must be .yaml, .yml or .jsonl`}}},
	{name: "a missing tests file", text: "tests:\n  - id: a\n    input: q\n    criteria: c\n  - file://missing.yaml\n",
		want: []wantProblem{{Line: 5, Path: "tests[1]", Contains: "evals/missing.yaml is not in the eval bundle"}}},
	{name: "a bad JSONL line", text: "tests: ./t.jsonl\n", files: map[string]string{"evals/t.jsonl": "{\"id\": \"a\", \"input\": \"q\", \"criteria\": \"c\"}\n\n{\"id\": \"b\", \"input\": \"q\",}\n[1]\n{\"id\": \"c\", \"id\": \"d\", \"input\": \"q\", \"criteria\": \"c\"}\n"},
		want: []wantProblem{{File: "evals/t.jsonl", Line: 3, Path: "tests[1]", Contains: "not a JSON value"},
			{File: "evals/t.jsonl", Line: 4, Path: "tests[1]", Contains: "must be a JSON object"},
			{File: "evals/t.jsonl", Line: 5, Path: "tests[1].id", Contains: `key "id" is set twice`}}},
	{name: "a YAML tests file that is not a list", text: "tests: ./t.yaml\n", files: map[string]string{"evals/t.yaml": "id: a\n"},
		want: []wantProblem{{Line: 1, Path: "tests", Contains: "must be a YAML list of tests"}}},
	{name: "unsafe and duplicate ids", text: "tests:\n  - {id: a/b, input: q, criteria: c}\n  - {id: 7, input: q, criteria: c}\n  - {id: x, input: q, criteria: c}\n  - file://more.yaml\n",
		files: map[string]string{"evals/more.yaml": "- {id: x, input: q, criteria: c}\n"},
		want: []wantProblem{{Line: 2, Path: "tests[0].id", Contains: "not a safe id"}, {Line: 3, Path: "tests[1].id", Contains: "quote it"},
			{File: "evals/more.yaml", Line: 1, Path: "tests[3].id", Contains: `duplicate id "x": tests[2] has it too`}}},
	{name: "thresholds", text: "execution: {threshold: 2}\ntests:\n  - id: a\n    input: q\n    criteria: c\n    execution:\n      threshold: -0.1\n",
		want: []wantProblem{{Line: 1, Path: "execution.threshold", Contains: "from 0 to 1"}, {Line: 7, Path: "tests[0].execution.threshold", Contains: "from 0 to 1"}}},
	{name: "vars that are no mapping", text: "tests:\n  - {id: a, input: q, criteria: c, vars: [x]}\n",
		want: []wantProblem{{Line: 2, Path: "tests[0].vars", Contains: "must be a mapping"}}},
	{name: "metadata AgentV checks", text: "name: Not Valid\ndescription: ''\ntags: [1]\ntests: [{id: a, input: q, criteria: c}]\n",
		want: []wantProblem{{Line: 1, Path: "name", Contains: "lower-case"}, {Line: 2, Path: "description", Contains: "1 to 1024"},
			{Line: 3, Path: "tags[0]", Contains: "must be a string"}}},
	{name: "messages AgentV drops", text: "tests:\n  - id: a\n    criteria: c\n    input:\n      - {role: robot, content: q}\n      - {role: user}\n      - {role: user, content: [{type: audio, value: x}]}\n",
		want: []wantProblem{{Line: 5, Path: "tests[0].input[0].role", Contains: "invalid role"}, {Line: 6, Path: "tests[0].input[1].content", Contains: "is required"},
			{Line: 7, Path: "tests[0].input[2].content[0].type", Contains: "text, file or image"}}},
	{name: "score ranges AgentV refuses", text: "tests:\n  - id: a\n    input: q\n    assertions:\n      - type: rubrics\n        criteria:\n          - {outcome: o, score_ranges: [{score_range: [0, 5], outcome: low}, {score_range: [5, 10], outcome: high}]}\n          - {outcome: p, score_ranges: {2: bad, 8: good}}\n          - {id: q, score_ranges: [{score_range: [0, 9], outcome: most}]}\n",
		want: []wantProblem{{Line: 7, Path: "tests[0].assertions[0].criteria[0].score_ranges", Contains: "overlap"},
			{Line: 8, Path: "tests[0].assertions[0].criteria[1].score_ranges", Contains: "must start at 0"},
			{Line: 9, Path: "tests[0].assertions[0].criteria[2].score_ranges", Contains: "missing: 10"}}},
	{name: "graders AgentV skips", text: "tests:\n  - id: a\n    input: q\n    assertions:\n      - {type: contains}\n      - {type: contains-any, value: [a, 1]}\n      - {type: tool-trajectory, mode: sometimes}\n      - {type: execution-metrics, exploration_tolerance: 1}\n      - {type: skill-trigger, should_trigger: yes}\n      - {type: latency, threshold: -1}\n      - {type: code-grader}\n      - {name: w, type: is-json, weight: -1, min_score: 2, required: maybe, negate: 1}\n      - ''\n",
		want: []wantProblem{
			{Line: 13, Path: "tests[0].assertions[8]", Contains: "empty criterion"},
			{Line: 5, Path: "tests[0].assertions[0].value", Contains: "non-empty string"},
			{Line: 6, Path: "tests[0].assertions[1].value[1]", Contains: "must be a string"},
			{Line: 7, Path: "tests[0].assertions[2].mode", Contains: "unknown mode"},
			{Line: 8, Path: "tests[0].assertions[3]", Contains: "at least one of"},
			{Line: 9, Path: "tests[0].assertions[4].skill", Contains: "is required"},
			{Line: 9, Path: "tests[0].assertions[4].should_trigger", Contains: `got "yes"`},
			{Line: 10, Path: "tests[0].assertions[5].threshold", Contains: "must not be negative"},
			{Line: 11, Path: "tests[0].assertions[6].command", Contains: "is required"},
			{Line: 12, Path: "tests[0].assertions[7].weight", Contains: "must not be negative"},
			{Line: 12, Path: "tests[0].assertions[7].min_score", Contains: "above 0"},
			{Line: 12, Path: "tests[0].assertions[7].required", Contains: "true, false or a number"},
			{Line: 12, Path: "tests[0].assertions[7].negate", Contains: "true or false"}}},
	{name: "names written twice", text: "assertions: [{name: n, type: is-json}]\ntests:\n  - id: a\n    input: q\n    assertions:\n      - {name: n, type: is-json}\n      - {name: a/b, type: is-json}\n",
		want: []wantProblem{{Line: 7, Path: "tests[0].assertions[1].name", Contains: "must not contain '/'"},
			{Line: 6, Path: "tests[0].assertions", Contains: `evaluator name "n" is used more than once`}}},
}

func TestSuite42Refusals(t *testing.T) {
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseSuite(tc.text, tc.files)
			if err == nil {
				t.Fatal("Parse accepted the suite")
			}
			if diff := cmp.Diff(tc.want, problemsOf(t, err, tc.want)); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			// Every problem names its line.
			var verr *evalfile.ValidationError
			errors.As(err, &verr)
			for _, p := range verr.Problems {
				if p.Line == 0 {
					t.Errorf("a problem without a line: %s", p)
				}
			}
		})
	}
}

// TestSuite42Warnings: what AgentV 4.42 reads with a warning, or ignores, is read and warned about with its line.
func TestSuite42Warnings(t *testing.T) {
	text := `$schema: whatever
notes: free text
governance: [not, a, mapping]
execution:
  workers: 4
  cache: true
  skip_defaults: true
evaluator: llm_grader
tests:
  - id: a
    input: q
    criteria: c
    expected_outcome: older
    suite: other
    extra: 1
    evaluator: surprise
    execution: {target: x, workers: 2}
  - file://none/*.yaml
`
	f := mustParseSuite(t, text, nil)
	var got []string
	for _, w := range f.Warnings {
		got = append(got, w.String())
	}
	want := []string{
		`line 2: notes: unknown top-level key "notes": AgentV 4.42 ignores it`,
		"line 5: execution.workers: ignored: how many tests AgentV runs at once: the runner runs the whole batch",
		"line 6: execution.cache: ignored: AgentV's response cache: the operator always runs the runner",
		"line 7: execution.skip_defaults: ignored: AgentV reads skip_defaults per test, not at the suite level",
		"line 8: evaluator: evaluator is deprecated in AgentV 4.42: write assertions",
		"line 3: governance: ignored: AgentV 4.42 reads governance only as a mapping",
		`line 18: tests[1]: the glob "none/*.yaml" matches no file: AgentV 4.42 reads no test from it`,
		`line 14: tests[0].suite (case "a"): ignored: AgentV 4.42 names a test's suite after its file (or the suite's name), not this key`,
		`line 15: tests[0].extra (case "a"): unknown test key "extra": AgentV 4.42 ignores it`,
		`line 17: tests[0].execution.target (case "a"): ignored: AgentV 4.42 reads a test's target from execution.targets only`,
		"line 17: tests[0].execution.workers (case \"a\"): ignored: AgentV 4.42 reads it at the suite level only",
		`line 13: tests[0].expected_outcome (case "a"): ignored: criteria is set, which AgentV 4.42 reads instead`,
		`line 16: tests[0].evaluator (case "a"): ignored: AgentV 4.42 does not know the grader "surprise" and falls back`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
}

// The key tables are slices (keySpec): a key listed twice would be read by its first entry only, which a map
// literal refused when it was compiled.
func TestKeySpecsListEachKeyOnce(t *testing.T) {
	tables := map[string][]keySpec{"top-level": suiteKeySpecs, "execution": suiteExecutionSpecs, "test": testKeySpecs,
		"test execution": testExecutionSpecs}
	for name, specs := range tables {
		seen := map[string]bool{}
		for _, s := range specs {
			if seen[s.key] {
				t.Errorf("the %s keys list %q twice", name, s.key)
			}
			seen[s.key] = true
		}
	}
}
