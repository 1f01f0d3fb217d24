package suite42

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	yaml "go.yaml.in/yaml/v3"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/evalfile/yamltree"
)

// suiteViewKeys are the keys a 4.42 suite's view may hold, by level.
var suiteViewKeys = map[string][]string{
	"top":      {"tests"},
	"case":     {"id", "conversation_id", "criteria", "input"},
	"message":  {"role", "name", "content", "tool_calls"},
	"toolCall": {"tool", "input", "output"},
}

// runnerCase is what a view must keep of a case: its id, conversation id and input messages (as evalfile's view
// tests hold agentv-eval-v2's views to).
type runnerCase struct {
	ID, ConversationID string
	Messages           []runnerMessage
}

type runnerMessage struct {
	Role      evalfile.Role
	Content   string
	ToolCalls []evalfile.ToolCall
}

// inputsOf is what a view must keep of a file: per case its id, conversation id and input messages.
func inputsOf(f *evalfile.File) []runnerCase {
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

// suiteInputs is what a view must keep of a suite: per test its id, conversation id and input messages.
func suiteInputs(f *evalfile.File) []runnerCase {
	out := inputsOf(f)
	for i := range out {
		for j, m := range f.CaseAt(i).InputMessages {
			if m.Name != "" {
				out[i].Messages[j].Content += "|name=" + m.Name
			}
		}
	}
	return out
}

// checkSuiteView checks the runner view of a valid 4.42 suite: it parses as a 4.42 suite without the suite's files;
// it has the same tests with the same inputs and nothing of a judge's; it uses only the allowed keys; every string in
// it is the skeleton's or one of the suite's inputs; each test's CaseView is its item; its own view is itself.
func checkSuiteView(t testing.TB, data []byte, opts ...evalfile.ParseOption) []byte {
	t.Helper()
	orig, err := evalfile.Parse(data, opts...)
	if err != nil {
		t.Fatalf("the suite does not parse: %v", err)
	}
	var buf bytes.Buffer
	if n, err := orig.WriteView(&buf); err != nil || n != orig.NumCases() {
		t.Fatalf("WriteView = %d, %v", n, err)
	}
	view := buf.Bytes()
	got, err := evalfile.Parse(view)
	if err != nil {
		t.Fatalf("the view does not parse: %v\n%s", err, view)
	}
	if got.Format != evalfile.FormatSuite42 {
		t.Fatalf("the view's format is %q", got.Format)
	}
	if diff := cmp.Diff(suiteInputs(orig), suiteInputs(got)); diff != "" {
		t.Fatalf("the view's inputs differ (-suite +view):\n%s\n%s", diff, view)
	}
	if got.Description != "" || got.Target != "" || len(got.Evaluators) > 0 || got.Suite.Name != "" || got.Suite.Metadata != nil {
		t.Errorf("the view's header holds more than its tests: %+v %+v", got, got.Suite)
	}
	for i := range got.NumCases() {
		c := got.CaseAt(i)
		if c.ExpectedOutcome != evalfile.ViewExpectedOutcome || len(c.ExpectedMessages) > 0 || len(c.Evaluators) > 0 ||
			c.Metadata != nil || c.Threshold != nil || c.FailOnError != nil {
			t.Errorf("test %s of the view holds judging data: %+v", c.ID, c)
		}
		if c.InputForm != orig.CaseAt(i).InputForm {
			t.Errorf("test %s of the view writes its input as %q, the suite as %q", c.ID, c.InputForm, orig.CaseAt(i).InputForm)
		}
	}

	allowed := map[string]bool{evalfile.ViewExpectedOutcome: true}
	for _, keys := range suiteViewKeys {
		for _, k := range keys {
			allowed[k] = true
		}
	}
	var items [][]byte
	for i := range orig.NumCases() {
		c := orig.CaseAt(i)
		allowed[c.ID], allowed[c.ConversationID] = true, true
		for _, m := range c.InputMessages {
			allowed[string(m.Role)], allowed[m.Name] = true, true
			collectStrings(t, m.Content.Raw, allowed)
			for _, tc := range m.ToolCalls {
				allowed[tc.Tool] = true
				collectStrings(t, tc.Input, allowed)
				collectStrings(t, tc.Output, allowed)
			}
		}
		item, err := orig.CaseView(i)
		if err != nil {
			t.Fatal(err)
		}
		items = append(items, item)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(view, &doc); err != nil {
		t.Fatalf("the view is not YAML: %v", err)
	}
	checkSuiteViewNode(t, doc.Content[0], "top", allowed)
	if want := append([]byte("tests:\n"), bytes.Join(items, nil)...); !bytes.Equal(want, view) {
		t.Errorf("the view is not its tests' CaseViews:\n%s\n---\n%s", want, view)
	}
	var again bytes.Buffer
	if _, err := got.WriteView(&again); err != nil || !bytes.Equal(again.Bytes(), view) {
		t.Errorf("the view of the view differs (%v):\n%s\n---\n%s", err, view, again.Bytes())
	}
	return view
}

// checkSuiteViewNode checks the keys of a 4.42 view's node at a level and every scalar below it.
func checkSuiteViewNode(t testing.TB, n *yaml.Node, level string, allowed map[string]bool) {
	t.Helper()
	if n.Anchor != "" || n.Kind == yaml.AliasNode {
		t.Errorf("the view has an anchor or alias at line %d", n.Line)
	}
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Tag == "!!str" && !allowed[n.Value] {
			t.Errorf("the view holds %q (line %d), which is no input of the suite", headOf(n.Value), n.Line)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if level != "" && !slices.Contains(suiteViewKeys[level], k.Value) {
				t.Errorf("the view has key %q at the %s level (line %d)", k.Value, level, k.Line)
			}
			checkSuiteViewNode(t, k, "", allowed)
			next := ""
			switch {
			case level == "top" && k.Value == "tests":
				next = "cases"
			case level == "case" && k.Value == "input" && v.Kind == yaml.SequenceNode:
				next = "messages"
			case level == "message" && k.Value == "tool_calls":
				next = "toolCalls"
			}
			checkSuiteViewNode(t, v, next, allowed)
		}
	case yaml.SequenceNode:
		item := map[string]string{"cases": "case", "messages": "message", "toolCalls": "toolCall"}[level]
		for _, c := range n.Content {
			checkSuiteViewNode(t, c, item, allowed)
		}
	}
}

// hostileSuite holds canaries (CANARY-*) everywhere a judge reads, in the suite and in its tests' files, and
// inputs written in every way the format allows (testdata/hostile.eval.yaml; evalfile's FuzzParse seeds with it).
var hostileSuite = readTestdata("testdata/hostile.eval.yaml")

// readTestdata returns the text of a file under testdata (for package-level test data).
func readTestdata(name string) string {
	data, err := os.ReadFile(name)
	if err != nil {
		panic(err)
	}
	return string(data)
}

// hostileFiles are the hostile suite's other files.
var hostileFiles = map[string]string{
	"evals/more.jsonl": `{"id": "jsonl", "input": "from a line", "criteria": "CANARY-jsonl-criteria", "expected_output": "CANARY-jsonl-expected"}` + "\n",
}

func TestSuite42ViewHidesJudgeFields(t *testing.T) {
	opt := evalfile.WithFiles(bundleOf(hostileSuite, hostileFiles), suiteName)
	view := checkSuiteView(t, []byte(hostileSuite), opt)
	if bytes.Contains(view, []byte("CANARY")) {
		t.Errorf("the view holds a canary:\n%s", view)
	}
	want := `tests:
  - id: text
    criteria: Withheld from the runner.
    input:
      - role: system
        content: You are a batch processor.
      - role: user
        content: "  leading, ünïcödé, \u0085 NEL, \u2028 LS, emoji 😀, \"quoted\" # x"
  - id: object
    criteria: Withheld from the runner.
    input:
      row:
        id: r1
        "yes": "no"
        "": empty
        nested:
          -
            - 1
            -
              - 2
          - k: v
  - id: messages
    conversation_id: conv-7
    criteria: Withheld from the runner.
    input:
      - role: system
        content: You are a batch processor.
      - role: user
        name: alice
        content:
          - type: text
            value: Use visible
          - type: file
            value: "./data/in.txt"
          - type: image
            value: pic.png
      - role: assistant
        content: ""
        tool_calls:
          - tool: search
            input:
              q: "null"
            output:
              - 1
              - 2.5
              - true
              - null
              - "on"
  - id: jsonl
    criteria: Withheld from the runner.
    input:
      - role: system
        content: You are a batch processor.
      - role: user
        content: from a line
`
	if diff := cmp.Diff(want, string(view)); diff != "" {
		t.Errorf("view (-want +got):\n%s", diff)
	}
}

// shardIDs parses each shard and returns the ids of them all, in order.
func shardIDs(t *testing.T, shards [][]byte, opts ...evalfile.ParseOption) []string {
	t.Helper()
	var ids []string
	for _, s := range shards {
		f, err := evalfile.Parse(s, opts...)
		if err != nil {
			t.Fatalf("a shard does not parse: %v\n%s", err, s)
		}
		ids = append(ids, f.CaseIDs()...)
	}
	return ids
}

func TestSuite42Subset(t *testing.T) {
	for _, example := range []string{"basic", "external-datasets", "basic-jsonl", "suite-level-input", "composite"} {
		t.Run(example, func(t *testing.T) {
			data, opt := exampleBundle(t, example)
			f, err := evalfile.Parse(data, opt)
			if err != nil {
				t.Fatal(err)
			}
			n := f.NumCases()
			for _, shards := range []int{1, 2, 3} {
				var parts [][]byte
				for s := range shards {
					sub, err := evalfile.Subset(data, func(i int) bool { return i%shards == s && i < n }, opt)
					if err != nil {
						t.Fatalf("Subset: %v", err)
					}
					parts = append(parts, sub)
					// A shard's tests are inline: it reads without the tests' files.
					sf, err := evalfile.Parse(sub, evalfile.WithFiles(nil, suiteName))
					if err != nil {
						t.Fatalf("the shard does not parse without files: %v\n%s", err, sub)
					}
					for i := range sf.NumCases() {
						orig := f.Case(sf.CaseAt(i).ID)
						if diff := cmp.Diff(viewTest(orig), viewTest(sf.CaseAt(i))); diff != "" {
							t.Errorf("test %s of a shard differs (-whole +shard):\n%s", orig.ID, diff)
						}
					}
				}
				var want []string
				for s := range shards {
					for i, id := range f.CaseIDs() {
						if i%shards == s {
							want = append(want, id)
						}
					}
				}
				if diff := cmp.Diff(want, shardIDs(t, parts)); diff != "" {
					t.Errorf("%d shards: ids (-want +got):\n%s", shards, diff)
				}
			}
		})
	}
}

func TestSuite42SubsetKeepsTheSuiteAndRefusesWhatItCannotRead(t *testing.T) {
	suite := `# comment
name: keep-me
input: Suite input.
tests:
  - {id: a, input: "{{ x }}", vars: {x: one}, criteria: c}
  - file://cases/*.yaml
  - {id: d, input: q, criteria: c}
`
	files := map[string]string{"evals/cases/1.yaml": "- {id: b, input: q, criteria: c}\n", "evals/cases/2.yaml": "- {id: c, input: q, criteria: c}\n"}
	opt := evalfile.WithFiles(bundleOf(suite, files), suiteName)
	sub, err := evalfile.Subset([]byte(suite), func(i int) bool { return i == 0 || i == 2 }, opt)
	if err != nil {
		t.Fatal(err)
	}
	want := `# comment
name: keep-me
input: Suite input.
tests:
  - {id: a, input: "{{ x }}", vars: {x: one}, criteria: c}
  - {id: c, input: q, criteria: c}
`
	if diff := cmp.Diff(want, string(sub)); diff != "" {
		t.Errorf("subset (-want +got):\n%s", diff)
	}
	if _, err := evalfile.Subset([]byte(suite), func(int) bool { return true }); err == nil || !strings.Contains(err.Error(), "needs the suite's files") {
		t.Errorf("Subset without the files = %v", err)
	}
	if _, err := evalfile.Subset([]byte(suite), func(int) bool { return false }, opt); err == nil {
		t.Errorf("Subset of no test succeeded")
	}
}

func TestSuite42Scan(t *testing.T) {
	for _, example := range []string{"basic", "external-datasets", "default-graders", "batch-cli"} {
		t.Run(example, func(t *testing.T) {
			data, opt := exampleBundle(t, example)
			f, err := evalfile.Parse(data, opt)
			if err != nil {
				t.Fatal(err)
			}
			x, err := evalfile.Scan(bytes.NewReader(data), opt)
			if err != nil {
				t.Fatal(err)
			}
			want := evalfile.FactsOf(f)
			if diff := cmp.Diff(want.CaseIDs(), x.CaseIDs()); diff != "" {
				t.Errorf("ids (-Parse +Scan):\n%s", diff)
			}
			if x.CodeJudgeCases() != want.CodeJudgeCases() || x.SharedEvaluators() != want.SharedEvaluators() ||
				x.Format != evalfile.FormatSuite42 || !bytes.Equal(x.Text(), data) {
				t.Errorf("Scan facts differ from Parse's: %+v vs %+v", x, want)
			}
			for _, m := range []bool{false, true} {
				gt, gp := x.LLMRequests(m)
				wt, wp := want.LLMRequests(m)
				if gt != wt || gp != wp {
					t.Errorf("LLMRequests(%v) = %d, %d; Parse's %d, %d", m, gt, gp, wt, wp)
				}
			}
		})
	}
	// Above the in-memory limit a suite is refused, saying it is read whole.
	big := "tests:\n" + strings.Repeat("  - {id: a, input: q, criteria: c}\n", 100)
	_, err := evalfile.Scan(strings.NewReader(big), evalfile.WithWholeLimit(1024))
	var verr *evalfile.ValidationError
	if !errors.As(err, &verr) || !strings.Contains(err.Error(), "an AgentV 4.42 suite is read whole") || verr.Problems[0].Line != 1 {
		t.Errorf("Scan of a large suite = %v", err)
	}
}

// TestSuite42ParseCountsExpansion: vars filled many times are bounded as aliases are.
func TestSuite42ParseCountsExpansion(t *testing.T) {
	big := strings.Repeat("x", 1<<20)
	refs := strings.Repeat(`{{ v }}`, 20)
	text := fmt.Sprintf("tests:\n  - id: a\n    vars: {v: %q}\n    criteria: c\n    input: %q\n", big, refs)
	_, err := evalfile.Parse([]byte(text))
	if err == nil || !strings.Contains(err.Error(), "tests[0].vars") || !strings.Contains(err.Error(), "16 MiB") {
		t.Errorf("Parse = %v, want the vars bound", err)
	}
}

func FuzzSuite42(f *testing.F) {
	f.Add([]byte(hostileSuite), []byte(hostileFiles["evals/more.jsonl"]))
	f.Add([]byte("tests: ./cases.jsonl\ninput: [{role: system, content: s}]\n"), []byte(`{"id": "a", "input": "q", "criteria": "c"}`))
	f.Add([]byte("tests:\n  - id: a\n    vars: {x: {y: 1}}\n    input: \"{{ x }} {{x.y}}\"\n    assertions: [hi, {include: t}]\n"),
		[]byte("{\"id\": \"b\", \"input\": [{\"role\": \"user\", \"content\": [\"s\"]}], \"assertions\": [{\"type\": \"regex\", \"value\": \"a/b\"}]}\n"))
	f.Add([]byte("assertions: [{type: composite, name: c, assertions: [{name: m, type: contains, value: x}], aggregator: {type: threshold, threshold: 0.5}}]\ntests: [{id: a, input: q, criteria: c}, file://cases.jsonl]\n"), []byte("\n"))
	f.Add([]byte("execution:\n  trials: {count: 3, strategy: pass_at_k}\ntests: [{id: a, input: q, criteria: c}]\n"), []byte("\n"))
	f.Fuzz(func(t *testing.T, suite, cases []byte) {
		fsys := bundleOf(string(suite), map[string]string{
			"evals/cases.jsonl":              string(cases),
			".agentv/templates/t.yaml":       "assertions: [{type: is-json}, {include: u}]\n",
			"evals/.agentv/templates/u.yaml": "assertions: [Be kind.]\n",
		})
		opt := evalfile.WithFiles(fsys, suiteName)
		file, err := evalfile.Parse(suite, opt)
		if err != nil {
			var verr *evalfile.ValidationError
			if !errors.As(err, &verr) || len(verr.Problems) == 0 {
				t.Fatalf("Parse error is not a non-empty *ValidationError: %v", err)
			}
			return
		}
		if file.Format != evalfile.FormatSuite42 {
			return
		}
		seen := map[string]bool{}
		for i := range file.NumCases() {
			c := file.CaseAt(i)
			if !evalfile.ValidID(c.ID) || seen[c.ID] || len(c.InputMessages) == 0 {
				t.Fatalf("accepted invalid test %q", c.ID)
			}
			seen[c.ID] = true
		}
		if tr := file.Trials; tr != nil && (tr.Count < 2 || tr.Count > evalfile.MaxTrials || tr.PassRate != evalfile.PassAtKRate(tr.Count) || tr.Line < 1) {
			t.Fatalf("accepted trials %+v", tr)
		}
		checkSuiteView(t, suite, opt)
		sub, err := evalfile.Subset(suite, func(int) bool { return true }, opt)
		if err != nil {
			t.Fatalf("Subset of a valid suite: %v", err)
		}
		whole, err := evalfile.Parse(sub, opt)
		if err != nil {
			t.Fatalf("the whole subset does not parse: %v\n%s", err, sub)
		}
		if diff := cmp.Diff(file.CaseIDs(), whole.CaseIDs()); diff != "" {
			t.Fatalf("the whole subset's ids differ:\n%s", diff)
		}
		if (file.Trials == nil) != (whole.Trials == nil) || file.Trials != nil && file.Trials.Count != whole.Trials.Count {
			t.Fatalf("the whole subset's trials %+v, the suite's %+v", whole.Trials, file.Trials)
		}
	})
}

// suiteAliasBomb is issue 37's alias bomb written as a 4.42 suite's tests (a list: tests, or a tests file).
func suiteAliasBomb(stringBytes, messages, cases int) string {
	var b strings.Builder
	b.WriteString("- id: case-00000\n  criteria: c\n  input: &m\n")
	fmt.Fprintf(&b, "    - {role: user, content: &s \"%s\"}\n", strings.Repeat("A", stringBytes))
	for range messages - 1 {
		b.WriteString("    - {role: user, content: *s}\n")
	}
	for i := 1; i < cases; i++ {
		fmt.Fprintf(&b, "- id: case-%05d\n  criteria: c\n  input: *m\n", i)
	}
	return b.String()
}

// A 4.42 suite's aliases are bounded as agentv-eval-v2's are, in the suite and in its tests' files, by every
// reader, after allocating a bounded amount.
func TestSuite42AliasBomb(t *testing.T) {
	bomb := suiteAliasBomb(100_000, 20, 1500)
	inline := []byte("tests:\n" + strings.ReplaceAll("\n"+bomb, "\n", "\n  ")[1:])
	external := []byte("tests: ./bomb.yaml\n")
	opt := evalfile.WithFiles(bundleOf(string(external), map[string]string{"evals/bomb.yaml": bomb}), suiteName)
	for _, r := range []struct {
		name string
		read func() error
	}{
		{"Parse", func() error { _, err := evalfile.Parse(inline); return err }},
		{"Scan", func() error { _, err := evalfile.Scan(bytes.NewReader(inline)); return err }},
		{"Subset", func() error { _, err := evalfile.Subset(inline, func(int) bool { return true }); return err }},
		{"Parse, a tests file", func() error { _, err := evalfile.Parse(external, opt); return err }},
		{"Subset, a tests file", func() error { _, err := evalfile.Subset(external, func(int) bool { return true }, opt); return err }},
	} {
		t.Run(r.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			err := r.read()
			runtime.ReadMemStats(&after)
			if err == nil || !strings.Contains(err.Error(), "alias *") || !strings.Contains(err.Error(), "16 MiB") ||
				!strings.Contains(err.Error(), "line ") {
				t.Fatalf("the alias bomb: %v", err)
			}
			if n := after.TotalAlloc - before.TotalAlloc; n > 128<<20 {
				t.Errorf("refusing the bomb allocated %d MiB", n>>20)
			}
		})
	}
}
