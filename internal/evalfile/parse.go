package evalfile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strconv"
	"unsafe"

	yaml "go.yaml.in/yaml/v3"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile/yamltree"
	"github.com/evalrun-operator/evalrun-operator/internal/idindex"
	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
)

// idPattern is the charset of case ids. An id becomes a file name (<id>.out, <id>.txt) in the runner's work
// volume and a key in result objects, so it starts with a letter or digit, uses only letters, digits, '.', '_'
// and '-', and is at most 128 characters long.
var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// ValidID reports whether id is a valid case id: ^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$ (idPattern, checked by hand:
// a test holds the two to each other).
func ValidID(id string) bool {
	if len(id) == 0 || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case (c == '.' || c == '_' || c == '-') && i > 0:
		default:
			return false
		}
	}
	return true
}

// MaxEvaluatorNameLength bounds evaluator names (they appear in the EvalRun status).
const MaxEvaluatorNameLength = 128

// ParseOption changes how Parse reads a file.
type ParseOption func(*parseOptions)

type parseOptions struct {
	defaultEvaluators []map[string]any
	owned             bool
	// sharedIDs are the case ids of ParseShared.
	sharedIDs []string
	// wholeLimit is Scan's in-memory limit (WithWholeLimit); 0: MaxWholeBytes.
	wholeLimit int
	// files and name are the eval file's bundle and its path in it (WithFiles).
	files fs.FS
	name  string
}

// newParseOptions applies opts.
func newParseOptions(opts []ParseOption) parseOptions {
	var o parseOptions
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// WithDefaultEvaluators sets evaluators (each in the eval file's evaluator shape) for cases that declare none of
// their own. They take precedence over the file-level execution.evaluators: a case without evaluators of its own
// is judged by these when there are any, else by the file-level ones. They are validated with the file; their
// problems are reported with paths judging.evaluators[i] and CaseIndex -1.
func WithDefaultEvaluators(evaluators []map[string]any) ParseOption {
	return func(o *parseOptions) { o.defaultEvaluators = evaluators }
}

// WithOwnedData says the caller hands data over to Parse and never changes it again (a file it has just read, for
// example): the File then refers to data's bytes instead of a copy of them. A copy of a large file costs a fresh
// allocation as large, page faults and all, on the collector's path before any output is read.
func WithOwnedData() ParseOption {
	return func(o *parseOptions) { o.owned = true }
}

// Parse reads and validates an eval file: agentv-eval-v2, or an AgentV 4.42 suite (told from the document and read
// by internal/evalfile/suite42, which the binary must link: see FormatReader). On validation failure it returns a
// *ValidationError that lists every problem (YAML syntax errors included, with their line), and no File; a suite
// the binary cannot read is an *UnlinkedFormatError.
func Parse(data []byte, opts ...ParseOption) (*File, error) {
	o := newParseOptions(opts)
	if msg := checkSuiteName(o.name); msg != "" {
		return nil, &ValidationError{Problems: []Problem{{CaseIndex: -1, Message: msg}}}
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &ValidationError{Problems: []Problem{{CaseIndex: -1, Message: "the eval file is empty"}}}
	}
	if sg := segment(data); sg != nil && !mayBeSuite42(sg.header) {
		if f, ok, err := parseSegmented(sg, o); ok {
			return f, err
		}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, &ValidationError{Problems: []Problem{yamltree.SyntaxProblem(err)}}
	}
	if key, ok := isSuite42(&doc); ok {
		r, err := readerOf(FormatSuite42)
		if err != nil {
			return nil, err
		}
		return r.Parse(data, &doc, key, o.reader())
	}
	tb := yamltree.NewBuilder(int64(len(data)), casesKey)
	p := &Parser{}
	var f *File
	if cases := streamableCases(&doc); cases != nil {
		f, _ = p.streamFile(tb, &doc, cases, o, nil)
	} else {
		root := tb.Build(&doc, nil, 0)
		if !tb.TooLarge {
			f = p.file(root, o)
		}
	}
	if f != nil {
		f.wholeTree = true
	}
	return finish(tb, p, f)
}

// SharedEvaluators reports whether every case is judged by the evaluators it inherits, the same for all: none
// declares evaluators or inline rubrics of its own, so each takes the EvalRun's judging.evaluators, else the file's
// execution.evaluators, else none. Such a file can be read again with ParseShared.
func (f *File) SharedEvaluators() bool {
	if f.shared {
		return true
	}
	for _, e := range f.cases {
		k := e.inherits
		if e.end == 0 {
			k = inheritance(f.built[e.start])
		}
		if k == 0 {
			return false
		}
	}
	return true
}

// inheritedSource is where a case without evaluators or inline rubrics of its own takes its evaluators from (as
// resolveEvaluators decides), given the EvalRun's defaults and the file-level evaluators.
func inheritedSource(defaults, fileLevel []*EvaluatorConfig) EvaluatorSource {
	switch {
	case len(defaults) > 0:
		return SourceJudging
	case len(fileLevel) > 0:
		return SourceFile
	default:
		return SourceNone
	}
}

// ParseShared reads an eval file whose cases all inherit their evaluators (SharedEvaluators was true when the same
// bytes were parsed, with the same options, by a reader the caller trusts: the manager, before the pod started):
// only the text before evalcases is parsed and validated, and each case is its id, from ids (the file's case ids
// in order), and the inherited evaluators. CaseAt gives what LightCase gives: no case has messages, an expected
// outcome or a conversation id, which only evaluators that read the case need (ReadsCase), and a
// code_judge, an llm_judge or a rubric reads. ok is false, and nothing is read, when the file does not cut into
// items one at a time (see segment) or does not hold len(ids) of them: Parse it then.
func ParseShared(data []byte, ids []string, opts ...ParseOption) (f *File, ok bool, err error) {
	o := newParseOptions(opts)
	o.sharedIDs = ids
	if ids == nil {
		o.sharedIDs = []string{}
	}
	sg := segment(data)
	if sg == nil || len(sg.items) != len(ids) {
		return nil, false, nil
	}
	return parseSegmented(sg, o)
}

// WholeTree reports whether Parse read the file as one YAML document, building its whole node tree (a file whose
// items cannot be read one at a time: see segment). That leaves garbage of many times the file's size; the cut
// file's items leave little.
func (f *File) WholeTree() bool { return f.wholeTree }

// NewFile returns the File a format's reader read (FormatReader.Parse): f, whose header fields the reader set, with
// cases, kept built, as its cases in order; or, when the tree builder tb or the reader's Parser p found problems,
// the *ValidationError that lists them (the tree builder's first; only its own when the document grew too large).
func NewFile(f *File, cases []*Case, tb *yamltree.Builder, p *Parser) (*File, error) {
	f.wholeTree = true
	f.built = cases
	f.cases, f.ids = make([]caseEntry, len(cases)), make([]string, len(cases))
	for i, c := range cases {
		f.cases[i], f.ids[i] = caseEntry{start: int32(i)}, c.ID
	}
	return finish(tb, p, f)
}

// finish returns the File, or the problems the tree builder and the parser found.
func finish(tb *yamltree.Builder, p *Parser, f *File) (*File, error) {
	if tb.TooLarge {
		return nil, &ValidationError{Problems: tb.Problems}
	}
	if problems := append(tb.Problems, p.Problems...); len(problems) > 0 {
		return nil, &ValidationError{Problems: problems}
	}
	f.index = idindex.New(f.ids) // now, so that a parsed File is safe for concurrent reads
	return f, nil
}

// parseSegmented is Parse on a file cut into its header and items (see segment): each item's YAML nodes exist
// only while the case is built. ok is false when some part does not parse alone; Parse then reads the whole
// document.
func parseSegmented(sg *segmented, o parseOptions) (*File, bool, error) {
	doc, cases, ok := sg.document()
	if !ok || streamableCases(doc) != cases {
		return nil, false, nil
	}
	tb := yamltree.NewBuilder(int64(len(sg.data)), casesKey)
	p := &Parser{}
	switch {
	case o.sharedIDs != nil: // no item is read
	case o.owned:
		sg.src = unsafe.String(unsafe.SliceData(sg.data), len(sg.data))
	default:
		sg.src = string(sg.data)
	}
	f, ok := p.streamFile(tb, doc, cases, o, sg)
	if !ok {
		return nil, false, nil
	}
	file, err := finish(tb, p, f)
	return file, true, err
}

// streamableCases returns the evalcases sequence node of a document whose cases can be converted and validated
// one at a time, or nil. That is a document whose root mapping has no merge keys and ends with its only
// evalcases key, a non-empty block or flow sequence: every other member is then built, in document order,
// before any case, as when the whole tree is built first.
func streamableCases(doc *yaml.Node) *yaml.Node {
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil
	}
	root := doc.Content[0]
	n := len(root.Content)
	if root.Kind != yaml.MappingNode || n < 2 || n%2 != 0 {
		return nil
	}
	for i := 0; i < n; i += 2 {
		k := root.Content[i]
		if k.Kind != yaml.ScalarNode || k.ShortTag() == "!!merge" || (k.Value == casesKey && i != n-2) {
			return nil
		}
	}
	if k, v := root.Content[n-2], root.Content[n-1]; k.Value != casesKey || v.Kind != yaml.SequenceNode || len(v.Content) == 0 {
		return nil
	}
	return root.Content[n-1]
}

// streamFile is file for a document whose evalcases streamableCases found: the members before evalcases are
// built and validated first, then each case is built, validated and dropped, both its YAML nodes and its
// values, so that only the File's cases stay live. Problems come out in the same order as from building the
// whole tree first (tree problems in tb.Problems, the rest in p.Problems).
// sg, when set, is the document's text cut into items: the items yamltree.ReadItem reads are read and validated on
// several goroutines (see readItems) and kept as the place of their text; sg supplies every other item's nodes
// just before it is built (when it cannot, streamFile returns false).
func (p *Parser) streamFile(tb *yamltree.Builder, doc, cases *yaml.Node, o parseOptions, sg *segmented) (*File, bool) {
	f, cv := p.streamHeader(tb, doc, cases, o)
	if tb.TooLarge {
		return nil, true
	}
	if cv != nil && o.sharedIDs != nil {
		// Every case inherits its evaluators (ParseShared): the cases are their ids.
		f.shared = true
		f.ids = slices.Clone(o.sharedIDs)
		f.cases = make([]caseEntry, len(f.ids))
		k := inheritance(&Case{EvaluatorSource: inheritedSource(f.DefaultEvaluators, f.Evaluators)})
		for i := range f.cases {
			f.cases[i].inherits = k
		}
	} else if cv != nil {
		// The header saw an array of nil items; its problems (none, for a non-empty sequence) are recorded.
		casesPath := yamltree.KeyPath(nil, casesKey)
		c := p.newCases(f, len(cases.Content))
		var items *itemReader
		if sg != nil {
			if items = startItems(sg, f); items != nil {
				f.src, f.indent = sg.src, sg.indent
				defer items.stop()
			}
		}
		for i := range cases.Content {
			if items != nil {
				// A fast item has no alias, so none of its values counts toward the alias expansion bound.
				if r := items.next(i); r.read {
					c.addRead(r, i)
					continue
				}
			}
			if sg != nil {
				n, ok := sg.item(i)
				if !ok {
					return nil, false
				}
				cases.Content[i] = n
			}
			item := tb.BuildItem(i, &casesPath, 1)
			cases.Content[i] = nil
			if tb.TooLarge {
				return nil, true
			}
			c.add(item, i)
		}
	}
	p.CaseIndex, p.CaseID = -1, ""
	return f, true
}

// streamHeader builds and validates everything of doc but the items of cases, its evalcases sequence (see
// streamFile); it returns the evalcases array when there are cases to add. The File is nil when the tree grew too
// large (tb.TooLarge).
func (p *Parser) streamHeader(tb *yamltree.Builder, doc, cases *yaml.Node, o parseOptions) (*File, *yamltree.Value) {
	tb.Deferred = cases
	root := tb.Build(doc, nil, 0)
	if tb.TooLarge {
		return nil, nil
	}
	return p.fileHeader(root, o)
}

// Parser is agentv-eval-v2's reader: it validates the value tree and builds the File, collecting problems (the
// yamltree.Reader it embeds). The other formats' readers embed it too, for what every format writes alike: the
// EvalRun's judging.evaluators (DefaultEvaluators), case ids (ReadCaseID), tool calls (ToolCalls, ToolItem,
// ExpectedArgs), field_accuracy fields and token limits (FieldAccuracy, TokenUsage), unique names (UniqueNames).
type Parser struct {
	yamltree.Reader
}

func (p *Parser) file(root *yamltree.Value, o parseOptions) *File {
	f, cases := p.fileHeader(root, o)
	if cases != nil {
		c := p.newCases(f, len(cases.Vals))
		for i, cv := range cases.Vals {
			c.add(cv, i)
		}
	}
	p.CaseIndex, p.CaseID = -1, ""
	return f
}

// fileHeader validates everything but the cases; it returns the evalcases array when there are cases to add.
func (p *Parser) fileHeader(root *yamltree.Value, o parseOptions) (*File, *yamltree.Value) {
	p.CaseIndex = -1
	f := &File{Format: FormatV2}
	if root.Kind != yamltree.KindObject {
		p.Add("", root, "the eval file must be a mapping with evalcases, got %s", root.Kind)
		return f, nil
	}
	f.Schema = p.OptString(root, "$schema", "")
	if f.Schema != "" && f.Schema != SchemaV2 {
		p.Add("$schema", root.Get("$schema"), "unsupported schema %q: only %s is supported", f.Schema, SchemaV2)
	}
	f.Description = p.OptString(root, "description", "")
	f.Dataset = p.OptString(root, "dataset", "")

	var fileEvaluators *yamltree.Value
	if exec := root.Get(keyExecution); !exec.IsNull() {
		if exec.Kind != yamltree.KindObject {
			p.Add(keyExecution, exec, "must be a mapping, got %s", exec.Kind)
		} else {
			f.Target = p.OptString(exec, keyTarget, keyExecution)
			fileEvaluators = exec.Get(keyEvaluators)
		}
	}
	if !fileEvaluators.IsNull() {
		f.Evaluators = p.evaluatorList(fileEvaluators, "execution.evaluators", "")
	}
	f.DefaultEvaluators = p.DefaultEvaluators(o.defaultEvaluators)

	cases := root.Get(casesKey)
	switch {
	case !root.Has(casesKey):
		p.Add(casesKey, nil, "is required: the file has no evalcases")
		return f, nil
	case cases.Kind != yamltree.KindArray:
		p.Add(casesKey, cases, "must be a list of eval cases, got %s", cases.Kind)
		return f, nil
	case len(cases.Vals) == 0:
		p.Add(casesKey, cases, "is empty: the file has no eval cases")
		return f, nil
	}
	return f, cases
}

// caseAdder validates cases one at a time into a File.
type caseAdder struct {
	p         *Parser
	f         *File
	firstByID map[string]int
	// facts, when set, records each valid case's facts instead of adding it to the File (Scan).
	facts *Facts
}

func (p *Parser) newCases(f *File, n int) *caseAdder {
	f.cases, f.ids = make([]caseEntry, 0, n), make([]string, 0, n)
	return &caseAdder{p: p, f: f, firstByID: make(map[string]int, n)}
}

// add validates evalcases[i] and adds it to the File unless it is unusable.
func (a *caseAdder) add(cv *yamltree.Value, i int) {
	p := a.p
	path := casePath(i)
	c := p.evalCase(cv, i, path)
	if c == nil {
		return
	}
	if c.ID != "" {
		if first, dup := a.firstByID[c.ID]; dup {
			p.Add(path+".id", cv.Get("id"), "duplicate id %q: evalcases[%d] has it too", c.ID, first)
		} else {
			a.firstByID[c.ID] = i
		}
	}
	p.resolveEvaluators(a.f, c, cv, path)
	if a.facts != nil {
		a.facts.add(c.ID, inheritance(c), loadOf(c.Evaluators))
		return
	}
	a.f.cases = append(a.f.cases, caseEntry{start: int32(len(a.f.built))})
	a.f.built = append(a.f.built, c)
	a.f.ids = append(a.f.ids, c.ID)
}

// addRead adds evalcases[i], read and validated by an item reader, as add would have: the same problems in the
// same order, and the case kept as the place of its text.
func (a *caseAdder) addRead(r *readItem, i int) {
	p := a.p
	p.Problems = append(p.Problems, r.caseProblems...)
	if !r.isCase {
		return
	}
	if r.id != "" {
		if first, dup := a.firstByID[r.id]; dup {
			p.Problems = append(p.Problems, Problem{CaseIndex: i, CaseID: r.id, Path: casePath(i) + ".id", Line: r.idLine,
				Message: fmt.Sprintf("duplicate id %q: evalcases[%d] has it too", r.id, first)})
		} else {
			a.firstByID[r.id] = i
		}
	}
	p.Problems = append(p.Problems, r.evaluatorProblems...)
	if a.facts != nil {
		a.facts.add(r.id, r.inherits, r.load)
		return
	}
	a.f.cases = append(a.f.cases, caseEntry{start: r.start, end: r.end, line: r.line, inherits: r.inherits})
	a.f.ids = append(a.f.ids, r.id)
}

// casePath is "evalcases[i]".
func casePath(i int) string { return "evalcases[" + strconv.Itoa(i) + "]" }

func (p *Parser) evalCase(cv *yamltree.Value, i int, path string) *Case {
	p.CaseIndex, p.CaseID = i, ""
	if cv.Kind != yamltree.KindObject {
		p.Add(path, cv, "an eval case must be a mapping, got %s", cv.Kind)
		return nil
	}
	c := &Case{Index: i}

	if idv := cv.Get("id"); idv.IsNull() {
		p.Add(path+".id", cv, "is required")
	} else {
		p.ReadCaseID(c, idv, path, "quote it")
	}

	c.ExpectedOutcome = p.OptString(cv, "expected_outcome", path)
	if c.ExpectedOutcome == "" {
		c.ExpectedOutcome = p.OptString(cv, "outcome", path)
	}
	c.ConversationID = p.OptString(cv, "conversation_id", path)

	in := cv.Get("input_messages")
	switch {
	case in.IsNull():
		p.Add(path+".input_messages", cv, "is required")
	case in.Kind != yamltree.KindArray:
		p.Add(path+".input_messages", in, "must be a list of messages, got %s", in.Kind)
	case len(in.Vals) == 0:
		p.Add(path+".input_messages", in, "must have at least one message")
	default:
		c.InputMessages = p.messages(in, path, ".input_messages")
	}
	if exp := cv.Get("expected_messages"); !exp.IsNull() {
		if exp.Kind != yamltree.KindArray {
			p.Add(path+".expected_messages", exp, "must be a list of messages, got %s", exp.Kind)
		} else {
			c.ExpectedMessages = p.messages(exp, path, ".expected_messages")
		}
	}
	if r := cv.Get(keyRubrics); !r.IsNull() {
		c.Rubrics = p.rubrics(r, path+".rubrics")
		if len(c.Rubrics) == 0 && r.Kind == yamltree.KindArray {
			p.Add(path+".rubrics", r, "must not be empty when present")
		}
	}
	return c
}

// resolveEvaluators parses the case's own evaluators and sets its effective list; path is the case's.
func (p *Parser) resolveEvaluators(f *File, c *Case, cv *yamltree.Value, path string) {
	var own *yamltree.Value
	ownPath := ""
	execEvaluators := (*yamltree.Value)(nil)
	if exec := cv.Get(keyExecution); !exec.IsNull() {
		if exec.Kind != yamltree.KindObject {
			p.Add(path+".execution", exec, "must be a mapping, got %s", exec.Kind)
		} else {
			execEvaluators = exec.Get(keyEvaluators)
		}
	}
	caseEvaluators := cv.Get(keyEvaluators)
	switch {
	case !execEvaluators.IsNull() && !caseEvaluators.IsNull():
		p.Add(path+".evaluators", caseEvaluators, "both execution.evaluators and evaluators are set: use one of them")
		own, ownPath = execEvaluators, path+".execution.evaluators"
	case !execEvaluators.IsNull():
		own, ownPath = execEvaluators, path+".execution.evaluators"
	case !caseEvaluators.IsNull():
		own, ownPath = caseEvaluators, path+".evaluators"
	}

	var list []*EvaluatorConfig
	if len(c.Rubrics) > 0 {
		list = append(list, inlineRubricsEvaluator(c.Rubrics, cv.Get(keyRubrics)))
	}
	switch {
	case own != nil:
		c.EvaluatorSource = SourceCase
		list = append(list, p.evaluatorList(own, ownPath, "")...)
	case len(f.DefaultEvaluators) > 0:
		c.EvaluatorSource = SourceJudging
		list = Inherit(list, f.DefaultEvaluators)
	case len(f.Evaluators) > 0:
		c.EvaluatorSource = SourceFile
		list = Inherit(list, f.Evaluators)
	case len(c.Rubrics) > 0:
		c.EvaluatorSource = SourceCase
	default:
		c.EvaluatorSource = SourceNone
	}
	if len(c.Rubrics) > 0 {
		// Inline rubrics and inherited evaluators meet only here, so a clash is reported on the case.
		for _, ev := range list[1:] {
			if ev.Name == InlineRubricsEvaluatorName {
				p.Add(path+".rubrics", cv.Get(keyRubrics), "the case's inline rubrics are judged by an evaluator named %q, "+
					"which clashes with an evaluator of the same name: rename that evaluator", InlineRubricsEvaluatorName)
				break
			}
		}
	}
	c.Evaluators = list
}

// Inherit appends inherited evaluators to a case's list; a case with none of its own shares the inherited list (its
// capacity cut, so that appending to one case's list never changes another's).
func Inherit(list, inherited []*EvaluatorConfig) []*EvaluatorConfig {
	if len(list) == 0 {
		return inherited[:len(inherited):len(inherited)]
	}
	return append(list, inherited...)
}

func inlineRubricsEvaluator(rubrics []Rubric, raw *yamltree.Value) *EvaluatorConfig {
	entry := &yamltree.Value{Kind: yamltree.KindObject,
		Keys: []string{keyName, keyType, keyRubrics},
		Vals: []*yamltree.Value{{Kind: yamltree.KindString, Str: InlineRubricsEvaluatorName}, {Kind: yamltree.KindString, Str: string(TypeLLMJudge)}, raw},
	}
	return &EvaluatorConfig{
		Name:     InlineRubricsEvaluatorName,
		Type:     TypeLLMJudge,
		Key:      InlineRubricsEvaluatorName,
		Raw:      entry.Raw(),
		LLMJudge: &LLMJudgeConfig{Rubrics: rubrics},
	}
}

// messagePath is the path of message i of a list at path+field, formatted only for a problem.
type messagePath struct {
	path, field string
	i           int
}

// at formats the message's path followed by a member path.
func (m messagePath) at(member string) string {
	return m.path + m.field + "[" + strconv.Itoa(m.i) + "]" + member
}

// messages reads the list of messages at path+field.
func (p *Parser) messages(list *yamltree.Value, path, field string) []Message {
	out := make([]Message, 0, len(list.Vals))
	for i, mv := range list.Vals {
		// Paths are formatted only for problems.
		mp := messagePath{path: path, field: field, i: i}
		mpath := mp.at
		if mv.Kind != yamltree.KindObject {
			p.Add(mpath(""), mv, "a message must be a mapping with role and content, got %s", mv.Kind)
			continue
		}
		var m Message
		var contentRaw json.RawMessage
		if !p.ValidateOnly {
			// The content's JSON is the part of the message's that encodes it: one encoding, one allocation.
			var start, end int
			m.Raw, start, end = mv.RawMember("content")
			contentRaw = m.Raw[start:end:end]
		}
		rv := mv.Get("role")
		switch {
		case rv.IsNull():
			p.Add(mpath(".role"), mv, "is required")
		case rv.Kind != yamltree.KindString:
			p.Add(mpath(".role"), rv, "must be a string, got %s", rv.Kind)
		default:
			// The roles are the package's constants, not the document's copies of them.
			switch r := Role(rv.Str); r {
			case RoleSystem:
				m.Role = RoleSystem
			case RoleUser:
				m.Role = RoleUser
			case RoleAssistant:
				m.Role = RoleAssistant
			case RoleTool:
				m.Role = RoleTool
			default:
				p.Add(mpath(".role"), rv, "invalid role %q: must be system, user, assistant or tool", textbound.Head(rv.Str, 40))
			}
		}
		m.Content = p.content(mv.Get("content"), mp, contentRaw)
		if tc := mv.Get("tool_calls"); !tc.IsNull() {
			if m.Role != "" && m.Role != RoleAssistant {
				p.Add(mpath(".tool_calls"), tc, "only assistant messages may carry tool_calls")
			}
			m.ToolCalls = p.ToolCalls(tc, mpath(".tool_calls"))
		}
		out = append(out, m)
	}
	return out
}

// content reads a message's content; msgPath formats the message's path followed by a member path. raw is the
// content's JSON (nil when validating only).
func (p *Parser) content(v *yamltree.Value, msgPath messagePath, raw json.RawMessage) Content {
	if v.IsNull() {
		return Content{}
	}
	switch v.Kind {
	case yamltree.KindString:
		return Content{Kind: ContentText, Text: v.Str, Raw: raw}
	case yamltree.KindObject:
		return Content{Kind: ContentObject, Raw: raw}
	case yamltree.KindArray:
		c := Content{Kind: ContentSegments, Raw: raw, Segments: make([]Segment, 0, len(v.Vals))}
		for i, sv := range v.Vals {
			spath := msgPath.at(".content[" + strconv.Itoa(i) + "]")
			if sv.Kind != yamltree.KindObject {
				p.Add(spath, sv, "a content segment must be a mapping {type: text|file, value}, got %s", sv.Kind)
				continue
			}
			seg := Segment{Raw: p.Raw(sv)}
			tv := sv.Get(keyType)
			switch {
			case tv.IsNull():
				p.Add(spath+".type", sv, "is required (text or file)")
			case tv.Kind != yamltree.KindString || (tv.Str != string(SegmentText) && tv.Str != string(SegmentFile)):
				p.Add(spath+".type", tv, "must be text or file")
			default:
				seg.Type = SegmentType(tv.Str)
			}
			vv := sv.Get("value")
			switch {
			case vv.IsNull():
				p.Add(spath+".value", sv, "is required")
			case vv.Kind != yamltree.KindString:
				p.Add(spath+".value", vv, "must be a string, got %s", vv.Kind)
			case seg.Type == SegmentFile && vv.Str == "":
				p.Add(spath+".value", vv, "a file segment needs a path")
			default:
				seg.Value = vv.Str
			}
			c.Segments = append(c.Segments, seg)
		}
		return c
	}
	p.Add(msgPath.at(".content"), v, "must be a string, a mapping or a list of segments, got %s", v.Kind)
	return Content{}
}

// ToolItem checks that item, the list entry at ipath, is a mapping with a non-empty string tool, and returns the
// tool. notMapping is the problem reported when item is not a mapping (its kind is appended).
func (p *Parser) ToolItem(item *yamltree.Value, ipath, notMapping string) (string, bool) {
	if item.Kind != yamltree.KindObject {
		p.Add(ipath, item, notMapping+", got %s", item.Kind)
		return "", false
	}
	tool := item.Get("tool")
	if tool.IsNull() || tool.Kind != yamltree.KindString || tool.Str == "" {
		p.Add(ipath+".tool", item, "is required and must be a non-empty string")
		return "", false
	}
	return tool.Str, true
}

// ToolCalls reads a message's tool_calls: a list of {tool, input, output}.
func (p *Parser) ToolCalls(v *yamltree.Value, path string) []ToolCall {
	if v.Kind != yamltree.KindArray {
		p.Add(path, v, "must be a list of {tool, input, output}, got %s", v.Kind)
		return nil
	}
	out := make([]ToolCall, 0, len(v.Vals))
	for i, tv := range v.Vals {
		tool, ok := p.ToolItem(tv, fmt.Sprintf("%s[%d]", path, i), "a tool call must be a mapping {tool, input, output}")
		if !ok {
			continue
		}
		tc := ToolCall{Tool: tool}
		if in := tv.Get(keyInput); in != nil {
			tc.Input = p.Raw(in)
		}
		if o := tv.Get(keyOutput); o != nil {
			tc.Output = p.Raw(o)
		}
		out = append(out, tc)
	}
	return out
}

func (p *Parser) rubrics(v *yamltree.Value, path string) []Rubric {
	if v.Kind != yamltree.KindArray {
		p.Add(path, v, "must be a list of rubric items, got %s", v.Kind)
		return nil
	}
	out := make([]Rubric, 0, len(v.Vals))
	for i, rv := range v.Vals {
		rpath := fmt.Sprintf("%s[%d]", path, i)
		r := Rubric{ID: fmt.Sprintf("rubric-%d", i+1), Weight: 1, Required: true, Raw: p.Raw(rv)}
		switch rv.Kind {
		case yamltree.KindString:
			if rv.Str == "" {
				p.Add(rpath, rv, "must not be empty")
				continue
			}
			r.Outcome = rv.Str
		case yamltree.KindObject:
			if id := p.OptString(rv, "id", rpath); id != "" {
				r.ID = id
			}
			r.Outcome = p.OptString(rv, "expected_outcome", rpath)
			if r.Outcome == "" {
				r.Outcome = p.OptString(rv, "description", rpath)
			}
			if w := rv.Get(keyWeight); !w.IsNull() {
				if f, ok := p.NonNegative(w, rpath+".weight"); ok {
					r.Weight = f
				}
			}
			r.Required = p.OptBool(rv, "required", rpath, true)
			if sr := rv.Get("score_ranges"); !sr.IsNull() {
				if sr.Kind != yamltree.KindArray && sr.Kind != yamltree.KindObject {
					p.Add(rpath+".score_ranges", sr, "must be a list or a mapping, got %s", sr.Kind)
				}
			} else if r.Outcome == "" {
				p.Add(rpath, rv, "a checklist rubric needs expected_outcome (or description)")
				continue
			}
		default:
			p.Add(rpath, rv, "a rubric must be a string or a mapping, got %s", rv.Kind)
			continue
		}
		out = append(out, r)
	}
	return out
}

// UniqueNames reports evaluators in one list that share a name: recorded results and composite weights are keyed
// by name.
func (p *Parser) UniqueNames(list []*EvaluatorConfig, path string, v *yamltree.Value) {
	seen := make(map[string]bool, len(list))
	for _, ev := range list {
		if seen[ev.Name] {
			p.Add(path, v, "evaluator name %q is used more than once: names must be unique within a list", ev.Name)
			continue
		}
		seen[ev.Name] = true
	}
}

// ReadCaseID sets c.ID from idv, a case's (or test's) id that is set: a non-empty string that is a safe file name
// and object key (ValidID). Anything else adds its problem, with quoteNote in the one about a non-string.
func (p *Parser) ReadCaseID(c *Case, idv *yamltree.Value, path, quoteNote string) {
	switch {
	case idv.Kind != yamltree.KindString:
		p.Add(path+".id", idv, "must be a string, got %s (%s)", idv.Kind, quoteNote)
	case idv.Str == "":
		p.Add(path+".id", idv, "must not be empty")
	case !ValidID(idv.Str):
		p.Add(path+".id", idv, "%q is not a safe id: ids become file names and object keys, so they must match %s",
			textbound.Head(idv.Str, 80), idPattern.String())
	default:
		c.ID = idv.Str
		p.CaseID = c.ID
	}
}
