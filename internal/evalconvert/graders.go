package evalconvert

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/evalrun-operator/evalrun-operator/internal/bundle"
)

// graderTypes are the AgentV 4.42 grader types of the v2 evaluator types.
var graderTypes = map[string]string{
	"code_judge": "code-grader", "llm_judge": "llm-grader", "rubric": "rubrics", "composite": "composite",
	"tool_trajectory": "tool-trajectory", "field_accuracy": "field-accuracy", "latency": "latency", "cost": "cost",
	"token_usage": "token-usage",
}

// evaluatorList converts a list of v2 evaluators (at path) into assertions.
func (c *converter) evaluatorList(list *yaml.Node, path string) *yaml.Node {
	out := seq()
	out.Style = list.Style
	for i, e := range list.Content {
		if g := c.evaluator(e, path+"["+strconv.Itoa(i)+"]"); g != nil {
			out.Content = append(out.Content, g)
		}
	}
	return out
}

// evaluator converts one v2 evaluator (valid: the v2 reader read it) into a grader.
func (c *converter) evaluator(e *yaml.Node, path string) *yaml.Node {
	typ := lookup(e, "type").Value
	g := newMapping()
	g.n.Style = e.Style
	g.n.HeadComment, g.n.LineComment, g.n.FootComment = e.HeadComment, e.LineComment, e.FootComment
	g.set(keyName, lookup(e, keyName), keyNode(e, keyName))
	g.set("type", str(graderTypes[typ]), keyNode(e, "type"))
	if w := lookup(e, "weight"); !isNull(w) {
		g.set("weight", w, keyNode(e, "weight"))
	}
	switch typ {
	case "code_judge":
		c.codeJudge(g, e, path)
	case "llm_judge":
		c.llmJudge(g, e, path)
	case "rubric":
		c.rubric(g, e, path)
	case "composite":
		c.composite(g, e, path)
	case "tool_trajectory":
		c.toolTrajectory(g, e, path)
	case "field_accuracy":
		c.copyKeys(g, e, path, "fields", "aggregation")
	case "latency":
		c.copyKeys(g, e, path, "threshold")
	case "cost":
		c.copyKeys(g, e, path, "budget")
	case "token_usage":
		c.copyKeys(g, e, path, "max_total", "maxTotal", "max_input", "maxInput", "max_output", "maxOutput")
	}
	return g.n
}

// copyKeys copies the keys of e the v2 reader reads for its type (keys) into g; any other key is dropped with a
// note (the v2 reader ignores it; AgentV 4.42 might read it as something else).
func (c *converter) copyKeys(g *mapping, e *yaml.Node, path string, keys ...string) {
	known := append([]string{keyName, keyType, keyWeight}, keys...)
	for _, k := range without(e, known...) {
		c.note(k, path+"."+k.Value, false, "dropped: the v2 reader ignores this key of a %s evaluator", lookup(e, "type").Value)
	}
	pairs(e, func(k, v *yaml.Node) {
		if slices.Contains(keys, k.Value) && !isNull(v) {
			g.set(k.Value, v, k)
		}
	})
}

// configOf is an evaluator's pass-through config as the v2 reader makes it: the keys not in known, in order, and
// with merge set (llm_judge), a config mapping's keys merged over them; nil when there are none.
func configOf(e *yaml.Node, known []string, merge bool) *yaml.Node {
	cfg := newMapping()
	pairs(e, func(k, v *yaml.Node) {
		if slices.Contains(known, k.Value) || (merge && k.Value == "config") {
			return
		}
		cfg.set(k.Value, v, k)
	})
	if merge {
		pairs(lookup(e, "config"), func(k, v *yaml.Node) {
			for i := 0; i+1 < len(cfg.n.Content); i += 2 {
				if cfg.n.Content[i].Value == k.Value {
					cfg.n.Content[i+1] = v
					return
				}
			}
			cfg.set(k.Value, v, k)
		})
	}
	if cfg.empty() {
		return nil
	}
	return cfg.n
}

// stdinNote is why a code judge converted to a code-grader judges differently.
const stdinNote = "a code_judge becomes a code-grader, whose command reads AgentV 4.42's stdin (output, criteria, " +
	"expected_output, input, ... in snake_case) instead of v2's (candidate_answer, expected_outcome, " +
	"reference_answer, question, ...), and whose reply may carry assertions instead of hits and misses: change the " +
	"script %q to read 4.42's fields (docs/judging.md, code-grader)"

// codeJudge converts a code_judge: script becomes command; cwd stays; every other key is its config, as the v2
// reader passes it to the script (under config, so that no key is read by AgentV 4.42 as a modifier).
func (c *converter) codeJudge(g *mapping, e *yaml.Node, path string) {
	script := lookup(e, "script")
	g.set("command", script, keyNode(e, "script"))
	if cwd := lookup(e, "cwd"); !isNull(cwd) {
		g.set("cwd", cwd, keyNode(e, "cwd"))
	}
	if t := keyNode(e, "target"); t != nil {
		c.note(t, path+".target", false, "dropped: the operator's v2 judges ignore a code_judge's target (AgentV's LLM "+
			"proxy), and AgentV 4.42 refuses a code-grader's")
	}
	if cfg := configOf(e, []string{keyName, keyType, "script", "cwd", keyWeight, "target"}, false); cfg != nil {
		g.set("config", cfg, nil)
	}
	c.note(keyNode(e, "script"), path+".script", true, stdinNote, scriptText(script))
}

// scriptText is a script as one line, for a note.
func scriptText(n *yaml.Node) string {
	if n.Kind != yaml.SequenceNode {
		return n.Value
	}
	var args []string
	for _, a := range n.Content {
		args = append(args, a.Value)
	}
	return strings.Join(args, " ")
}

// templateVariable matches a prompt's {{ name }} (the judges' pattern).
var templateVariable = regexp.MustCompile(`\{\{\s*([a-zA-Z0-9_]+)\s*\}\}`)

// renamedVariables are v2's template variables that AgentV 4.42 fills under another name with the same part of
// the case; v2Only are those it has nothing for.
var (
	renamedVariables = map[string]string{"candidate_answer": "output", "reference_answer": "expected_output",
		"expected_outcome": "criteria", "question": "input"}
	v2Only = []string{"input_messages", "expected_messages", "output_messages"}
	// variables42 are AgentV 4.42's template variables: one in a v2 prompt was text there and is filled here.
	variables42 = []string{"expected_output", "criteria", "metadata", "metadata_json", "rubrics", "rubrics_json",
		"input", "output", "file_changes", "tool_calls"}
)

// llmJudge converts an llm_judge: its prompt (a file reference becomes file://PATH; inline text with its variables
// renamed), model and rubrics; every other key is its config.
func (c *converter) llmJudge(g *mapping, e *yaml.Node, path string) {
	rubrics := lookup(e, "rubrics")
	prompt, promptKey := lookup(e, "prompt"), keyNode(e, "prompt")
	switch {
	case isNull(prompt):
	case !isNull(rubrics):
		c.note(promptKey, path+".prompt", false, "dropped: an llm_judge with rubrics asks with the rubric prompt and "+
			"ignores its own (AgentV 4.42 would use it)")
	default:
		if p := c.prompt(prompt, path+".prompt", promptKey); p != nil {
			g.set("prompt", p, promptKey)
		}
	}
	if m := lookup(e, "model"); !isNull(m) {
		g.set("model", m, keyNode(e, "model"))
	}
	if !isNull(rubrics) {
		g.set("rubrics", c.rubricItems(rubrics, path+".rubrics", false), keyNode(e, "rubrics"))
	}
	if cfg := configOf(e, []string{keyName, keyType, "prompt", "model", "rubrics", keyWeight}, true); cfg != nil {
		g.set("config", cfg, keyNode(e, "config"))
	}
	c.note(keyNode(e, "type"), path, false, "an llm_judge becomes an llm-grader: AgentV 4.42 asks with its own prompts "+
		"and reply schema, and the grader passes at 0.8 (the test at its threshold)")
}

// prompt converts an llm_judge's prompt: a file reference becomes file://PATH (its file checked for v2's
// variables), inline text keeps its text with v2's variables renamed to 4.42's. A prompt script (a mapping) is left
// out: nil.
func (c *converter) prompt(p *yaml.Node, path string, key *yaml.Node) *yaml.Node {
	if !isString(p) {
		c.note(key, path, true, "left out: a prompt written as a mapping is a prompt script, an Error in the v2 judges "+
			"and refused by AgentV 4.42's reader; the grader asks with the default prompt")
		return nil
	}
	if bundle.IsFileRef(p.Value) {
		ref := strings.TrimSpace(p.Value)
		c.promptFile(ref, path, key)
		out := str("file://" + ref)
		return out
	}
	text := c.renameVariables(p.Value, path, key, "")
	out := *p
	out.Value = text
	if !hasVariable42(text) {
		c.note(key, path, false, "AgentV 4.42 reads an inline prompt without template variables as the criteria, in "+
			"its default prompt (the v2 judges send it as the whole prompt)")
	}
	return &out
}

// hasVariable42 reports whether a prompt names one of AgentV 4.42's template variables.
func hasVariable42(text string) bool {
	for _, m := range templateVariable.FindAllStringSubmatch(text, -1) {
		if slices.Contains(variables42, m[1]) {
			return true
		}
	}
	return false
}

// renameVariables renames v2's template variables in an inline prompt (file "") or reports them in a prompt file
// (which the converter does not write), and reports those AgentV 4.42 has nothing for, and 4.42's names that v2
// left as text.
func (c *converter) renameVariables(text, path string, key *yaml.Node, file string) string {
	out := templateVariable.ReplaceAllStringFunc(text, func(m string) string {
		name := templateVariable.FindStringSubmatch(m)[1]
		switch {
		case renamedVariables[name] != "" && file == "":
			return strings.Replace(m, name, renamedVariables[name], 1)
		case renamedVariables[name] != "":
			c.fileNote(file, text, m, key, path, true, "{{%s}} is AgentV v2's variable; AgentV 4.42 fills {{%s}} with "+
				"the same part of the case: rename it in the file", name, renamedVariables[name])
		case slices.Contains(v2Only, name):
			c.fileNote(file, text, m, key, path, true, "{{%s}} has no AgentV 4.42 counterpart (4.42 fills %s): the "+
				"grader would see it as text", name, strings.Join(variables42, ", "))
		case slices.Contains(variables42, name):
			c.fileNote(file, text, m, key, path, true, "{{%s}} is text to the v2 judges, and AgentV 4.42 fills it", name)
		}
		return m
	})
	return out
}

// fileNote notes something of a prompt: in a prompt file (file set) at the line of match in text, else at key.
func (c *converter) fileNote(file, text, match string, key *yaml.Node, path string, differs bool, format string, args ...any) {
	if file == "" {
		c.note(key, path, differs, format, args...)
		return
	}
	line := 1 + strings.Count(text[:strings.Index(text, match)], "\n")
	c.notes = append(c.notes, Note{File: file, Line: line, Path: path, Differs: differs,
		Message: fmt.Sprintf(format, args...)})
}

// promptFile checks a prompt file's template variables (it stays as it is: AgentV 4.42 reads the same file).
func (c *converter) promptFile(ref, path string, key *yaml.Node) {
	if c.o.Bundle.Root == "" {
		c.note(key, path, false, "the prompt file %q was not checked for AgentV v2's template variables (no eval "+
			"bundle to read it from)", ref)
		return
	}
	data, p, err := c.o.Bundle.ReadFile(ref, maxPromptBytes)
	if err != nil {
		c.note(key, path, false, "the prompt file %q was not checked for AgentV v2's template variables: %v (both "+
			"formats' judges fail the same way)", ref, err)
		return
	}
	c.renameVariables(strings.ReplaceAll(string(data), "\r\n", "\n"), path, key, p)
}

// maxPromptBytes bounds a prompt file read (the judges' bound on a bundle file).
const maxPromptBytes = 1 << 20

// rubric converts a rubric evaluator into a rubrics grader with its items as criteria (the v2 rubric judge reads
// nothing else of it).
func (c *converter) rubric(g *mapping, e *yaml.Node, path string) {
	g.set("criteria", c.rubricItems(lookup(e, "rubrics"), path+".rubrics", true), keyNode(e, "rubrics"))
	for _, k := range without(e, keyName, keyType, keyWeight, "rubrics") {
		c.note(k, path+"."+k.Value, false, "dropped: the v2 rubric judge ignores this key")
	}
	c.note(keyNode(e, "type"), path, false, "a rubric evaluator becomes a rubrics grader: AgentV 4.42 asks with its "+
		"own checklist prompt")
}

// rubricsGrader is a case's inline rubrics as a rubrics grader named as the v2 reader names it.
func (c *converter) rubricsGrader(rubrics *yaml.Node, path string) *yaml.Node {
	g := newMapping()
	g.set(keyName, str("rubrics"), nil)
	g.set("type", str("rubrics"), nil)
	g.set("criteria", c.rubricItems(rubrics, path, true), nil)
	return g.n
}

// rubricItems converts v2 rubric items: a string stays (where strs allows it; else {outcome}), a mapping's
// expected_outcome (or description) becomes outcome, and id, weight and required stay. score_ranges, which the v2
// judges ignore, are left out.
func (c *converter) rubricItems(list *yaml.Node, path string, strs bool) *yaml.Node {
	out := seq()
	out.Style = list.Style
	for i, item := range list.Content {
		ipath := path + "[" + strconv.Itoa(i) + "]"
		if isString(item) {
			if strs {
				out.Content = append(out.Content, item)
				continue
			}
			r := newMapping()
			r.set("outcome", item, nil)
			out.Content = append(out.Content, r.n)
			continue
		}
		r := newMapping()
		r.n.Style = item.Style
		r.n.HeadComment, r.n.LineComment = item.HeadComment, item.LineComment
		outcome, outcomeKey := lookup(item, "expected_outcome"), keyNode(item, "expected_outcome")
		if isNull(outcome) || outcome.Value == "" {
			outcome, outcomeKey = lookup(item, "description"), keyNode(item, "description")
		}
		pairs(item, func(k, v *yaml.Node) {
			switch k.Value {
			case "id", "weight", "required":
				r.set(k.Value, v, k)
			case "expected_outcome", "description":
				if k == outcomeKey && !isNull(outcome) && outcome.Value != "" {
					r.set("outcome", outcome, k)
				}
			case "score_ranges":
				c.note(k, ipath+".score_ranges", false, "dropped: the v2 judges ignore a rubric's score ranges "+
					"(AgentV 4.42 would score by them)")
			default:
				c.note(k, ipath+"."+k.Value, false, "dropped: the v2 reader ignores this key of a rubric")
			}
		})
		out.Content = append(out.Content, r.n)
	}
	return out
}

// composite converts a composite: evaluators become assertions (each member converted), and its aggregator
// (weighted_average by default, which AgentV 4.42 must be told).
func (c *converter) composite(g *mapping, e *yaml.Node, path string) {
	g.set("assertions", c.evaluatorList(lookup(e, "evaluators"), path+".evaluators"), keyNode(e, "evaluators"))
	agg, aggKey := lookup(e, "aggregator"), keyNode(e, "aggregator")
	a := newMapping()
	apath := path + ".aggregator"
	switch {
	case isNull(agg):
		a.set("type", str("weighted_average"), nil)
	default:
		typ := lookup(agg, "type").Value
		switch typ {
		case "weighted_average":
			a.set("type", str(typ), keyNode(agg, "type"))
			if w := lookup(agg, "weights"); !isNull(w) {
				a.set("weights", w, keyNode(agg, "weights"))
			}
			c.dropAggregatorKeys(agg, apath, "type", "weights")
		case "code_judge":
			a.set("type", str("code-grader"), keyNode(agg, "type"))
			sk := keyNode(agg, "path")
			script := lookup(agg, "path")
			if isNull(script) {
				sk, script = keyNode(agg, "script"), lookup(agg, "script")
			}
			a.set("path", str(scriptCommand(script)), sk)
			if k := keyNode(agg, "cwd"); k != nil {
				c.note(k, apath+".cwd", true, "AgentV 4.42's code-grader aggregator has no cwd: it runs in the eval "+
					"file's directory")
			}
			for _, k := range without(agg, "type", "path", "script", "cwd", "target") {
				c.note(k, apath+"."+k.Value, true, "AgentV 4.42's code-grader aggregator takes no config: the v2 "+
					"judges pass this key to the script, 4.42 does not")
			}
			c.note(sk, apath+"."+sk.Value, true, "a code_judge aggregator becomes a code-grader aggregator, whose "+
				"script reads AgentV 4.42's stdin ({results: {member: score...}} in camelCase): change the script %q",
				scriptText(script))
		case "llm_judge":
			a.set("type", str("llm-grader"), keyNode(agg, "type"))
			if p := lookup(agg, "prompt"); !isNull(p) {
				pk := keyNode(agg, "prompt")
				if bundle.IsFileRef(p.Value) {
					ref := strings.TrimSpace(p.Value)
					a.set("prompt", str("file://"+ref), pk)
				} else {
					a.set("prompt", p, pk)
				}
			}
			c.dropAggregatorKeys(agg, apath, "type", "prompt")
			c.note(keyNode(agg, "type"), apath, false, "an llm_judge aggregator becomes an llm-grader aggregator: "+
				"AgentV 4.42 asks with its reply schema")
		}
	}
	g.set("aggregator", a.n, aggKey)
	for _, k := range without(e, keyName, keyType, keyWeight, "evaluators", "aggregator") {
		c.note(k, path+"."+k.Value, false, "dropped: the v2 reader ignores this key of a composite")
	}
}

// dropAggregatorKeys notes an aggregator's keys that the v2 reader ignores.
func (c *converter) dropAggregatorKeys(agg *yaml.Node, apath string, known ...string) {
	for _, k := range without(agg, known...) {
		c.note(k, apath+"."+k.Value, false, "dropped: the v2 reader ignores this key of the aggregator")
	}
}

// scriptCommand is a script (a string, or a list of arguments) as one shell command, as the v2 reader joins it.
func scriptCommand(n *yaml.Node) string {
	if n.Kind != yaml.SequenceNode {
		return n.Value
	}
	var args []string
	for _, a := range n.Content {
		args = append(args, shellQuote(a.Value))
	}
	return strings.Join(args, " ")
}

// shellQuote quotes an argument for /bin/sh as the v2 reader does.
func shellQuote(s string) string {
	safe := s != ""
	for _, r := range s {
		if (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (r < '0' || r > '9') && !strings.ContainsRune("-_./=:,+@%", r) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// toolTrajectory converts a tool_trajectory: mode, minimums and expected calls stay; the v2 judge compares the
// arguments an expected call lists and ignores the others, which is AgentV 4.42's args_match: superset (its default
// is exact).
func (c *converter) toolTrajectory(g *mapping, e *yaml.Node, path string) {
	for _, k := range without(e, keyName, keyType, keyWeight, "mode", "minimums", "expected") {
		c.note(k, path+"."+k.Value, false, "dropped: the v2 reader ignores this key of a tool_trajectory evaluator")
	}
	g.set("mode", lookup(e, "mode"), keyNode(e, "mode"))
	if m := lookup(e, "minimums"); !isNull(m) {
		g.set("minimums", m, keyNode(e, "minimums"))
	}
	expected := lookup(e, "expected")
	if isNull(expected) {
		return
	}
	out := seq()
	out.Style = expected.Style
	withArgs := false
	for i, item := range expected.Content {
		call := newMapping()
		call.n.Style = item.Style
		call.n.HeadComment, call.n.LineComment = item.HeadComment, item.LineComment
		pairs(item, func(k, v *yaml.Node) {
			switch {
			case k.Value == "tool":
				call.set("tool", v, k)
			case k.Value == "args" && v.Kind == yaml.MappingNode && len(v.Content) == 0:
				// No argument listed: any arguments match, as without args.
			case k.Value == "args":
				call.set("args", v, k)
				withArgs = withArgs || v.Kind == yaml.MappingNode
			default:
				c.note(k, path+".expected["+strconv.Itoa(i)+"]."+k.Value, false, "dropped: the v2 reader ignores this "+
					"key of an expected call")
			}
		})
		out.Content = append(out.Content, call.n)
	}
	g.set("expected", out, keyNode(e, "expected"))
	if withArgs {
		g.set("args_match", str("superset"), nil)
	}
}
