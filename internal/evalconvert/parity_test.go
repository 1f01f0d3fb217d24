package evalconvert

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/evalrun-operator/evalrun-operator/internal/bundle"
	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil/v2files"
)

// TestConvertRepositoryFiles converts every v2 file of the repository and reads the suite back with the 4.42 reader
// into the same cases (ids, criteria, inputs, expected outputs) and the same evaluators (names, weights, the
// settings each judge reads), the v2 reader's own view of each as the 4.42 reader's. What a Note that Differs
// announces is the only difference allowed.
func TestConvertRepositoryFiles(t *testing.T) {
	files := v2files.All(t)
	converted := 0
	for _, vf := range files {
		t.Run(vf.Name, func(t *testing.T) {
			res, err := Convert(vf.Data, Options{Bundle: vf.Bundle})
			if err != nil {
				t.Fatalf("Convert: %v", err)
			}
			for _, n := range res.Notes {
				t.Logf("%s", n)
				if n.File == SuiteFile {
					t.Errorf("the 4.42 reader refuses the converted suite: %s", n)
				}
			}
			if testing.Verbose() && os.Getenv("EVALCONVERT_SHOW") != "" {
				t.Logf("suite:\n%s", res.Suite)
			}
			opts := []evalfile.ParseOption{evalfile.WithFiles(nil, vf.Bundle.EvalFile)}
			v2, err := evalfile.Parse(vf.Data, opts...)
			if err != nil {
				t.Fatal(err)
			}
			var fsys = os.DirFS(".")
			if vf.Bundle.Root != "" {
				fsys = os.DirFS(vf.Bundle.Root)
			}
			s42, err := evalfile.Parse(res.Suite, evalfile.WithFiles(fsys, vf.Bundle.EvalFile))
			if err != nil {
				t.Fatalf("the 4.42 reader: %v\n%s", err, res.Suite)
			}
			if s42.Format != evalfile.FormatSuite42 {
				t.Fatalf("the converted suite reads as %s", s42.Format)
			}
			if diff := cmp.Diff(casesOf(v2, false), casesOf(s42, true)); diff != "" {
				t.Errorf("cases (-v2 +4.42):\n%s", diff)
			}
			if diff := cmp.Diff(evaluatorsOf(v2, false), evaluatorsOf(s42, true)); diff != "" {
				t.Errorf("evaluators (-v2 +4.42):\n%s", diff)
			}
			converted++
		})
	}
	t.Logf("%d of %d v2 files converted and read back alike", converted, len(files))
}

// caseView is what both readers must read alike of a case.
type caseView struct {
	ID, Criteria, ConversationID string
	Input, Expected              []messageView
}

type messageView struct {
	Role, Name, Kind string
	// Content is the content as JSON (compacted); Segments its segments' types and values.
	Content   string
	Segments  []string
	ToolCalls []string
}

func casesOf(f *evalfile.File, suite bool) []caseView {
	out := make([]caseView, f.NumCases())
	for i := range out {
		c := f.CaseAt(i)
		out[i] = caseView{ID: c.ID, Criteria: c.ExpectedOutcome, ConversationID: c.ConversationID,
			Input: messagesOf(c.InputMessages, suite), Expected: messagesOf(c.ExpectedMessages, suite)}
	}
	return out
}

func messagesOf(ms []evalfile.Message, suite bool) []messageView {
	var out []messageView
	for _, m := range ms {
		v := messageView{Role: string(m.Role), Name: m.Name, Kind: string(m.Content.Kind), Content: compact(m.Content.Raw)}
		if !suite {
			var named struct{ Name string }
			_ = json.Unmarshal(m.Raw, &named)
			v.Name = named.Name
		}
		if m.Content.Kind == evalfile.ContentNone {
			// The converter writes a message without content with empty text (4.42 drops one without).
			v.Kind, v.Content = string(evalfile.ContentText), `""`
		}
		for _, s := range m.Content.Segments {
			v.Segments = append(v.Segments, string(s.Type)+":"+s.Value)
		}
		if m.Content.Kind == evalfile.ContentSegments {
			v.Content = ""
		}
		for _, tc := range m.ToolCalls {
			v.ToolCalls = append(v.ToolCalls, tc.Tool+" "+compact(tc.Input)+" "+compact(tc.Output))
		}
		out = append(out, v)
	}
	return out
}

func compact(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}

// evaluatorView is what the judges read of an evaluator, in both readers' terms.
type evaluatorView struct {
	Name, Type string
	Weight     float64
	// Settings are the type's settings as the judges read them.
	Settings string
	Members  []evaluatorView
}

func evaluatorsOf(f *evalfile.File, suite bool) [][]evaluatorView {
	out := make([][]evaluatorView, f.NumCases())
	for i := range out {
		for _, ev := range f.CaseAt(i).Evaluators {
			out[i] = append(out[i], evaluatorOf(ev, suite))
		}
	}
	return out
}

func evaluatorOf(ev *evalfile.EvaluatorConfig, suite bool) evaluatorView {
	v := evaluatorView{Name: ev.Name, Type: string(ev.Type), Weight: ev.EffectiveWeight()}
	if ev.Type == evalfile.TypeRubric {
		v.Type = string(evalfile.TypeLLMJudge)
	}
	var s any
	switch {
	case ev.CodeJudge != nil:
		s = map[string]string{"script": strings.TrimSpace(ev.CodeJudge.Script), "cwd": ev.CodeJudge.Cwd,
			"config": compact(ev.CodeJudge.Config)}
	case ev.LLMJudge != nil:
		c := ev.LLMJudge
		var rubrics []string
		for _, r := range c.Rubrics {
			rubrics = append(rubrics, strings.Join([]string{r.ID, r.Outcome, jsonOf(r.Weight), jsonOf(r.Required)}, "|"))
		}
		prompt := ""
		switch {
		case len(c.Rubrics) > 0:
			// A rubric judge asks with its own prompt in both formats.
		case suite && c.PromptFile != "":
			prompt = "file:" + c.PromptFile
		case suite:
			_ = json.Unmarshal(c.Prompt, &prompt)
		default:
			_ = json.Unmarshal(c.Prompt, &prompt)
			if bundle.IsFileRef(prompt) {
				prompt = "file:" + strings.TrimSpace(prompt)
			} else {
				prompt = templateVariable.ReplaceAllStringFunc(prompt, func(m string) string {
					name := templateVariable.FindStringSubmatch(m)[1]
					if r := renamedVariables[name]; r != "" {
						return strings.Replace(m, name, r, 1)
					}
					return m
				})
			}
		}
		s = map[string]any{"prompt": prompt, "model": c.Model, "rubrics": rubrics, "config": compact(c.Config)}
	case ev.Composite != nil:
		c := ev.Composite
		for _, m := range c.Members {
			v.Members = append(v.Members, evaluatorOf(m, suite))
		}
		script := ""
		if c.Script != nil {
			script = c.Script.Script
		}
		prompt := c.Prompt
		switch {
		case suite && c.PromptFile != "":
			prompt = "file:" + c.PromptFile
		case !suite && bundle.IsFileRef(prompt):
			prompt = "file:" + strings.TrimSpace(prompt)
		}
		s = map[string]any{"aggregator": c.Aggregator, "weights": c.Weights, "script": script, "prompt": prompt}
	case ev.ToolTrajectory != nil:
		c := ev.ToolTrajectory
		var expected []string
		withArgs := false
		for _, e := range c.Expected {
			args := compact(e.Args)
			if args == "{}" {
				args = ""
			}
			withArgs = withArgs || args != ""
			expected = append(expected, e.Tool+" "+jsonOf(e.AnyArgs)+" "+args)
		}
		argsMatch := ""
		if withArgs {
			// The v2 judge compares the listed arguments only: 4.42's superset.
			argsMatch = "superset"
			if suite {
				argsMatch = "exact"
				if c.ArgsMatch != nil {
					argsMatch = c.ArgsMatch.Mode
				}
			}
		}
		s = map[string]any{"mode": c.Mode, "minimums": c.Minimums, "expected": expected, "argsMatch": argsMatch}
	case ev.FieldAccuracy != nil:
		s = ev.FieldAccuracy
	case ev.Latency != nil:
		s = ev.Latency
	case ev.Cost != nil:
		s = ev.Cost
	case ev.TokenUsage != nil:
		s = ev.TokenUsage
	}
	v.Settings = jsonOf(s)
	return v
}

func jsonOf(x any) string {
	b, err := json.Marshal(x)
	if err != nil {
		return err.Error()
	}
	return string(b)
}
