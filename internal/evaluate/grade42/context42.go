package grade42

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"path"
	"strings"

	"github.com/evalrun-operator/evalrun-operator/internal/bundle"
	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/evaluate"
	"github.com/evalrun-operator/evalrun-operator/internal/jsonlresult"
)

// output42 is the runner's answer to a 4.42 test as AgentV 4.42's batch CLI provider reads a record: its output
// messages (output, else output_messages, else the text as one assistant message, else none) and the answer graders
// read (the last assistant message's content).
type output42 struct {
	candidate string
	// messages are the output messages; text says they are the record's text made one assistant message.
	messages []jsonlresult.OutputMessage
	text     bool
}

// outputOf42 reads a response as AgentV 4.42 does (cli.ts parseJsonlBatchOutput, extractLastAssistantContent).
func outputOf42(resp *jsonlresult.Response) output42 {
	msgs := resp.Output
	if len(msgs) == 0 {
		msgs = resp.OutputMessages
	}
	if len(msgs) > 0 {
		return output42{candidate: lastAssistant42(msgs), messages: msgs}
	}
	if resp.Text == "" {
		return output42{}
	}
	content, _ := json.Marshal(resp.Text)
	return output42{candidate: resp.Text, text: true,
		messages: []jsonlresult.OutputMessage{{Role: roleAssistant, Content: content}}}
}

// lastAssistant42 is the content of the last assistant message that has one, as AgentV 4.42 reads it: a string as
// it is, a list of content blocks (text, image, file) as its texts joined by newlines; any other content is none.
func lastAssistant42(msgs []jsonlresult.OutputMessage) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Role != roleAssistant {
			continue
		}
		if text, ok := content42(m.Content); ok {
			return text
		}
	}
	return ""
}

// content42 reads an output message's content as AgentV's convertMessages keeps it: a string, or a non-empty list
// of content blocks (their texts joined by newlines); ok is false for anything else (AgentV drops it).
func content42(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	blocks, ok := contentBlocks42(raw)
	if !ok {
		return "", false
	}
	var texts []string
	for _, b := range blocks {
		if b.Type == kindText {
			texts = append(texts, b.Text)
		}
	}
	return strings.Join(texts, "\n"), true
}

// contentBlock42 is one of AgentV 4.42's content blocks (content.ts).
type contentBlock42 struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// contentBlocks42 reads raw as a non-empty list of content blocks (each an object whose type is text, image or
// file: isContentArray).
func contentBlocks42(raw json.RawMessage) ([]contentBlock42, bool) {
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil || len(items) == 0 {
		return nil, false
	}
	blocks := make([]contentBlock42, len(items))
	for i, it := range items {
		var m map[string]json.RawMessage
		if json.Unmarshal(it, &m) != nil || m == nil {
			return nil, false
		}
		var t string
		if json.Unmarshal(m[keyType], &t) != nil || (t != kindText && t != "image" && t != kindFile) {
			return nil, false
		}
		blocks[i].Type = t
		_ = json.Unmarshal(m[kindText], &blocks[i].Text)
	}
	return blocks, true
}

// inputs42 is what AgentV 4.42 makes of a test's input and expected output for its graders (yaml-parser.ts,
// message-processor.ts, prompt-builder.ts in its "agent" mode: a CLI target is shown file references).
type inputs42 struct {
	// question is the prompt's question (buildPromptInputs), or the test's plain question when that is blank.
	question string
	// chat is the input as AgentV's result records it (buildResultInput): the chat prompt's messages, or the
	// question as one user message.
	chat []any
	// reference is reference_answer: the last expected message's content, a string as is, else indented JSON.
	reference string
	// input and expected are the processed input and expected messages (files read, resolved paths absolute).
	input, expected []any
	// inputFiles are the absolute paths of the input's files (file_paths).
	inputFiles []string
}

// segment42 is a processed segment of an input message, what prompt building reads of it.
type segment42 struct {
	kind string // kindText, kindFile, or another type (never shown)
	// value is a text segment's value; path, text and resolved a file's.
	value, path, text, resolved string
}

// buildInputs42 processes case c's messages with the files of bundle b; embed shows input files with their text
// (AgentV's "lm" mode) instead of as references (its "agent" mode, a CLI target's). A file segment whose file the bundle does
// not have is an error naming it (AgentV leaves it out with a warning: the grader would then grade an answer to a
// question it cannot see).
func buildInputs42(b bundle.Dir, c *evalfile.Case, embed bool) (*inputs42, error) {
	files := evaluate.NewCaseFiles(b)
	in := &inputs42{input: []any{}, expected: []any{}, inputFiles: []string{}}
	var textParts []string
	// AgentV drops an input message without content (one with tool calls only) before anything reads the input.
	msgs := make([]evalfile.Message, 0, len(c.InputMessages))
	segments := make([][]segment42, 0, len(c.InputMessages))
	for _, m := range c.InputMessages {
		if m.Content.Kind == evalfile.ContentNone {
			continue
		}
		msg, segs, texts, err := inputMessage42(files, m, &in.inputFiles)
		if err != nil {
			return nil, err
		}
		in.input = append(in.input, msg)
		msgs = append(msgs, m)
		segments = append(segments, segs)
		textParts = append(textParts, texts...)
	}
	plain := evaluate.JoinTrimmed(textParts, " ")
	in.question = question42(msgs, segments, embed)
	if strings.TrimSpace(in.question) == "" {
		in.question = plain
	}
	in.chat = chat42(msgs, segments, in.question, embed)
	for i, m := range c.ExpectedMessages {
		msg, content, err := expectedMessage42(files, m)
		if err != nil {
			return nil, err
		}
		in.expected = append(in.expected, msg)
		if i == len(c.ExpectedMessages)-1 {
			in.reference = reference42(content, m)
		}
	}
	return in, nil
}

// reference42 is reference_answer of the last expected message m, whose processed content is content (nil: none).
func reference42(content any, m evalfile.Message) string {
	switch t := content.(type) {
	case string:
		return t
	case nil:
		if len(m.ToolCalls) > 0 {
			var msg struct {
				ToolCalls json.RawMessage `json:"tool_calls"`
			}
			if json.Unmarshal(m.Raw, &msg) == nil && len(msg.ToolCalls) > 0 {
				if v, err := parseOrdered(msg.ToolCalls); err == nil {
					return evaluate.Stringify(v)
				}
			}
		}
		return ""
	}
	return evaluate.Stringify(content)
}

// inputMessage42 processes one input message (processMessages): its content's files read, and returns it as AgentV
// keeps it, its segments for the prompt (extractContentSegments) and its texts for the plain question.
func inputMessage42(files *evaluate.CaseFiles, m evalfile.Message, inputFiles *[]string) (orderedObject, []segment42, []string, error) {
	msg := orderedObject{{keyRole, string(m.Role)}}
	if m.Name != "" {
		msg = append(msg, kv{keyName, m.Name})
	}
	var segs []segment42
	var texts []string
	switch m.Content.Kind {
	case evalfile.ContentText:
		msg = append(msg, kv{keyContent, m.Content.Text})
		texts = append(texts, m.Content.Text)
		if strings.TrimSpace(m.Content.Text) != "" {
			segs = append(segs, segment42{kind: kindText, value: m.Content.Text})
		}
	case evalfile.ContentObject:
		obj, err := parseOrdered(m.Content.Raw)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("an input message's content: %w", err)
		}
		rendered := evaluate.Stringify(obj)
		msg = append(msg, kv{keyContent, obj})
		texts = append(texts, rendered)
		if strings.TrimSpace(rendered) != "" {
			segs = append(segs, segment42{kind: kindText, value: rendered})
		}
	case evalfile.ContentSegments:
		content := []any{}
		for _, s := range m.Content.Segments {
			seg, shown, err := inputSegment42(files, s, inputFiles)
			if err != nil {
				return nil, nil, nil, err
			}
			if seg == nil {
				continue
			}
			content = append(content, seg)
			segs = append(segs, shown)
			if shown.kind == kindText || (shown.kind != kindFile && shown.value != "") {
				texts = append(texts, shown.value)
			}
		}
		msg = append(msg, kv{keyContent, content})
	}
	// The message's other keys stay (AgentV spreads the message): its tool calls.
	var calls struct {
		ToolCalls json.RawMessage `json:"tool_calls"`
	}
	if json.Unmarshal(m.Raw, &calls) == nil && len(calls.ToolCalls) > 0 {
		if tc, err := parseOrdered(calls.ToolCalls); err == nil {
			msg = append(msg, kv{keyToolCalls, tc})
		}
	}
	return msg, segs, texts, nil
}

// inputSegment42 processes one segment of an input message: a file's text read and its resolved path (absolute)
// added, an image embedded as a data URL, any other segment as written. It returns nil for a segment AgentV drops.
func inputSegment42(files *evaluate.CaseFiles, s evalfile.Segment, inputFiles *[]string) (any, segment42, error) {
	raw, err := parseOrdered(s.Raw)
	if err != nil {
		return nil, segment42{}, fmt.Errorf("an input segment: %w", err)
	}
	obj, _ := raw.(orderedObject)
	switch s.Type {
	case evalfile.SegmentFile:
		if s.Value == "" {
			return nil, segment42{}, nil
		}
		text, bpath, err := files.Read(s.Value)
		if err != nil {
			return nil, segment42{}, fmt.Errorf("input file %q: %w", s.Value, err)
		}
		resolved := files.ResolvedPath(bpath)
		display := evaluate.DisplayPath(s.Value)
		obj = obj.set("path", display).set(kindText, text).set("resolvedPath", resolved)
		*inputFiles = append(*inputFiles, resolved)
		return obj, segment42{kind: kindFile, path: display, text: text, resolved: resolved}, nil
	case evalfile.SegmentImage:
		img, err := image42(files, s.Value)
		if err != nil || img == nil {
			return nil, segment42{}, err
		}
		return img, segment42{kind: "image"}, nil
	}
	shown := segment42{kind: string(s.Type)}
	if v, ok := obj.get("value"); ok {
		shown.value, _ = v.(string)
	}
	if obj == nil {
		return raw, shown, nil
	}
	return obj, shown, nil
}

// imageTypes are the image files AgentV 4.42 embeds, by extension.
var imageTypes = map[string]string{".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg",
	".gif": "image/gif", ".webp": "image/webp", ".svg": "image/svg+xml", ".bmp": "image/bmp"}

// image42 is an image segment as AgentV 4.42 embeds it: {type: image, media_type, source: a data URL}; nil for an
// extension it does not embed (it drops the segment).
func image42(files *evaluate.CaseFiles, ref string) (any, error) {
	if ref == "" {
		return nil, nil
	}
	mediaType, ok := imageTypes[strings.ToLower(path.Ext(ref))]
	if !ok {
		return nil, nil
	}
	data, _, err := files.Read(ref)
	if err != nil {
		return nil, fmt.Errorf("image file %q: %w", ref, err)
	}
	return orderedObject{{keyType, "image"}, {"media_type", mediaType},
		{"source", "data:" + mediaType + ";base64," + base64.StdEncoding.EncodeToString([]byte(data))}}, nil
}

// expectedMessage42 processes one expected message (processExpectedMessages): {role, name, content, tool_calls},
// files read; it returns the message and its processed content (nil: none).
func expectedMessage42(files *evaluate.CaseFiles, m evalfile.Message) (orderedObject, any, error) {
	msg := orderedObject{{keyRole, string(m.Role)}}
	if m.Name != "" {
		msg = append(msg, kv{keyName, m.Name})
	}
	var content any
	switch m.Content.Kind {
	case evalfile.ContentText:
		content = m.Content.Text
	case evalfile.ContentObject:
		obj, err := parseOrdered(m.Content.Raw)
		if err != nil {
			return nil, nil, fmt.Errorf("an expected message's content: %w", err)
		}
		content = obj
	case evalfile.ContentSegments, evalfile.ContentList:
		list, err := parseOrdered(m.Content.Raw)
		if err != nil {
			return nil, nil, fmt.Errorf("an expected message's content: %w", err)
		}
		items, _ := list.([]any)
		processed := []any{}
		for _, item := range items {
			p, err := expectedItem42(files, item)
			if err != nil {
				return nil, nil, err
			}
			if p != nil {
				processed = append(processed, p)
			}
		}
		content = processed
	}
	if content != nil {
		msg = append(msg, kv{keyContent, content})
	}
	var calls struct {
		ToolCalls json.RawMessage `json:"tool_calls"`
	}
	if json.Unmarshal(m.Raw, &calls) == nil && len(calls.ToolCalls) > 0 && calls.ToolCalls[0] == '[' {
		tc, err := parseOrdered(calls.ToolCalls)
		if err != nil {
			return nil, nil, fmt.Errorf("an expected message's tool_calls: %w", err)
		}
		msg = append(msg, kv{keyToolCalls, tc})
	}
	return msg, content, nil
}

// expectedItem42 processes one item of an expected message's content list: a string is a text segment, a file
// segment is {type, path, text, resolvedPath}, an image is embedded, other objects stay; anything else is dropped
// (nil).
func expectedItem42(files *evaluate.CaseFiles, item any) (any, error) {
	switch t := item.(type) {
	case string:
		if t == "" {
			return nil, nil
		}
		return orderedObject{{keyType, kindText}, {"value", t}}, nil
	case orderedObject:
		typ, _ := t.get(keyType)
		value, _ := t.get("value")
		ref, _ := value.(string)
		switch typ {
		case kindFile:
			if ref == "" {
				return nil, nil
			}
			text, bpath, err := files.Read(ref)
			if err != nil {
				return nil, fmt.Errorf("expected-output file %q: %w", ref, err)
			}
			return orderedObject{{keyType, kindFile}, {"path", evaluate.DisplayPath(ref)}, {kindText, text},
				{"resolvedPath", files.ResolvedPath(bpath)}}, nil
		case "image":
			return image42(files, ref)
		}
		return t, nil
	}
	return nil, nil
}

// visible42 reports whether a message's segments show anything (hasVisibleContent): a non-blank text, or a file
// with a non-blank text.
func visible42(segs []segment42) bool {
	for _, s := range segs {
		if (s.kind == kindText && strings.TrimSpace(s.value) != "") || (s.kind == kindFile && strings.TrimSpace(s.text) != "") {
			return true
		}
	}
	return false
}

// format42 is AgentV's formatSegment: a text's value; a file as a reference to its absolute path ("agent" mode), or
// with embed its text ("lm" mode, nothing for an empty file); "" for anything else.
func format42(s segment42, embed bool) string {
	switch s.kind {
	case kindText:
		return s.value
	case kindFile:
		if s.path == "" {
			return ""
		}
		if embed {
			if s.text == "" {
				return ""
			}
			return evaluate.FileBlock(s.path, s.text)
		}
		p := s.resolved
		if p == "" {
			p = s.path
		}
		return `<file: path="` + p + `">`
	}
	return ""
}

// roleMarkers42 reports whether the question shows role markers: the input has an assistant or tool message, or more
// than one message shows something.
func roleMarkers42(msgs []evalfile.Message, segments [][]segment42) bool {
	shown := 0
	for i, m := range msgs {
		if m.Role == evalfile.RoleAssistant || m.Role == evalfile.RoleTool {
			return true
		}
		if visible42(segments[i]) {
			shown++
		}
	}
	return shown > 1
}

// question42 is buildPromptInputs' question: "@[Role]:" blocks when roleMarkers42, else the segments in order, each
// trimmed, blank ones dropped, joined by blank lines.
func question42(msgs []evalfile.Message, segments [][]segment42, embed bool) string {
	if roleMarkers42(msgs, segments) {
		var parts []string
		for i, m := range msgs {
			if !visible42(segments[i]) {
				continue
			}
			var content []string
			for _, s := range segments[i] {
				if f := format42(s, embed); f != "" {
					content = append(content, f)
				}
			}
			if len(content) > 0 {
				parts = append(parts, "@["+roleLabel(m.Role)+"]:\n"+strings.Join(content, "\n"))
			}
		}
		return strings.Join(parts, "\n\n")
	}
	var parts []string
	for _, segs := range segments {
		for _, s := range segs {
			if f := format42(s, embed); f != "" {
				parts = append(parts, f)
			}
		}
	}
	return evaluate.JoinTrimmed(parts, "\n\n")
}

func roleLabel(r evalfile.Role) string {
	s := string(r)
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// chat42 is the input as AgentV 4.42's result records it (buildResultInput): with role markers its chat prompt
// (the leading system messages as one, a later system or tool message as an assistant one marked "@[System]:" or
// "@[Tool]:"), else the question as one user message.
func chat42(msgs []evalfile.Message, segments [][]segment42, question string, embed bool) []any {
	if !roleMarkers42(msgs, segments) {
		return []any{orderedObject{{keyRole, "user"}, {keyContent, question}}}
	}
	formatted := func(i int) []string {
		var parts []string
		for _, s := range segments[i] {
			if f := format42(s, embed); f != "" {
				parts = append(parts, f)
			}
		}
		return parts
	}
	var chat []any
	var system []string
	start := 0
	for ; start < len(msgs) && msgs[start].Role == evalfile.RoleSystem; start++ {
		if parts := formatted(start); len(parts) > 0 {
			system = append(system, strings.Join(parts, "\n"))
		}
	}
	if len(system) > 0 {
		chat = append(chat, orderedObject{{keyRole, "system"}, {keyContent, strings.Join(system, "\n\n")}})
	}
	for i := start; i < len(msgs); i++ {
		role := string(msgs[i].Role)
		parts := make([]string, 0, len(segments[i])+1)
		switch msgs[i].Role {
		case evalfile.RoleSystem:
			role, parts = roleAssistant, append(parts, "@[System]:")
		case evalfile.RoleTool:
			role, parts = roleAssistant, append(parts, "@[Tool]:")
		}
		parts = append(parts, formatted(i)...)
		if len(parts) == 0 {
			continue
		}
		chat = append(chat, orderedObject{{keyRole, role}, {keyContent, strings.Join(parts, "\n")}})
	}
	return chat
}
