package evalfile

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	yaml "go.yaml.in/yaml/v3"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile/yamltree"
	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
)

// viewOf writes the runner view of data, failing the test when it cannot.
func viewOf(t testing.TB, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := WriteView(&buf, data); err != nil {
		t.Fatalf("WriteView: %v", err)
	}
	return buf.Bytes()
}

// inputsOf is what a view must keep of a file: per case its id, conversation id and input messages.
type runnerCase struct {
	ID, ConversationID string
	Messages           []runnerMessage
}

type runnerMessage struct {
	Role      Role
	Content   string
	ToolCalls []ToolCall
}

func inputsOf(f *File) []runnerCase {
	out := make([]runnerCase, 0, f.NumCases())
	for i := range f.NumCases() {
		c := f.CaseAt(i)
		vc := runnerCase{ID: c.ID, ConversationID: c.ConversationID}
		for _, m := range c.InputMessages {
			vc.Messages = append(vc.Messages, runnerMessage{Role: m.Role, Content: string(m.Content.Raw), ToolCalls: m.ToolCalls})
		}
		out = append(out, vc)
	}
	return out
}

// viewKeys are the keys a view may hold, by level.
var viewKeys = map[string][]string{
	"top":      {"$schema", "evalcases"},
	"case":     {"id", "conversation_id", "expected_outcome", "input_messages"},
	"message":  {"role", "content", "tool_calls"},
	"toolCall": {"tool", "input", "output"},
}

// checkView checks the runner view of a valid file: it parses; it has the same cases with the same inputs and
// nothing of a judge's; it uses only the allowed keys; every string in it is the skeleton's or one of the file's
// inputs; it is cut into items; its own view is itself.
func checkView(t testing.TB, data []byte) []byte {
	t.Helper()
	orig, err := Parse(data)
	if err != nil {
		t.Fatalf("the file does not parse: %v", err)
	}
	view := viewOf(t, data)
	got, err := Parse(view)
	if err != nil {
		t.Fatalf("the view does not parse: %v\n%s", err, view)
	}
	if diff := cmp.Diff(inputsOf(orig), inputsOf(got)); diff != "" {
		t.Fatalf("the view's inputs differ (-file +view):\n%s\n%s", diff, view)
	}
	if got.Schema != SchemaV2 || got.Description != "" || got.Dataset != "" || got.Target != "" || len(got.Evaluators) > 0 {
		t.Errorf("the view's header holds more than the schema: %+v", got)
	}
	for i := range got.NumCases() {
		c := got.CaseAt(i)
		if c.ExpectedOutcome != ViewExpectedOutcome || len(c.ExpectedMessages) > 0 || len(c.Rubrics) > 0 || len(c.Evaluators) > 0 {
			t.Errorf("case %s of the view holds judging data: outcome %q, %d expected messages, %d rubrics, %d evaluators",
				c.ID, c.ExpectedOutcome, len(c.ExpectedMessages), len(c.Rubrics), len(c.Evaluators))
		}
	}

	// Every key is allowed, every string is the skeleton's or an input's.
	allowed := map[string]bool{SchemaV2: true, ViewExpectedOutcome: true}
	for _, keys := range viewKeys {
		for _, k := range keys {
			allowed[k] = true
		}
	}
	for i := range orig.NumCases() {
		c := orig.CaseAt(i)
		allowed[c.ID], allowed[c.ConversationID] = true, true
		for _, m := range c.InputMessages {
			allowed[string(m.Role)] = true
			for _, raw := range [][]byte{m.Content.Raw} {
				collectStrings(t, raw, allowed)
			}
			for _, tc := range m.ToolCalls {
				allowed[tc.Tool] = true
				collectStrings(t, tc.Input, allowed)
				collectStrings(t, tc.Output, allowed)
			}
		}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(view, &doc); err != nil {
		t.Fatalf("the view is not YAML: %v", err)
	}
	checkViewNode(t, doc.Content[0], "top", allowed)

	if segment(view) == nil {
		t.Errorf("the view cannot be cut into items:\n%s", view)
	}
	if again := viewOf(t, view); !bytes.Equal(again, view) {
		t.Errorf("the view of the view differs:\n%s\n---\n%s", view, again)
	}
	return view
}

// collectStrings adds every key and string of a JSON value to set.
func collectStrings(t testing.TB, raw []byte, set map[string]bool) {
	t.Helper()
	if raw == nil {
		return
	}
	v, err := yamltree.DecodeJSON(raw)
	if err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	var walk func(v *yamltree.Value)
	walk = func(v *yamltree.Value) {
		set[v.Str] = true
		set[v.Num] = true
		for _, k := range v.Keys {
			set[k] = true
		}
		for _, c := range v.Vals {
			walk(c)
		}
	}
	walk(v)
}

// checkViewNode checks the keys of a view's node at a level and every scalar below it.
func checkViewNode(t testing.TB, n *yaml.Node, level string, allowed map[string]bool) {
	t.Helper()
	if n.Anchor != "" || n.Kind == yaml.AliasNode {
		t.Errorf("the view has an anchor or alias at line %d", n.Line)
	}
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Tag == "!!str" && !allowed[n.Value] {
			t.Errorf("the view holds %q (line %d), which is no input of the file", textbound.Head(n.Value, 80), n.Line)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if level != "" && !slices.Contains(viewKeys[level], k.Value) {
				t.Errorf("the view has key %q at the %s level (line %d)", k.Value, level, k.Line)
			}
			checkViewNode(t, k, "", allowed)
			next := ""
			switch {
			case level == "top" && k.Value == "evalcases":
				next = "cases"
			case level == "case" && k.Value == "input_messages":
				next = "messages"
			case level == "message" && k.Value == "tool_calls":
				next = "toolCalls"
			}
			checkViewNode(t, v, next, allowed)
		}
	case yaml.SequenceNode:
		item := ""
		switch level {
		case "cases":
			item = "case"
		case "messages":
			item = "message"
		case "toolCalls":
			item = "toolCall"
		}
		for _, c := range n.Content {
			checkViewNode(t, c, item, allowed)
		}
	}
}

// hostileFile holds canaries (CANARY-*) everywhere a judge reads and where an unknown key or a comment puts them,
// and inputs written in every way the format allows.
const hostileFile = `# CANARY-comment: the answer is 42
$schema: agentv-eval-v2
description: CANARY-description
dataset: CANARY-dataset
notes_for_judges: CANARY-top-unknown
execution:
  target: CANARY-target
  evaluators:
    - name: check
      type: code_judge
      script: ["sh", "-c", "test \"$ANSWER\" = CANARY-script"]
    - name: judge
      type: llm_judge
      prompt: "Compare with CANARY-llm-prompt"
judge_anchor: &judgedata
  expected: CANARY-anchored
  role: user
evalcases:
  - expected_messages:
      - role: assistant
        content: CANARY-expected-first
    input_messages:
      - role: system
        content: You are a batch processor.
      - content:
          request:
            type: screening_check
            jurisdiction: AU
          row: {id: case-001, name: Example A, amount: 5000}
        role: user
        name: CANARY-message-unknown
    id: case-001
    expected_outcome: CANARY-outcome
    rubrics:
      - CANARY-rubric-string
      - {id: r2, expected_outcome: CANARY-rubric-object, weight: 2}
    judge_notes: CANARY-case-unknown
  - {"id": "002", 'outcome': CANARY-outcome-alias, "input_messages": [{"role": "user", "content": "yes"}], expected_messages: [{role: assistant, content: {decision: CANARY-flow}}]}
  - id: case-003
    conversation_id: conv-7
    expected_outcome: |
      CANARY-block-outcome
    input_messages:
      - <<: *judgedata
        content:
          - {type: file, value: ./data/input.txt}
          - {type: text, value: "line one\nline two\t\"quoted\" \\ # not a comment: x"}
      - role: assistant
        content: ""
        tool_calls:
          - {tool: search, input: {q: "null"}, output: [1, 2.5, true, null, "on"]}
      - role: user
        content: "  leading spaces, ünïcödé, \u0085 NEL, \u2028 LS, \ufeff BOM, \x7f DEL, \x01 SOH, emoji 😀"
    execution:
      evaluators:
        - {name: own, type: code_judge, script: "echo CANARY-case-script"}
  - id: case-004
    input_messages:
      - role: user
        content: {"yes": no, "": empty key, "a: b": "#x", "123": 1e5, "- dash": [], "{}": {}, "nested": [[1, [2]], [], {k: v}]}
    evaluators:
      - {name: exact, type: llm_judge, prompt: CANARY-case-evaluators}
    expected_outcome: CANARY-outcome-4
`

func TestWriteViewHidesJudgeFields(t *testing.T) {
	view := checkView(t, []byte(hostileFile))
	for _, line := range strings.Split(hostileFile, "\n") {
		for rest := line; ; {
			i := strings.Index(rest, "CANARY-")
			if i < 0 {
				break
			}
			canary := rest[i : i+len("CANARY-")+strings.IndexAny(rest[i+len("CANARY-"):]+" ", ` ",}'"\`)]
			if bytes.Contains(view, []byte(canary)) {
				t.Errorf("the view holds %s:\n%s", canary, view)
			}
			rest = rest[i+len("CANARY-"):]
		}
	}
	if bytes.Contains(view, []byte("CANARY")) {
		t.Errorf("the view holds a canary:\n%s", view)
	}
	for _, want := range []string{"screening_check", "./data/input.txt", "conv-7", "search", `"002"`} {
		if !bytes.Contains(view, []byte(want)) {
			t.Errorf("the view lacks the input %s:\n%s", want, view)
		}
	}
}

// TestWriteViewText pins the view's shape: what a runner author reads.
func TestWriteViewText(t *testing.T) {
	data := `evalcases:
  - id: case-001
    expected_outcome: Batch runner returns JSON with decision=CLEAR.
    expected_messages:
      - role: assistant
        content:
          decision: CLEAR
    input_messages:
      - role: system
        content: You are a batch processor.
      - role: user
        content:
          request:
            type: screening_check
          row:
            id: case-001
            amount: 5000
            tags: [a, "b c"]
            items: [{k: 1, v: x}]
    execution:
      evaluators:
        - {name: decision-check, type: code_judge, script: bun run ./scripts/check-output.ts}
`
	want := `$schema: agentv-eval-v2
evalcases:
  - id: case-001
    expected_outcome: Withheld from the runner.
    input_messages:
      - role: system
        content: You are a batch processor.
      - role: user
        content:
          request:
            type: screening_check
          row:
            id: case-001
            amount: 5000
            tags:
              - a
              - b c
            items:
              - k: 1
                v: x
`
	if diff := cmp.Diff(want, string(checkView(t, []byte(data)))); diff != "" {
		t.Errorf("view (-want +got):\n%s", diff)
	}
}

func TestWriteViewStrings(t *testing.T) {
	for _, s := range []string{"", "yes", "No", "null", "~", "123", "0x1F", "1e5", ".inf", "-", "- a", "a: b", "a #b", "#",
		"@x", "`x", "'", "\"", "\\", " x", "x ", "a\nb", "\r\n", "\t", "\x00", "\x7f", "\u0085", "\u00a0", "\u2028",
		"\u2029", "\ufeff", "\ufffe", "\uffff", "😀", "é", strings.Repeat("k", 600), "2001-12-14", "1:20", "!tag", "&a", "*a",
		"? x", "%x", "{x}", "[x]", "x,y", ",x", "on", "OFF", "Y", "y", "n"} {
		t.Run(strconv.Quote(textbound.Head(s, 20)), func(t *testing.T) {
			data := "evalcases:\n  - id: a\n    input_messages:\n      - role: user\n        content: " + yamlQuote(t, s) +
				"\n      - role: user\n        content:\n          " + yamlQuote(t, s) + ": " + yamlQuote(t, s) + "\n"
			checkView(t, []byte(data))
		})
	}
}

// yamlQuote is s as a YAML scalar, written by the YAML library.
func yamlQuote(t *testing.T, s string) string {
	t.Helper()
	out, err := yaml.Marshal(&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s, Style: yaml.DoubleQuotedStyle})
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(string(out), "\n")
}

func TestWriteViewInvalidFile(t *testing.T) {
	var buf bytes.Buffer
	if _, err := WriteView(&buf, []byte("evalcases:\n  - id: a\n    expected_outcome: x\n")); err == nil {
		t.Fatal("WriteView of a case without input_messages succeeded")
	}
	if buf.Len() != 0 {
		t.Errorf("an invalid file's view wrote %q", buf.String())
	}
}

func TestWriteViewTestdata(t *testing.T) {
	files, err := filepath.Glob("testdata/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	for _, name := range files {
		t.Run(filepath.Base(name), func(t *testing.T) {
			data, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			checkView(t, data)
		})
	}
}

// FuzzWriteView: for any file Parse accepts, the view parses to the same inputs, holds only allowed keys and no
// string that is not an input's (so nothing that occurs only in judge fields), cuts into items and is its own
// view.
func FuzzWriteView(f *testing.F) {
	f.Add([]byte(hostileFile))
	f.Add([]byte("evalcases:\n  - id: a\n    input_messages: [{role: user, content: hi}]\n    expected_messages: [{role: assistant, content: X}]\n"))
	f.Add([]byte("a: &x {role: user, content: secret}\nevalcases:\n  - id: b\n    expected_messages: [*x]\n    input_messages: [{role: user, content: [{type: file, value: f.txt}]}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := Parse(data); err != nil {
			return
		}
		checkView(t, data)
	})
}

// BenchmarkWriteView writes the view of a 100,000-case file (19 MiB: an expected message and a structured user
// message per case, AgentV's batch-cli shape), parse included, as install does for a pod.
func BenchmarkWriteView(b *testing.B) {
	data := viewBenchFile(100_000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		n, err := WriteView(discardCounter{}, data, WithOwnedData())
		if err != nil || n != 100_000 {
			b.Fatalf("wrote %d cases: %v", n, err)
		}
	}
}

type discardCounter struct{}

func (discardCounter) Write(p []byte) (int, error) { return len(p), nil }

// viewBenchFile is a file of n screening cases shaped like AgentV's batch-cli example, about 200 bytes a case.
func viewBenchFile(n int) []byte {
	var b strings.Builder
	b.WriteString("$schema: agentv-eval-v2\nexecution:\n  evaluators:\n    - {name: exact, type: code_judge, script: ./check.sh}\nevalcases:\n")
	for i := range n {
		id := "case-" + strconv.Itoa(100000+i)
		b.WriteString("  - id: " + id + "\n    expected_messages: [{role: assistant, content: {decision: CLEAR}}]\n" +
			"    input_messages:\n      - role: user\n        content: {row: {id: " + id + ", name: Example A, amount: " +
			strconv.Itoa(5000+i) + "}}\n")
	}
	return []byte(b.String())
}

// TestWriteViewBuiltAndReadCasesAgree: a case read item by item (its values) and a case kept built (its parsed
// fields) give the same view; a document marker makes Parse build every case.
func TestWriteViewBuiltAndReadCasesAgree(t *testing.T) {
	files := []string{hostileFile}
	names, _ := filepath.Glob("testdata/*.yaml")
	for _, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, string(data))
	}
	for i, data := range files {
		read, built := viewOf(t, []byte(data)), viewOf(t, []byte("---\n"+data))
		if f, err := Parse([]byte("---\n" + data)); err != nil || !f.WholeTree() {
			t.Fatalf("file %d: the document marker did not make Parse build the cases: %v", i, err)
		}
		if diff := cmp.Diff(string(built), string(read)); diff != "" {
			t.Errorf("file %d: views differ (-built +read):\n%s", i, diff)
		}
	}
}

// TestWriteViewBenchFile keeps the benchmark's file valid, at about 19 MiB for 100,000 cases.
func TestWriteViewBenchFile(t *testing.T) {
	checkView(t, viewBenchFile(3))
	if n := len(viewBenchFile(100_000)); n < 18<<20 || n > 21<<20 {
		t.Errorf("the benchmark's file is %d bytes", n)
	}
}

// TestCaseView: the views of the cases alone, one after the other, are the whole view's items (read item by item
// or built), and a case's view does not depend on its position or on what judges read.
func TestCaseView(t *testing.T) {
	files := []string{hostileFile}
	names, _ := filepath.Glob("testdata/*.yaml")
	for _, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, string(data))
	}
	for i, data := range files {
		for _, text := range []string{data, "---\n" + data} {
			f, err := Parse([]byte(text))
			if err != nil {
				t.Fatalf("file %d: %v", i, err)
			}
			var items []byte
			for c := range f.NumCases() {
				v, err := f.CaseView(c)
				if err != nil {
					t.Fatalf("file %d: CaseView(%d): %v", i, c, err)
				}
				items = append(items, v...)
			}
			whole := viewOf(t, []byte(text))
			want := strings.TrimPrefix(string(whole), "$schema: "+SchemaV2+"\nevalcases:\n")
			if diff := cmp.Diff(want, string(items)); diff != "" {
				t.Errorf("file %d: the cases' views are not the view's items (-view +cases):\n%s", i, diff)
			}
		}
	}
	base := "evalcases:\n  - id: a\n    input_messages: [{role: user, content: hi}]\n"
	other := "evalcases:\n  - id: z\n    input_messages: [{role: user, content: x}]\n  - id: a\n    expected_messages: [{role: assistant, content: X}]\n    rubrics: [be kind]\n    input_messages: [{role: user, content: hi}]\n"
	changed := "evalcases:\n  - id: a\n    input_messages: [{role: user, content: hi!}]\n"
	view := func(text string, i int) string {
		f, err := Parse([]byte(text))
		if err != nil {
			t.Fatal(err)
		}
		v, err := f.CaseView(i)
		if err != nil {
			t.Fatal(err)
		}
		return string(v)
	}
	if a, b := view(base, 0), view(other, 1); a != b {
		t.Errorf("the view of case a depends on its position or judge fields:\n%s\n%s", a, b)
	}
	if a, b := view(base, 0), view(changed, 0); a == b {
		t.Errorf("a changed input gives the same view %q", a)
	}
	f, _ := Parse([]byte(base))
	if _, err := f.CaseView(1); err == nil {
		t.Error("CaseView(1) of a one-case file: no error")
	}
}

// TestAppendCaseView: a case's view appended to a buffer that already holds text is CaseView's, after that text;
// with the buffer reused, a case read item by item is viewed without allocating (a digest of every case of a
// large file must not cost an arena per case).
func TestAppendCaseView(t *testing.T) {
	f, err := Parse(viewBenchFile(3))
	if err != nil {
		t.Fatal(err)
	}
	buf := []byte("kept")
	for i := range f.NumCases() {
		want, err := f.CaseView(i)
		if err != nil {
			t.Fatal(err)
		}
		got, err := f.AppendCaseView(buf[:4], i)
		if err != nil {
			t.Fatal(err)
		}
		if string(got[:4]) != "kept" || string(got[4:]) != string(want) {
			t.Errorf("AppendCaseView(%d) = %q, want %q after kept", i, got, want)
		}
		buf = got
	}
	if allocs := testing.AllocsPerRun(100, func() {
		buf, err = f.AppendCaseView(buf[:0], 1)
	}); err != nil || allocs >= 1 {
		t.Errorf("AppendCaseView allocates %.1f times a case (%v)", allocs, err)
	}
	if _, err := f.AppendCaseView(nil, 3); err == nil {
		t.Error("AppendCaseView(3) of a three-case file: no error")
	}
}
