package suite42

import (
	"fmt"
	"math"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/evalfile/yamltree"
	"github.com/evalrun-operator/evalrun-operator/internal/jsonenc"
	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
)

// A 4.42 suite's assertions are a list of graders (AgentV 4.42's builtin-graders.ts registers them), strings (each
// a criterion: all of a list's strings make one rubrics grader, weighted by their number, where the first string
// is) and include entries ({include: NAME}: the assertions of a template file, .agentv/templates/NAME.yaml searched
// from the eval file's directory up to the root, or a path; nested up to three deep, never in a cycle). Each grader
// takes the v2 evaluator type that plans the same work (EvaluatorConfig.Grader keeps AgentV's name).

// graderKinds are AgentV 4.42's grader types (types.ts GRADER_KIND_VALUES): those builtin-graders.ts registers, and
// rubric and rubrics, which its loader turns into llm-grader.
var graderKinds = []string{
	graderCode, graderLLM, graderRubric, "composite", "tool-trajectory", "field-accuracy", "latency", "cost",
	"token-usage", "execution-metrics", "skill-trigger", "contains", "contains-any", "contains-all", "icontains",
	"icontains-any", "icontains-all", "starts-with", "ends-with", "regex", "is-json", "equals", graderRubrics,
	"inline-assert",
}

// assertionType maps a string assertion onto its evaluator type ("" for any other grader).
func assertionType(kind string) evalfile.EvaluatorType {
	switch kind {
	case "contains":
		return evalfile.TypeContains
	case "contains-any":
		return evalfile.TypeContainsAny
	case "contains-all":
		return evalfile.TypeContainsAll
	case "icontains":
		return evalfile.TypeIContains
	case "icontains-any":
		return evalfile.TypeIContainsAny
	case "icontains-all":
		return evalfile.TypeIContainsAll
	case "starts-with":
		return evalfile.TypeStartsWith
	case "ends-with":
		return evalfile.TypeEndsWith
	case "regex":
		return evalfile.TypeRegex
	case "is-json":
		return evalfile.TypeIsJSON
	case "equals":
		return evalfile.TypeEquals
	}
	return ""
}

// normalizeGraderType is AgentV's: snake_case names are read as kebab-case ones.
func normalizeGraderType(t string) string { return strings.ReplaceAll(t, "_", "-") }

// maxIncludeDepth is AgentV's bound on nested assertion templates.
const maxIncludeDepth = 3

// graderEntry is one entry of an assertions list after includes are expanded: its value, path and file.
type graderEntry struct {
	v    *yamltree.Value
	path string
	file string
}

// isInclude reports whether an entry is an include: a mapping with one key, include, a string.
func isInclude(v *yamltree.Value) bool {
	return v.Kind == yamltree.KindObject && len(v.Keys) == 1 && v.Keys[0] == "include" && v.Vals[0].Kind == yamltree.KindString
}

// expandIncludes returns list's entries with every include replaced by its template's entries. dirs are where
// templates are looked for, nearest first; chain the templates being expanded.
func (sp *suiteParser) expandIncludes(list *yamltree.Value, listPath string, dirs []string, depth int, chain []string) []graderEntry {
	p := sp.p
	if list.Kind != yamltree.KindArray {
		p.Add(listPath, list, "must be a list of assertions, got %s (AgentV 4.42 ignores it)", list.Kind)
		return nil
	}
	var out []graderEntry
	for i, item := range list.Vals {
		ipath := fmt.Sprintf("%s[%d]", listPath, i)
		if item.Kind == yamltree.KindObject && item.Has("include") && !isInclude(item) {
			p.Add(ipath, item, "an include entry must have only the key include, a template's name or path "+
				"(AgentV 4.42 reads it as a grader without a type)")
			continue
		}
		if !isInclude(item) {
			out = append(out, graderEntry{v: item, path: ipath, file: p.InFile})
			continue
		}
		out = append(out, sp.include(item.Vals[0], ipath+".include", dirs, depth, chain)...)
	}
	return out
}

// include reads the template an include names and returns its entries.
func (sp *suiteParser) include(name *yamltree.Value, ipath string, dirs []string, depth int, chain []string) []graderEntry {
	p := sp.p
	if depth+1 > maxIncludeDepth {
		p.Add(ipath, name, "includes nest deeper than %d templates (%s)", maxIncludeDepth,
			strings.Join(append(slices.Clone(chain), name.Str), " -> "))
		return nil
	}
	if sp.files.fsys == nil {
		p.Add(ipath, name, "%q is an assertion template: reading it needs the suite's files (its eval bundle)", headOf(name.Str))
		return nil
	}
	refs := []string{name.Str}
	if t := name.Str; !strings.HasPrefix(t, ".") && !strings.ContainsAny(t, `/\`) {
		refs = []string{path.Join(".agentv", "templates", t+".yaml"), path.Join(".agentv", "templates", t+".yml")}
	}
	found := ""
	var tried []string
	for _, ref := range refs {
		f, t := sp.files.search(dirs, ref)
		tried = append(tried, t...)
		if f != "" {
			found = f
			break
		}
	}
	if found == "" {
		p.Add(ipath, name, "assertion template %q not found (looked for %s)", headOf(name.Str), strings.Join(tried, ", "))
		return nil
	}
	if slices.Contains(chain, found) {
		p.Add(ipath, name, "assertion templates include each other: %s", strings.Join(append(slices.Clone(chain), found), " -> "))
		return nil
	}
	data, err := sp.files.readFile(found)
	if err != nil {
		p.Add(ipath, name, "%v", err)
		return nil
	}
	doc, ok := sp.parseOther(found, data)
	if !ok {
		return nil
	}
	var out []graderEntry
	sp.withFile(found, func() {
		root := sp.tb.BuildApart(doc)
		if sp.tb.TooLarge {
			return
		}
		refuseEnv(p, root, func() string { return "" })
		list := root.Get(keyAssertions)
		if root.Kind != yamltree.KindObject || list.IsNull() || list.Kind != yamltree.KindArray {
			p.Add(keyAssertions, root, "an assertion template must be a mapping with an assertions list")
			return
		}
		tdir := path.Dir(found)
		nested := append([]string{tdir}, slices.DeleteFunc(slices.Clone(dirs), func(d string) bool { return d == tdir })...)
		out = sp.expandIncludes(list, keyAssertions, nested, depth+1, append(slices.Clone(chain), found))
	})
	return out
}

// graderList reads a list of assertions (listPath in the current file): includes expanded, strings grouped into
// one rubrics grader, each grader read.
func (sp *suiteParser) graderList(list *yamltree.Value, listPath string, dirs []string) []*evalfile.EvaluatorConfig {
	p := sp.p
	entries := sp.expandIncludes(list, listPath, dirs, 0, nil)
	var out []*evalfile.EvaluatorConfig
	var criteria []evalfile.Rubric
	group := -1
	for _, e := range entries {
		if e.v.Kind != yamltree.KindString {
			continue
		}
		text := strings.TrimSpace(e.v.Str)
		if text == "" {
			sp.withFile(e.file, func() {
				p.Add(e.path, e.v, "an empty criterion (AgentV 4.42 skips it)")
			})
			continue
		}
		criteria = append(criteria, evalfile.Rubric{ID: "rubric-" + strconv.Itoa(len(criteria)+1), Outcome: text, Weight: 1,
			Required: true, Raw: p.Raw(e.v)})
	}
	for _, e := range entries {
		if e.v.Kind == yamltree.KindString {
			if group < 0 && len(criteria) > 0 {
				group = len(out)
				w := float64(len(criteria))
				ev := &evalfile.EvaluatorConfig{Name: graderRubrics, Key: graderRubrics, Type: evalfile.TypeLLMJudge, Grader: graderLLM,
					Weight: &w, LLMJudge: &evalfile.LLMJudgeConfig{Rubrics: criteria}}
				ev.Raw = stringGroupRaw(criteria, w)
				sp.generated[ev] = true
				out = append(out, ev)
			}
			continue
		}
		var ev *evalfile.EvaluatorConfig
		sp.withFile(e.file, func() { ev = sp.grader(e.v, e.path, "", false) })
		if ev != nil {
			out = append(out, ev)
		}
	}
	return out
}

// stringGroupRaw is the rubrics grader AgentV makes of an assertions list's strings, as JSON.
func stringGroupRaw(criteria []evalfile.Rubric, weight float64) []byte {
	items := &yamltree.Value{Kind: yamltree.KindArray}
	for _, r := range criteria {
		items.Vals = append(items.Vals, &yamltree.Value{Kind: yamltree.KindString, Str: r.Outcome})
	}
	obj := &yamltree.Value{Kind: yamltree.KindObject, Keys: []string{keyType, "criteria", keyWeight},
		Vals: []*yamltree.Value{{Kind: yamltree.KindString, Str: graderRubrics}, items, yamltree.Number(weight)}}
	return obj.Raw()
}

// graderName is the name AgentV 4.42 gives a grader written without one (generateAssertionName).
func graderName(kind string, v *yamltree.Value) string {
	str := ""
	if s := v.Get("value"); s != nil && s.Kind == yamltree.KindString {
		str = s.Str
	}
	n := -1
	if a := v.Get("value"); a != nil && a.Kind == yamltree.KindArray {
		n = len(a.Vals)
	}
	withStr := func(prefix string) string {
		if str == "" {
			return prefix
		}
		return prefix + "-" + str
	}
	withLen := func(prefix string) string {
		if n < 0 {
			return prefix
		}
		return prefix + "-" + strconv.Itoa(n)
	}
	switch kind {
	case "skill-trigger":
		if s := v.Get("skill"); s != nil && s.Kind == yamltree.KindString && s.Str != "" {
			return "skill-trigger-" + s.Str
		}
		return kind
	case "contains", "icontains", "starts-with", "ends-with", "equals":
		return withStr(kind)
	case "contains-any", "contains-all", "icontains-any", "icontains-all":
		return withLen(kind)
	case "regex":
		if str == "" {
			return kind
		}
		if jsonenc.UTF16Len(str) > 30 {
			return "regex-" + jsSlice(str, 30)
		}
		return "regex-" + str
	}
	return kind
}

// grader reads one grader (path in the current file); keyPrefix is its composite's key, member says it is one of a
// composite's members. It returns nil when the grader is unusable.
func (sp *suiteParser) grader(v *yamltree.Value, gpath, keyPrefix string, member bool) *evalfile.EvaluatorConfig {
	p := sp.p
	kind, tv, ok := sp.graderKind(v, gpath, member)
	if !ok {
		return nil
	}
	before := len(p.Problems)
	ev := &evalfile.EvaluatorConfig{Raw: p.Raw(v), Grader: kind}
	sp.nameGrader(ev, v, gpath, member)
	ev.Key = ev.Name
	if keyPrefix != "" {
		ev.Key = keyPrefix + "/" + ev.Name
	}
	sp.modifiers(ev, v, gpath)
	if pp := v.Get("preprocessors"); !pp.IsNull() {
		p.Add(gpath+".preprocessors", pp, "not supported: preprocessors run commands over the runner's output "+
			"files before grading, which the operator does not do")
	}
	sp.refuseGraderTarget(v, gpath, kind)
	sp.graderSettings(ev, v, tv, gpath, kind)
	if len(p.Problems) > before {
		return nil
	}
	return ev
}

// graderKind reads a grader's type (tv), normalized: snake_case read as kebab-case. ok is false, and a problem says
// why, when the grader is not a mapping or its type is not a built-in grader AgentV 4.42 would run.
func (sp *suiteParser) graderKind(v *yamltree.Value, gpath string, member bool) (kind string, tv *yamltree.Value, ok bool) {
	p := sp.p
	if v.Kind != yamltree.KindObject {
		p.Add(gpath, v, "a grader must be a mapping with a type, or a string (a criterion), got %s (AgentV 4.42 skips it)", v.Kind)
		return "", nil, false
	}
	tv = v.Get(keyType)
	if tv.IsNull() || tv.Kind != yamltree.KindString {
		p.Add(gpath+".type", v, "is required: a grader type (AgentV 4.42 skips a grader without)")
		return "", nil, false
	}
	kind = normalizeGraderType(tv.Str)
	switch {
	case kind == "code-judge" || kind == "llm-judge":
		p.Add(gpath+".type", tv, "%q is AgentV v2's name, which AgentV 4.42 skips: write %s", headOf(tv.Str),
			strings.Replace(kind, "-judge", "-grader", 1))
		return "", nil, false
	case kind == "inline-assert":
		p.Add(gpath+".type", tv, "inline-assert graders are functions of TypeScript suites; a YAML suite cannot "+
			"have one")
		return "", nil, false
	case !slices.Contains(graderKinds, kind):
		p.Add(gpath+".type", tv, "not supported: %q is not one of AgentV 4.42's built-in graders (a custom "+
			"type is code AgentV finds in .agentv/assertions, which the operator does not run); the built-in "+
			"graders are %s", textbound.Head(tv.Str, 40), strings.Join(graderKinds[:len(graderKinds)-1], ", "))
		return "", nil, false
	case member && tv.Str != kind:
		p.Add(gpath+".type", tv, "write %s: AgentV 4.42 skips a composite's member whose type is written %q", kind, tv.Str)
		return "", nil, false
	}
	return kind, tv, true
}

// nameGrader sets ev.Name: the grader's name, else the one AgentV 4.42 makes up (a composite's member must have
// one), and checks it.
func (sp *suiteParser) nameGrader(ev *evalfile.EvaluatorConfig, v *yamltree.Value, gpath string, member bool) {
	p := sp.p
	nv := v.Get(keyName)
	switch {
	case nv.IsNull() && member:
		p.Add(gpath+".name", v, "is required: AgentV 4.42 skips a composite's member without a name")
	case nv.IsNull():
		ev.Name = graderName(ev.Grader, v)
		sp.generated[ev] = true
	case nv.Kind != yamltree.KindString || nv.Str == "":
		p.Add(gpath+".name", nv, "must be a non-empty string (AgentV 4.42 skips the grader)")
	default:
		ev.Name = nv.Str
	}
	if ev.Name == "" {
		return
	}
	switch {
	case len(ev.Name) > evalfile.MaxEvaluatorNameLength:
		p.Add(gpath+".name", v, "%q must be at most %d characters (give the grader a shorter name)",
			textbound.Head(ev.Name, 40), evalfile.MaxEvaluatorNameLength)
	case strings.Contains(ev.Name, "/") && !sp.generated[ev]:
		// A name AgentV makes up may hold one ("contains-@scope/pkg"): it is never a composite's (members are
		// named), and uniqueEvaluators checks that no two keys of a case meet.
		p.Add(gpath+".name", nv, "must not contain '/' (it separates composite members in result keys)")
	}
}

// readsTarget reports whether a grader of kind reads target (the LLM graders as a judge model).
func readsTarget(kind string) bool {
	return kind == graderCode || kind == graderLLM || kind == graderRubrics || kind == graderRubric
}

// refuseGraderTarget refuses a target on a grader that reads it; the other graders do not take it.
func (sp *suiteParser) refuseGraderTarget(v *yamltree.Value, gpath, kind string) {
	t := v.Get(keyTarget)
	switch {
	case t.IsNull() || !readsTarget(kind):
		// No target, or one the grader does not read.
	case kind == graderCode:
		sp.p.Add(gpath+".target", t, "not supported: a code-grader with target gets a proxy to call the suite's "+
			"targets (a model endpoint) while it grades, which the operator's judges may not reach")
	default:
		sp.p.Add(gpath+".target", t, "not supported: a grader's target picks another model to grade with; the "+
			"operator grades with the EvalRun's judging model")
	}
}

// graderSettings reads what a grader of kind takes (tv is its type) into ev, with the v2 evaluator type that plans
// the same work.
func (sp *suiteParser) graderSettings(ev *evalfile.EvaluatorConfig, v, tv *yamltree.Value, gpath, kind string) {
	p := sp.p
	switch kind {
	case graderCode:
		ev.Type = evalfile.TypeCodeJudge
		ev.CodeJudge = sp.codeGrader(v, gpath)
	case graderLLM:
		ev.Type = evalfile.TypeLLMJudge
		ev.Grader = graderLLM
		ev.LLMJudge = sp.llmGrader(v, gpath)
	case graderRubrics:
		ev.Type, ev.Grader = evalfile.TypeLLMJudge, graderLLM
		ev.LLMJudge = &evalfile.LLMJudgeConfig{Rubrics: sp.rubricsCriteria(v, gpath)}
	case graderRubric:
		ev.Type, ev.Grader = evalfile.TypeLLMJudge, graderLLM
		ev.LLMJudge = sp.rubricGrader(v, tv, gpath)
	case "composite":
		ev.Type = evalfile.TypeComposite
		ev.Composite = sp.composite(v, gpath, ev.Key)
	case "tool-trajectory":
		ev.Type = evalfile.TypeToolTrajectory
		ev.ToolTrajectory = sp.toolTrajectory(v, gpath)
	case "field-accuracy":
		ev.Type = evalfile.TypeFieldAccuracy
		ev.FieldAccuracy = p.FieldAccuracy(v, gpath)
	case "latency":
		ev.Type = evalfile.TypeLatency
		if t, ok := p.RequiredNonNegative(v, "threshold", gpath, "the largest allowed duration in milliseconds"); ok {
			ev.Latency = &evalfile.LatencyConfig{ThresholdMs: t}
		}
	case "cost":
		ev.Type = evalfile.TypeCost
		if b, ok := p.RequiredNonNegative(v, "budget", gpath, "the largest allowed cost in USD"); ok {
			ev.Cost = &evalfile.CostConfig{BudgetUSD: b}
		}
	case "token-usage":
		ev.Type = evalfile.TypeTokenUsage
		ev.TokenUsage = p.TokenUsage(v, gpath)
	case "execution-metrics":
		ev.Type = evalfile.TypeExecutionMetrics
		ev.ExecutionMetrics = sp.executionMetrics(v, gpath)
	case "skill-trigger":
		ev.Type = evalfile.TypeSkillTrigger
		ev.SkillTrigger = sp.skillTrigger(v, gpath)
	default:
		ev.Type = assertionType(kind)
		ev.Assertion = sp.assertion(v, gpath, kind)
	}
}

// rubricGrader reads the deprecated rubric grader (tv is its type): its rubric items; nil when it has none.
func (sp *suiteParser) rubricGrader(v, tv *yamltree.Value, gpath string) *evalfile.LLMJudgeConfig {
	sp.warn(gpath+".type", tv, "type rubric is deprecated in AgentV 4.42: write type: rubrics with criteria")
	rv := v.Get(keyRubrics)
	if rv.IsNull() || rv.Kind != yamltree.KindArray || len(rv.Vals) == 0 {
		sp.p.Add(gpath+".rubrics", v, "is required: a non-empty list of rubric items (AgentV 4.42 skips the grader)")
		return nil
	}
	return &evalfile.LLMJudgeConfig{Rubrics: sp.rubricItems(rv, gpath+".rubrics", false)}
}

// skillTrigger reads a skill-trigger: the skill (required) and should_trigger.
func (sp *suiteParser) skillTrigger(v *yamltree.Value, gpath string) *evalfile.SkillTriggerConfig {
	p := sp.p
	c := &evalfile.SkillTriggerConfig{Skill: p.OptString(v, "skill", gpath)}
	if c.Skill == "" {
		p.Add(gpath+".skill", v, "is required: the skill the response should (or should not) trigger")
	}
	if st := v.Get("should_trigger"); !st.IsNull() {
		if st.Kind != yamltree.KindBool {
			p.Add(gpath+".should_trigger", st, "must be true or false, got %s (AgentV 4.42 ignores it)", describe(st))
		} else {
			b := st.Bool
			c.ShouldTrigger = &b
		}
	}
	return c
}

// modifiers reads weight, required, min_score and negate.
func (sp *suiteParser) modifiers(ev *evalfile.EvaluatorConfig, v *yamltree.Value, gpath string) {
	p := sp.p
	if w := v.Get(keyWeight); !w.IsNull() {
		if f, ok := p.NonNegative(w, gpath+".weight"); ok {
			ev.Weight = &f
		}
	}
	if ms := v.Get("min_score"); !ms.IsNull() {
		if ms.Kind != yamltree.KindNumber || ms.Float <= 0 || ms.Float > 1 {
			p.Add(gpath+".min_score", ms, "must be a number above 0 and at most 1, got %s (AgentV 4.42 ignores it)", describe(ms))
		} else {
			f := ms.Float
			ev.MinScore = &f
		}
	}
	if r := v.Get("required"); !r.IsNull() {
		switch {
		case r.Kind == yamltree.KindBool:
			ev.Required = r.Bool
		case r.Kind == yamltree.KindNumber && r.Float > 0 && r.Float <= 1:
			sp.warn(gpath+".required", r, "required: <number> is deprecated in AgentV 4.42: write required: true "+
				"and min_score: %s", r.Num)
			ev.Required = true
			if ev.MinScore == nil {
				f := r.Float
				ev.MinScore = &f
			}
		default:
			p.Add(gpath+".required", r, "must be true, false or a number above 0 and at most 1, got %s (AgentV 4.42 "+
				"ignores it)", describe(r))
		}
	}
	if n := v.Get("negate"); !n.IsNull() {
		if n.Kind != yamltree.KindBool {
			p.Add(gpath+".negate", n, "must be true or false, got %s (AgentV 4.42 ignores it)", describe(n))
		} else {
			ev.Negate = n.Bool
		}
	}
}

// configOf returns a grader's pass-through config: its keys not in known, then its config mapping's keys (config
// wins over a loose key of the same name, in that key's place), as a JSON object; nil when empty.
func (sp *suiteParser) configOf(v *yamltree.Value, gpath string, known []string) []byte {
	extra := &yamltree.Value{Kind: yamltree.KindObject}
	for i, k := range v.Keys {
		if !slices.Contains(known, k) && !v.Vals[i].IsNull() {
			extra.Keys, extra.Vals = append(extra.Keys, k), append(extra.Vals, v.Vals[i])
		}
	}
	if cv := v.Get("config"); !cv.IsNull() {
		if cv.Kind != yamltree.KindObject {
			sp.p.Add(gpath+".config", cv, "must be a mapping, got %s (AgentV 4.42 ignores it)", cv.Kind)
		} else {
			for i, k := range cv.Keys {
				if j := slices.Index(extra.Keys, k); j >= 0 {
					extra.Vals[j] = cv.Vals[i]
					continue
				}
				extra.Keys, extra.Vals = append(extra.Keys, k), append(extra.Vals, cv.Vals[i])
			}
		}
	}
	if len(extra.Keys) == 0 {
		return nil
	}
	return extra.Raw()
}

// codeGrader reads a code-grader: command (or the deprecated script), a string (run with sh -lc) or a list of
// arguments, and cwd.
func (sp *suiteParser) codeGrader(v *yamltree.Value, gpath string) *evalfile.CodeJudgeConfig {
	p := sp.p
	c := &evalfile.CodeJudgeConfig{}
	key := "command"
	cmd := v.Get("command")
	if cmd.IsNull() {
		if s := v.Get("script"); !s.IsNull() {
			key, cmd = "script", s
			sp.warn(gpath+".script", s, "script is deprecated in AgentV 4.42: write command")
		}
	}
	cpath := yamltree.JoinPath(gpath, key)
	switch {
	case cmd.IsNull():
		p.Add(gpath+".command", v, "is required: the command that grades the test (AgentV 4.42 skips the grader)")
	case cmd.Kind == yamltree.KindString:
		if strings.TrimSpace(cmd.Str) == "" {
			p.Add(cpath, cmd, "must not be empty")
		}
		c.Script = strings.TrimSpace(cmd.Str)
	case cmd.Kind == yamltree.KindArray:
		if len(cmd.Vals) == 0 {
			p.Add(cpath, cmd, "must not be empty")
		}
		for i, a := range cmd.Vals {
			if a.Kind != yamltree.KindString || strings.TrimSpace(a.Str) == "" {
				p.Add(fmt.Sprintf("%s[%d]", cpath, i), a, "must be a non-empty string")
				continue
			}
			c.Argv = append(c.Argv, a.Str)
		}
		quoted := make([]string, len(c.Argv))
		for i, a := range c.Argv {
			quoted[i] = evalfile.ShellQuote(a)
		}
		c.Script = strings.Join(quoted, " ")
	default:
		p.Add(cpath, cmd, "must be a command string or a list of arguments, got %s", cmd.Kind)
	}
	c.Cwd = p.OptString(v, "cwd", gpath)
	c.Config = sp.configOf(v, gpath, []string{keyName, keyType, "command", "script", "cwd", keyWeight, keyTarget,
		"config", "preprocessors", "required", "min_score", "negate"})
	return c
}

// llmGrader reads an llm-grader: prompt (file://PATH names a file; any other string is the prompt's text),
// rubrics, model, temperature, max_steps and its pass-through config.
func (sp *suiteParser) llmGrader(v *yamltree.Value, gpath string) *evalfile.LLMJudgeConfig {
	p := sp.p
	c := &evalfile.LLMJudgeConfig{}
	if pv := v.Get("prompt"); !pv.IsNull() {
		switch pv.Kind {
		case yamltree.KindString:
			c.Prompt = pv.Raw()
			if ref, ok := strings.CutPrefix(pv.Str, fileProtocol); ok {
				if strings.TrimSpace(ref) == "" {
					p.Add(gpath+".prompt", pv, "a file:// prompt needs a path")
				}
				c.PromptFile = ref
			}
		case yamltree.KindObject:
			p.Add(gpath+".prompt", pv, "not supported: a prompt written as a command is a script AgentV runs to "+
				"build the grader's prompt, which the operator does not do: write the prompt's text or file://PATH")
		default:
			p.Add(gpath+".prompt", pv, "must be a string, got %s", pv.Kind)
		}
	}
	c.Model = p.OptString(v, "model", gpath)
	if rv := v.Get(keyRubrics); !rv.IsNull() {
		if rv.Kind != yamltree.KindArray {
			p.Add(gpath+".rubrics", rv, "must be a list of rubric items, got %s (AgentV 4.42 ignores it)", rv.Kind)
		} else {
			c.Rubrics = sp.rubricItems(rv, gpath+".rubrics", false)
		}
	}
	if t := v.Get("temperature"); !t.IsNull() {
		if t.Kind != yamltree.KindNumber || t.Float < 0 || t.Float > 2 {
			p.Add(gpath+".temperature", t, "must be a number from 0 to 2, got %s (AgentV 4.42 ignores it)", describe(t))
		} else {
			f := t.Float
			c.Temperature = &f
		}
	}
	for _, k := range []string{"max_steps", "maxSteps"} {
		if ms := v.Get(k); !ms.IsNull() {
			if ms.Kind != yamltree.KindNumber || ms.Float != math.Trunc(ms.Float) || ms.Float < 1 || ms.Float > 50 {
				p.Add(yamltree.JoinPath(gpath, k), ms, "must be a whole number from 1 to 50, got %s (AgentV 4.42 ignores it)", describe(ms))
			} else if c.MaxSteps == 0 {
				c.MaxSteps = int(ms.Float)
			}
		}
	}
	c.Config = sp.configOf(v, gpath, []string{keyName, keyType, "prompt", "model", keyRubrics, keyTarget, keyWeight,
		"config", "required", "min_score", "negate", "max_steps", "maxSteps", "temperature", "preprocessors"})
	return c
}

// rubricsCriteria reads a rubrics grader's criteria: strings (each a required criterion of weight 1) or rubric
// items.
func (sp *suiteParser) rubricsCriteria(v *yamltree.Value, gpath string) []evalfile.Rubric {
	cv := v.Get("criteria")
	if cv.IsNull() || cv.Kind != yamltree.KindArray || len(cv.Vals) == 0 {
		sp.p.Add(gpath+".criteria", v, "is required: a non-empty list of criteria (AgentV 4.42 skips the grader)")
		return nil
	}
	return sp.rubricItems(cv, gpath+".criteria", true)
}

// rubricItems reads rubric items: mappings {id, outcome (or criteria), operator, weight, required, min_score (or the
// deprecated required_min_score, 0 to 10), score_ranges}, and strings where strings is set (rubrics criteria).
// AgentV checks score ranges: integers from 0 to 10, in order of their bounds, covering every score once.
func (sp *suiteParser) rubricItems(list *yamltree.Value, lpath string, strs bool) []evalfile.Rubric {
	p := sp.p
	out := make([]evalfile.Rubric, 0, len(list.Vals))
	for i, item := range list.Vals {
		ipath := fmt.Sprintf("%s[%d]", lpath, i)
		r := evalfile.Rubric{ID: "rubric-" + strconv.Itoa(i+1), Weight: 1, Required: true, Raw: p.Raw(item)}
		if item.Kind == yamltree.KindString && strs {
			if strings.TrimSpace(item.Str) == "" {
				p.Add(ipath, item, "must not be empty")
				continue
			}
			r.Outcome = item.Str
			out = append(out, r)
			continue
		}
		if item.Kind != yamltree.KindObject {
			p.Add(ipath, item, "a rubric item must be a mapping {outcome, weight, ...}, got %s (AgentV 4.42 skips it)", item.Kind)
			continue
		}
		if id := item.Get("id"); !id.IsNull() {
			r.ID = p.OptString(item, "id", ipath)
		}
		r.Outcome = p.OptString(item, "outcome", ipath)
		if r.Outcome == "" {
			r.Outcome = p.OptString(item, "criteria", ipath)
		}
		sp.rubricFields(&r, item, ipath)
		if sr := item.Get("score_ranges"); !sr.IsNull() {
			r.ScoreRanges = sp.scoreRanges(sr, ipath+".score_ranges", true)
			r.Required = false
			if req := item.Get("required"); req != nil && req.Kind == yamltree.KindBool {
				r.Required = req.Bool
			}
		} else if r.Outcome == "" {
			p.Add(ipath+".outcome", item, "is required for a rubric without score_ranges (AgentV 4.42 skips it)")
			continue
		}
		out = append(out, r)
	}
	return out
}

// rubricFields reads a rubric item's operator, weight, required, min_score and required_min_score.
func (sp *suiteParser) rubricFields(r *evalfile.Rubric, item *yamltree.Value, ipath string) {
	p := sp.p
	if op := item.Get("operator"); !op.IsNull() {
		if op.Kind != yamltree.KindString || (op.Str != "correctness" && op.Str != "contradiction") {
			p.Add(ipath+".operator", op, "must be correctness or contradiction, got %s (AgentV 4.42 ignores it)", describe(op))
		} else {
			r.Operator = op.Str
		}
	}
	if w := item.Get(keyWeight); !w.IsNull() {
		if w.Kind != yamltree.KindNumber {
			p.Add(ipath+".weight", w, "must be a number, got %s (AgentV 4.42 uses 1)", describe(w))
		} else {
			r.Weight = w.Float
		}
	}
	if req := item.Get("required"); !req.IsNull() {
		if req.Kind != yamltree.KindBool {
			p.Add(ipath+".required", req, "must be true or false, got %s (AgentV 4.42 ignores it)", describe(req))
		} else {
			r.Required = req.Bool
		}
	}
	if ms := item.Get("min_score"); !ms.IsNull() {
		if ms.Kind != yamltree.KindNumber || ms.Float <= 0 || ms.Float > 1 {
			p.Add(ipath+".min_score", ms, "must be a number above 0 and at most 1, got %s", describe(ms))
		} else {
			f := ms.Float
			r.MinScore = &f
		}
	} else if rms := item.Get("required_min_score"); !rms.IsNull() {
		if rms.Kind != yamltree.KindNumber || rms.Float != math.Trunc(rms.Float) || rms.Float < 0 || rms.Float > 10 {
			p.Add(ipath+".required_min_score", rms, "must be a whole number from 0 to 10, got %s", describe(rms))
		} else {
			sp.warn(ipath+".required_min_score", rms, "required_min_score is deprecated in AgentV 4.42: write "+
				"min_score: %s", strconv.FormatFloat(rms.Float/10, 'g', -1, 64))
			f := rms.Float / 10
			r.MinScore = &f
		}
	}
}

// scoreRanges reads score_ranges: a list of {score_range: [min, max], outcome}, or the shorthand map from each
// range's lowest score (0 to 10) to its outcome. strict applies AgentV's checks of a grader's rubric (integers,
// no overlap, every score from 0 to 10 covered); an inline rubric is not checked for coverage.
func (sp *suiteParser) scoreRanges(v *yamltree.Value, spath string, strict bool) []evalfile.ScoreRange {
	p := sp.p
	if v.Kind == yamltree.KindObject {
		return sp.scoreRangesShorthand(v, spath)
	}
	if v.Kind != yamltree.KindArray {
		p.Add(spath, v, "must be a list of {score_range, outcome} or a map from score to outcome, got %s", v.Kind)
		return nil
	}
	var out []evalfile.ScoreRange
	ok := true
	for i, item := range v.Vals {
		ipath := fmt.Sprintf("%s[%d]", spath, i)
		if item.Kind != yamltree.KindObject {
			p.Add(ipath, item, "must be a mapping {score_range: [min, max], outcome}, got %s", item.Kind)
			ok = false
			continue
		}
		sr := item.Get("score_range")
		if sr.IsNull() || sr.Kind != yamltree.KindArray || len(sr.Vals) != 2 || sr.Vals[0].Kind != yamltree.KindNumber || sr.Vals[1].Kind != yamltree.KindNumber {
			p.Add(ipath+".score_range", item, "must be [min, max], two numbers")
			ok = false
			continue
		}
		lo, hi := sr.Vals[0].Float, sr.Vals[1].Float
		if lo != math.Trunc(lo) || hi != math.Trunc(hi) || lo < 0 || hi > 10 || lo > hi {
			p.Add(ipath+".score_range", sr, "must be [min, max], whole numbers from 0 to 10 with min <= max, got [%s, %s]",
				sr.Vals[0].Num, sr.Vals[1].Num)
			ok = false
			continue
		}
		outcome := p.OptString(item, "outcome", ipath)
		if outcome == "" {
			p.Add(ipath+".outcome", item, "is required: what the scores of the range mean")
			ok = false
			continue
		}
		out = append(out, evalfile.ScoreRange{Min: int(lo), Max: int(hi), Outcome: outcome})
	}
	if !ok || !strict {
		return out
	}
	sorted := slices.Clone(out)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Min < sorted[j].Min })
	covered := [11]bool{}
	for i, r := range sorted {
		if i > 0 && r.Min <= sorted[i-1].Max {
			p.Add(spath, v, "ranges [%d, %d] and [%d, %d] overlap", sorted[i-1].Min, sorted[i-1].Max, r.Min, r.Max)
			return out
		}
		for s := r.Min; s <= r.Max; s++ {
			covered[s] = true
		}
	}
	var missing []string
	for s, c := range covered {
		if !c {
			missing = append(missing, strconv.Itoa(s))
		}
	}
	if len(missing) > 0 {
		p.Add(spath, v, "the ranges must cover every score from 0 to 10; missing: %s", strings.Join(missing, ", "))
	}
	return out
}

// scoreRangesShorthand reads the map form {0: "Bad", 3: "OK", 7: "Good"}: each key the lowest score of its range,
// which ends below the next key (the last at 10); the keys start at 0.
func (sp *suiteParser) scoreRangesShorthand(v *yamltree.Value, spath string) []evalfile.ScoreRange {
	p := sp.p
	type bound struct {
		min     int
		outcome string
	}
	var bounds []bound
	for i, k := range v.Keys {
		n, err := strconv.Atoi(k)
		if err != nil || n < 0 || n > 10 || v.Vals[i].Kind != yamltree.KindString || v.Vals[i].Str == "" {
			p.Add(yamltree.JoinPath(spath, k), v.Vals[i], "a score_ranges map goes from each range's lowest score (0 to 10) "+
				"to its outcome, a non-empty string")
			return nil
		}
		bounds = append(bounds, bound{n, v.Vals[i].Str})
	}
	if len(bounds) == 0 {
		p.Add(spath, v, "must not be empty")
		return nil
	}
	sort.Slice(bounds, func(i, j int) bool { return bounds[i].min < bounds[j].min })
	if bounds[0].min != 0 {
		p.Add(spath, v, "a score_ranges map must start at 0 (got %d)", bounds[0].min)
		return nil
	}
	out := make([]evalfile.ScoreRange, len(bounds))
	for i, b := range bounds {
		hi := 10
		if i+1 < len(bounds) {
			hi = bounds[i+1].min - 1
		}
		out[i] = evalfile.ScoreRange{Min: b.min, Max: hi, Outcome: b.outcome}
	}
	return out
}

// inlineRubrics reads a test's deprecated rubrics (strings or items with outcome), the llm-grader named rubrics that
// AgentV puts first.
func (sp *suiteParser) inlineRubrics(r *yamltree.Value, rpath string) *evalfile.EvaluatorConfig {
	p := sp.p
	if r.Kind != yamltree.KindArray {
		p.Add(rpath, r, "must be a list of rubric items, got %s (AgentV 4.42 ignores it)", r.Kind)
		return nil
	}
	var rubrics []evalfile.Rubric
	for i, item := range r.Vals {
		ipath := fmt.Sprintf("%s[%d]", rpath, i)
		rb := evalfile.Rubric{ID: "rubric-" + strconv.Itoa(i+1), Weight: 1, Required: true, Raw: p.Raw(item)}
		switch item.Kind {
		case yamltree.KindString:
			if item.Str == "" {
				p.Add(ipath, item, "must not be empty (AgentV 4.42 drops it)")
				continue
			}
			rb.Outcome = item.Str
		case yamltree.KindObject:
			if id := item.Get("id"); !id.IsNull() {
				rb.ID = p.OptString(item, "id", ipath)
			}
			rb.Outcome = p.OptString(item, "outcome", ipath)
			sp.rubricFields(&rb, item, ipath)
			if sr := item.Get("score_ranges"); !sr.IsNull() {
				rb.ScoreRanges = sp.scoreRanges(sr, ipath+".score_ranges", false)
				rb.Required = false
				if req := item.Get("required"); req != nil && req.Kind == yamltree.KindBool {
					rb.Required = req.Bool
				}
			}
			if rb.Outcome == "" && len(rb.ScoreRanges) == 0 {
				p.Add(ipath+".outcome", item, "is required for a rubric without score_ranges (AgentV 4.42 drops it)")
				continue
			}
		default:
			p.Add(ipath, item, "a rubric must be a string or a mapping, got %s (AgentV 4.42 drops it)", item.Kind)
			continue
		}
		rubrics = append(rubrics, rb)
	}
	if len(rubrics) == 0 {
		return nil
	}
	entry := &yamltree.Value{Kind: yamltree.KindObject, Keys: []string{keyName, keyType, keyRubrics},
		Vals: []*yamltree.Value{{Kind: yamltree.KindString, Str: evalfile.InlineRubricsEvaluatorName}, {Kind: yamltree.KindString, Str: graderLLM}, r}}
	ev := &evalfile.EvaluatorConfig{Name: evalfile.InlineRubricsEvaluatorName, Key: evalfile.InlineRubricsEvaluatorName, Type: evalfile.TypeLLMJudge,
		Grader: graderLLM, Raw: entry.Raw(), LLMJudge: &evalfile.LLMJudgeConfig{Rubrics: rubrics}}
	sp.generated[ev] = true
	return ev
}

// composite reads a composite: its members (assertions > assert > evaluators; each with a name and a type written
// as AgentV registers it) and its aggregator (required).
func (sp *suiteParser) composite(v *yamltree.Value, gpath, key string) *evalfile.CompositeConfig {
	c := &evalfile.CompositeConfig{Members: sp.compositeMembers(v, gpath, key)}
	sp.aggregator(c, v, gpath)
	return c
}

// compositeMembers reads a composite's member graders (key is the composite's): assertions, else the deprecated
// assert or evaluators.
func (sp *suiteParser) compositeMembers(v *yamltree.Value, gpath, key string) []*evalfile.EvaluatorConfig {
	p := sp.p
	mkey := keyAssertions
	members := v.Get(keyAssertions)
	for _, alias := range []string{keyAssert, keyEvaluators} {
		if members.IsNull() {
			if m := v.Get(alias); !m.IsNull() {
				mkey, members = alias, m
				sp.warn(yamltree.JoinPath(gpath, alias), m, "a composite's %s is deprecated in AgentV 4.42: write assertions", alias)
			}
		}
	}
	mpath := yamltree.JoinPath(gpath, mkey)
	switch {
	case members.IsNull():
		p.Add(gpath+".assertions", v, "is required: the composite's member graders (AgentV 4.42 skips the composite)")
		return nil
	case members.Kind != yamltree.KindArray:
		p.Add(mpath, members, "must be a list of graders, got %s (AgentV 4.42 skips the composite)", members.Kind)
		return nil
	}
	var out []*evalfile.EvaluatorConfig
	for _, e := range sp.expandIncludes(members, mpath, searchDirs(sp.files.dir), 0, nil) {
		var m *evalfile.EvaluatorConfig
		sp.withFile(e.file, func() { m = sp.grader(e.v, e.path, key, true) })
		if m != nil {
			out = append(out, m)
		}
	}
	if len(out) == 0 && len(members.Vals) == 0 {
		p.Add(mpath, members, "must have at least one member (AgentV 4.42 skips the composite)")
	}
	p.UniqueNames(out, mpath, members)
	return out
}

// aggregator reads a composite's aggregator (c's members read) into c: weighted_average (with weights), threshold,
// code-grader or llm-grader.
func (sp *suiteParser) aggregator(c *evalfile.CompositeConfig, v *yamltree.Value, gpath string) {
	p := sp.p
	av := v.Get("aggregator")
	apath := gpath + ".aggregator"
	if av.IsNull() || av.Kind != yamltree.KindObject {
		p.Add(apath, v, "is required: a mapping with a type (weighted_average, threshold, code-grader or llm-grader; "+
			"AgentV 4.42 skips a composite without)")
		return
	}
	at := av.Get(keyType)
	if at.IsNull() || at.Kind != yamltree.KindString {
		p.Add(apath+".type", av, "is required: weighted_average, threshold, code-grader or llm-grader")
		return
	}
	t := at.Str
	if t != "weighted_average" && t != "threshold" {
		t = normalizeGraderType(t)
	}
	switch t {
	case "weighted_average":
		c.Aggregator = evalfile.AggregatorWeightedAverage
		if wv := av.Get("weights"); !wv.IsNull() {
			c.Weights = sp.aggregatorWeights(c.Members, wv, apath+".weights")
		}
	case "threshold":
		c.Aggregator = evalfile.AggregatorThreshold
		th := av.Get("threshold")
		if th.IsNull() || th.Kind != yamltree.KindNumber || th.Float < 0 || th.Float > 1 {
			p.Add(apath+".threshold", av, "is required: a number from 0 to 1 (AgentV 4.42 skips the composite)")
		} else {
			c.Threshold = th.Float
		}
	case graderCode:
		c.Aggregator = evalfile.AggregatorCodeJudge
		ap := av.Get("path")
		if ap.IsNull() || ap.Kind != yamltree.KindString || ap.Str == "" {
			p.Add(apath+".path", av, "is required: the aggregator's script (AgentV 4.42 skips the composite)")
		} else {
			c.Script = &evalfile.CodeJudgeConfig{Script: ap.Str}
		}
	case graderLLM:
		c.Aggregator = evalfile.AggregatorLLMJudge
		c.Prompt = p.OptString(av, "prompt", apath)
		if ref, ok := strings.CutPrefix(c.Prompt, fileProtocol); ok {
			c.PromptFile = ref
		}
	case "code-judge", "llm-judge":
		p.Add(apath+".type", at, "%q is AgentV v2's name, which AgentV 4.42 skips: write %s", headOf(at.Str),
			strings.Replace(t, "-judge", "-grader", 1))
	default:
		p.Add(apath+".type", at, "unknown aggregator %q: must be weighted_average, threshold, code-grader or llm-grader",
			textbound.Head(at.Str, 40))
	}
}

// aggregatorWeights reads a weighted_average aggregator's weights (wv, at wpath): a mapping of member name to
// weight. It is nil when wv is not a mapping.
func (sp *suiteParser) aggregatorWeights(members []*evalfile.EvaluatorConfig, wv *yamltree.Value, wpath string) map[string]float64 {
	p := sp.p
	if wv.Kind != yamltree.KindObject {
		p.Add(wpath, wv, "must be a mapping of member name to weight, got %s", wv.Kind)
		return nil
	}
	weights := make(map[string]float64, len(wv.Keys))
	for i, name := range wv.Keys {
		mp := yamltree.JoinPath(wpath, name)
		if !slices.ContainsFunc(members, func(m *evalfile.EvaluatorConfig) bool { return m.Name == name }) && len(members) > 0 {
			p.Add(mp, wv.Vals[i], "no member grader is named %q", textbound.Head(name, 80))
			continue
		}
		if wv.Vals[i].Kind != yamltree.KindNumber {
			p.Add(mp, wv.Vals[i], "must be a number, got %s (AgentV 4.42 ignores it)", describe(wv.Vals[i]))
			continue
		}
		weights[name] = wv.Vals[i].Float
	}
	return weights
}

// argsMatchModes are the args_match modes.
var argsMatchModes = []string{"exact", "superset", "subset", "ignore"}

// argsMatch reads an args_match (or argsMatch) of obj: a mode or a list of argument paths; nil when absent.
func (sp *suiteParser) argsMatch(obj *yamltree.Value, opath string) *evalfile.ArgsMatch {
	key := "args_match"
	v := obj.Get(key)
	if v.IsNull() {
		key, v = "argsMatch", obj.Get("argsMatch")
	}
	if v.IsNull() {
		return nil
	}
	apath := yamltree.JoinPath(opath, key)
	switch {
	case v.Kind == yamltree.KindString && slices.Contains(argsMatchModes, v.Str):
		return &evalfile.ArgsMatch{Mode: v.Str}
	case v.Kind == yamltree.KindArray && len(v.Vals) > 0:
		m := &evalfile.ArgsMatch{}
		for i, f := range v.Vals {
			if f.Kind != yamltree.KindString || f.Str == "" {
				sp.p.Add(fmt.Sprintf("%s[%d]", apath, i), f, "must be an argument path (AgentV 4.42 drops it)")
				continue
			}
			m.Fields = append(m.Fields, f.Str)
		}
		return m
	}
	sp.p.Add(apath, v, "must be exact, superset, subset, ignore or a non-empty list of argument paths, got %s "+
		"(AgentV 4.42 ignores it)", describe(v))
	return nil
}

// toolTrajectory reads a tool-trajectory: mode, minimums (any_order), expected calls (the other modes) and
// args_match.
func (sp *suiteParser) toolTrajectory(v *yamltree.Value, gpath string) *evalfile.ToolTrajectoryConfig {
	p := sp.p
	c := &evalfile.ToolTrajectoryConfig{}
	mv := v.Get("mode")
	if mv.IsNull() || mv.Kind != yamltree.KindString {
		p.Add(gpath+".mode", v, "is required: any_order, in_order, exact, subset or superset")
		return c
	}
	c.Mode = evalfile.TrajectoryMode(mv.Str)
	switch c.Mode {
	case evalfile.ModeAnyOrder, evalfile.ModeInOrder, evalfile.ModeExact, evalfile.ModeSubset, evalfile.ModeSuperset:
	default:
		p.Add(gpath+".mode", mv, "unknown mode %q: must be any_order, in_order, exact, subset or superset (AgentV "+
			"4.42 skips the grader)", textbound.Head(mv.Str, 40))
		return c
	}
	c.ArgsMatch = sp.argsMatch(v, gpath)
	if min := v.Get("minimums"); !min.IsNull() {
		if min.Kind != yamltree.KindObject {
			p.Add(gpath+".minimums", min, "must be a mapping of tool name to least call count, got %s", min.Kind)
		} else {
			for i, tool := range min.Keys {
				n := min.Vals[i]
				if n.Kind != yamltree.KindNumber || n.Float < 0 || n.Float != math.Trunc(n.Float) || n.Float > math.MaxInt32 {
					p.Add(yamltree.JoinPath(gpath+".minimums", tool), n, "must be a non-negative whole number")
					continue
				}
				c.Minimums = append(c.Minimums, evalfile.ToolMinimum{Tool: tool, Count: int(n.Float)})
			}
		}
	} else if c.Mode == evalfile.ModeAnyOrder {
		p.Add(gpath+".minimums", v, "is required in any_order mode: a mapping of tool name to least call count")
	}
	ex := v.Get("expected")
	switch {
	case ex.IsNull():
		if c.Mode != evalfile.ModeAnyOrder {
			p.Add(gpath+".expected", v, "is required in %s mode: a list of {tool, args}", c.Mode)
		}
	case ex.Kind != yamltree.KindArray:
		p.Add(gpath+".expected", ex, "must be a list of {tool, args}, got %s", ex.Kind)
	default:
		c.Expected = make([]evalfile.ExpectedCall, 0, len(ex.Vals))
		for i, item := range ex.Vals {
			ipath := fmt.Sprintf("%s.expected[%d]", gpath, i)
			tool, ok := p.ToolItem(item, ipath, "must be a mapping {tool, args} (AgentV 4.42 drops it)")
			if !ok {
				continue
			}
			call := evalfile.ExpectedCall{Tool: tool, ArgsMatch: sp.argsMatch(item, ipath)}
			if !p.ExpectedArgs(item, ipath, &call) {
				continue
			}
			for _, k := range []string{"max_duration_ms", "maxDurationMs"} {
				if d := item.Get(k); !d.IsNull() && call.MaxDurationMs == nil {
					if f, ok := p.NonNegative(d, yamltree.JoinPath(ipath, k)); ok {
						call.MaxDurationMs = &f
					}
				}
			}
			c.Expected = append(c.Expected, call)
		}
	}
	return c
}

// executionMetrics reads an execution-metrics grader's limits (snake_case or camelCase); at least one besides
// exploration_tolerance.
func (sp *suiteParser) executionMetrics(v *yamltree.Value, gpath string) *evalfile.ExecutionMetricsConfig {
	p := sp.p
	c := &evalfile.ExecutionMetricsConfig{}
	read := func(snake, camel string) *float64 { return p.NonNegativeOf(v, gpath, snake, camel) }
	c.MaxToolCalls = read("max_tool_calls", "maxToolCalls")
	c.MaxLLMCalls = read("max_llm_calls", "maxLlmCalls")
	c.MaxTokens = read("max_tokens", "maxTokens")
	c.MaxCostUSD = read("max_cost_usd", "maxCostUsd")
	c.MaxDurationMs = read("max_duration_ms", "maxDurationMs")
	c.TargetExplorationRatio = read("target_exploration_ratio", "targetExplorationRatio")
	c.ExplorationTolerance = read("exploration_tolerance", "explorationTolerance")
	if c.MaxToolCalls == nil && c.MaxLLMCalls == nil && c.MaxTokens == nil && c.MaxCostUSD == nil &&
		c.MaxDurationMs == nil && c.TargetExplorationRatio == nil {
		p.Add(gpath, v, "an execution-metrics grader needs at least one of max_tool_calls, max_llm_calls, max_tokens, "+
			"max_cost_usd, max_duration_ms, target_exploration_ratio (AgentV 4.42 skips it)")
	}
	return c
}

// assertion reads a string assertion's value (a non-empty string, or a non-empty list of strings for the -any and
// -all forms; is-json has none) and a regex's flags.
func (sp *suiteParser) assertion(v *yamltree.Value, gpath, kind string) *evalfile.AssertionConfig {
	p := sp.p
	c := &evalfile.AssertionConfig{}
	if kind == "is-json" {
		return c
	}
	val := v.Get("value")
	if strings.HasSuffix(kind, "-any") || strings.HasSuffix(kind, "-all") {
		if val.IsNull() || val.Kind != yamltree.KindArray || len(val.Vals) == 0 {
			p.Add(gpath+".value", v, "is required: a non-empty list of strings (AgentV 4.42 skips the grader)")
			return c
		}
		for i, s := range val.Vals {
			if s.Kind != yamltree.KindString {
				p.Add(fmt.Sprintf("%s.value[%d]", gpath, i), s, "must be a string, got %s (AgentV 4.42 drops it)", s.Kind)
				continue
			}
			c.Values = append(c.Values, s.Str)
		}
		return c
	}
	if val.IsNull() || val.Kind != yamltree.KindString || val.Str == "" {
		p.Add(gpath+".value", v, "is required: a non-empty string (AgentV 4.42 skips the grader)")
		return c
	}
	c.Values = []string{val.Str}
	if kind == "regex" {
		c.Flags = p.OptString(v, "flags", gpath)
	}
	return c
}
