package evalfile

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	yaml "go.yaml.in/yaml/v3"
)

// parseWholeTree is Parse without streaming the cases: the whole value tree is built first, then validated. It is
// the reference that Parse's streaming of evalcases must match exactly.
func parseWholeTree(data []byte, opts ...ParseOption) (*File, error) {
	var o parseOptions
	for _, opt := range opts {
		opt(&o)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil || len(bytes.TrimSpace(data)) == 0 {
		return Parse(data, opts...) // empty files and syntax errors never reach the tree
	}
	tb := &treeBuilder{expanding: map[*yaml.Node]bool{}}
	root := tb.build(&doc, nil, 0)
	if tb.tooLarge {
		return nil, &ValidationError{Problems: tb.problems}
	}
	p := &parser{}
	f := p.file(root, o)
	if problems := append(tb.problems, p.problems...); len(problems) > 0 {
		return nil, &ValidationError{Problems: problems}
	}
	f.Case("")
	return f, nil
}

func diffParses(t *testing.T, data []byte, opts ...ParseOption) string {
	t.Helper()
	want, wantErr := parseWholeTree(data, opts...)
	got, gotErr := Parse(data, opts...)
	var wantV, gotV *ValidationError
	errors.As(wantErr, &wantV)
	errors.As(gotErr, &gotV)
	if (wantErr == nil) != (gotErr == nil) {
		return "errors differ: want " + errString(wantErr) + ", got " + errString(gotErr)
	}
	return cmp.Diff(want, got, cmpopts.IgnoreUnexported(File{})) + cmp.Diff(wantV, gotV)
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

func TestParseStreamsCasesLikeTheWholeTree(t *testing.T) {
	deep := strings.Repeat("[", 300) + strings.Repeat("]", 300)
	tests := []struct {
		name   string
		doc    string
		stream bool
	}{
		{name: "header and cases", stream: true, doc: `$schema: agentv-eval-v2
description: d
execution:
  evaluators: &evs
    - {name: fast, type: latency, threshold: 10}
evalcases:
  - id: a
    input_messages: &msgs [{role: user, content: {b: 1, a: [x, 2.50, true, null]}}]
  - id: b
    input_messages: *msgs
    execution: {evaluators: *evs}
  - {id: c, input_messages: [{role: user, content: "x"}], rubrics: [be kind]}
`},
		{name: "problems in the header and in cases", stream: true, doc: `$schema: v1
execution: {evaluators: [{name: x, type: nope}], x: 1, x: 2}
evalcases:
  - id: a
    id: b
    input_messages: []
  - id: a
    input_messages: [{role: bot, content: 1, content: 2}]
  - 7
  - id: d
    input_messages: [{role: user, content: x}]
    weird: ` + deep + `
  - id: "a b"
    input_messages: [{role: user, content: [{type: file, value: ""}]}]
`},
		{name: "duplicate ids", stream: true, doc: "evalcases:\n- {id: a, input_messages: [{role: user, content: x}]}\n- {id: a, input_messages: [{role: user, content: y}]}\n"},
		{name: "alias loop in a case", stream: true, doc: "evalcases:\n- &c {id: a, input_messages: [{role: user, content: x}], self: [*c]}\n"},
		{name: "merge keys in a case", stream: true, doc: "evalcases:\n- &c {id: a, input_messages: [{role: user, content: x}]}\n- {<<: *c, id: b}\n"},
		{name: "cases expand past the limit", stream: true, doc: "evalcases:\n" + aliasBomb()},
		{name: "evalcases not last", doc: "evalcases: [{id: a, input_messages: [{role: user, content: x}]}]\ndescription: d\n"},
		{name: "evalcases twice", doc: "evalcases: [{id: a, input_messages: [{role: user, content: x}]}]\nevalcases: []\n"},
		{name: "merge key in the root", doc: "x: &x {description: d}\n<<: *x\nevalcases: [{id: a, input_messages: [{role: user, content: x}]}]\n"},
		{name: "evalcases empty", doc: "evalcases: []\n"},
		{name: "evalcases an alias", doc: "x: &c [{id: a, input_messages: [{role: user, content: x}]}]\nevalcases: *c\n"},
		{name: "evalcases a mapping", doc: "evalcases: {a: 1}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var doc yaml.Node
			if err := yaml.Unmarshal([]byte(tt.doc), &doc); err != nil {
				t.Fatal(err)
			}
			if got := streamableCases(&doc) != nil; got != tt.stream {
				t.Errorf("streamableCases() = %v, want %v", got, tt.stream)
			}
			if diff := diffParses(t, []byte(tt.doc), WithDefaultEvaluators([]map[string]any{{"name": "j", "type": "cost", "budget": 1.0}})); diff != "" {
				t.Errorf("Parse differs from the whole-tree parse:\n%s", diff)
			}
			if diff := diffParses(t, []byte(tt.doc)); diff != "" {
				t.Errorf("Parse differs from the whole-tree parse:\n%s", diff)
			}
		})
	}
	for _, name := range []string{"testdata/screening.yaml", "testdata/full.yaml"} {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if diff := diffParses(t, data); diff != "" {
			t.Errorf("%s: Parse differs from the whole-tree parse:\n%s", name, diff)
		}
	}
}

// aliasBomb is one case whose members expand to more values than the tree allows.
func aliasBomb() string {
	var b strings.Builder
	b.WriteString("  - id: a\n    a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 9; i++ {
		fmt.Fprintf(&b, "    a%d: &a%d [", i, i)
		for j := range 10 {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "*a%d", i-1)
		}
		b.WriteString("]\n")
	}
	return b.String()
}

func FuzzParseStreamsCasesLikeTheWholeTree(f *testing.F) {
	for _, name := range []string{"testdata/screening.yaml", "testdata/full.yaml"} {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("evalcases:\n- &c {id: a, input_messages: [{role: user, content: x}]}\n- {<<: *c, id: b}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if diff := diffParses(t, data); diff != "" {
			t.Fatalf("Parse differs from the whole-tree parse:\n%s", diff)
		}
	})
}
