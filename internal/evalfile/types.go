package evalfile

import (
	"encoding/json"
	"slices"

	"github.com/evalrun-operator/evalrun-operator/internal/idindex"
)

// SchemaV2 is the $schema value of the supported format. A file without $schema is read as this format.
const SchemaV2 = "agentv-eval-v2"

// File is a parsed, validated eval file. It is read-only once Parse returns, and safe for concurrent use;
// evaluator configs are shared between cases.
//
// A large file's cases are not all kept built: a case whose text the file reader reads directly (see
// yamltree.ReadItem) keeps only its id and the place of its text, and is built again, the same, each time it is asked
// for (CaseAt, Case). A File of 100,000 such cases holds the file's text and about 40 bytes a case instead of every
// case's messages and their JSON.
type File struct {
	// Format is the file's format, told from the document (see format.go).
	Format Format
	// Schema is the file's $schema ("" when absent).
	Schema string
	// Description and Dataset are the file-level labels.
	Description string
	Dataset     string
	// Target is execution.target.
	Target string
	// Evaluators are the file-level execution.evaluators, the defaults for cases that declare none.
	Evaluators []*EvaluatorConfig
	// DefaultEvaluators are the evaluators given with WithDefaultEvaluators (the EvalRun's judging.evaluators).
	DefaultEvaluators []*EvaluatorConfig
	// Trials are the file's own trials (AgentV 4.42's suite-level execution.trials, see FileTrials); nil when it
	// has none, or one trial. Only 4.42 suites have them.
	Trials *FileTrials
	// Suite holds what only an AgentV 4.42 suite carries (nil for agentv-eval-v2). Its file-level assertions are
	// Evaluators, its description Description and its execution.target Target.
	Suite *Suite
	// Warnings are what a valid file says that AgentV 4.42 reads with a deprecation warning, or ignores (unknown
	// keys, settings it reads only elsewhere): never a reason to refuse the file. Only 4.42 suites have them.
	Warnings []Problem

	// cases are the eval cases in file order, ids their ids and index finds them by id; built holds the cases kept
	// built.
	cases []caseEntry
	built []*Case
	ids   []string
	index *idindex.Index
	// src is the file's text, which kept cases are built again from; indent is the column of evalcases' dashes.
	src    string
	indent int
	// wholeTree says Parse built the whole document's YAML tree (see WholeTree).
	wholeTree bool
	// shared says the File was read by ParseShared: its cases have no text, only ids and inherited evaluators.
	shared bool
}

// caseEntry is one case of a File: the place of its text in File.src (start and end delimit the item's text, line
// is its first line), or built (end 0) and in File.built (at start).
type caseEntry struct {
	start, end, line int32
	// inherits says where a kept case's evaluators come from when it has no inline rubrics and none of its own
	// (an index into inheritedSources); 0 otherwise.
	inherits uint8
}

// inheritedSources are the sources of inherited evaluators, by caseEntry.inherits.
var inheritedSources = [...]EvaluatorSource{1: SourceFile, 2: SourceJudging, 3: SourceNone}

// inheritance returns the caseEntry.inherits of a case.
func inheritance(c *Case) uint8 {
	if len(c.Rubrics) == 0 {
		for k, s := range inheritedSources {
			if k > 0 && s == c.EvaluatorSource {
				return uint8(k)
			}
		}
	}
	return 0
}

// NumCases returns the number of cases.
func (f *File) NumCases() int { return len(f.cases) }

// CaseAt returns the case at index i (0 <= i < NumCases()), in file order.
func (f *File) CaseAt(i int) *Case {
	e := &f.cases[i]
	if f.shared {
		c, _ := f.LightCase(i)
		return c
	}
	if e.end == 0 {
		return f.built[e.start]
	}
	return f.rebuild(e, i)
}

// CaseIDs returns the case ids in file order.
func (f *File) CaseIDs() []string { return slices.Clone(f.ids) }

// Case returns the case with the given id, or nil.
func (f *File) Case(id string) *Case { return f.CaseNear(id, -1) }

// CaseNear is Case for a caller that expects the case at index hint (asking for the cases in file order, for
// example): it is found there first.
func (f *File) CaseNear(id string, hint int) *Case {
	i, ok := f.Find(id, hint)
	if !ok {
		return nil
	}
	return f.CaseAt(i)
}

// Find returns the index of the case with the given id, looking at index hint first (see CaseNear).
func (f *File) Find(id string, hint int) (int, bool) {
	if f.index == nil {
		f.index = idindex.New(f.ids)
	}
	return f.index.Find(id, hint)
}

// LightCase returns case i with only its Index, ID, Evaluators and EvaluatorSource (as CaseAt has them), built
// without reading its text, when its evaluators are inherited: the file's, judging.evaluators or none, and no
// inline rubrics. That is all evaluators that read nothing of the case need (see ReadsCase); its messages,
// outcome and conversation id are left empty. A case kept built is returned whole. ok is false for any other case:
// CaseAt builds it.
func (f *File) LightCase(i int) (c *Case, ok bool) {
	e := &f.cases[i]
	switch {
	case f.shared:
	case e.end == 0:
		return f.built[e.start], true
	case e.inherits == 0:
		return nil, false
	}
	c = &Case{Index: i, ID: f.ids[i], EvaluatorSource: inheritedSources[e.inherits]}
	switch c.EvaluatorSource {
	case SourceFile:
		c.Evaluators = Inherit(nil, f.Evaluators)
	case SourceJudging:
		c.Evaluators = Inherit(nil, f.DefaultEvaluators)
	}
	return c, true
}

// EvaluatorSource says where a case's effective evaluators come from.
type EvaluatorSource string

// Evaluator sources, in order of precedence.
const (
	// SourceCase: the case declares execution.evaluators or evaluators (inline rubrics included).
	SourceCase EvaluatorSource = "case"
	// SourceJudging: the EvalRun's judging.evaluators (WithDefaultEvaluators).
	SourceJudging EvaluatorSource = "judging"
	// SourceFile: the file-level execution.evaluators.
	SourceFile EvaluatorSource = "file"
	// SourceNone: nothing; the case cannot be judged and is reported as skipped.
	SourceNone EvaluatorSource = "none"
)

// Case is one eval case.
type Case struct {
	// Index is the position of the case in evalcases.
	Index int
	// ID is the case id, a safe file name and object key (see ValidID).
	ID string
	// ExpectedOutcome is expected_outcome (or its alias outcome); in a 4.42 suite, criteria (or its deprecated
	// alias expected_outcome), after vars templating.
	ExpectedOutcome string
	// ConversationID is conversation_id.
	ConversationID string
	// InputMessages are input_messages, in order (at least one). In a 4.42 suite: the suite-level input (unless
	// execution.skip_defaults), then the test's input with its input_files (or the suite's) expanded into file
	// segments, after vars templating.
	InputMessages []Message
	// ExpectedMessages are expected_messages, in order; in a 4.42 suite, expected_output expanded into messages.
	ExpectedMessages []Message
	// Rubrics are the case's inline rubrics. When present they are judged by the evaluator named
	// InlineRubricsEvaluatorName, placed first in Evaluators.
	Rubrics []Rubric
	// Evaluators are the case's effective evaluators: its own when it declares any (inline rubrics first),
	// otherwise judging.evaluators when given, otherwise the file-level ones (inline rubrics still first).
	Evaluators []*EvaluatorConfig
	// EvaluatorSource says where Evaluators come from.
	EvaluatorSource EvaluatorSource

	// The rest is set for a 4.42 suite's tests only.

	// Suite is the suite a 4.42 test is from (the File's Suite: its threshold and settings); nil for an
	// agentv-eval-v2 case. The judging engine judges a test with it as AgentV 4.42 does.
	Suite *Suite
	// Threshold is execution.threshold, the test's pass threshold (0 to 1); nil when not set.
	Threshold *float64
	// FailOnError is the test's execution.fail_on_error (AgentV 4.42 reads it at the suite level only); nil when
	// not set.
	FailOnError *bool
	// Metadata is the test's metadata merged with the suite's (metadata and governance) as AgentV 4.42 merges them,
	// as a JSON object; nil when neither sets any.
	Metadata json.RawMessage
	// InputForm says how the test wrote its input, so that the runner view writes it the same way.
	InputForm InputForm
}

// InputForm is the written form of a 4.42 test's input.
type InputForm string

// Input forms.
const (
	// InputMessagesForm: a list of messages (and every agentv-eval-v2 case).
	InputMessagesForm InputForm = ""
	// InputText: a string, one user message, and no suite-level input or input_files to merge.
	InputText InputForm = "text"
	// InputObject: a mapping without role, one user message with structured content, and nothing to merge.
	InputObject InputForm = "object"
)

// InputFileRefs are the file references of the case's input: the values of the `type: file` (and 4.42 `type:
// image`) segments of its input messages, in order (an eval bundle's input files: the only files of a bundle the
// runner gets).
func (c *Case) InputFileRefs() []string {
	var refs []string
	for _, msg := range c.InputMessages {
		for _, s := range msg.Content.Segments {
			if s.Type == SegmentFile || s.Type == SegmentImage {
				refs = append(refs, s.Value)
			}
		}
	}
	return refs
}

// ExpectedFileRefs are the file references of the case's expected messages: the values of their `type: file`
// (and 4.42 `type: image`) segments, in order (an eval bundle's reference files: part of the case's answer key).
func (c *Case) ExpectedFileRefs() []string {
	var refs []string
	for _, msg := range c.ExpectedMessages {
		for _, s := range msg.Content.Segments {
			if s.Type == SegmentFile || s.Type == SegmentImage {
				refs = append(refs, s.Value)
			}
		}
	}
	return refs
}

// InlineRubricsEvaluatorName names the llm_judge evaluator that judges a case's inline rubrics.
const InlineRubricsEvaluatorName = "rubrics"

// Role is a message role.
type Role string

// Message roles.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one element of input_messages or expected_messages.
type Message struct {
	Role Role
	// Name is the message's name (4.42 expected_output messages keep it).
	Name    string
	Content Content
	// ToolCalls are the message's tool_calls (expected assistant messages).
	ToolCalls []ToolCall
	// Raw is the whole message object as written, key order kept.
	Raw json.RawMessage
}

// ContentKind says which form a message's content has.
type ContentKind string

// Content forms.
const (
	// ContentNone: no content (null or absent).
	ContentNone ContentKind = ""
	// ContentText: a string.
	ContentText ContentKind = "text"
	// ContentObject: a structured object, kept exactly.
	ContentObject ContentKind = "object"
	// ContentSegments: an array of {type: text|file, value} segments (in a 4.42 suite also image segments, and
	// strings, which are text segments).
	ContentSegments ContentKind = "segments"
	// ContentList: an array that is not segments, kept exactly: a 4.42 expected_output list whose items are not
	// messages becomes one assistant message with it as content.
	ContentList ContentKind = "list"
)

// Content is a message's content.
type Content struct {
	Kind ContentKind
	// Text is the string, for ContentText.
	Text string
	// Segments are the segments, for ContentSegments.
	Segments []Segment
	// Raw is the content as written, as JSON with object keys in document order; nil for ContentNone.
	Raw json.RawMessage
}

// SegmentType is the type of a content segment.
type SegmentType string

// Segment types.
const (
	// SegmentText carries inline text in Value.
	SegmentText SegmentType = "text"
	// SegmentFile refers to a file by path in Value. It is kept as a reference: the runner and judges resolve it
	// in the runner image.
	SegmentFile SegmentType = "file"
	// SegmentImage refers to an image file by path in Value (4.42 suites); AgentV embeds it as a data URL.
	SegmentImage SegmentType = "image"
)

// Segment is one element of a segments content array.
type Segment struct {
	Type  SegmentType
	Value string
	// Raw is the segment object as written.
	Raw json.RawMessage
}

// ToolCall is one element of an expected message's tool_calls.
type ToolCall struct {
	Tool string
	// Input and Output are as written; nil when absent.
	Input  json.RawMessage
	Output json.RawMessage
}

// Rubric is one inline rubric item (a case's rubrics, or a rubric/llm_judge evaluator's rubrics).
type Rubric struct {
	// ID defaults to "rubric-<n>" (1-based).
	ID string
	// Outcome is expected_outcome (or its alias description); a plain string item sets only this. In a 4.42
	// suite: outcome (or criteria).
	Outcome  string
	Weight   float64
	Required bool
	// Raw is the item as written.
	Raw json.RawMessage

	// Operator (4.42: correctness or contradiction), MinScore (4.42 min_score, 0 to 1, or the deprecated
	// required_min_score divided by 10) and ScoreRanges (4.42 score_ranges, the shorthand map expanded) are set
	// only from 4.42 suites.
	Operator    string
	MinScore    *float64
	ScoreRanges []ScoreRange
}

// ScoreRange is one 4.42 score range of a rubric: the integer scores Min to Max (0 to 10) and what they mean.
type ScoreRange struct {
	Min, Max int
	Outcome  string
}
