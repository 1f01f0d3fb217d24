package evalfile

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile/yamltree"
)

// The runner view of an eval file is what a runner under evaluation may read of it: a valid document of the file's
// own format with, per case, only what running the case needs (a 4.42 suite's: view_suite42.go). It is built from an
// allowlist, never by removing what is known to be a judge's: a key this package does not know (a note for judges, a
// future field) is simply never written.
//
// What the view holds:
//   - at the top: $schema (agentv-eval-v2) and evalcases, nothing else (no description, dataset or execution);
//   - per case: id, conversation_id (when set), expected_outcome set to ViewExpectedOutcome (AgentV's loader
//     requires one; the text is the same for every case and says nothing about any), and input_messages;
//   - per input message: role, content (a string, an object with its key order, or segments, file segments
//     included, as written) and tool_calls (tool, input, output) when an input message carries them.
//
// What it never holds: expected_messages, the real expected_outcome (or outcome), rubrics, evaluators or
// execution at any level (code_judge scripts and prompts with them), comments, anchors, unknown keys at any level
// outside a message's content.
//
// The view is written anew from the parsed file (a YAML document in block style, strings that could mean
// anything else double-quoted with every character YAML might not keep escaped), one case at a time, so its size
// follows the inputs. It reads back through Parse to the same ids, conversation ids and input messages (the same
// Raw JSON), which a test and a fuzz target check, and it can itself be cut into items (see segment) and read
// item by item.

// ViewExpectedOutcome is the expected_outcome of every case in a runner view.
const ViewExpectedOutcome = "Withheld from the runner."

// WriteView parses and validates the eval file data and writes its runner view to w. It returns the number of
// cases written. An invalid file is an error (a *ValidationError) and nothing is written.
func WriteView(w io.Writer, data []byte, opts ...ParseOption) (int, error) {
	f, err := Parse(data, opts...)
	if err != nil {
		return 0, err
	}
	return f.WriteView(w)
}

// WriteView writes the runner view of a parsed file to w (see WriteView). It returns the number of cases written.
// A File read by ParseShared has no inputs and cannot give a view.
func (f *File) WriteView(w io.Writer) (int, error) {
	if f.shared {
		return 0, errors.New("a file read by its header only has no inputs to view")
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	vw := viewWriter{buf: make([]byte, 0, 4096)}
	if f.Format == FormatSuite42 {
		vw.buf = append(vw.buf, suiteViewHeader...)
	} else {
		vw.buf = append(vw.buf, "$schema: "+SchemaV2+"\nevalcases:\n"...)
	}
	var arena yamltree.Arena
	for i := range f.NumCases() {
		var err error
		if e := &f.cases[i]; e.end != 0 {
			// A case kept as the place of its text: its values, read again, without building the case.
			v, _, ok := yamltree.ReadItem(&arena, f.src, int(e.start), int(e.end), int(e.line), f.indent)
			if !ok {
				return i, fmt.Errorf("the text of evalcases[%d] no longer reads", i)
			}
			vw.writeItem(v)
		} else {
			err = vw.writeBuilt(f, f.built[e.start])
		}
		if err != nil {
			return i, fmt.Errorf("the runner view of %s[%d]: %w", f.itemsKey(), i, err)
		}
		if len(vw.buf) >= 32<<10 || i == f.NumCases()-1 {
			if _, err := bw.Write(vw.buf); err != nil {
				return i, err
			}
			vw.buf = vw.buf[:0]
		}
	}
	if err := bw.Flush(); err != nil {
		return f.NumCases(), err
	}
	return f.NumCases(), nil
}

// CaseView returns the runner view of case i alone: the bytes WriteView writes for it (its evalcases item, with
// the view's indentation), so that a case's view is the same whichever file it is in and whatever its position.
// The re-judge digest of a case (internal/records) is taken over it. A File read by ParseShared has no inputs.
func (f *File) CaseView(i int) ([]byte, error) { return f.AppendCaseView(make([]byte, 0, 512), i) }

// AppendCaseView appends the runner view of case i alone (CaseView) to dst. It allocates nothing of its own for a
// case kept as the place of its text (its values are read into a pooled arena), so a caller that reuses dst can
// view every case of a large file cheaply; it is safe for concurrent use.
func (f *File) AppendCaseView(dst []byte, i int) ([]byte, error) {
	if f.shared {
		return dst, errors.New("a file read by its header only has no inputs to view")
	}
	if i < 0 || i >= f.NumCases() {
		return dst, fmt.Errorf("the eval file has no evalcases[%d]", i)
	}
	vw := viewWriter{buf: dst}
	if e := &f.cases[i]; e.end != 0 {
		a := arenas.Get().(*yamltree.Arena)
		defer arenas.Put(a)
		v, _, ok := yamltree.ReadItem(a, f.src, int(e.start), int(e.end), int(e.line), f.indent)
		if !ok {
			return dst, fmt.Errorf("the text of evalcases[%d] no longer reads", i)
		}
		vw.writeItem(v)
	} else if err := vw.writeBuilt(f, f.built[e.start]); err != nil {
		return dst, fmt.Errorf("the runner view of %s[%d]: %w", f.itemsKey(), i, err)
	}
	return vw.buf, nil
}

// writeBuilt writes a case kept built, in its file's format.
func (vw *viewWriter) writeBuilt(f *File, c *Case) error {
	if f.Format == FormatSuite42 {
		return vw.writeTest(c)
	}
	return vw.writeCase(c)
}

// itemsKey is the key the file's cases are under.
func (f *File) itemsKey() string {
	if f.Suite != nil {
		return f.Suite.TestsKey
	}
	return casesKey
}

// viewWriter appends a view's text to buf.
type viewWriter struct {
	buf []byte
}

// Indentation of the view: items at column 2, their members at 4, messages at 6, their members at 8.
const (
	viewCaseCol    = 2
	viewMessageCol = 6
)

// appendCaseHead appends a case's id, conversation id, placeholder outcome and the input_messages key.
func appendCaseHead(b []byte, id, conversationID string) []byte {
	b = yamltree.AppendSpaces(b, viewCaseCol)
	b = append(b, "- id: "...)
	b = yamltree.AppendScalarString(b, id)
	b = append(b, '\n')
	if conversationID != "" {
		b = yamltree.AppendSpaces(b, viewCaseCol+2)
		b = append(b, "conversation_id: "...)
		b = yamltree.AppendScalarString(b, conversationID)
		b = append(b, '\n')
	}
	b = yamltree.AppendSpaces(b, viewCaseCol+2)
	b = append(b, "expected_outcome: "...)
	b = yamltree.AppendScalarString(b, ViewExpectedOutcome)
	b = append(b, '\n')
	b = yamltree.AppendSpaces(b, viewCaseCol+2)
	return append(b, "input_messages:\n"...)
}

// appendMessageHead appends a message's role.
func appendMessageHead(b []byte, role string) []byte {
	b = yamltree.AppendSpaces(b, viewMessageCol)
	b = append(b, "- role: "...)
	b = yamltree.AppendScalarString(b, role)
	return append(b, '\n')
}

// writeItem writes a validated case from its values (as the parser read them: evalCase and messages decide the
// same fields from them).
func (vw *viewWriter) writeItem(v *yamltree.Value) {
	conversationID := ""
	if cv := v.Get("conversation_id"); cv != nil && cv.Kind == yamltree.KindString {
		conversationID = cv.Str
	}
	b := appendCaseHead(vw.buf, v.Get("id").Str, conversationID)
	const col = viewMessageCol + 2
	for _, m := range v.Get("input_messages").Vals {
		b = appendMessageHead(b, m.Get("role").Str)
		if content := m.Get("content"); !content.IsNull() {
			b = yamltree.AppendMember(b, col, "content", content)
		}
		if tcs := m.Get("tool_calls"); tcs != nil && tcs.Kind == yamltree.KindArray && len(tcs.Vals) > 0 {
			b = yamltree.AppendSpaces(b, col)
			b = append(b, "tool_calls:\n"...)
			for _, tc := range tcs.Vals {
				b = appendToolHead(b, col+2, tc.Get("tool").Str)
				for _, key := range []string{keyInput, keyOutput} {
					if part := tc.Get(key); part != nil {
						b = yamltree.AppendMember(b, col+4, key, part)
					}
				}
			}
		}
	}
	vw.buf = b
}

// appendToolHead appends a tool call's tool at column col.
func appendToolHead(b []byte, col int, tool string) []byte {
	b = yamltree.AppendSpaces(b, col)
	b = append(b, "- tool: "...)
	b = yamltree.AppendScalarString(b, tool)
	return append(b, '\n')
}

// writeCase writes a case kept built (its text is not read item by item) from its parsed fields.
func (vw *viewWriter) writeCase(c *Case) error {
	b := appendCaseHead(vw.buf, c.ID, c.ConversationID)
	const col = viewMessageCol + 2
	for _, m := range c.InputMessages {
		b = appendMessageHead(b, string(m.Role))
		var err error
		if b, err = appendMessageBody(b, col, m); err != nil {
			return err
		}
	}
	vw.buf = b
	return nil
}

// appendMessageBody appends a view message's content (when it has one) and tool calls at column col, in both
// formats' views.
func appendMessageBody(b []byte, col int, m Message) ([]byte, error) {
	if m.Content.Kind != ContentNone {
		v, err := yamltree.DecodeJSON(m.Content.Raw)
		if err != nil {
			return b, fmt.Errorf("content: %w", err)
		}
		b = yamltree.AppendMember(b, col, "content", v)
	}
	if len(m.ToolCalls) > 0 {
		return appendToolCalls(b, col, m.ToolCalls)
	}
	return b, nil
}

// appendToolCalls appends a message's tool_calls member at column col: each call's tool, input and output.
func appendToolCalls(b []byte, col int, calls []ToolCall) ([]byte, error) {
	b = yamltree.AppendSpaces(b, col)
	b = append(b, "tool_calls:\n"...)
	for _, tc := range calls {
		b = appendToolHead(b, col+2, tc.Tool)
		for _, part := range []struct {
			key string
			raw json.RawMessage
		}{{keyInput, tc.Input}, {keyOutput, tc.Output}} {
			if part.raw == nil {
				continue
			}
			v, err := yamltree.DecodeJSON(part.raw)
			if err != nil {
				return b, fmt.Errorf("tool_calls: %w", err)
			}
			b = yamltree.AppendMember(b, col+4, part.key, v)
		}
	}
	return b, nil
}
