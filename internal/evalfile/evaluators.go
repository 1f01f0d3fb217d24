package evalfile

import (
	"fmt"
	"math"
	"strings"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile/yamltree"
	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
)

// DefaultEvaluators reads the EvalRun's judging.evaluators (WithDefaultEvaluators), written in agentv-eval-v2's
// evaluator shape whatever the file's format: the file's readers call it where the file's own evaluators are read.
// Their problems have the paths judging.evaluators[i] and CaseIndex -1.
func (p *Parser) DefaultEvaluators(list []map[string]any) []*EvaluatorConfig {
	var out []*EvaluatorConfig
	for i, m := range list {
		path := fmt.Sprintf("judging.evaluators[%d]", i)
		if ev := p.evaluator(yamltree.FromAny(m), path, ""); ev != nil {
			out = append(out, ev)
		}
	}
	p.UniqueNames(out, "judging.evaluators", nil)
	return out
}

// evaluatorList parses a list of evaluator entries. keyPrefix is the Key of the enclosing composite ("" at top
// level).
func (p *Parser) evaluatorList(v *yamltree.Value, path, keyPrefix string) []*EvaluatorConfig {
	if v.Kind != yamltree.KindArray {
		p.Add(path, v, "must be a list of evaluators, got %s", v.Kind)
		return nil
	}
	out := make([]*EvaluatorConfig, 0, len(v.Vals))
	for i, ev := range v.Vals {
		if c := p.evaluator(ev, fmt.Sprintf("%s[%d]", path, i), keyPrefix); c != nil {
			out = append(out, c)
		}
	}
	p.UniqueNames(out, path, v)
	return out
}

// evaluator parses one evaluator entry; it returns nil when the entry is unusable (after recording why).
func (p *Parser) evaluator(v *yamltree.Value, path, keyPrefix string) *EvaluatorConfig {
	if v.Kind != yamltree.KindObject {
		p.Add(path, v, "an evaluator must be a mapping with name and type, got %s", v.Kind)
		return nil
	}
	before := len(p.Problems)
	ev := &EvaluatorConfig{Raw: p.Raw(v)}

	nv := v.Get(keyName)
	switch {
	case nv.IsNull():
		p.Add(path+".name", v, "is required")
	case nv.Kind != yamltree.KindString || nv.Str == "":
		p.Add(path+".name", nv, "must be a non-empty string")
	case len(nv.Str) > MaxEvaluatorNameLength:
		p.Add(path+".name", nv, "must be at most %d characters", MaxEvaluatorNameLength)
	case strings.Contains(nv.Str, "/"):
		p.Add(path+".name", nv, "must not contain '/' (it separates composite members in result keys)")
	default:
		ev.Name = nv.Str
	}
	ev.Key = ev.Name
	if keyPrefix != "" {
		ev.Key = keyPrefix + "/" + ev.Name
	}

	if w := v.Get(keyWeight); !w.IsNull() {
		if f, ok := p.NonNegative(w, path+".weight"); ok {
			ev.Weight = &f
		}
	}

	tv := v.Get(keyType)
	switch {
	case tv.IsNull():
		p.Add(path+".type", v, "is required (one of %s)", typeList())
		return nil
	case tv.Kind != yamltree.KindString:
		p.Add(path+".type", tv, "must be a string, got %s", tv.Kind)
		return nil
	}
	ev.Type = EvaluatorType(tv.Str)
	switch ev.Type {
	case TypeCodeJudge:
		ev.CodeJudge = p.codeJudge(v, path, []string{keyName, keyType, "script", "cwd", keyWeight, keyTarget}, "script")
	case TypeLLMJudge, TypeRubric:
		ev.LLMJudge = p.llmJudge(v, path, ev.Type)
	case TypeComposite:
		ev.Composite = p.composite(v, path, ev.Key)
	case TypeToolTrajectory:
		ev.ToolTrajectory = p.toolTrajectory(v, path)
	case TypeFieldAccuracy:
		ev.FieldAccuracy = p.FieldAccuracy(v, path)
	case TypeLatency:
		if t, ok := p.RequiredNonNegative(v, "threshold", path, "the largest allowed duration_ms"); ok {
			ev.Latency = &LatencyConfig{ThresholdMs: t}
		}
	case TypeCost:
		if b, ok := p.RequiredNonNegative(v, "budget", path, "the largest allowed cost_usd"); ok {
			ev.Cost = &CostConfig{BudgetUSD: b}
		}
	case TypeTokenUsage:
		ev.TokenUsage = p.TokenUsage(v, path)
	default:
		p.Add(path+".type", tv, "unknown evaluator type %q: must be one of %s", textbound.Head(tv.Str, 40), typeList())
		return nil
	}
	if len(p.Problems) > before {
		return nil
	}
	return ev
}

func typeList() string {
	names := make([]string, len(EvaluatorTypes))
	for i, t := range EvaluatorTypes {
		names[i] = string(t)
	}
	return strings.Join(names, ", ")
}

// codeJudge parses a code_judge entry (or a code_judge aggregator, whose script key is path or script). Keys not
// in known become Config.
func (p *Parser) codeJudge(v *yamltree.Value, path string, known []string, scriptKeys ...string) *CodeJudgeConfig {
	c := &CodeJudgeConfig{}
	var sv *yamltree.Value
	scriptKey := scriptKeys[0]
	for _, k := range scriptKeys {
		if x := v.Get(k); !x.IsNull() {
			sv, scriptKey = x, k
			break
		}
	}
	spath := yamltree.JoinPath(path, scriptKey)
	switch {
	case sv == nil:
		p.Add(spath, v, "is required: the command that judges the case")
	case sv.Kind == yamltree.KindString:
		if strings.TrimSpace(sv.Str) == "" {
			p.Add(spath, sv, "must not be empty")
		}
		c.Script = sv.Str
	case sv.Kind == yamltree.KindArray:
		if len(sv.Vals) == 0 {
			p.Add(spath, sv, "must not be empty")
		}
		args := make([]string, 0, len(sv.Vals))
		for i, a := range sv.Vals {
			if a.Kind != yamltree.KindString || a.Str == "" {
				p.Add(fmt.Sprintf("%s[%d]", spath, i), a, "must be a non-empty string")
				continue
			}
			args = append(args, ShellQuote(a.Str))
		}
		c.Script = strings.Join(args, " ")
	default:
		p.Add(spath, sv, "must be a command string or a list of arguments, got %s", sv.Kind)
	}
	c.Cwd = p.OptString(v, "cwd", path)
	if t := v.Get(keyTarget); !t.IsNull() && t.Kind != yamltree.KindObject && (t.Kind != yamltree.KindBool || !t.Bool) {
		p.Add(yamltree.JoinPath(path, keyTarget), t, "must be a mapping or true")
	}
	c.Config = extraKeys(v, known)
	return c
}

// extraKeys returns the members of obj not named in known, as a JSON object in written order; nil if none.
func extraKeys(obj *yamltree.Value, known []string) []byte {
	extra := &yamltree.Value{Kind: yamltree.KindObject}
	for i, k := range obj.Keys {
		if contains(known, k) {
			continue
		}
		extra.Keys = append(extra.Keys, k)
		extra.Vals = append(extra.Vals, obj.Vals[i])
	}
	if len(extra.Keys) == 0 {
		return nil
	}
	return extra.Raw()
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// ShellQuote quotes an argument for /bin/sh, as CodeJudgeConfig.Script joins a command written as a list.
func ShellQuote(s string) string {
	safe := true
	for _, r := range s {
		isSafe := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%", r)
		if !isSafe {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func (p *Parser) llmJudge(v *yamltree.Value, path string, t EvaluatorType) *LLMJudgeConfig {
	c := &LLMJudgeConfig{}
	if pv := v.Get("prompt"); !pv.IsNull() {
		if pv.Kind != yamltree.KindString && pv.Kind != yamltree.KindObject {
			p.Add(path+".prompt", pv, "must be a string or a mapping, got %s", pv.Kind)
		}
		c.Prompt = pv.Raw()
	}
	c.Model = p.OptString(v, "model", path)
	rv := v.Get(keyRubrics)
	if !rv.IsNull() {
		c.Rubrics = p.rubrics(rv, path+".rubrics")
	}
	if t == TypeRubric && len(c.Rubrics) == 0 && (rv.IsNull() || rv.Kind == yamltree.KindArray) {
		p.Add(path+".rubrics", v, "a rubric evaluator needs a non-empty rubrics list")
	}
	extra := &yamltree.Value{Kind: yamltree.KindObject}
	for i, k := range v.Keys {
		if contains([]string{keyName, keyType, "prompt", "model", keyRubrics, keyWeight, "config"}, k) {
			continue
		}
		extra.Keys = append(extra.Keys, k)
		extra.Vals = append(extra.Vals, v.Vals[i])
	}
	if cv := v.Get("config"); !cv.IsNull() {
		if cv.Kind != yamltree.KindObject {
			p.Add(path+".config", cv, "must be a mapping, got %s", cv.Kind)
		} else {
			// An explicit config wins over loose keys of the same name.
			for i, k := range cv.Keys {
				if j := indexOf(extra.Keys, k); j >= 0 {
					extra.Vals[j] = cv.Vals[i]
					continue
				}
				extra.Keys = append(extra.Keys, k)
				extra.Vals = append(extra.Vals, cv.Vals[i])
			}
		}
	}
	if len(extra.Keys) > 0 {
		c.Config = extra.Raw()
	}
	return c
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

func (p *Parser) composite(v *yamltree.Value, path, key string) *CompositeConfig {
	c := &CompositeConfig{Aggregator: AggregatorWeightedAverage}
	mv := v.Get(keyEvaluators)
	switch {
	case mv.IsNull():
		p.Add(path+".evaluators", v, "is required: the member evaluators of the composite")
	case mv.Kind != yamltree.KindArray:
		p.Add(path+".evaluators", mv, "must be a list of evaluators, got %s", mv.Kind)
	case len(mv.Vals) == 0:
		p.Add(path+".evaluators", mv, "must have at least one member evaluator")
	default:
		c.Members = p.evaluatorList(mv, path+".evaluators", key)
	}

	av := v.Get("aggregator")
	if av.IsNull() {
		return c
	}
	apath := path + ".aggregator"
	if av.Kind != yamltree.KindObject {
		p.Add(apath, av, "must be a mapping with a type, got %s", av.Kind)
		return c
	}
	at := av.Get(keyType)
	if at.IsNull() || at.Kind != yamltree.KindString {
		p.Add(apath+".type", av, "is required: weighted_average, code_judge or llm_judge")
		return c
	}
	switch AggregatorType(at.Str) {
	case AggregatorWeightedAverage:
		if wv := av.Get("weights"); !wv.IsNull() {
			if wv.Kind != yamltree.KindObject {
				p.Add(apath+".weights", wv, "must be a mapping of member name to weight, got %s", wv.Kind)
				break
			}
			c.Weights = make(map[string]float64, len(wv.Keys))
			for i, name := range wv.Keys {
				wpath := yamltree.JoinPath(apath+".weights", name)
				if !memberNamed(c.Members, name) && len(c.Members) > 0 {
					p.Add(wpath, wv.Vals[i], "no member evaluator is named %q", textbound.Head(name, 80))
					continue
				}
				if f, ok := p.NonNegative(wv.Vals[i], wpath); ok {
					c.Weights[name] = f
				}
			}
		}
		c.Aggregator = AggregatorWeightedAverage
	case AggregatorCodeJudge:
		c.Aggregator = AggregatorCodeJudge
		c.Script = p.codeJudge(av, apath, []string{keyType, "path", "script", "cwd", keyTarget}, "path", "script")
	case AggregatorLLMJudge:
		c.Aggregator = AggregatorLLMJudge
		c.Prompt = p.OptString(av, "prompt", apath)
	default:
		p.Add(apath+".type", at, "unknown aggregator %q: must be weighted_average, code_judge or llm_judge", textbound.Head(at.Str, 40))
	}
	return c
}

func memberNamed(members []*EvaluatorConfig, name string) bool {
	for _, m := range members {
		if m.Name == name {
			return true
		}
	}
	return false
}

func (p *Parser) toolTrajectory(v *yamltree.Value, path string) *ToolTrajectoryConfig {
	c := &ToolTrajectoryConfig{}
	mv := v.Get("mode")
	if mv.IsNull() || mv.Kind != yamltree.KindString {
		p.Add(path+".mode", v, "is required: any_order, in_order or exact")
		return c
	}
	c.Mode = TrajectoryMode(mv.Str)
	switch c.Mode {
	case ModeAnyOrder:
		min := v.Get("minimums")
		switch {
		case min.IsNull():
			p.Add(path+".minimums", v, "is required in any_order mode: a mapping of tool name to least call count")
		case min.Kind != yamltree.KindObject:
			p.Add(path+".minimums", min, "must be a mapping of tool name to least call count, got %s", min.Kind)
		default:
			for i, tool := range min.Keys {
				n := min.Vals[i]
				npath := yamltree.JoinPath(path+".minimums", tool)
				if n.Kind != yamltree.KindNumber || n.Float < 0 || n.Float != math.Trunc(n.Float) || n.Float > math.MaxInt32 {
					p.Add(npath, n, "must be a non-negative whole number")
					continue
				}
				c.Minimums = append(c.Minimums, ToolMinimum{Tool: tool, Count: int(n.Float)})
			}
		}
	case ModeInOrder, ModeExact:
		ex := v.Get("expected")
		switch {
		case ex.IsNull():
			p.Add(path+".expected", v, "is required in %s mode: a list of {tool, args}", c.Mode)
		case ex.Kind != yamltree.KindArray:
			p.Add(path+".expected", ex, "must be a list of {tool, args}, got %s", ex.Kind)
		default:
			c.Expected = make([]ExpectedCall, 0, len(ex.Vals))
			for i, item := range ex.Vals {
				ipath := fmt.Sprintf("%s.expected[%d]", path, i)
				tool, ok := p.ToolItem(item, ipath, "must be a mapping {tool, args}")
				if !ok {
					continue
				}
				call := ExpectedCall{Tool: tool}
				if !p.ExpectedArgs(item, ipath, &call) {
					continue
				}
				c.Expected = append(c.Expected, call)
			}
		}
	default:
		p.Add(path+".mode", mv, "unknown mode %q: must be any_order, in_order or exact", textbound.Head(mv.Str, 40))
	}
	return c
}

// FieldAccuracy reads a field_accuracy evaluator's fields and aggregation (a 4.42 field-accuracy grader's alike).
func (p *Parser) FieldAccuracy(v *yamltree.Value, path string) *FieldAccuracyConfig {
	c := &FieldAccuracyConfig{Aggregation: AggregationWeightedAverage}
	fv := v.Get("fields")
	switch {
	case fv.IsNull():
		p.Add(path+".fields", v, "is required: a list of {path, match}")
	case fv.Kind != yamltree.KindArray:
		p.Add(path+".fields", fv, "must be a list of {path, match}, got %s", fv.Kind)
	case len(fv.Vals) == 0:
		p.Add(path+".fields", fv, "must have at least one field")
	default:
		for i, item := range fv.Vals {
			ipath := fmt.Sprintf("%s.fields[%d]", path, i)
			if item.Kind != yamltree.KindObject {
				p.Add(ipath, item, "must be a mapping {path, match}, got %s", item.Kind)
				continue
			}
			fs := FieldSpec{Required: true, Weight: 1}
			pv := item.Get("path")
			if pv.IsNull() || pv.Kind != yamltree.KindString || pv.Str == "" {
				p.Add(ipath+".path", item, "is required and must be a non-empty string")
			} else if err := checkFieldPath(pv.Str); err != "" {
				p.Add(ipath+".path", pv, "%s", err)
			} else {
				fs.Path = pv.Str
			}
			mv := item.Get("match")
			switch {
			case mv.IsNull():
				p.Add(ipath+".match", item, "is required: exact, numeric_tolerance or date")
			case mv.Kind != yamltree.KindString:
				p.Add(ipath+".match", mv, "must be exact, numeric_tolerance or date")
			default:
				switch FieldMatch(mv.Str) {
				case MatchExact, MatchNumericTolerance, MatchDate:
					fs.Match = FieldMatch(mv.Str)
				default:
					p.Add(ipath+".match", mv, "unknown match %q: must be exact, numeric_tolerance or date (use a code_judge for fuzzy matching)", textbound.Head(mv.Str, 40))
				}
			}
			fs.Required = p.OptBool(item, "required", ipath, true)
			fs.Relative = p.OptBool(item, "relative", ipath, false)
			if w := item.Get(keyWeight); !w.IsNull() {
				if f, ok := p.NonNegative(w, ipath+".weight"); ok {
					fs.Weight = f
				}
			}
			if t := item.Get("tolerance"); !t.IsNull() {
				if f, ok := p.NonNegative(t, ipath+".tolerance"); ok {
					fs.Tolerance = f
				}
			}
			if fm := item.Get("formats"); !fm.IsNull() {
				if fm.Kind != yamltree.KindArray {
					p.Add(ipath+".formats", fm, "must be a list of date formats, got %s", fm.Kind)
				} else {
					for j, s := range fm.Vals {
						if s.Kind != yamltree.KindString {
							p.Add(fmt.Sprintf("%s.formats[%d]", ipath, j), s, "must be a string")
							continue
						}
						fs.Formats = append(fs.Formats, s.Str)
					}
				}
			}
			c.Fields = append(c.Fields, fs)
		}
	}
	if av := v.Get("aggregation"); !av.IsNull() {
		if av.Kind != yamltree.KindString || (av.Str != string(AggregationWeightedAverage) && av.Str != string(AggregationAllOrNothing)) {
			p.Add(path+".aggregation", av, "must be weighted_average or all_or_nothing")
		} else {
			c.Aggregation = FieldAggregation(av.Str)
		}
	}
	return c
}

// checkFieldPath returns why a field path is malformed, or "".
func checkFieldPath(path string) string {
	if _, err := SplitFieldPath(path); err != nil {
		return err.Error()
	}
	return ""
}

// TokenUsage reads a token_usage evaluator's limits (a 4.42 token-usage grader's alike): at least one is set.
func (p *Parser) TokenUsage(v *yamltree.Value, path string) *TokenUsageConfig {
	c := &TokenUsageConfig{}
	read := func(snake, camel string) *float64 { return p.NonNegativeOf(v, path, snake, camel) }
	c.MaxTotal = read("max_total", "maxTotal")
	c.MaxInput = read("max_input", "maxInput")
	c.MaxOutput = read("max_output", "maxOutput")
	if c.MaxTotal == nil && c.MaxInput == nil && c.MaxOutput == nil {
		p.Add(path, v, "a token_usage evaluator needs at least one of max_total, max_input, max_output")
	}
	return c
}

// ExpectedArgs reads an expected tool call's args into call: a mapping of expected values, the string any, or
// nothing (any args). It reports false, with the problem added, for anything else.
func (p *Parser) ExpectedArgs(item *yamltree.Value, ipath string, call *ExpectedCall) bool {
	switch args := item.Get("args"); {
	case args.IsNull():
	case args.Kind == yamltree.KindString && args.Str == "any":
		call.AnyArgs = true
	case args.Kind == yamltree.KindObject:
		call.Args = args.Raw()
	default:
		p.Add(ipath+".args", args, "must be a mapping of expected argument values or the string any")
		return false
	}
	return true
}
