package suite42

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/evalfile/yamltree"
	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
)

// testKeySpecs are the keys of a 4.42 test. A key not listed is unknown: AgentV ignores it with a warning, and so
// does the reader.
var testKeySpecs = []keySpec{
	{key: "id"}, {key: "vars"}, {key: "criteria"}, {key: "expected_outcome"}, {key: keyInput}, {key: "input_files"},
	{key: "expected_output"}, {key: keyAssertions}, {key: keyAssert}, {key: keyEvaluators}, {key: "evaluator"},
	{key: keyRubrics}, {key: keyExecution}, {key: "metadata"}, {key: "conversation_id"},
	{"suite", keyIgnored, "AgentV 4.42 names a test's suite after its file (or the suite's name), not this key"},
	{"workspace", keyRefused, "a workspace (its template, repositories, hooks, docker image) is set up by AgentV " +
		"around the test, which the operator does not do: the runner's image is its workspace"},
	{"depends_on", keyRefused, "a test that depends on others runs after them with their results, which a batch " +
		"runner does not do"},
	{"on_dependency_failure", keyRefused, "it belongs to depends_on, which the operator does not support"},
	{"mode", keyRefused, "conversation mode runs the target turn by turn, which a batch runner does not do: write " +
		"the conversation so far as input"},
	{"turns", keyRefused, "conversation mode runs the target turn by turn, which a batch runner does not do: write " +
		"the conversation so far as input"},
	{"aggregation", keyRefused, "it belongs to conversation mode (turns), which the operator does not support"},
	{"on_turn_failure", keyRefused, "it belongs to conversation mode (turns), which the operator does not support"},
	{"window_size", keyRefused, "it belongs to conversation mode (turns), which the operator does not support"},
	{"input_messages", keyRefused, "input_messages is agentv-eval-v2's key, which AgentV 4.42 does not read (it " +
		"would skip the test): write input"},
	{"expected_messages", keyRefused, "expected_messages is agentv-eval-v2's key, which AgentV 4.42 does not read: " +
		"write expected_output"},
}

// whySuiteLevelOnly is why a test's execution key that AgentV 4.42 reads for the whole suite is ignored.
const whySuiteLevelOnly = "AgentV 4.42 reads it at the suite level only"

// testExecutionSpecs are the keys of a test's execution.
var testExecutionSpecs = []keySpec{
	{key: "skip_defaults"}, {key: "threshold"}, {key: "fail_on_error"}, {key: "failOnError"}, {key: keyEvaluators},
	{key: "targets"},
	{keyTarget, keyIgnored, "AgentV 4.42 reads a test's target from execution.targets only"},
	{keyTrials, keyRefused, whyTrialsSuiteLevel},
	{keyAssertions, keyRefused, "AgentV 4.42 does not read a test's execution.assertions (it would grade the test " +
		"without them): write assertions on the test"},
	{keyAssert, keyRefused, "AgentV 4.42 does not read a test's execution.assert (it would grade the test without " +
		"them): write assertions on the test"},
	{"workers", keyIgnored, whySuiteLevelOnly},
	{"cache", keyIgnored, whySuiteLevelOnly},
	{"cache_path", keyIgnored, whySuiteLevelOnly},
	{"budget_usd", keyIgnored, whySuiteLevelOnly},
	{"budgetUsd", keyIgnored, whySuiteLevelOnly},
	{"total_budget_usd", keyIgnored, whySuiteLevelOnly},
}

// cases reads every test into a Case (sp.tests), in order.
func (sp *suiteParser) cases() {
	p := sp.p
	sp.tests = make([]*evalfile.Case, 0, len(sp.items))
	firstByID := make(map[string]int, len(sp.items))
	for k := range sp.items {
		it := &sp.items[k]
		var c *evalfile.Case
		sp.withFile(it.file, func() { c = sp.test(it, k) })
		if c == nil {
			continue
		}
		if c.ID != "" {
			if first, dup := firstByID[c.ID]; dup {
				p.CaseIndex, p.CaseID, p.InFile = k, c.ID, it.file
				p.AddAt(fmt.Sprintf("%s[%d].id", sp.s.TestsKey, k), keyLine(it.node, "id", it.v),
					"duplicate id %q: %s[%d] has it too", c.ID, sp.s.TestsKey, first)
				p.InFile = ""
			} else {
				firstByID[c.ID] = k
			}
		}
		sp.tests = append(sp.tests, c)
	}
	p.CaseIndex, p.CaseID = -1, ""
}

// test reads one test into a Case, recording its problems.
func (sp *suiteParser) test(it *testItem, k int) *evalfile.Case {
	p := sp.p
	v, n := it.v, it.node
	path := sp.s.TestsKey + "[" + strconv.Itoa(k) + "]"
	p.CaseIndex, p.CaseID = k, ""
	c := &evalfile.Case{Index: k, Suite: sp.s}

	// id: a safe file name and object key, as in agentv-eval-v2.
	idv := v.Get("id")
	if it.dirID != "" {
		idv = &yamltree.Value{Kind: yamltree.KindString, Str: it.dirID, Line: it.line}
	}
	if idv.IsNull() {
		p.AddAt(path+".id", it.line, "is required (AgentV 4.42 skips a test without one)")
	} else {
		p.ReadCaseID(c, idv, path, "quote it; AgentV 4.42 skips the test")
	}
	sp.checkKeys(v, n, path, testKeySpecs, "test")

	// vars fill the test's criteria, input, input_files and expected_output, and the suite's input and input_files.
	var tmpl *templater
	if vv := v.Get("vars"); !vv.IsNull() {
		if vv.Kind != yamltree.KindObject {
			p.Add(path+".vars", vv, "must be a mapping of variables, got %s (AgentV 4.42 ignores it)", vv.Kind)
		} else {
			tmpl = &templater{vars: vv}
		}
	}

	// execution.
	var exec *yamltree.Value
	execNode := member(n, keyExecution)
	skipDefaults := false
	if ev := v.Get(keyExecution); !ev.IsNull() {
		if ev.Kind != yamltree.KindObject {
			p.Add(path+".execution", ev, "must be a mapping, got %s", ev.Kind)
		} else {
			exec = ev
			epath := path + ".execution"
			sp.checkKeys(exec, execNode, epath, testExecutionSpecs, keyExecution)
			if sd := exec.Get("skip_defaults"); !sd.IsNull() {
				if sd.Kind != yamltree.KindBool {
					p.AddAt(epath+".skip_defaults", keyLine(execNode, "skip_defaults", sd), "must be true or false, got %s", describe(sd))
				}
				skipDefaults = sd.Kind == yamltree.KindBool && sd.Bool
			}
			c.Threshold = sp.unitNumber(exec, execNode, "threshold", epath)
			c.FailOnError = sp.optBoolPtr(exec, execNode, epath, "fail_on_error", "failOnError")
			sp.targets(exec, execNode, epath)
		}
	}

	// criteria, or the deprecated expected_outcome.
	c.ExpectedOutcome = sp.criteria(v, n, path, tmpl)

	// input: the suite's input (unless skip_defaults), then the test's, with input_files expanded.
	c.InputMessages, c.InputForm = sp.testInput(v, n, path, tmpl, skipDefaults)

	// expected_output.
	if eo := tmpl.fill(v.Get("expected_output")); !eo.IsNull() {
		c.ExpectedMessages = sp.expectedOutput(eo, path+".expected_output")
	}
	if tmpl != nil && tmpl.over {
		p.Add(path+".vars", v.Get("vars"), "filling the test's vars adds more than %s to it (AgentV 4.42 would too; "+
			"a variable used many times?)", yamltree.SizeText(evalfile.MaxExpansionBytes))
	}

	// A test needs something to be judged by: AgentV skips it otherwise.
	if c.ExpectedOutcome == "" && len(c.ExpectedMessages) == 0 && !v.Has(keyAssertions) && !v.Has(keyAssert) {
		p.AddAt(path, it.line, "the test has no criteria, expected_output or assertions, which AgentV 4.42 skips "+
			"(it needs at least one of them)")
	}

	if cv := v.Get("conversation_id"); !cv.IsNull() {
		c.ConversationID = p.OptString(v, "conversation_id", path)
	}
	sp.testMetadata(c, v, path)
	sp.testEvaluators(c, v, n, exec, execNode, path, skipDefaults)
	return c
}

// criteria reads criteria, or the deprecated expected_outcome when criteria is not set.
func (sp *suiteParser) criteria(v *yamltree.Value, n *yaml.Node, path string, tmpl *templater) string {
	p := sp.p
	read := func(key string) string {
		cv := tmpl.fill(v.Get(key))
		if cv.IsNull() {
			return ""
		}
		if cv.Kind != yamltree.KindString || strings.TrimSpace(cv.Str) == "" {
			p.AddAt(path+"."+key, keyLine(n, key, cv), "must be a non-empty string, got %s (AgentV 4.42 ignores it)", describe(cv))
			return ""
		}
		return cv.Str
	}
	criteria := read("criteria")
	if eo := v.Get("expected_outcome"); !eo.IsNull() {
		line := keyLine(n, "expected_outcome", eo)
		if criteria != "" {
			sp.warnAt(path+".expected_outcome", line, "ignored: criteria is set, which AgentV 4.42 reads instead")
			return criteria
		}
		sp.warnAt(path+".expected_outcome", line, "expected_outcome is deprecated in AgentV 4.42: write criteria")
		return read("expected_outcome")
	}
	return criteria
}

// testInput resolves the test's input messages as AgentV 4.42 does, and the form the test wrote its input in.
func (sp *suiteParser) testInput(v *yamltree.Value, n *yaml.Node, path string, tmpl *templater, skipDefaults bool) ([]evalfile.Message, evalfile.InputForm) {
	p := sp.p
	in := tmpl.fill(v.Get(keyInput))
	inputFiles, filesPath := v.Get("input_files"), path+".input_files"
	if inputFiles.IsNull() && sp.inputFiles != nil && !skipDefaults {
		inputFiles, filesPath = sp.inputFiles, "input_files"
	}
	inputFiles = tmpl.fill(inputFiles)

	var msgs []evalfile.Message
	form := evalfile.InputMessagesForm
	switch {
	case in.IsNull():
		p.AddAt(path+".input", keyLine(n, keyInput, v), "is required: a string or a list of messages (AgentV 4.42 "+
			"skips a test without)")
	case !inputFiles.IsNull():
		sp.onceForSuite(func() { msgs = sp.inputFilesMessage(inputFiles, filesPath, in, path+".input") })
	default:
		msgs, form = sp.messagesShorthand(in, path+".input", evalfile.RoleUser)
	}
	if sp.input != nil && !skipDefaults {
		sp.onceForSuite(func() {
			suiteMsgs, _ := sp.messagesShorthand(tmpl.fill(sp.input), keyInput, evalfile.RoleUser)
			msgs = append(suiteMsgs, msgs...)
		})
		form = evalfile.InputMessagesForm
	}
	if !inputFiles.IsNull() {
		form = evalfile.InputMessagesForm
	}
	return msgs, form
}

// onceForSuite runs fn, which reads the suite-level input or input_files for a test, and keeps a problem it finds
// in them (a path outside the test's) only the first time: every test reads them again, with its vars.
func (sp *suiteParser) onceForSuite(fn func()) {
	before := len(sp.p.Problems)
	fn()
	kept := sp.p.Problems[:before]
	for _, pr := range sp.p.Problems[before:] {
		if strings.HasPrefix(pr.Path, sp.s.TestsKey+"[") {
			kept = append(kept, pr)
			continue
		}
		key := fmt.Sprintf("%d %s %s", pr.Line, pr.Path, pr.Message)
		if !sp.suiteInputProblems[key] {
			sp.suiteInputProblems[key] = true
			kept = append(kept, pr)
		}
	}
	sp.p.Problems = kept
}

// inputFilesMessage expands input_files with a string input into one user message: a file segment per path,
// then the input as a text segment.
func (sp *suiteParser) inputFilesMessage(files *yamltree.Value, filesPath string, in *yamltree.Value, inPath string) []evalfile.Message {
	p := sp.p
	if files.Kind != yamltree.KindArray || len(files.Vals) == 0 {
		p.Add(filesPath, files, "must be a non-empty list of file paths, got %s (AgentV 4.42 skips the test)", describe(files))
		return nil
	}
	if in.Kind != yamltree.KindString {
		p.Add(inPath, in, "must be a string with input_files set (AgentV 4.42 expands input_files only with a "+
			"string input, and skips the test), got %s", in.Kind)
		return nil
	}
	content := &yamltree.Value{Kind: yamltree.KindArray, Line: files.Line}
	for i, f := range files.Vals {
		if f.Kind != yamltree.KindString || f.Str == "" {
			p.Add(fmt.Sprintf("%s[%d]", filesPath, i), f, "must be a file path, got %s", describe(f))
			continue
		}
		content.Vals = append(content.Vals, segmentValue("file", f.Str, f.Line))
	}
	content.Vals = append(content.Vals, segmentValue("text", in.Str, in.Line))
	return []evalfile.Message{sp.message(evalfile.RoleUser, content, inPath, false)}
}

// segmentValue is a {type, value} segment.
func segmentValue(t, s string, line int) *yamltree.Value {
	return &yamltree.Value{Kind: yamltree.KindObject, Line: line, Keys: []string{keyType, "value"},
		Vals: []*yamltree.Value{{Kind: yamltree.KindString, Str: t, Line: line}, {Kind: yamltree.KindString, Str: s, Line: line}}}
}

// messagesShorthand expands input (role user) or a suite-level input: a string is one message, a mapping without
// role one message with structured content, a mapping with role that message, a list a list of messages.
func (sp *suiteParser) messagesShorthand(v *yamltree.Value, path string, role evalfile.Role) ([]evalfile.Message, evalfile.InputForm) {
	p := sp.p
	switch v.Kind {
	case yamltree.KindString:
		return []evalfile.Message{sp.message(role, v, path, false)}, evalfile.InputText
	case yamltree.KindObject:
		if !v.Has("role") {
			return []evalfile.Message{sp.message(role, v, path, false)}, evalfile.InputObject
		}
		if m, ok := sp.messageItem(v, path, false); ok {
			return []evalfile.Message{m}, evalfile.InputMessagesForm
		}
		return nil, evalfile.InputMessagesForm
	case yamltree.KindArray:
		if len(v.Vals) == 0 {
			p.Add(path, v, "must have at least one message (AgentV 4.42 skips the test)")
			return nil, evalfile.InputMessagesForm
		}
		msgs := make([]evalfile.Message, 0, len(v.Vals))
		for i, item := range v.Vals {
			if m, ok := sp.messageItem(item, fmt.Sprintf("%s[%d]", path, i), false); ok {
				msgs = append(msgs, m)
			}
		}
		return msgs, evalfile.InputMessagesForm
	}
	p.Add(path, v, "must be a string, a mapping or a list of messages, got %s", v.Kind)
	return nil, evalfile.InputMessagesForm
}

// expectedOutput expands expected_output: a string is one assistant message, a mapping without role one with
// structured content, a mapping with role that message, a list whose first item is a mapping with role a list of
// messages, any other list one assistant message with the list as content.
func (sp *suiteParser) expectedOutput(v *yamltree.Value, path string) []evalfile.Message {
	switch v.Kind {
	case yamltree.KindString:
		return []evalfile.Message{sp.message(evalfile.RoleAssistant, v, path, true)}
	case yamltree.KindObject:
		if !v.Has("role") {
			return []evalfile.Message{sp.message(evalfile.RoleAssistant, v, path, true)}
		}
		if m, ok := sp.messageItem(v, path, true); ok {
			return []evalfile.Message{m}
		}
		return nil
	case yamltree.KindArray:
		if len(v.Vals) > 0 && v.Vals[0].Kind == yamltree.KindObject && v.Vals[0].Has("role") {
			var msgs []evalfile.Message
			for i, item := range v.Vals {
				if m, ok := sp.messageItem(item, fmt.Sprintf("%s[%d]", path, i), true); ok {
					msgs = append(msgs, m)
				}
			}
			return msgs
		}
		if len(v.Vals) == 0 {
			return nil
		}
		return []evalfile.Message{sp.message(evalfile.RoleAssistant, v, path, true)}
	}
	sp.p.Add(path, v, "must be a string, a mapping or a list, got %s", v.Kind)
	return nil
}

// messageItem reads a message mapping {role, content, tool_calls, name}; ok is false (after recording why) when it
// is not one AgentV 4.42 keeps.
func (sp *suiteParser) messageItem(v *yamltree.Value, path string, expected bool) (evalfile.Message, bool) {
	p := sp.p
	if v.Kind != yamltree.KindObject {
		p.Add(path, v, "a message must be a mapping with role and content, got %s (AgentV 4.42 drops it)", v.Kind)
		return evalfile.Message{}, false
	}
	rv := v.Get("role")
	var role evalfile.Role
	switch {
	case rv.IsNull():
		p.Add(path+".role", v, "is required (AgentV 4.42 drops a message without)")
		return evalfile.Message{}, false
	case rv.Kind != yamltree.KindString:
		p.Add(path+".role", rv, "must be a string, got %s", rv.Kind)
		return evalfile.Message{}, false
	default:
		switch evalfile.Role(rv.Str) {
		case evalfile.RoleSystem, evalfile.RoleUser, evalfile.RoleAssistant, evalfile.RoleTool:
			role = evalfile.Role(rv.Str)
		default:
			p.Add(path+".role", rv, "invalid role %q: must be system, user, assistant or tool (AgentV 4.42 drops the message)",
				textbound.Head(rv.Str, 40))
			return evalfile.Message{}, false
		}
	}
	content := v.Get("content")
	tc := v.Get("tool_calls")
	hasCalls := tc != nil && tc.Kind == yamltree.KindArray && len(tc.Vals) > 0
	if content.IsNull() && !hasCalls {
		p.Add(path+".content", v, "is required: a string, a mapping or a list of segments (AgentV 4.42 drops a message without)")
		return evalfile.Message{}, false
	}
	m := sp.message(role, content, path, expected)
	if !tc.IsNull() {
		if role != evalfile.RoleAssistant {
			p.Add(path+".tool_calls", tc, "only assistant messages may carry tool_calls")
		}
		m.ToolCalls = p.ToolCalls(tc, path+".tool_calls")
	}
	if nv := v.Get("name"); !nv.IsNull() {
		m.Name = p.OptString(v, "name", path)
	}
	m.Raw = messageRaw(m, v)
	return m, true
}

// message is a message with role and content v (nil: none) at path.
func (sp *suiteParser) message(role evalfile.Role, v *yamltree.Value, path string, expected bool) evalfile.Message {
	m := evalfile.Message{Role: role, Content: sp.content(v, path+".content", expected)}
	m.Raw = messageRaw(m, nil)
	return m
}

// messageRaw is a message's JSON: role, name, content (as read: string segments become text segments) and
// tool_calls, in that order.
func messageRaw(m evalfile.Message, written *yamltree.Value) json.RawMessage {
	obj := &yamltree.Value{Kind: yamltree.KindObject}
	add := func(k string, v *yamltree.Value) { obj.Keys, obj.Vals = append(obj.Keys, k), append(obj.Vals, v) }
	add("role", &yamltree.Value{Kind: yamltree.KindString, Str: string(m.Role)})
	if m.Name != "" {
		add("name", &yamltree.Value{Kind: yamltree.KindString, Str: m.Name})
	}
	b := append([]byte(nil), obj.Raw()...)
	b = b[:len(b)-1]
	if m.Content.Raw != nil {
		b = append(append(b, `,"content":`...), m.Content.Raw...)
	}
	if tc := written.Get("tool_calls"); !tc.IsNull() {
		b = append(append(b, `,"tool_calls":`...), tc.Raw()...)
	}
	return append(b, '}')
}

// content reads a 4.42 message's content: a string, a mapping (kept exactly), or a list of segments, a string item
// being a text segment (an empty one dropped, as AgentV drops it). A list that is not segments is kept as it is
// in expected output (ContentList), and refused in input.
func (sp *suiteParser) content(v *yamltree.Value, path string, expected bool) evalfile.Content {
	p := sp.p
	switch {
	case v.IsNull():
		return evalfile.Content{}
	case v.Kind == yamltree.KindString:
		return evalfile.Content{Kind: evalfile.ContentText, Text: v.Str, Raw: p.Raw(v)}
	case v.Kind == yamltree.KindObject:
		return evalfile.Content{Kind: evalfile.ContentObject, Raw: p.Raw(v)}
	case v.Kind != yamltree.KindArray:
		p.Add(path, v, "must be a string, a mapping or a list of segments, got %s", v.Kind)
		return evalfile.Content{}
	}
	if expected && !allSegments(v) {
		return evalfile.Content{Kind: evalfile.ContentList, Raw: p.Raw(v)}
	}
	c := evalfile.Content{Kind: evalfile.ContentSegments, Segments: make([]evalfile.Segment, 0, len(v.Vals))}
	norm := &yamltree.Value{Kind: yamltree.KindArray, Line: v.Line}
	for i, sv := range v.Vals {
		spath := fmt.Sprintf("%s[%d]", path, i)
		if sv.Kind == yamltree.KindString {
			if sv.Str == "" {
				continue
			}
			sv = segmentValue("text", sv.Str, sv.Line)
		}
		if sv.Kind != yamltree.KindObject {
			p.Add(spath, sv, "a content segment must be a string or a mapping {type: text|file|image, value}, got %s", sv.Kind)
			continue
		}
		seg := evalfile.Segment{}
		tv := sv.Get(keyType)
		switch {
		case tv.IsNull():
			p.Add(spath+".type", sv, "is required (text, file or image)")
		case tv.Kind != yamltree.KindString || (tv.Str != "text" && tv.Str != "file" && tv.Str != "image"):
			p.Add(spath+".type", tv, "must be text, file or image, got %s", describe(tv))
		default:
			seg.Type = evalfile.SegmentType(tv.Str)
		}
		vv := sv.Get("value")
		switch {
		case vv.IsNull():
			p.Add(spath+".value", sv, "is required (AgentV 4.42 drops a segment without)")
		case vv.Kind != yamltree.KindString:
			p.Add(spath+".value", vv, "must be a string, got %s", vv.Kind)
		case seg.Type != evalfile.SegmentText && vv.Str == "":
			p.Add(spath+".value", vv, "a %s segment needs a path", seg.Type)
		default:
			seg.Value = vv.Str
		}
		seg.Raw = p.Raw(sv)
		c.Segments = append(c.Segments, seg)
		norm.Vals = append(norm.Vals, sv)
	}
	c.Raw = p.Raw(norm)
	return c
}

// allSegments reports whether every item of a list is a string or a segment mapping.
func allSegments(v *yamltree.Value) bool {
	for _, item := range v.Vals {
		if item.Kind == yamltree.KindString {
			continue
		}
		t := item.Get(keyType)
		if item.Kind != yamltree.KindObject || t == nil || t.Kind != yamltree.KindString || (t.Str != "text" && t.Str != "file" && t.Str != "image") {
			return false
		}
	}
	return true
}

// testMetadata reads the test's metadata, merged with the suite's.
func (sp *suiteParser) testMetadata(c *evalfile.Case, v *yamltree.Value, path string) {
	var own *yamltree.Value
	if m := v.Get("metadata"); !m.IsNull() {
		if m.Kind != yamltree.KindObject {
			sp.p.Add(path+".metadata", m, "must be a mapping, got %s (AgentV 4.42 ignores it)", m.Kind)
		} else {
			own = m
		}
	}
	switch {
	case sp.metadata != nil:
		c.Metadata = mergeMetadata(own, sp.metadata).Raw()
	case own != nil:
		c.Metadata = own.Raw()
	}
}

// testEvaluators sets the test's evaluators: its inline rubrics (deprecated), its own assertions (assertions >
// assert > execution.evaluators > evaluators), then the suite's unless skip_defaults. With none of its own, the
// EvalRun's judging.evaluators take the suite's place when given, as they take the file-level ones' in
// agentv-eval-v2.
func (sp *suiteParser) testEvaluators(c *evalfile.Case, v *yamltree.Value, n *yaml.Node, exec *yamltree.Value,
	execNode *yaml.Node, path string, skipDefaults bool) {
	var list []*evalfile.EvaluatorConfig
	if r := v.Get(keyRubrics); !r.IsNull() {
		sp.warnAt(path+".rubrics", keyLine(n, keyRubrics, r), "rubrics on a test is deprecated in AgentV 4.42: write "+
			"assertions: [{type: rubrics, criteria: [...]}]")
		if ev := sp.inlineRubrics(r, path+".rubrics"); ev != nil {
			c.Rubrics = ev.LLMJudge.Rubrics
			list = append(list, ev)
		}
	}
	own, ownPath := sp.firstList([]listSource{{v, n, path, keyAssertions}, {v, n, path, keyAssert},
		{exec, execNode, path + ".execution", keyEvaluators}, {v, n, path, keyEvaluators}})
	var ownList []*evalfile.EvaluatorConfig
	if own != nil {
		ownList = sp.graderList(own, ownPath, searchDirs(sp.files.dir))
	}
	suite := sp.f.Evaluators
	if skipDefaults {
		suite = nil
	}
	switch {
	case len(ownList) > 0:
		c.EvaluatorSource = evalfile.SourceCase
		list = append(append(list, ownList...), suite...)
	case len(sp.f.DefaultEvaluators) > 0:
		c.EvaluatorSource = evalfile.SourceJudging
		list = evalfile.Inherit(list, sp.f.DefaultEvaluators)
	case len(suite) > 0:
		c.EvaluatorSource = evalfile.SourceFile
		list = evalfile.Inherit(list, suite)
	case len(list) > 0 || len(sp.f.Evaluators) > 0:
		// Inline rubrics alone, or skip_defaults: the test declares its evaluators.
		c.EvaluatorSource = evalfile.SourceCase
	default:
		c.EvaluatorSource = evalfile.SourceNone
	}
	listPath, listValue := path, v
	if own != nil {
		listPath, listValue = ownPath, own
	}
	c.Evaluators = sp.uniqueEvaluators(list, listPath, listValue)
	kind := sp.defaultGrader(v, n, path)
	if kind == "" {
		kind = sp.suiteGrader
	}
	if len(c.Evaluators) == 0 && kind != "" && kind != graderLLM {
		sp.p.AddAt(path, v.Line, "not supported: the test has no assertions, so AgentV 4.42 grades it with the "+
			"grader its evaluator key names (%s); the operator grades such a test with llm-grader only", kind)
	}
}

// uniqueEvaluators makes the names of a list unique as results need them: a name AgentV made up (graderName) that
// another evaluator of the list already has is numbered (rubrics, rubrics-2, ...); two names written alike are a
// problem.
func (sp *suiteParser) uniqueEvaluators(list []*evalfile.EvaluatorConfig, path string, v *yamltree.Value) []*evalfile.EvaluatorConfig {
	seen := make(map[string]bool, len(list))
	var out []*evalfile.EvaluatorConfig
	clash := false
	for i, ev := range list {
		if !seen[ev.Name] {
			seen[ev.Name] = true
			continue
		}
		if !sp.generated[ev] {
			sp.p.Add(path, v, "evaluator name %q is used more than once: names must be unique within a test's "+
				"assertions (the suite's included)", ev.Name)
			clash = true
			continue
		}
		if out == nil {
			out = slices.Clone(list)
		}
		name := ev.Name
		for k := 2; seen[name]; k++ {
			name = ev.Name + "-" + strconv.Itoa(k)
		}
		seen[name] = true
		out[i] = renamed(ev, name)
		sp.generated[out[i]] = true
	}
	if out == nil {
		out = list
	}
	if clash {
		return out
	}
	keys := map[string]bool{}
	for _, ev := range out {
		for _, k := range evaluatorKeys(ev, nil) {
			if keys[k] {
				sp.p.Add(path, v, "two evaluators of the test have the key %q (a grader's name and a composite's "+
					"member's path): rename one", k)
			}
			keys[k] = true
		}
	}
	return out
}

// evaluatorKeys appends the keys of ev and of its composite members.
func evaluatorKeys(ev *evalfile.EvaluatorConfig, keys []string) []string {
	keys = append(keys, ev.Key)
	if ev.Composite != nil {
		for _, m := range ev.Composite.Members {
			keys = evaluatorKeys(m, keys)
		}
	}
	return keys
}

// renamed returns a copy of ev under another name, its composite members' keys following it.
func renamed(ev *evalfile.EvaluatorConfig, name string) *evalfile.EvaluatorConfig {
	c := *ev
	c.Name = name
	c.Key = name
	if i := strings.LastIndexByte(ev.Key, '/'); i >= 0 {
		c.Key = ev.Key[:i+1] + name
	}
	rekey(&c)
	return &c
}

// rekey gives a composite's members keys under its own (copies: the members may be shared).
func rekey(ev *evalfile.EvaluatorConfig) {
	if ev.Composite == nil {
		return
	}
	comp := *ev.Composite
	comp.Members = make([]*evalfile.EvaluatorConfig, len(ev.Composite.Members))
	for i, m := range ev.Composite.Members {
		mc := *m
		mc.Key = ev.Key + "/" + m.Name
		rekey(&mc)
		comp.Members[i] = &mc
	}
	ev.Composite = &comp
}
