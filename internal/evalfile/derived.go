package evalfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Question is the user-facing text of the case's input: the text of every user message in order (a string as
// written, a structured object as indented JSON with its key order, the values of text segments), trimmed and
// joined with single spaces. File segments are references and are not part of it (see InputFiles).
func (c *Case) Question() string {
	var parts []string
	for _, m := range c.InputMessages {
		if m.Role != RoleUser {
			continue
		}
		for _, t := range m.Content.textParts() {
			if t = strings.TrimSpace(t); t != "" {
				parts = append(parts, t)
			}
		}
	}
	return strings.Join(parts, " ")
}

// ReferenceAnswer is the content of the last expected message: a string as written, structured content as
// indented JSON with its key order, or, for a message with tool_calls and no content, the tool calls as indented
// JSON. It is "" when the case has no expected messages.
func (c *Case) ReferenceAnswer() string {
	if len(c.ExpectedMessages) == 0 {
		return ""
	}
	last := c.ExpectedMessages[len(c.ExpectedMessages)-1]
	switch last.Content.Kind {
	case ContentText:
		return last.Content.Text
	case ContentObject, ContentSegments, ContentList:
		return indentJSON(last.Content.Raw)
	}
	if len(last.ToolCalls) > 0 {
		var msg struct {
			ToolCalls json.RawMessage `json:"tool_calls"`
		}
		if err := json.Unmarshal(last.Raw, &msg); err == nil && len(msg.ToolCalls) > 0 {
			return indentJSON(msg.ToolCalls)
		}
	}
	return ""
}

// InputFiles are the values of the file segments of the input messages, in order, as written (they are resolved
// in the runner image).
func (c *Case) InputFiles() []string {
	var files []string
	for _, m := range c.InputMessages {
		for _, s := range m.Content.Segments {
			if s.Type == SegmentFile || s.Type == SegmentImage {
				files = append(files, s.Value)
			}
		}
	}
	return files
}

// ExpectedAssistantContent returns the content of the last expected assistant message that has content, or
// nil. field_accuracy compares against it.
func (c *Case) ExpectedAssistantContent() *Content {
	for i := len(c.ExpectedMessages) - 1; i >= 0; i-- {
		m := &c.ExpectedMessages[i]
		if m.Role == RoleAssistant && m.Content.Kind != ContentNone {
			return &m.Content
		}
	}
	return nil
}

// textParts returns the texts of the content: the string, the indented JSON of an object, or the values of text
// segments.
func (c Content) textParts() []string {
	switch c.Kind {
	case ContentText:
		return []string{c.Text}
	case ContentObject:
		return []string{indentJSON(c.Raw)}
	case ContentSegments:
		var out []string
		for _, s := range c.Segments {
			if s.Type == SegmentText {
				out = append(out, s.Value)
			}
		}
		return out
	}
	return nil
}

func indentJSON(raw json.RawMessage) string {
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return string(raw)
	}
	return buf.String()
}

// SplitFieldPath splits a field_accuracy path (dot-separated keys with [i] indexes, for example
// invoice.items[0].amount) into its parts: ["invoice", "items", "0", "amount"]. A numeric part indexes an array
// and names a key of an object.
func SplitFieldPath(path string) ([]string, error) {
	if path == "" {
		return nil, errors.New("the path is empty")
	}
	var parts []string
	i := 0
	expectKey := true
	for i < len(path) {
		switch path[i] {
		case '.':
			if expectKey {
				return nil, fmt.Errorf("path %q has an empty key at offset %d", path, i)
			}
			expectKey = true
			i++
		case '[':
			end := strings.IndexByte(path[i:], ']')
			if end < 0 {
				return nil, fmt.Errorf("path %q has an unclosed '['", path)
			}
			idx := path[i+1 : i+end]
			if idx == "" || strings.Trim(idx, "0123456789") != "" {
				return nil, fmt.Errorf("path %q has a non-numeric index [%s]", path, idx)
			}
			if expectKey && len(parts) > 0 {
				return nil, fmt.Errorf("path %q has an empty key before [%s]", path, idx)
			}
			parts = append(parts, idx)
			expectKey = false
			i += end + 1
		default:
			if !expectKey {
				return nil, fmt.Errorf("path %q needs a '.' before %q", path, path[i:])
			}
			end := strings.IndexAny(path[i:], ".[]")
			if end < 0 {
				end = len(path) - i
			}
			if path[i] == ']' || end == 0 {
				return nil, fmt.Errorf("path %q has an unexpected ']'", path)
			}
			parts = append(parts, path[i:i+end])
			expectKey = false
			i += end
		}
	}
	if expectKey {
		return nil, fmt.Errorf("path %q ends with '.'", path)
	}
	return parts, nil
}

// HasCodeJudge reports whether ev is, or contains, a code_judge script (a composite member or aggregator): such
// an evaluator needs the pod's judge container.
func (ev *EvaluatorConfig) HasCodeJudge() bool {
	if ev.Type == TypeCodeJudge {
		return true
	}
	if ev.Composite == nil {
		return false
	}
	if ev.Composite.Script != nil {
		return true
	}
	for _, m := range ev.Composite.Members {
		if m.HasCodeJudge() {
			return true
		}
	}
	return false
}

// CodeJudgeCases counts the cases with a code_judge evaluator.
func (f *File) CodeJudgeCases() int {
	n := 0
	for i := range f.cases {
		if loadOf(f.CaseAt(i).Evaluators).codeJudge {
			n++
		}
	}
	return n
}

// caseLoad is what judging one case takes: whether it runs a code_judge script, and the requests to a model
// endpoint its evaluators make (none: bare, judged by llm_judge when the run has a model).
type caseLoad struct {
	codeJudge bool
	bare      bool
	llm       int32
}

// loadOf is the caseLoad of a case judged by evs.
func loadOf(evs []*EvaluatorConfig) caseLoad {
	l := caseLoad{bare: len(evs) == 0}
	for _, ev := range evs {
		l.codeJudge = l.codeJudge || ev.HasCodeJudge()
		l.llm += int32(ev.LLMRequests())
	}
	return l
}

// requests is the requests judging the case makes, with a model endpoint (withModel) or without.
func (l caseLoad) requests(withModel bool) int {
	if l.bare && withModel {
		return 1
	}
	return int(l.llm)
}

// LLMRequests counts the requests to a model endpoint one judging of ev makes (one per llm_judge or rubric
// evaluator, composite members and an llm_judge aggregator included), not counting replies asked again.
func (ev *EvaluatorConfig) LLMRequests() int {
	switch ev.Type {
	case TypeLLMJudge, TypeRubric:
		return 1
	case TypeComposite:
		if ev.Composite == nil {
			return 0
		}
		n := 0
		if ev.Composite.Aggregator == AggregatorLLMJudge {
			n++
		}
		for _, m := range ev.Composite.Members {
			n += m.LLMRequests()
		}
		return n
	}
	return 0
}

// LLMRequests counts the requests to a model endpoint judging every case makes (total) and the most one case
// makes (perCase). withModel says whether the run has one: a case without evaluators is then judged by llm_judge.
func (f *File) LLMRequests(withModel bool) (total, perCase int) {
	for i := range f.cases {
		n := loadOf(f.CaseAt(i).Evaluators).requests(withModel)
		total += n
		perCase = max(perCase, n)
	}
	return total, perCase
}
