package evaluate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/evalrun-operator/evalrun-operator/internal/bundle"
	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
)

// MaxBundleFileBytes bounds each bundle file a judge reads (an input file, a reference file, a prompt file): a
// larger file is an Error verdict naming it, never a shortened prompt.
const MaxBundleFileBytes = 1 << 20

// MaxCaseFileBytes bounds the bundle files one case's judge inputs read in all, a file named many times counting
// each time (evalfile.MaxExpansionBytes, the bound on what an eval file's aliases may add to a case): a case whose
// input and expected messages name the same 1 MiB file ten thousand times is an Error verdict saying so, not a
// 10 GB prompt.
const MaxCaseFileBytes = evalfile.MaxExpansionBytes

// judgeInputs are what AgentV v2.0.1 puts into its judges' prompts for one case, built as its yaml-parser
// (processMessages, processExpectedMessages) and buildPromptInputs build them, with the files read from the eval
// bundle.
type judgeInputs struct {
	// question is AgentV's formatted question (role markers, embedded files, code blocks), trimmed, or the
	// case's plain question when that is empty.
	question string
	// reference is the last expected message's content: a string as written, anything else as indented JSON
	// (file segments with their text), or the tool calls of a message without content.
	reference string
	// inputSegments is {{input_messages}}: the input messages' segments as indented JSON.
	inputSegments string
	// expectedMessages is {{expected_messages}}: the expected messages, file segments resolved, as indented JSON.
	expectedMessages string
	// expectedOutcome is the case's expected_outcome.
	expectedOutcome string
}

// fileSegment is a resolved file segment, its keys in AgentV's order.
type fileSegment struct {
	Type         string `json:"type"`
	Path         string `json:"path"`
	Text         string `json:"text"`
	ResolvedPath string `json:"resolvedPath"`
}

// textSegment is a message's text, its keys in AgentV's order.
type textSegment struct {
	Type  string `json:"type"`
	Value string `json:"value"`
}

// Segment kinds as AgentV names them.
const (
	kindText      = "text"
	kindFile      = "file"
	kindGuideline = "guideline_ref"
)

// promptSegment is one part of a message as buildPromptInputs sees it.
type promptSegment struct {
	kind string // "text", "file" or "guideline_ref"
	text string // the text, or the file's text
	path string // the file's path as written
}

// codeBlock matches a fenced code block (AgentV's extractCodeBlocks).
var codeBlock = regexp.MustCompile("(?s)```.*?```")

// buildJudgeInputs builds the judge inputs of case c from the eval bundle b; references says the question shows
// input files as references (AgentV's "agent" mode, for a CLI target), else with their text ("lm" mode). A file
// segment whose file is not in the bundle (or is too large) is an error naming it: AgentV leaves such a file out
// with a warning; here the judge would then grade an answer to a question it cannot see.
func buildJudgeInputs(b bundle.Dir, c *evalfile.Case, references bool) (judgeInputs, error) {
	guidelines, err := b.GuidelinePatterns()
	if err != nil {
		return judgeInputs{}, err
	}
	in := judgeInputs{expectedOutcome: c.ExpectedOutcome}
	// Step 1: the input segments (processMessages): files read, guideline files set aside.
	var segments []any
	var textParts []string
	var flatTexts []string // the text segments' values, for the code blocks
	fileText := map[string]string{}
	files := &caseFiles{b: b, left: MaxCaseFileBytes}
	for _, m := range c.InputMessages {
		switch m.Content.Kind {
		case evalfile.ContentText:
			segments = append(segments, textSegment{kindText, m.Content.Text})
			textParts = append(textParts, m.Content.Text)
			flatTexts = append(flatTexts, m.Content.Text)
		case evalfile.ContentObject:
			s := jsIndent(m.Content.Raw)
			segments = append(segments, textSegment{kindText, s})
			textParts = append(textParts, s)
			flatTexts = append(flatTexts, s)
		case evalfile.ContentSegments:
			for _, s := range m.Content.Segments {
				if s.Type != evalfile.SegmentFile {
					segments = append(segments, s.Raw)
					if v, ok := rawStringField(s.Raw, "value"); ok {
						textParts = append(textParts, v)
						if s.Type == evalfile.SegmentText {
							flatTexts = append(flatTexts, v)
						}
					}
					continue
				}
				if s.Value == "" {
					continue
				}
				text, bpath, err := files.read(s.Value)
				if err != nil {
					return judgeInputs{}, fmt.Errorf("input file %q: %w", s.Value, err)
				}
				if bundle.MatchAnyGlob(guidelines, bpath) {
					continue
				}
				display := displayPath(s.Value)
				segments = append(segments, fileSegment{kindFile, display, text, resolvedPath(b, bpath)})
				fileText[display] = text
			}
		}
	}
	in.inputSegments = jsJSON(nonNilSlice(segments))
	// Step 2: the expected messages (processExpectedMessages) and the reference answer.
	expected, lastContent, err := expectedMessages(files, c)
	if err != nil {
		return judgeInputs{}, err
	}
	in.expectedMessages = jsJSON(nonNilSlice(expected))
	in.reference = lastContent
	// Step 3: the question (buildPromptInputs).
	question := formatQuestion(c, segments, flatTexts, guidelines, fileText, references)
	if strings.TrimSpace(question) == "" {
		question = joinTrimmed(textParts, " ")
	}
	in.question = strings.TrimSpace(question)
	return in, nil
}

// formatQuestion is buildPromptInputs' question: with role markers when the conversation has several turns or
// several input messages with content, else the segments in order and the code blocks after them; files as
// references, or with their text (formatSegment).
func formatQuestion(c *evalfile.Case, segments []any, flatTexts, guidelines []string, fileText map[string]string, references bool) string {
	byMessage := make([][]promptSegment, len(c.InputMessages))
	multiTurn := false
	withContent := 0
	for i, m := range c.InputMessages {
		if m.Role == evalfile.RoleAssistant || m.Role == evalfile.RoleTool {
			multiTurn = true
		}
		byMessage[i] = messageSegments(m, guidelines, fileText)
		if visible(byMessage[i]) {
			withContent++
		}
	}
	question := ""
	if multiTurn || withContent > 1 {
		var parts []string
		for i, m := range c.InputMessages {
			if !visible(byMessage[i]) {
				continue
			}
			var content []string
			for _, s := range byMessage[i] {
				if f, ok := formatSegment(s, references); ok {
					content = append(content, f)
				}
			}
			if len(content) > 0 {
				role := string(m.Role)
				parts = append(parts, "@["+strings.ToUpper(role[:1])+role[1:]+"]:\n"+strings.Join(content, "\n"))
			}
		}
		question = strings.Join(parts, "\n\n")
	} else {
		var parts []string
		for _, seg := range segments {
			switch s := seg.(type) {
			case textSegment:
				parts = append(parts, s.Value)
			case fileSegment:
				switch {
				case bundle.MatchAnyGlob(guidelines, s.Path):
					parts = append(parts, "<Attached: "+s.Path+">")
				case references:
					parts = append(parts, fileReference(s.Path))
				case strings.TrimSpace(s.Text) != "":
					parts = append(parts, FileBlock(s.Path, s.Text))
				}
			case json.RawMessage:
				if typ, _ := rawStringField(s, "type"); typ == string(evalfile.SegmentText) {
					if v, ok := rawStringField(s, "value"); ok {
						parts = append(parts, v)
					}
				}
			}
		}
		blocks := make([]string, 0, len(flatTexts))
		for _, t := range flatTexts {
			blocks = append(blocks, codeBlock.FindAllString(t, -1)...)
		}
		if len(blocks) > 0 {
			parts = append(parts, strings.Join(blocks, "\n"))
		}
		question = joinTrimmed(parts, "\n\n")
	}
	return question
}

// messageSegments are the segments of one input message as buildPromptInputs sees them: non-blank texts, files
// with their text (guideline files as references only).
func messageSegments(m evalfile.Message, guidelines []string, fileText map[string]string) []promptSegment {
	var out []promptSegment
	switch m.Content.Kind {
	case evalfile.ContentText:
		if strings.TrimSpace(m.Content.Text) != "" {
			out = append(out, promptSegment{kind: kindText, text: m.Content.Text})
		}
	case evalfile.ContentObject:
		out = append(out, promptSegment{kind: kindText, text: jsIndent(m.Content.Raw)})
	case evalfile.ContentSegments:
		for _, s := range m.Content.Segments {
			switch s.Type {
			case evalfile.SegmentFile:
				if s.Value == "" {
					continue
				}
				if bundle.MatchAnyGlob(guidelines, s.Value) {
					out = append(out, promptSegment{kind: kindGuideline, path: s.Value})
					continue
				}
				if t, ok := fileText[s.Value]; ok {
					out = append(out, promptSegment{kind: kindFile, text: t, path: s.Value})
				}
			case evalfile.SegmentText:
				if strings.TrimSpace(s.Value) != "" {
					out = append(out, promptSegment{kind: kindText, text: s.Value})
				}
			}
		}
	}
	return out
}

// visible reports whether segments show anything: a non-blank text or a file with text (AgentV's hasVisibleContent).
func visible(segments []promptSegment) bool {
	for _, s := range segments {
		if (s.kind == kindText || s.kind == kindFile) && strings.TrimSpace(s.text) != "" {
			return true
		}
	}
	return false
}

// formatSegment is AgentV's formatSegment: in its "agent" mode (references) a file is a reference to its path as
// written, in its "lm" mode the file's text.
func formatSegment(s promptSegment, references bool) (string, bool) {
	switch s.kind {
	case kindText:
		return s.text, s.text != ""
	case kindGuideline:
		return "<Attached: " + s.path + ">", true
	case kindFile:
		if references {
			return fileReference(s.path), true
		}
		if s.text == "" {
			return "", false
		}
		return FileBlock(s.path, s.text), true
	}
	return "", false
}

// fileReference is a file as AgentV's "agent" mode shows it.
func fileReference(p string) string {
	return `<file: path="` + p + `">`
}

// FileBlock embeds a file's text with its path.
func FileBlock(p, text string) string {
	return "<file path=\"" + p + "\">\n" + strings.TrimSpace(text) + "\n</file>"
}

// expectedMessages returns the expected messages as AgentV's judges see them (role, name, content with file
// segments resolved, tool_calls) and the reference answer built from the last one.
func expectedMessages(files *caseFiles, c *evalfile.Case) ([]any, string, error) {
	b := files.b
	var out []any
	reference := ""
	for i, m := range c.ExpectedMessages {
		var msg struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(m.Raw, &msg)
		obj := orderedObject{{"role", string(m.Role)}}
		if msg.Name != "" {
			obj = append(obj, kv{"name", msg.Name})
		}
		var content any
		switch m.Content.Kind {
		case evalfile.ContentText:
			content = m.Content.Text
		case evalfile.ContentObject:
			content = m.Content.Raw
		case evalfile.ContentSegments:
			var segs []any
			for _, s := range m.Content.Segments {
				if s.Type != evalfile.SegmentFile {
					if len(s.Raw) > 0 && s.Raw[0] == '{' {
						segs = append(segs, s.Raw)
					}
					continue
				}
				if s.Value == "" {
					continue
				}
				text, bpath, err := files.read(s.Value)
				if err != nil {
					return nil, "", fmt.Errorf("expected-message file %q: %w", s.Value, err)
				}
				segs = append(segs, fileSegment{kindFile, displayPath(s.Value), text, resolvedPath(b, bpath)})
			}
			content = nonNilSlice(segs)
		}
		if content != nil {
			obj = append(obj, kv{"content", content})
		}
		var calls struct {
			ToolCalls json.RawMessage `json:"tool_calls"`
		}
		_ = json.Unmarshal(m.Raw, &calls)
		if len(calls.ToolCalls) > 0 && calls.ToolCalls[0] == '[' {
			obj = append(obj, kv{"tool_calls", calls.ToolCalls})
		}
		out = append(out, obj)
		if i == len(c.ExpectedMessages)-1 {
			switch {
			case m.Content.Kind == evalfile.ContentText:
				reference = m.Content.Text
			case content != nil:
				reference = jsJSON(content)
			case len(calls.ToolCalls) > 0 && calls.ToolCalls[0] == '[':
				reference = jsIndent(calls.ToolCalls)
			}
		}
	}
	return out, reference, nil
}

// caseFiles reads the bundle files of one case's judge inputs, at most MaxCaseFileBytes in all.
type caseFiles struct {
	b    bundle.Dir
	left int
}

// read is readBundleFile within what is left of the case's bound.
func (f *caseFiles) read(ref string) (string, string, error) {
	text, p, err := readBundleFile(f.b, ref)
	if err != nil {
		return "", "", err
	}
	if f.left -= len(text); f.left < 0 {
		return "", "", fmt.Errorf("the case's file references read more than %d MiB in all (each reference counts, "+
			"a file named many times included)", MaxCaseFileBytes>>20)
	}
	return text, p, nil
}

// readBundleFile reads the file ref names from the bundle (CRLF line ends made LF, as AgentV reads them) and
// returns its text and bundle path.
func readBundleFile(b bundle.Dir, ref string) (string, string, error) {
	if b.Root == "" {
		return "", "", fmt.Errorf("no eval bundle to read it from (collector check: --bundle DIR)")
	}
	data, p, err := b.ReadFile(ref, MaxBundleFileBytes)
	if err != nil {
		return "", "", err
	}
	return strings.ReplaceAll(string(data), "\r\n", "\n"), p, nil
}

// displayPath is the reference without leading separators (AgentV's displayPath).
func displayPath(ref string) string {
	if t := strings.TrimLeft(ref, `/\`); t != "" {
		return t
	}
	return ref
}

// resolvedPath is the absolute path of bundle path p, as AgentV reports a resolved file.
func resolvedPath(b bundle.Dir, p string) string {
	return path.Join(strings.ReplaceAll(b.Root, `\`, "/"), p)
}

func joinTrimmed(parts []string, sep string) string {
	var kept []string
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, sep)
}

func nonNilSlice(s []any) []any {
	if s == nil {
		return []any{}
	}
	return s
}

// rawStringField returns the string field key of the JSON object raw.
func rawStringField(raw json.RawMessage, key string) (string, bool) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return "", false
	}
	var s string
	if v, ok := obj[key]; !ok || json.Unmarshal(v, &s) != nil {
		return "", false
	}
	return s, true
}

// kv is one member of an orderedObject.
type kv struct {
	key   string
	value any
}

// orderedObject is a JSON object whose members keep their order.
type orderedObject []kv

// MarshalJSON writes the members in order.
func (o orderedObject) MarshalJSON() ([]byte, error) {
	return MarshalObject(len(o), func(i int) (string, any) { return o[i].key, o[i].value })
}

func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// jsJSON is JSON.stringify(v, null, 2): indented by two spaces, no HTML escaping, key order kept.
func jsJSON(v any) string {
	compact, err := marshalNoEscape(v)
	if err != nil {
		return "null"
	}
	return jsIndent(compact)
}

// jsIndent indents the JSON text raw as JSON.stringify(value, null, 2) writes it.
func jsIndent(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return string(raw)
	}
	// encoding/json escapes U+2028 and U+2029 where JSON.stringify does not.
	s := strings.ReplaceAll(b.String(), `\u2028`, "\u2028")
	return strings.ReplaceAll(s, `\u2029`, "\u2029")
}
