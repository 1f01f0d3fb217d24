package evalfile

import (
	"fmt"
	"math"
	"strings"

	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
)

// evaluatorList parses a list of evaluator entries. keyPrefix is the Key of the enclosing composite ("" at top
// level).
func (p *parser) evaluatorList(v *value, path, keyPrefix string) []*EvaluatorConfig {
	if v.kind != kindArray {
		p.add(path, v, "must be a list of evaluators, got %s", v.kind)
		return nil
	}
	out := make([]*EvaluatorConfig, 0, len(v.vals))
	for i, ev := range v.vals {
		if c := p.evaluator(ev, fmt.Sprintf("%s[%d]", path, i), keyPrefix); c != nil {
			out = append(out, c)
		}
	}
	p.uniqueNames(out, path, v)
	return out
}

// evaluator parses one evaluator entry; it returns nil when the entry is unusable (after recording why).
func (p *parser) evaluator(v *value, path, keyPrefix string) *EvaluatorConfig {
	if v.kind != kindObject {
		p.add(path, v, "an evaluator must be a mapping with name and type, got %s", v.kind)
		return nil
	}
	before := len(p.problems)
	ev := &EvaluatorConfig{Raw: p.raw(v)}

	nv := v.get(keyName)
	switch {
	case nv.isNull():
		p.add(path+".name", v, "is required")
	case nv.kind != kindString || nv.str == "":
		p.add(path+".name", nv, "must be a non-empty string")
	case len(nv.str) > maxEvaluatorNameLength:
		p.add(path+".name", nv, "must be at most %d characters", maxEvaluatorNameLength)
	case strings.Contains(nv.str, "/"):
		p.add(path+".name", nv, "must not contain '/' (it separates composite members in result keys)")
	default:
		ev.Name = nv.str
	}
	ev.Key = ev.Name
	if keyPrefix != "" {
		ev.Key = keyPrefix + "/" + ev.Name
	}

	if w := v.get(keyWeight); !w.isNull() {
		if f, ok := p.nonNegative(w, path+".weight"); ok {
			ev.Weight = &f
		}
	}

	tv := v.get(keyType)
	switch {
	case tv.isNull():
		p.add(path+".type", v, "is required (one of %s)", typeList())
		return nil
	case tv.kind != kindString:
		p.add(path+".type", tv, "must be a string, got %s", tv.kind)
		return nil
	}
	ev.Type = EvaluatorType(tv.str)
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
		ev.FieldAccuracy = p.fieldAccuracy(v, path)
	case TypeLatency:
		if t, ok := p.requiredNonNegative(v, "threshold", path, "the largest allowed duration_ms"); ok {
			ev.Latency = &LatencyConfig{ThresholdMs: t}
		}
	case TypeCost:
		if b, ok := p.requiredNonNegative(v, "budget", path, "the largest allowed cost_usd"); ok {
			ev.Cost = &CostConfig{BudgetUSD: b}
		}
	case TypeTokenUsage:
		ev.TokenUsage = p.tokenUsage(v, path)
	default:
		p.add(path+".type", tv, "unknown evaluator type %q: must be one of %s", textbound.Head(tv.str, 40), typeList())
		return nil
	}
	if len(p.problems) > before {
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

func (p *parser) requiredNonNegative(v *value, key, path, meaning string) (float64, bool) {
	x := v.get(key)
	if x.isNull() {
		p.add(joinPath(path, key), v, "is required (%s)", meaning)
		return 0, false
	}
	return p.nonNegative(x, joinPath(path, key))
}

// codeJudge parses a code_judge entry (or a code_judge aggregator, whose script key is path or script). Keys not
// in known become Config.
func (p *parser) codeJudge(v *value, path string, known []string, scriptKeys ...string) *CodeJudgeConfig {
	c := &CodeJudgeConfig{}
	var sv *value
	scriptKey := scriptKeys[0]
	for _, k := range scriptKeys {
		if x := v.get(k); !x.isNull() {
			sv, scriptKey = x, k
			break
		}
	}
	spath := joinPath(path, scriptKey)
	switch {
	case sv == nil:
		p.add(spath, v, "is required: the command that judges the case")
	case sv.kind == kindString:
		if strings.TrimSpace(sv.str) == "" {
			p.add(spath, sv, "must not be empty")
		}
		c.Script = sv.str
	case sv.kind == kindArray:
		if len(sv.vals) == 0 {
			p.add(spath, sv, "must not be empty")
		}
		args := make([]string, 0, len(sv.vals))
		for i, a := range sv.vals {
			if a.kind != kindString || a.str == "" {
				p.add(fmt.Sprintf("%s[%d]", spath, i), a, "must be a non-empty string")
				continue
			}
			args = append(args, shellQuote(a.str))
		}
		c.Script = strings.Join(args, " ")
	default:
		p.add(spath, sv, "must be a command string or a list of arguments, got %s", sv.kind)
	}
	c.Cwd = p.optString(v, "cwd", path)
	if t := v.get(keyTarget); !t.isNull() && t.kind != kindObject && (t.kind != kindBool || !t.b) {
		p.add(joinPath(path, keyTarget), t, "must be a mapping or true")
	}
	c.Config = extraKeys(v, known)
	return c
}

// extraKeys returns the members of obj not named in known, as a JSON object in written order; nil if none.
func extraKeys(obj *value, known []string) []byte {
	extra := &value{kind: kindObject}
	for i, k := range obj.keys {
		if contains(known, k) {
			continue
		}
		extra.keys = append(extra.keys, k)
		extra.vals = append(extra.vals, obj.vals[i])
	}
	if len(extra.keys) == 0 {
		return nil
	}
	return extra.raw()
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// shellQuote quotes an argument for /bin/sh.
func shellQuote(s string) string {
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

func (p *parser) llmJudge(v *value, path string, t EvaluatorType) *LLMJudgeConfig {
	c := &LLMJudgeConfig{}
	if pv := v.get("prompt"); !pv.isNull() {
		if pv.kind != kindString && pv.kind != kindObject {
			p.add(path+".prompt", pv, "must be a string or a mapping, got %s", pv.kind)
		}
		c.Prompt = pv.raw()
	}
	c.Model = p.optString(v, "model", path)
	rv := v.get(keyRubrics)
	if !rv.isNull() {
		c.Rubrics = p.rubrics(rv, path+".rubrics")
	}
	if t == TypeRubric && len(c.Rubrics) == 0 && (rv.isNull() || rv.kind == kindArray) {
		p.add(path+".rubrics", v, "a rubric evaluator needs a non-empty rubrics list")
	}
	extra := &value{kind: kindObject}
	for i, k := range v.keys {
		if contains([]string{keyName, keyType, "prompt", "model", keyRubrics, keyWeight, "config"}, k) {
			continue
		}
		extra.keys = append(extra.keys, k)
		extra.vals = append(extra.vals, v.vals[i])
	}
	if cv := v.get("config"); !cv.isNull() {
		if cv.kind != kindObject {
			p.add(path+".config", cv, "must be a mapping, got %s", cv.kind)
		} else {
			// An explicit config wins over loose keys of the same name.
			for i, k := range cv.keys {
				if j := indexOf(extra.keys, k); j >= 0 {
					extra.vals[j] = cv.vals[i]
					continue
				}
				extra.keys = append(extra.keys, k)
				extra.vals = append(extra.vals, cv.vals[i])
			}
		}
	}
	if len(extra.keys) > 0 {
		c.Config = extra.raw()
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

func (p *parser) composite(v *value, path, key string) *CompositeConfig {
	c := &CompositeConfig{Aggregator: AggregatorWeightedAverage}
	mv := v.get(keyEvaluators)
	switch {
	case mv.isNull():
		p.add(path+".evaluators", v, "is required: the member evaluators of the composite")
	case mv.kind != kindArray:
		p.add(path+".evaluators", mv, "must be a list of evaluators, got %s", mv.kind)
	case len(mv.vals) == 0:
		p.add(path+".evaluators", mv, "must have at least one member evaluator")
	default:
		c.Members = p.evaluatorList(mv, path+".evaluators", key)
	}

	av := v.get("aggregator")
	if av.isNull() {
		return c
	}
	apath := path + ".aggregator"
	if av.kind != kindObject {
		p.add(apath, av, "must be a mapping with a type, got %s", av.kind)
		return c
	}
	at := av.get(keyType)
	if at.isNull() || at.kind != kindString {
		p.add(apath+".type", av, "is required: weighted_average, code_judge or llm_judge")
		return c
	}
	switch AggregatorType(at.str) {
	case AggregatorWeightedAverage:
		if wv := av.get("weights"); !wv.isNull() {
			if wv.kind != kindObject {
				p.add(apath+".weights", wv, "must be a mapping of member name to weight, got %s", wv.kind)
				break
			}
			c.Weights = make(map[string]float64, len(wv.keys))
			for i, name := range wv.keys {
				wpath := joinPath(apath+".weights", name)
				if !memberNamed(c.Members, name) && len(c.Members) > 0 {
					p.add(wpath, wv.vals[i], "no member evaluator is named %q", textbound.Head(name, 80))
					continue
				}
				if f, ok := p.nonNegative(wv.vals[i], wpath); ok {
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
		c.Prompt = p.optString(av, "prompt", apath)
	default:
		p.add(apath+".type", at, "unknown aggregator %q: must be weighted_average, code_judge or llm_judge", textbound.Head(at.str, 40))
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

func (p *parser) toolTrajectory(v *value, path string) *ToolTrajectoryConfig {
	c := &ToolTrajectoryConfig{}
	mv := v.get("mode")
	if mv.isNull() || mv.kind != kindString {
		p.add(path+".mode", v, "is required: any_order, in_order or exact")
		return c
	}
	c.Mode = TrajectoryMode(mv.str)
	switch c.Mode {
	case ModeAnyOrder:
		min := v.get("minimums")
		switch {
		case min.isNull():
			p.add(path+".minimums", v, "is required in any_order mode: a mapping of tool name to least call count")
		case min.kind != kindObject:
			p.add(path+".minimums", min, "must be a mapping of tool name to least call count, got %s", min.kind)
		default:
			for i, tool := range min.keys {
				n := min.vals[i]
				npath := joinPath(path+".minimums", tool)
				if n.kind != kindNumber || n.f < 0 || n.f != math.Trunc(n.f) || n.f > math.MaxInt32 {
					p.add(npath, n, "must be a non-negative whole number")
					continue
				}
				c.Minimums = append(c.Minimums, ToolMinimum{Tool: tool, Count: int(n.f)})
			}
		}
	case ModeInOrder, ModeExact:
		ex := v.get("expected")
		switch {
		case ex.isNull():
			p.add(path+".expected", v, "is required in %s mode: a list of {tool, args}", c.Mode)
		case ex.kind != kindArray:
			p.add(path+".expected", ex, "must be a list of {tool, args}, got %s", ex.kind)
		default:
			c.Expected = make([]ExpectedCall, 0, len(ex.vals))
			for i, item := range ex.vals {
				ipath := fmt.Sprintf("%s.expected[%d]", path, i)
				tool, ok := p.toolItem(item, ipath, "must be a mapping {tool, args}")
				if !ok {
					continue
				}
				call := ExpectedCall{Tool: tool}
				if !p.expectedArgs(item, ipath, &call) {
					continue
				}
				c.Expected = append(c.Expected, call)
			}
		}
	default:
		p.add(path+".mode", mv, "unknown mode %q: must be any_order, in_order or exact", textbound.Head(mv.str, 40))
	}
	return c
}

func (p *parser) fieldAccuracy(v *value, path string) *FieldAccuracyConfig {
	c := &FieldAccuracyConfig{Aggregation: AggregationWeightedAverage}
	fv := v.get("fields")
	switch {
	case fv.isNull():
		p.add(path+".fields", v, "is required: a list of {path, match}")
	case fv.kind != kindArray:
		p.add(path+".fields", fv, "must be a list of {path, match}, got %s", fv.kind)
	case len(fv.vals) == 0:
		p.add(path+".fields", fv, "must have at least one field")
	default:
		for i, item := range fv.vals {
			ipath := fmt.Sprintf("%s.fields[%d]", path, i)
			if item.kind != kindObject {
				p.add(ipath, item, "must be a mapping {path, match}, got %s", item.kind)
				continue
			}
			fs := FieldSpec{Required: true, Weight: 1}
			pv := item.get("path")
			if pv.isNull() || pv.kind != kindString || pv.str == "" {
				p.add(ipath+".path", item, "is required and must be a non-empty string")
			} else if err := checkFieldPath(pv.str); err != "" {
				p.add(ipath+".path", pv, "%s", err)
			} else {
				fs.Path = pv.str
			}
			mv := item.get("match")
			switch {
			case mv.isNull():
				p.add(ipath+".match", item, "is required: exact, numeric_tolerance or date")
			case mv.kind != kindString:
				p.add(ipath+".match", mv, "must be exact, numeric_tolerance or date")
			default:
				switch FieldMatch(mv.str) {
				case MatchExact, MatchNumericTolerance, MatchDate:
					fs.Match = FieldMatch(mv.str)
				default:
					p.add(ipath+".match", mv, "unknown match %q: must be exact, numeric_tolerance or date (use a code_judge for fuzzy matching)", textbound.Head(mv.str, 40))
				}
			}
			fs.Required = p.optBool(item, "required", ipath, true)
			fs.Relative = p.optBool(item, "relative", ipath, false)
			if w := item.get(keyWeight); !w.isNull() {
				if f, ok := p.nonNegative(w, ipath+".weight"); ok {
					fs.Weight = f
				}
			}
			if t := item.get("tolerance"); !t.isNull() {
				if f, ok := p.nonNegative(t, ipath+".tolerance"); ok {
					fs.Tolerance = f
				}
			}
			if fm := item.get("formats"); !fm.isNull() {
				if fm.kind != kindArray {
					p.add(ipath+".formats", fm, "must be a list of date formats, got %s", fm.kind)
				} else {
					for j, s := range fm.vals {
						if s.kind != kindString {
							p.add(fmt.Sprintf("%s.formats[%d]", ipath, j), s, "must be a string")
							continue
						}
						fs.Formats = append(fs.Formats, s.str)
					}
				}
			}
			c.Fields = append(c.Fields, fs)
		}
	}
	if av := v.get("aggregation"); !av.isNull() {
		if av.kind != kindString || (av.str != string(AggregationWeightedAverage) && av.str != string(AggregationAllOrNothing)) {
			p.add(path+".aggregation", av, "must be weighted_average or all_or_nothing")
		} else {
			c.Aggregation = FieldAggregation(av.str)
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

func (p *parser) tokenUsage(v *value, path string) *TokenUsageConfig {
	c := &TokenUsageConfig{}
	read := func(snake, camel string) *float64 { return p.nonNegativeOf(v, path, snake, camel) }
	c.MaxTotal = read("max_total", "maxTotal")
	c.MaxInput = read("max_input", "maxInput")
	c.MaxOutput = read("max_output", "maxOutput")
	if c.MaxTotal == nil && c.MaxInput == nil && c.MaxOutput == nil {
		p.add(path, v, "a token_usage evaluator needs at least one of max_total, max_input, max_output")
	}
	return c
}

// nonNegativeOf reads the non-negative number under v's key snake, else under camel (AgentV reads both spellings);
// nil when neither is set or the value is invalid (the problem is added at its path).
func (p *parser) nonNegativeOf(v *value, path, snake, camel string) *float64 {
	key, x := snake, v.get(snake)
	if x.isNull() {
		key, x = camel, v.get(camel)
	}
	if x.isNull() {
		return nil
	}
	f, ok := p.nonNegative(x, joinPath(path, key))
	if !ok {
		return nil
	}
	return &f
}

// expectedArgs reads an expected tool call's args into call: a mapping of expected values, the string any, or
// nothing (any args). It reports false, with the problem added, for anything else.
func (p *parser) expectedArgs(item *value, ipath string, call *ExpectedCall) bool {
	switch args := item.get("args"); {
	case args.isNull():
	case args.kind == kindString && args.str == "any":
		call.AnyArgs = true
	case args.kind == kindObject:
		call.Args = args.raw()
	default:
		p.add(ipath+".args", args, "must be a mapping of expected argument values or the string any")
		return false
	}
	return true
}
