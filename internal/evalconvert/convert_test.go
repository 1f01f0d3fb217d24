package evalconvert

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/evalrun-operator/evalrun-operator/internal/bundle"
	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil/v2files"
)

// TestConvert converts small v2 files and checks the suite written and the notes, each with its key and line.
func TestConvert(t *testing.T) {
	for _, tc := range []struct {
		name, v2 string
		// suite is the expected suite; notes the expected notes (String form).
		suite string
		notes []string
	}{{
		name: "shorthands, file-level evaluators, skip_defaults",
		v2: `$schema: agentv-eval-v2
description: d
execution:
  target: runner
  evaluators:
    - {name: lat, type: latency, threshold: 100}
evalcases:
  - id: a
    expected_outcome: says hi
    input_messages: [{role: user, content: hi}]
    expected_messages: [{role: assistant, content: {greeting: hi}}]
  - id: b
    outcome: says bye
    input_messages: [{role: system, content: s}, {role: user, content: bye}]
    evaluators:
      - {name: cost, type: cost, budget: 1}
`,
		suite: `description: d
execution:
  target: runner
assertions:
  - {name: lat, type: latency, threshold: 100}
tests:
  - id: a
    criteria: says hi
    input: hi
    expected_output: {greeting: hi}
  - id: b
    criteria: says bye
    input: [{role: system, content: s}, {role: user, content: bye}]
    assertions:
      - {name: cost, type: cost, budget: 1}
    execution:
      skip_defaults: true
`,
	}, {
		name: "llm_judge inline prompt renamed, extras under config, tool args superset",
		v2: `evalcases:
  - id: a
    input_messages: [{role: user, content: q, note: x}]
    execution:
      evaluators:
        - name: j
          type: llm_judge
          prompt: "Grade {{ candidate_answer }} against {{reference_answer}}; {{output_messages}}"
          required: true
        - name: t
          type: tool_trajectory
          mode: exact
          expected: [{tool: f, args: {x: 1}}, {tool: g, args: {}}]
`,
		suite: `tests:
  - id: a
    input: [{role: user, content: q}]
    assertions:
      - name: j
        type: llm-grader
        prompt: "Grade {{ output }} against {{expected_output}}; {{output_messages}}"
        config:
          required: true
      - name: t
        type: tool-trajectory
        mode: exact
        expected: [{tool: f, args: {x: 1}}, {tool: g}]
        args_match: superset
`,
		notes: []string{
			"3: evalcases[0].input_messages[0].note: note: dropped: the v2 reader ignores this key of a message",
			"7: evalcases[0].execution.evaluators[0]: note: an llm_judge becomes an llm-grader: AgentV 4.42 asks with its own prompts and reply schema, and the grader passes at 0.8 (the test at its threshold)",
			"8: evalcases[0].execution.evaluators[0].prompt: differs: {{output_messages}} has no AgentV 4.42 counterpart (4.42 fills expected_output, criteria, metadata, metadata_json, rubrics, rubrics_json, input, output, file_changes, tool_calls): the grader would see it as text",
		},
	}, {
		name: "a case judged by the file's evaluators alone, and one by nothing",
		v2: `execution:
  evaluators: [{name: c, type: code_judge, script: ./j.sh, cwd: judges, target: true}]
evalcases:
  - id: a
    input_messages: [{role: user, content: q}]
`,
		suite: `assertions: [{name: c, type: code-grader, command: ./j.sh, cwd: judges}]
tests:
  - id: a
    input: q
    assertions: [{name: c, type: code-grader, command: ./j.sh, cwd: judges}]
    execution:
      skip_defaults: true
`,
		notes: []string{
			`2: execution.evaluators[0].script: differs: a code_judge becomes a code-grader, whose command reads AgentV 4.42's stdin (output, criteria, expected_output, input, ... in snake_case) instead of v2's (candidate_answer, expected_outcome, reference_answer, question, ...), and whose reply may carry assertions instead of hits and misses: change the script "./j.sh" to read 4.42's fields (docs/judging.md, code-grader)`,
			"2: execution.evaluators[0].target: note: dropped: the operator's v2 judges ignore a code_judge's target (AgentV's LLM proxy), and AgentV 4.42 refuses a code-grader's",
			"4: evalcases[0]: note: the case has no expected outcome, expected messages or evaluators of its own, which AgentV 4.42 skips: the file-level evaluators are written as its assertions; when the EvalRun sets spec.judging.evaluators they no longer replace them for this test, as they do in the v2 file",
		},
	}, {
		name: "nothing to judge a case by: the 4.42 reader refuses the suite",
		v2: `evalcases:
  - id: a
    input_messages: [{role: user, content: q}]
`,
		suite: `tests:
  - id: a
    input: q
`,
		notes: []string{
			"2: evalcases[0]: note: a case without evaluators is judged by the implicit LLM judge, named llm-grader in its results (v2: llm_judge), unless the EvalRun sets spec.judging.evaluators",
			"2: evalcases[0]: differs: the case has no expected outcome, expected messages or evaluators, and the file none: AgentV 4.42 skips such a test (the v2 file judges it by spec.judging.evaluators, or the default llm_judge): give it criteria or assertions",
			"(converted suite):2: tests[0]: differs: AgentV 4.42's reader refuses the converted suite: the test has no criteria, expected_output or assertions, which AgentV 4.42 skips (it needs at least one of them)",
		},
	}, {
		name: "inline rubrics alone become the first assertion; composite defaults",
		v2: `dataset: Not A Name
evalcases:
  - id: a
    input_messages: [{role: user, content: q}]
    rubrics: [r1, {description: r2, weight: 2, score_ranges: []}]
  - id: b
    expected_outcome: o
    input_messages: [{role: user, content: q}]
    rubrics: [r1]
    evaluators:
      - name: comp
        type: composite
        evaluators: [{name: m, type: rubric, rubrics: [x]}]
`,
		suite: `tests:
  - id: a
    input: q
    assertions:
      - name: rubrics
        type: rubrics
        criteria: [r1, {outcome: r2, weight: 2}]
  - id: b
    criteria: o
    input: q
    rubrics: [r1]
    assertions:
      - name: comp
        type: composite
        assertions: [{name: m, type: rubrics, criteria: [x]}]
        aggregator:
          type: weighted_average
`,
		notes: []string{
			`1: dataset: note: dropped: AgentV 4.42 has no dataset key, and "Not A Name" cannot be the suite's name (1 to 64 lower-case letters, digits and '-', with a description of at most 1024 characters); the operator reads neither`,
			"5: evalcases[0].rubrics: note: written as the test's first assertion (AgentV 4.42 skips a test without criteria, expected output or assertions): when the EvalRun sets spec.judging.evaluators they no longer replace the file-level evaluators for this test, as they do in the v2 file",
			"5: evalcases[0].rubrics[1].score_ranges: note: dropped: the v2 judges ignore a rubric's score ranges (AgentV 4.42 would score by them)",
			"13: evalcases[1].evaluators[0].evaluators[0]: note: a rubric evaluator becomes a rubrics grader: AgentV 4.42 asks with its own checklist prompt",
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Convert([]byte(tc.v2), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.suite, string(res.Suite)); diff != "" {
				t.Errorf("suite (-want +got):\n%s", diff)
			}
			var notes []string
			for _, n := range res.Notes {
				notes = append(notes, n.String())
			}
			if diff := cmp.Diff(tc.notes, notes); diff != "" {
				t.Errorf("notes (-want +got):\n%s", diff)
			}
			wantDiffers := strings.Contains(strings.Join(tc.notes, "\n"), "differs:")
			if res.Differs() != wantDiffers {
				t.Errorf("Differs() = %v, want %v", res.Differs(), wantDiffers)
			}
		})
	}
}

// TestConvertPromptFileAndGuidelines reads the bundle: a prompt file's v2 variables, and an input file AgentV's
// config makes a guideline, are notes that differ, each at its own line.
func TestConvertPromptFileAndGuidelines(t *testing.T) {
	root := t.TempDir()
	write := func(p, s string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, p), []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(".agentv/config.yaml", "$schema: agentv-config-v2\nguideline_patterns: ['**/*.instructions.md']\n")
	write("prompts/j.md", "Grade it.\n\n{{ candidate_answer }}\n{{input}}\n")
	write("suite/style.instructions.md", "be nice")
	v2 := `evalcases:
  - id: a
    input_messages:
      - role: user
        content: [{type: file, value: style.instructions.md}, {type: text, value: q}]
    evaluators: [{name: j, type: llm_judge, prompt: ../prompts/j.md}]
`
	res, err := Convert([]byte(v2), Options{Bundle: bundle.Dir{Root: root, EvalFile: "suite/eval.yaml"}})
	if err != nil {
		t.Fatal(err)
	}
	var notes []string
	for _, n := range res.Notes {
		notes = append(notes, n.String())
	}
	want := []string{
		"5: evalcases[0].input_messages: note: input files: a v2 file's judges show them with their text unless the EvalRun sets spec.judging.inputFiles, a 4.42 suite's as references (as AgentV shows a CLI target): set spec.judging.inputFiles (Embed: as the v2 file was judged; Reference: as AgentV judges a CLI runner) to judge both alike",
		`5: evalcases[0].input_messages[0].content[0]: differs: the input file "style.instructions.md" matches a guideline pattern of .agentv/config.yaml: the v2 judges set it aside (AgentV v2.0.1's guidelines); AgentV 4.42 has no guideline patterns and shows the file to its judges`,
		"6: evalcases[0].evaluators[0]: note: an llm_judge becomes an llm-grader: AgentV 4.42 asks with its own prompts and reply schema, and the grader passes at 0.8 (the test at its threshold)",
		"prompts/j.md:3: evalcases[0].evaluators[0].prompt: differs: {{candidate_answer}} is AgentV v2's variable; AgentV 4.42 fills {{output}} with the same part of the case: rename it in the file",
		"prompts/j.md:4: evalcases[0].evaluators[0].prompt: differs: {{input}} is text to the v2 judges, and AgentV 4.42 fills it",
	}
	if diff := cmp.Diff(want, notes); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
	if !strings.Contains(string(res.Suite), "file://../prompts/j.md") {
		t.Errorf("the prompt file is not a file:// prompt:\n%s", res.Suite)
	}
}

// TestConvertRefuses: an invalid v2 file is the v2 reader's error with its lines; a 4.42 suite is ErrNotV2.
func TestConvertRefuses(t *testing.T) {
	_, err := Convert([]byte("evalcases:\n  - id: a\n"), Options{})
	var ve *evalfile.ValidationError
	if !errors.As(err, &ve) || !strings.Contains(err.Error(), "input_messages") {
		t.Errorf("an invalid v2 file: %v", err)
	}
	_, err = Convert([]byte("tests:\n  - id: a\n    input: q\n    criteria: c\n"), Options{})
	if !errors.Is(err, ErrNotV2) {
		t.Errorf("a 4.42 suite: %v, want ErrNotV2", err)
	}
}

// FuzzConvert converts any v2 file the v2 reader accepts: never a panic, and a suite the 4.42 reader refuses is
// always announced by a note that differs.
func FuzzConvert(f *testing.F) {
	for _, vf := range v2files.All(f) {
		f.Add(vf.Data)
	}
	f.Add([]byte("evalcases:\n  - &c {id: a, input_messages: [{role: user}], rubrics: [x]}\n  - {<<: *c, id: b}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := Convert(data, Options{})
		if err != nil {
			return
		}
		if _, perr := evalfile.Parse(res.Suite); perr != nil && !res.Differs() {
			t.Fatalf("the 4.42 reader refuses the suite and no note says so: %v\n%s", perr, res.Suite)
		}
	})
}
