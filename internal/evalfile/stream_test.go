package evalfile

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	yaml "go.yaml.in/yaml/v3"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile/yamltree"
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
	tb := yamltree.NewBuilder(0, casesKey)
	root := tb.Build(&doc, nil, 0)
	if tb.TooLarge {
		return nil, &ValidationError{Problems: tb.Problems}
	}
	p := &Parser{}
	f := p.file(root, o)
	if problems := append(tb.Problems, p.Problems...); len(problems) > 0 {
		return nil, &ValidationError{Problems: problems}
	}
	f.Case("")
	return f, nil
}

// parseWholeTreeStreaming is Parse without cutting the file into items: the whole YAML node tree is read first,
// then the cases are streamed from it (Parse before the cut).
func parseWholeTreeStreaming(data []byte) (*File, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	tb := yamltree.NewBuilder(0, casesKey)
	p := &Parser{}
	cases := streamableCases(&doc)
	if cases == nil {
		return nil, errors.New("not streamable")
	}
	f, _ := p.streamFile(tb, &doc, cases, parseOptions{}, nil)
	return finish(tb, p, f)
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
	return cmp.Diff(viewFile(want), viewFile(got), cmpopts.IgnoreUnexported(File{})) + cmp.Diff(wantV, gotV)
}

// allCases returns every case of f, built.
func allCases(f *File) []*Case {
	out := make([]*Case, f.NumCases())
	for i := range out {
		out[i] = f.CaseAt(i)
	}
	return out
}

// fileView is a File with its cases built, for comparisons.
type fileView struct {
	File  *File
	Cases []*Case
}

func viewFile(f *File) *fileView {
	if f == nil {
		return nil
	}
	return &fileView{File: f, Cases: allCases(f)}
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

// The text is cut into items only where that cannot change the result; every document here parses as the whole
// tree does either way.
func TestSegmentCutsOnlyWhereFaithful(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		cut  int // items cut, 0: not cut
		// whole: cut, but some part does not read alone, so Parse reads the whole document.
		whole bool
	}{
		{name: "header and block items", cut: 3, doc: "$schema: agentv-eval-v2\ndescription: |\n  several\n  lines\n\n# cases\nevalcases:\n  - id: a\n    input_messages: [{role: user, content: x}]\n\n  # a comment\n  - id: b\n    input_messages:\n      - role: user\n        content: |\n          - not an item\n          - either\n  - {id: c, input_messages: [{role: user, content: y}]}\n"},
		{name: "compact items at column 0", cut: 2, doc: "evalcases:\n- id: a\n  input_messages: [{role: user, content: x}]\n- id: b\n  input_messages: [{role: user, content: x}]\n"},
		{name: "anchors inside one item", cut: 1, doc: "evalcases:\n  - id: a\n    input_messages: &m [{role: user, content: x}]\n    expected_messages: *m\n"},
		{name: "alias to another item (one chunk)", cut: 2, doc: "evalcases:\n  - id: a\n    input_messages: &m [{role: user, content: x}]\n  - id: b\n    input_messages: *m\n"},
		{name: "alias to the header", cut: 1, doc: "x: &m [{role: user, content: x}]\nevalcases:\n  - id: a\n    input_messages: *m\n"},
		{name: "a header anchor shadowed by an item's (one chunk)", cut: 2, doc: "x: &m [{role: user, content: h}]\nevalcases:\n  - id: a\n    input_messages: &m [{role: user, content: i}]\n  - id: b\n    input_messages: *m\n"},
		{name: "alias to the header, problems after it", cut: 2, doc: "x: &m [{role: bot, content: h}]\n\nevalcases:\n  - id: a\n    input_messages: *m\n  - id: b\n    input_messages: *m\n    expected_messages: 5\n"},
		{name: "problems and line numbers", cut: 3, doc: "execution: {evaluators: [{name: x, type: nope}]}\nevalcases:\n  - id: a\n    id: b\n  - 7\n  - id: \"a b\"\n    input_messages: [{role: bot, content: 1}]\n"},
		{name: "CRLF", cut: 2, doc: "evalcases:\r\n  - id: a\r\n    input_messages: [{role: user, content: x}]\r\n  - id: b\r\n    input_messages: [{role: user, content: x}]\r\n"},
		{name: "a syntax error in an item", cut: 2, whole: true, doc: "evalcases:\n  - id: a\n    input_messages: [{role: user, content: x}\n  - id: b\n"},
		{name: "flow sequence", doc: "evalcases: [{id: a, input_messages: [{role: user, content: x}]}]\n"},
		{name: "a key after evalcases", doc: "evalcases:\n  - id: a\n    input_messages: [{role: user, content: x}]\ndescription: d\n"},
		{name: "evalcases twice", doc: "evalcases:\n  - id: a\nevalcases:\n  - id: b\n"},
		{name: "two documents", doc: "description: d\n---\nevalcases:\n  - id: a\n"},
		{name: "merge key in the header", cut: 1, whole: true, doc: "x: &x {description: d}\n<<: *x\nevalcases:\n  - id: a\n    input_messages: [{role: user, content: x}]\n"},
		{name: "a tab", doc: "evalcases:\n  - id: a\n    input_messages:\t[{role: user, content: x}]\n"},
		{name: "not a sequence", doc: "evalcases:\n  a: 1\n"},
	}
	for _, name := range []string{"testdata/screening.yaml", "testdata/full.yaml", "../../examples/screening/eval.yaml"} {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if diff := diffParses(t, data); diff != "" {
			t.Errorf("%s: Parse differs from the whole-tree parse:\n%s", name, diff)
		}
		sg := segment(data)
		if sg == nil {
			t.Errorf("%s is not cut into items", name)
		} else if _, ok, _ := parseSegmented(sg, parseOptions{}); !ok {
			t.Errorf("%s is not parsed item by item", name)
		}
	}
	// An alias to an anchor of an item in an earlier chunk: the document is read whole.
	var far strings.Builder
	far.WriteString("evalcases:\n  - id: a\n    input_messages: &m [{role: user, content: x}]\n")
	for i := range 2000 {
		fmt.Fprintf(&far, "  - id: filler-%04d\n    input_messages: [{role: user, content: \"%s\"}]\n", i, strings.Repeat("y", 40))
	}
	far.WriteString("  - id: z\n    input_messages: *m\n")
	tests = append(tests, struct {
		name  string
		doc   string
		cut   int
		whole bool
	}{name: "alias to an item of an earlier chunk", cut: 2002, whole: true, doc: far.String()})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sg := segment([]byte(tt.doc))
			got := 0
			if sg != nil {
				got = len(sg.items)
			}
			if got != tt.cut {
				t.Errorf("segment cut %d items, want %d", got, tt.cut)
			}
			if sg != nil {
				if _, ok, _ := parseSegmented(sg, parseOptions{}); ok == tt.whole {
					t.Errorf("parsed by items: %v, want %v", ok, !tt.whole)
				}
			}
			if diff := diffParses(t, []byte(tt.doc)); diff != "" {
				t.Errorf("Parse differs from the whole-tree parse:\n%s", diff)
			}
		})
	}
}

// Mutations of the test eval files (lines dropped, duplicated, re-indented, given anchors, aliases, comments,
// dashes or tabs) parse the same cut into items as whole: a deterministic complement to the fuzz target.
func TestSegmentedParseMatchesWholeTreeOnMutations(t *testing.T) {
	var seeds [][]byte
	for _, name := range []string{"testdata/screening.yaml", "testdata/full.yaml"} {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, data)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	edits := []func(lines []string, i int) []string{
		func(l []string, i int) []string { return append(l[:i:i], l[i+1:]...) },
		func(l []string, i int) []string { return append(l[:i+1:i+1], l[i:]...) },
		func(l []string, i int) []string { l[i] = " " + l[i]; return l },
		func(l []string, i int) []string { l[i] = strings.TrimPrefix(l[i], "  "); return l },
		func(l []string, i int) []string {
			l[i] = strings.Replace(l[i], ": ", ": &a"+strconv.Itoa(i%3)+" ", 1)
			return l
		},
		func(l []string, i int) []string {
			l[i] = strings.Replace(l[i], ": ", ": *a"+strconv.Itoa(i%3)+" #", 1)
			return l
		},
		func(l []string, i int) []string {
			return append(l[:i:i], append([]string{"# comment", ""}, l[i:]...)...)
		},
		func(l []string, i int) []string { l[i] = strings.Replace(l[i], "  ", "- ", 1); return l },
		func(l []string, i int) []string { l[i] = strings.Replace(l[i], " ", "\t", 1); return l },
		func(l []string, i int) []string { return append(l[:i:i], append([]string{"---"}, l[i:]...)...) },
	}
	mutations := 1500
	if testing.Short() {
		mutations = 500
	}
	segmentedCount := 0
	for n := range mutations {
		lines := strings.Split(string(seeds[n%len(seeds)]), "\n")
		for range 1 + rng.IntN(3) {
			if len(lines) < 2 {
				break
			}
			lines = edits[rng.IntN(len(edits))](lines, rng.IntN(len(lines)-1))
		}
		data := []byte(strings.Join(lines, "\n"))
		if sg := segment(data); sg != nil {
			if _, ok, _ := parseSegmented(sg, parseOptions{}); ok {
				segmentedCount++
			}
		}
		if diff := diffParses(t, data); diff != "" {
			t.Fatalf("mutation %d: Parse differs from the whole-tree parse:\n%s\n--- document:\n%s", n, diff, data)
		}
	}
	t.Logf("%d of %d mutations parsed item by item", segmentedCount, mutations)
	if segmentedCount == 0 {
		t.Error("no mutation was parsed item by item: the test checks nothing")
	}
}

// A file of many items, read by several goroutines in batches (see itemReader), parses as the whole tree does:
// items yamltree.ReadItem reads and items it leaves to the YAML parser interleaved, problems and duplicate ids across
// batches, an item that is not a case; valid, the same file without its problems.
func TestParseManyItemsLikeTheWholeTree(t *testing.T) {
	build := func(problems bool) []byte {
		var b strings.Builder
		b.WriteString("$schema: agentv-eval-v2\nexecution:\n  evaluators:\n    - {name: fast, type: latency, threshold: 1800}\nevalcases:\n")
		for i := range 3 * itemBatch {
			id := fmt.Sprintf("case-%04d", i)
			switch {
			case problems && i%97 == 5:
				id = fmt.Sprintf("case-%04d", i/2) // a duplicate, often in another batch
			case problems && i%131 == 7:
				b.WriteString("  - just a scalar\n")
				continue
			}
			switch i % 7 {
			case 1: // a block scalar: read from the YAML nodes
				fmt.Fprintf(&b, "  - id: %s\n    input_messages:\n      - role: user\n        content: |\n          line one\n          line two\n", id)
			case 2: // the case's own evaluators
				fmt.Fprintf(&b, "  - id: %s\n    input_messages: [{role: user, content: {q: %d, tags: [a, b]}}]\n    execution:\n      evaluators:\n        - {name: cheap, type: cost, budget: 0.5}\n", id, i)
			case 3: // rubrics and expected messages
				fmt.Fprintf(&b, "  - id: %s\n    input_messages: [{role: user, content: \"x %d\"}]\n    expected_messages: [{role: assistant, content: {decision: CLEAR}}]\n    rubrics: [be right, {id: r2, expected_outcome: cites, weight: 2}]\n", id, i)
			default:
				fmt.Fprintf(&b, "  - id: %s\n    input_messages: [{role: user, content: \"screen row %d\"}]\n", id, i)
			}
			if problems && i%61 == 3 {
				b.WriteString("    conversation_id: [not, a, string]\n")
			}
		}
		return []byte(b.String())
	}
	for _, problems := range []bool{false, true} {
		data := build(problems)
		if diff := diffParses(t, data); diff != "" {
			t.Errorf("problems %v: Parse differs from the whole-tree parse:\n%s", problems, diff)
		}
		f, err := Parse(data)
		if problems != (err != nil) {
			t.Errorf("problems %v: error %v", problems, err)
		}
		if err == nil && f.NumCases() != 3*itemBatch {
			t.Errorf("%d cases", f.NumCases())
		}
		if err == nil {
			checkLightCases(t, f)
		}
	}
	for _, opts := range [][]ParseOption{nil, {WithDefaultEvaluators([]map[string]any{{"name": "j", "type": "cost", "budget": 1.0}})}} {
		f, err := Parse(build(false), opts...)
		if err != nil {
			t.Fatal(err)
		}
		checkLightCases(t, f)
	}
}

// checkLightCases checks that each light case is its whole case's Index, ID, Evaluators and EvaluatorSource, and
// that every case whose evaluators are inherited without inline rubrics has one.
func checkLightCases(t *testing.T, f *File) {
	t.Helper()
	light := 0
	for i := range f.NumCases() {
		full := f.CaseAt(i)
		c, ok := f.LightCase(i)
		inherited := len(full.Rubrics) == 0 && full.EvaluatorSource != SourceCase
		if ok != inherited && f.cases[i].end != 0 {
			t.Fatalf("case %d: light %v, want %v (source %s, %d rubrics)", i, ok, inherited, full.EvaluatorSource, len(full.Rubrics))
		}
		if !ok {
			continue
		}
		light++
		want := &Case{Index: full.Index, ID: full.ID, Evaluators: full.Evaluators, EvaluatorSource: full.EvaluatorSource}
		if f.cases[i].end == 0 {
			want = full
		}
		if diff := cmp.Diff(want, c); diff != "" {
			t.Fatalf("case %d: light case differs (-want +got):\n%s", i, diff)
		}
	}
	if light == 0 {
		t.Error("no light case: the check checks nothing")
	}
}

// TestOwnedDataParsesTheSame: a File that refers to the caller's bytes (WithOwnedData) is the File of a copy, for
// fast items, items the YAML library reads, and invalid files.
func TestOwnedDataParsesTheSame(t *testing.T) {
	files := map[string]string{
		"fast items": string(benchEvalFile(300)),
		"library items": "$schema: agentv-eval-v2\nevalcases:\n  - id: a\n    input_messages: &m [{role: user, content: hi}]\n" +
			"    expected_messages: *m\n  - id: b\n    input_messages: |\n      not a list\n",
		"duplicate ids": "evalcases:\n  - id: a\n    input_messages: [{role: user, content: x}]\n  - id: a\n    input_messages: [{role: user, content: y}]\n",
	}
	for name, text := range files {
		t.Run(name, func(t *testing.T) {
			want, wantErr := Parse([]byte(text))
			owned := []byte(text)
			got, gotErr := Parse(owned, WithOwnedData())
			if errString(wantErr) != errString(gotErr) {
				t.Fatalf("errors differ: copy %s, owned %s", errString(wantErr), errString(gotErr))
			}
			if diff := cmp.Diff(viewFile(want), viewFile(got), cmpopts.IgnoreUnexported(File{})); diff != "" {
				t.Fatalf("owned data parses differently (-copy +owned):\n%s", diff)
			}
			if want != nil && want.WholeTree() != got.WholeTree() {
				t.Fatalf("WholeTree: copy %v, owned %v", want.WholeTree(), got.WholeTree())
			}
		})
	}
}

// TestWholeTreeSaysHowTheFileWasRead: only a file that cannot be cut into items builds the whole YAML tree.
func TestWholeTreeSaysHowTheFileWasRead(t *testing.T) {
	for text, want := range map[string]bool{
		string(benchEvalFile(10)): false,
		// An item that only the YAML library reads is still read on its own.
		"evalcases:\n  - id: a\n    input_messages:\n      - role: user\n        content: |\n          text\n": false,
		// Items in a flow sequence, and a document marker, send Parse to the whole document.
		"evalcases: [{id: a, input_messages: [{role: user, content: x}]}]\n":           true,
		"---\nevalcases:\n  - id: a\n    input_messages: [{role: user, content: x}]\n": true,
	} {
		f, err := Parse([]byte(text))
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		if f.WholeTree() != want {
			t.Errorf("%q: WholeTree() = %v, want %v", text, f.WholeTree(), want)
		}
	}
}

// TestParseSharedReadsOnlyTheHeader: for a file whose cases all inherit their evaluators, ParseShared gives the
// File of Parse as judging sees it (the header's fields, the ids, each case's LightCase); it declines what it
// cannot cut or count, and SharedEvaluators is false as soon as one case has evaluators or rubrics of its own.
func TestParseSharedReadsOnlyTheHeader(t *testing.T) {
	const head = "$schema: agentv-eval-v2\ndescription: shared\n"
	const fileEvaluators = "execution:\n  evaluators:\n    - {name: fast, type: latency, threshold: 1800}\n"
	item := func(id string) string {
		return "  - id: " + id + "\n    input_messages: [{role: user, content: \"hi " + id + "\"}]\n"
	}
	libraryItem := "  - id: lib\n    input_messages:\n      - role: user\n        content: |\n          a block scalar\n"
	judging := []map[string]any{{"name": "cheap", "type": "cost", "budget": 0.01}}
	tests := []struct {
		name   string
		text   string
		opts   []ParseOption
		shared bool
	}{
		{name: "file evaluators", text: string(benchEvalFile(300)), shared: true},
		{name: "judging evaluators over the file's", text: head + fileEvaluators + "evalcases:\n" + item("a") + libraryItem + item("b"),
			opts: []ParseOption{WithDefaultEvaluators(judging)}, shared: true},
		{name: "no evaluators", text: head + "evalcases:\n" + item("a") + item("b"), shared: true},
		{name: "a case with its own", text: head + fileEvaluators + "evalcases:\n" + item("a") +
			"  - id: own\n    input_messages: [{role: user, content: x}]\n    execution:\n      evaluators: [{name: slow, type: latency, threshold: 9}]\n"},
		{name: "a case with rubrics", text: head + fileEvaluators + "evalcases:\n" + item("a") +
			"  - id: rubric\n    input_messages: [{role: user, content: x}]\n    rubrics: [be right]\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want, err := Parse([]byte(tc.text), tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			if want.SharedEvaluators() != tc.shared {
				t.Fatalf("SharedEvaluators() = %v, want %v", want.SharedEvaluators(), tc.shared)
			}
			if !tc.shared {
				return
			}
			got, ok, err := ParseShared([]byte(tc.text), want.CaseIDs(), tc.opts...)
			if err != nil || !ok {
				t.Fatalf("ParseShared: ok %v, %v", ok, err)
			}
			if diff := cmp.Diff(want, got, cmpopts.IgnoreUnexported(File{})); diff != "" {
				t.Errorf("header (-Parse +ParseShared):\n%s", diff)
			}
			if !slices.Equal(got.CaseIDs(), want.CaseIDs()) || !got.SharedEvaluators() {
				t.Fatalf("ids %v, want %v", got.CaseIDs(), want.CaseIDs())
			}
			for i := range want.NumCases() {
				wc, wok := want.LightCase(i)
				gc, gok := got.LightCase(i)
				if !wok || !gok {
					t.Fatalf("case %d: LightCase ok %v and %v", i, wok, gok)
				}
				// A case the YAML library read is kept built, and LightCase gives it whole: judging sees only these.
				light := &Case{Index: wc.Index, ID: wc.ID, Evaluators: wc.Evaluators, EvaluatorSource: wc.EvaluatorSource}
				if diff := cmp.Diff(light, gc); diff != "" {
					t.Errorf("case %d (-Parse +ParseShared):\n%s", i, diff)
				}
				if diff := cmp.Diff(gc, got.CaseAt(i)); diff != "" {
					t.Errorf("case %d: CaseAt differs from LightCase:\n%s", i, diff)
				}
			}
			if _, ok, _ := ParseShared([]byte(tc.text), want.CaseIDs()[1:], tc.opts...); ok {
				t.Error("ParseShared took one id fewer than the file has cases")
			}
		})
	}
	flow := "evalcases: [{id: a, input_messages: [{role: user, content: x}]}]\n"
	if _, ok, _ := ParseShared([]byte(flow), []string{"a"}); ok {
		t.Error("ParseShared read a flow sequence of cases, which it cannot count")
	}
}
