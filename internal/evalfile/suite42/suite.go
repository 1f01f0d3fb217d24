package suite42

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"

	yaml "go.yaml.in/yaml/v3"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/evalfile/yamltree"
	"github.com/evalrun-operator/evalrun-operator/internal/jsonenc"
)

// suiteParser reads a 4.42 suite into a File.
type suiteParser struct {
	p     *evalfile.Parser
	tb    *yamltree.Builder
	o     evalfile.ReaderOptions
	f     *evalfile.File
	s     *evalfile.Suite
	files *suiteFiles
	// root and rootNode are the document's root mapping as values and as YAML nodes.
	root     *yamltree.Value
	rootNode *yaml.Node
	// input and inputFiles are the suite-level input and input_files (nil when absent).
	input, inputFiles *yamltree.Value
	// metadata is what each test's metadata inherits (nil when nothing).
	metadata *yamltree.Value
	// target is the one target the suite names ("" when none): a test may name no other.
	target string
	// generated says which evaluators' names AgentV made up (see graderName): such a name is numbered when it
	// would clash with another in a case.
	generated map[*evalfile.EvaluatorConfig]bool
	// items are the suite's tests as read (see expandTests), tests the cases read from them (cases), in order.
	items []testItem
	tests []*evalfile.Case
	// suiteInputProblems are the problems of the suite-level input and input_files reported so far (onceForSuite).
	suiteInputProblems map[string]bool
	// suiteGrader is the grader the suite's evaluator key names ("" when none): the grader of a test without
	// assertions or an evaluator key of its own.
	suiteGrader string
}

// The 4.42 reader registers itself with evalfile: a binary that links this package reads AgentV 4.42 suites.
func init() { evalfile.RegisterFormat(evalfile.FormatSuite42, reader{}) }

// reader is the 4.42 reader evalfile calls (evalfile.FormatReader).
type reader struct{}

// Parse reads the 4.42 suite doc, whose text is data, with its tests under key.
func (reader) Parse(data []byte, doc *yaml.Node, key string, o evalfile.ReaderOptions) (*evalfile.File, error) {
	tb := yamltree.NewBuilder(int64(len(data)), key)
	root := tb.Build(doc, nil, 0)
	if tb.TooLarge {
		return nil, &evalfile.ValidationError{Problems: tb.Problems}
	}
	sp := newSuiteParser(tb, o, root, doc.Content[0])
	sp.s.TestsKey = key
	sp.read()
	if tb.TooLarge {
		return nil, &evalfile.ValidationError{Problems: tb.Problems}
	}
	return evalfile.NewFile(sp.f, sp.tests, tb, sp.p)
}

func newSuiteParser(tb *yamltree.Builder, o evalfile.ReaderOptions, root *yamltree.Value, rootNode *yaml.Node) *suiteParser {
	s := &evalfile.Suite{}
	return &suiteParser{
		p: &evalfile.Parser{Reader: yamltree.Reader{CaseIndex: -1}}, tb: tb, o: o, root: root, rootNode: rootNode, s: s,
		f:         &evalfile.File{Format: evalfile.FormatSuite42, Suite: s},
		files:     newSuiteFiles(o.Files, o.Name),
		generated: map[*evalfile.EvaluatorConfig]bool{}, suiteInputProblems: map[string]bool{},
	}
}

// warn records a warning at v's line.
func (sp *suiteParser) warn(path string, v *yamltree.Value, format string, args ...any) {
	line := 0
	if v != nil {
		line = v.Line
	}
	sp.warnAt(path, line, format, args...)
}

func (sp *suiteParser) warnAt(path string, line int, format string, args ...any) {
	p := sp.p
	sp.f.Warnings = append(sp.f.Warnings, evalfile.Problem{
		CaseIndex: p.CaseIndex, CaseID: p.CaseID, File: p.InFile, Path: path, Line: line, Message: fmt.Sprintf(format, args...),
	})
}

// keyLine returns the line of key in the mapping node n (aliases followed), or the line of v when n has no such
// key (a JSONL test, a merged key).
func keyLine(n *yaml.Node, key string, v *yamltree.Value) int {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n != nil && n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				return n.Content[i].Line
			}
		}
	}
	if v != nil {
		return v.Line
	}
	return 0
}

// member returns the mapping node of key in n (aliases followed), or nil.
func member(n *yaml.Node, key string) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// keyRule says what the reader does with a key.
type keyRule int

const (
	// keyRead: read (a deprecated alias is read and warned about separately).
	keyRead keyRule = iota
	// keyIgnored: AgentV 4.42 ignores it too, or it does not change what the operator does; a warning says why.
	keyIgnored
	// keyRefused: AgentV 4.42 reads it and the operator cannot honour it: a problem says why.
	keyRefused
)

// keySpec is what the reader does with one key, and why. The keys of a mapping are a []keySpec (a static table,
// which every binary that links the reader holds as data, not a map it builds at start); a key not listed is
// unknown.
type keySpec struct {
	key  string
	rule keyRule
	why  string
}

// specOf returns the spec of key k in specs, and whether k is listed.
func specOf(specs []keySpec, k string) (keySpec, bool) {
	for _, s := range specs {
		if s.key == k {
			return s, true
		}
	}
	return keySpec{}, false
}

// suiteKeySpecs are the top-level keys of a 4.42 suite. A key not listed is unknown: AgentV ignores it with a
// warning, and so does the reader.
var suiteKeySpecs = []keySpec{
	{key: "$schema"}, {key: "name"}, {key: "description"}, {key: "category"}, {key: "version"}, {key: "author"},
	{key: "tags"}, {key: "license"}, {key: "requires"}, {key: keyInput}, {key: "input_files"}, {key: "tests"},
	{key: "eval_cases"}, {key: keyTarget}, {key: keyExecution}, {key: keyAssertions}, {key: keyAssert},
	{key: "evaluator"}, {key: "metadata"}, {key: "governance"},
	{"workspace", keyRefused, "a workspace (its template, repositories, hooks, docker image) is set up by AgentV " +
		"around each test, which the operator does not do: the runner's image is its workspace"},
	{"preprocessors", keyRefused, "preprocessors run commands over the runner's output files before grading, which " +
		"the operator does not do"},
	{keyEvaluators, keyRefused, "AgentV 4.42 does not read a top-level evaluators list (only execution.evaluators, " +
		"deprecated): write assertions"},
	{"evalcases", keyRefused, "the suite has tests too; evalcases is agentv-eval-v2's key, which AgentV 4.42 reads " +
		"only when tests is absent: keep one of them"},
}

// suiteExecutionSpecs are the keys of the suite's execution.
var suiteExecutionSpecs = []keySpec{
	{key: keyTarget}, {key: "targets"}, {key: keyAssertions}, {key: keyAssert}, {key: keyEvaluators},
	{key: "threshold"}, {key: "fail_on_error"}, {key: "failOnError"},
	{"workers", keyIgnored, "how many tests AgentV runs at once: the runner runs the whole batch"},
	{"cache", keyIgnored, "AgentV's response cache: the operator always runs the runner"},
	{"cache_path", keyIgnored, "AgentV's response cache: the operator always runs the runner"},
	{"skip_defaults", keyIgnored, "AgentV reads skip_defaults per test, not at the suite level"},
	{key: keyTrials},
	{"budget_usd", keyRefused, "a suite's cost budget stops AgentV starting tests once spent; use the EvalRun's " +
		"cost budget"},
	{"budgetUsd", keyRefused, "a suite's cost budget stops AgentV starting tests once spent; use the EvalRun's " +
		"cost budget"},
	{"total_budget_usd", keyRefused, "AgentV 4.42 refuses it too: execution.total_budget_usd was renamed to " +
		"execution.budget_usd (and a suite's budget is the EvalRun's, here)"},
	{"totalBudgetUsd", keyRefused, "AgentV 4.42 refuses it too: execution.total_budget_usd was renamed to " +
		"execution.budget_usd (and a suite's budget is the EvalRun's, here)"},
}

// checkKeys applies specs to obj's keys (n is its node, for key lines), and warns about unknown ones.
func (sp *suiteParser) checkKeys(obj *yamltree.Value, n *yaml.Node, path string, specs []keySpec, what string) {
	for i, k := range obj.Keys {
		spec, known := specOf(specs, k)
		kp := yamltree.JoinPath(path, k)
		line := keyLine(n, k, obj.Vals[i])
		switch {
		case !known:
			sp.warnAt(kp, line, "unknown %s key %q: AgentV 4.42 ignores it", what, k)
		case spec.rule == keyRead:
			// Its reader checks it.
		case spec.rule == keyIgnored && !obj.Vals[i].IsNull():
			sp.warnAt(kp, line, "ignored: %s", spec.why)
		case spec.rule == keyRefused && !obj.Vals[i].IsNull():
			sp.p.AddAt(kp, line, "not supported: %s", spec.why)
		}
	}
}

// read reads the suite into sp.f.
func (sp *suiteParser) read() {
	p, root, f := sp.p, sp.root, sp.f
	refuseEnv(p, root, func() string { return "" })
	sp.checkKeys(root, sp.rootNode, "", suiteKeySpecs, "top-level")
	f.Schema = p.OptString(root, "$schema", "")
	f.Description = p.OptString(root, "description", "")
	sp.metadataFields()

	// execution: the runner's target, the suite's threshold and fail_on_error.
	var exec *yamltree.Value
	execNode := member(sp.rootNode, keyExecution)
	if ev := root.Get(keyExecution); !ev.IsNull() {
		if ev.Kind != yamltree.KindObject {
			p.Add(keyExecution, ev, "must be a mapping, got %s", ev.Kind)
		} else {
			exec = ev
			sp.checkKeys(exec, execNode, keyExecution, suiteExecutionSpecs, keyExecution)
			sp.s.Threshold = sp.unitNumber(exec, execNode, "threshold", keyExecution)
			sp.s.FailOnError = sp.optBoolPtr(exec, execNode, keyExecution, "fail_on_error", "failOnError")
			f.Trials = sp.trials(exec, execNode)
		}
	}
	sp.suiteTarget(exec, execNode)
	sp.suiteGrader = sp.defaultGrader(root, sp.rootNode, "")

	// Suite-level input and input_files are read per test (vars and skip_defaults apply there).
	sp.input = root.Get(keyInput)
	if sp.input.IsNull() {
		sp.input = nil
	}
	sp.inputFiles = root.Get("input_files")
	if sp.inputFiles.IsNull() {
		sp.inputFiles = nil
	}
	sp.suiteMetadata()

	// The EvalRun's judging.evaluators, in agentv-eval-v2's shape.
	f.DefaultEvaluators = p.DefaultEvaluators(sp.o.DefaultEvaluators)

	// Suite-level assertions: assertions > assert > execution.assertions > execution.assert > execution.evaluators.
	if list, path := sp.firstList([]listSource{{root, sp.rootNode, "", keyAssertions}, {root, sp.rootNode, "", keyAssert},
		{exec, execNode, keyExecution, keyAssertions}, {exec, execNode, keyExecution, keyAssert},
		{exec, execNode, keyExecution, keyEvaluators}}); list != nil {
		f.Evaluators = sp.uniqueEvaluators(sp.graderList(list, path, searchDirs(sp.files.dir)), path, list)
	}

	key := sp.s.TestsKey
	tests := root.Get(key)
	switch ec := root.Get("eval_cases"); {
	case key == "eval_cases":
		sp.warnAt(key, keyLine(sp.rootNode, key, tests), "eval_cases is deprecated in AgentV 4.42: write tests")
	case ec != nil:
		sp.warnAt("eval_cases", keyLine(sp.rootNode, "eval_cases", ec), "ignored: tests is set, which AgentV 4.42 reads instead")
	}
	sp.expandTests(tests, member(sp.rootNode, key), key)
	if len(p.Problems) == 0 && len(sp.items) == 0 && !sp.tb.TooLarge {
		p.AddAt(key, keyLine(sp.rootNode, key, tests), "the suite has no tests")
	}
	sp.cases()
}

// listSource is one place a list of graders may be written.
type listSource struct {
	obj  *yamltree.Value
	node *yaml.Node
	path string
	key  string
}

// firstList returns the first of sources that is set (AgentV's precedence) and its path, and warns about the
// deprecated ones; a later one also set is a problem (AgentV would not read it).
func (sp *suiteParser) firstList(sources []listSource) (*yamltree.Value, string) {
	var found *yamltree.Value
	foundPath := ""
	for _, s := range sources {
		v := s.obj.Get(s.key)
		if v.IsNull() {
			continue
		}
		path := yamltree.JoinPath(s.path, s.key)
		line := keyLine(s.node, s.key, v)
		if found != nil {
			sp.p.AddAt(path, line, "%s is set too: AgentV 4.42 reads only %s; keep one list", foundPath, foundPath)
			continue
		}
		found, foundPath = v, path
		if s.key != keyAssertions {
			sp.warnAt(path, line, "%s is deprecated in AgentV 4.42: write assertions", path)
		}
	}
	return found, foundPath
}

// unitNumber reads an optional number from 0 to 1 (a threshold).
func (sp *suiteParser) unitNumber(obj *yamltree.Value, n *yaml.Node, key, path string) *float64 {
	v := obj.Get(key)
	if v.IsNull() {
		return nil
	}
	if v.Kind != yamltree.KindNumber || v.Float < 0 || v.Float > 1 {
		sp.p.AddAt(yamltree.JoinPath(path, key), keyLine(n, key, v), "must be a number from 0 to 1, got %s (AgentV 4.42 "+
			"ignores any other value)", describe(v))
		return nil
	}
	f := v.Float
	return &f
}

// optBoolPtr reads an optional boolean under key or its camelCase alias.
func (sp *suiteParser) optBoolPtr(obj *yamltree.Value, n *yaml.Node, path, key, alias string) *bool {
	k, v := key, obj.Get(key)
	if v.IsNull() && alias != "" {
		k, v = alias, obj.Get(alias)
	}
	if v.IsNull() {
		return nil
	}
	if v.Kind != yamltree.KindBool {
		sp.p.AddAt(yamltree.JoinPath(path, k), keyLine(n, k, v), "must be true or false, got %s", describe(v))
		return nil
	}
	b := v.Bool
	return &b
}

// describe names a value's kind, with a scalar's text.
func describe(v *yamltree.Value) string {
	switch v.Kind {
	case yamltree.KindString:
		return strconv.Quote(headOf(v.Str))
	case yamltree.KindNumber:
		return v.Num
	case yamltree.KindBool:
		return strconv.FormatBool(v.Bool)
	}
	return v.Kind.String()
}

// headOf cuts s for a message.
func headOf(s string) string {
	if len(s) <= 40 {
		return s
	}
	return jsSlice(s, 37) + "..."
}

// suiteTarget reads the suite's target (execution.target, else the legacy top-level target) and execution.targets:
// one target at most, the one the runner stands for.
func (sp *suiteParser) suiteTarget(exec *yamltree.Value, execNode *yaml.Node) {
	p := sp.p
	if exec != nil {
		sp.f.Target = p.OptString(exec, keyTarget, keyExecution)
	}
	if t := sp.root.Get(keyTarget); !t.IsNull() {
		if sp.f.Target != "" {
			sp.warnAt(keyTarget, keyLine(sp.rootNode, keyTarget, t), "ignored: execution.target is set, which AgentV 4.42 reads first")
		} else {
			sp.f.Target = p.OptString(sp.root, keyTarget, "")
			sp.warnAt(keyTarget, keyLine(sp.rootNode, keyTarget, t), "a top-level target is deprecated in AgentV 4.42: write execution.target")
		}
	}
	sp.target = sp.f.Target
	if exec != nil {
		sp.targets(exec, execNode, keyExecution)
	}
}

// targets checks execution.targets: AgentV runs every test on each target named (a matrix); the operator has one
// runner, so the list may name one target, the suite's own if it has one.
func (sp *suiteParser) targets(exec *yamltree.Value, execNode *yaml.Node, path string) {
	v := exec.Get("targets")
	if v.IsNull() {
		return
	}
	tp := yamltree.JoinPath(path, "targets")
	line := keyLine(execNode, "targets", v)
	if v.Kind != yamltree.KindArray {
		sp.p.AddAt(tp, line, "must be a list of target names, got %s", v.Kind)
		return
	}
	for i, t := range v.Vals {
		ip := fmt.Sprintf("%s[%d]", tp, i)
		switch {
		case t.Kind == yamltree.KindObject:
			sp.p.Add(ip, t, "not supported: a target with use_target or hooks runs AgentV's target hooks around the "+
				"tests, which the operator does not do; name the one target the runner stands for")
		case t.Kind != yamltree.KindString || t.Str == "":
			sp.p.Add(ip, t, "must be a target name")
		case len(v.Vals) > 1:
			sp.p.Add(ip, t, "not supported: execution.targets names %d targets, each of which AgentV 4.42 runs every "+
				"test on; the operator runs one runner: name one target", len(v.Vals))
			return
		case sp.target != "" && t.Str != sp.target:
			sp.p.Add(ip, t, "not supported: target %q is not the suite's target %q, and the operator runs one runner",
				headOf(t.Str), headOf(sp.target))
		default:
			if sp.target == "" {
				sp.target = t.Str
			}
		}
	}
}

// defaultGrader reads the deprecated evaluator key of the suite (path "") or of a test: the grader AgentV 4.42
// grades a test without assertions with (a test's own, else the suite's, else llm-grader). It returns the grader
// named, normalized, or "" when the key is absent or names no grader AgentV knows (it then falls back).
func (sp *suiteParser) defaultGrader(obj *yamltree.Value, n *yaml.Node, path string) string {
	v := obj.Get("evaluator")
	if v.IsNull() {
		return ""
	}
	kp := yamltree.JoinPath(path, "evaluator")
	line := keyLine(n, "evaluator", v)
	if v.Kind != yamltree.KindString {
		sp.warnAt(kp, line, "ignored: AgentV 4.42 reads only a grader name here")
		return ""
	}
	t := normalizeGraderType(v.Str)
	switch {
	case t == "code-judge" || t == "llm-judge":
		sp.p.AddAt(kp, line, "%q is AgentV v2's name, which AgentV 4.42 refuses: write llm-grader (or remove "+
			"the key: it is the default)", headOf(v.Str))
		return ""
	case slices.Contains(graderKinds, t):
		sp.warnAt(kp, line, "evaluator is deprecated in AgentV 4.42: write assertions")
		return t
	}
	sp.warnAt(kp, line, "ignored: AgentV 4.42 does not know the grader %q and falls back", headOf(v.Str))
	return ""
}

// metadataNamePattern is the form of a suite's name (AgentV's MetadataSchema).
var metadataNamePattern = regexp.MustCompile(`^[a-z0-9-]+$`)

// metadataFields reads the suite's metadata fields. AgentV 4.42 checks them (and refuses the suite) when name is
// set; otherwise it reads only name and category.
func (sp *suiteParser) metadataFields() {
	p, root, s := sp.p, sp.root, sp.s
	checked := root.Get("name") != nil && root.Get("name").Kind == yamltree.KindString
	s.Name = p.OptString(root, "name", "")
	s.Category = p.OptString(root, "category", "")
	str := func(key string, max int) string {
		v := root.Get(key)
		if v.IsNull() {
			return ""
		}
		if v.Kind != yamltree.KindString {
			if checked {
				p.Add(key, v, "must be a string, got %s (AgentV 4.42 refuses the suite)", v.Kind)
			}
			return ""
		}
		if checked && max > 0 && (v.Str == "" || jsonenc.UTF16Len(v.Str) > max) {
			p.Add(key, v, "must be 1 to %d characters (AgentV 4.42 refuses the suite)", max)
		}
		return v.Str
	}
	if checked && (!metadataNamePattern.MatchString(s.Name) || jsonenc.UTF16Len(s.Name) > 64) {
		p.Add("name", root.Get("name"), "must be 1 to 64 lower-case letters, digits and '-' (AgentV 4.42 refuses "+
			"the suite), got %q", headOf(s.Name))
	}
	str("description", 1024)
	s.Version, s.Author, s.License = str("version", 0), str("author", 0), str("license", 0)
	if t := root.Get("tags"); !t.IsNull() {
		if t.Kind != yamltree.KindArray {
			p.Add("tags", t, "must be a list of strings, got %s", t.Kind)
		} else {
			for i, item := range t.Vals {
				if item.Kind != yamltree.KindString {
					p.Add(fmt.Sprintf("tags[%d]", i), item, "must be a string, got %s", item.Kind)
					continue
				}
				s.Tags = append(s.Tags, item.Str)
			}
		}
	}
	if r := root.Get("requires"); !r.IsNull() {
		if r.Kind != yamltree.KindObject {
			p.Add("requires", r, "must be a mapping, got %s", r.Kind)
		} else {
			s.RequiresAgentV = p.OptString(r, "agentv", "requires")
		}
	}
}

// suiteMetadata builds what every test's metadata inherits: metadata, with the top-level governance (an object)
// in place of metadata.governance.
func (sp *suiteParser) suiteMetadata() {
	p, root := sp.p, sp.root
	payload := &yamltree.Value{Kind: yamltree.KindObject}
	if m := root.Get("metadata"); !m.IsNull() {
		if m.Kind != yamltree.KindObject {
			p.Add("metadata", m, "must be a mapping, got %s", m.Kind)
		} else {
			payload.Keys, payload.Vals = slices.Clone(m.Keys), slices.Clone(m.Vals)
		}
	}
	if g := root.Get("governance"); !g.IsNull() {
		if g.Kind != yamltree.KindObject {
			sp.warn("governance", g, "ignored: AgentV 4.42 reads governance only as a mapping")
		} else if i := slices.Index(payload.Keys, "governance"); i >= 0 {
			payload.Vals[i] = g
		} else {
			payload.Keys, payload.Vals = append(payload.Keys, "governance"), append(payload.Vals, g)
		}
	}
	if len(payload.Keys) > 0 {
		sp.metadata = payload
		sp.s.Metadata = payload.Raw()
	}
}

// mergeMetadata merges the suite's metadata into a test's as AgentV 4.42 does: lists concatenate, the suite's
// first, without repeats; mappings merge recursively; the test's other values win; the suite fills the keys the test
// does not set.
func mergeMetadata(test, suite *yamltree.Value) *yamltree.Value {
	out := &yamltree.Value{Kind: yamltree.KindObject, Line: suite.Line}
	if test != nil {
		out.Line, out.Keys, out.Vals = test.Line, slices.Clone(test.Keys), slices.Clone(test.Vals)
	}
	for i, k := range suite.Keys {
		sv := suite.Vals[i]
		j := slices.Index(out.Keys, k)
		if j < 0 {
			out.Keys, out.Vals = append(out.Keys, k), append(out.Vals, sv)
			continue
		}
		tv := out.Vals[j]
		switch {
		case sv.Kind == yamltree.KindArray && tv.Kind == yamltree.KindArray:
			merged := &yamltree.Value{Kind: yamltree.KindArray, Line: tv.Line}
			seen := map[string]bool{}
			for _, item := range slices.Concat(sv.Vals, tv.Vals) {
				key := item.Str
				if item.Kind != yamltree.KindString {
					key = string(jsStringify(nil, item))
				}
				if !seen[key] {
					seen[key] = true
					merged.Vals = append(merged.Vals, item)
				}
			}
			out.Vals[j] = merged
		case sv.Kind == yamltree.KindObject && tv.Kind == yamltree.KindObject:
			out.Vals[j] = mergeMetadata(tv, sv)
		}
	}
	return out
}
