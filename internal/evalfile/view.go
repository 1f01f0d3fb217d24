package evalfile

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
)

// The runner view of an eval file is what a runner under evaluation may read of it: a valid document of the file's
// own format with, per case, only what running the case needs (a 4.42 suite's: suite42_view.go). It is built from an allowlist, never by removing
// what is known to be a judge's: a key this package does not know (a note for judges, a future field) is simply
// never written.
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
	var arena fastArena
	for i := range f.NumCases() {
		var err error
		if e := &f.cases[i]; e.end != 0 {
			// A case kept as the place of its text: its values, read again, without building the case.
			v, _, ok := fastItem(&arena, f.src, int(e.start), int(e.end), int(e.line), f.indent)
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
		a := arenas.Get().(*fastArena)
		defer arenas.Put(a)
		v, _, ok := fastItem(a, f.src, int(e.start), int(e.end), int(e.line), f.indent)
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
	b = appendSpaces(b, viewCaseCol)
	b = append(b, "- id: "...)
	b = appendScalarString(b, id)
	b = append(b, '\n')
	if conversationID != "" {
		b = appendSpaces(b, viewCaseCol+2)
		b = append(b, "conversation_id: "...)
		b = appendScalarString(b, conversationID)
		b = append(b, '\n')
	}
	b = appendSpaces(b, viewCaseCol+2)
	b = append(b, "expected_outcome: "...)
	b = appendScalarString(b, ViewExpectedOutcome)
	b = append(b, '\n')
	b = appendSpaces(b, viewCaseCol+2)
	return append(b, "input_messages:\n"...)
}

// appendMessageHead appends a message's role.
func appendMessageHead(b []byte, role string) []byte {
	b = appendSpaces(b, viewMessageCol)
	b = append(b, "- role: "...)
	b = appendScalarString(b, role)
	return append(b, '\n')
}

// appendMember appends key: v at column col.
func appendMember(b []byte, col int, key string, v *value) []byte {
	b = appendSpaces(b, col)
	b = append(b, key...)
	b = append(b, ':')
	return appendBlockValue(b, v, col+2)
}

// writeItem writes a validated case from its values (as the parser read them: evalCase and messages decide the
// same fields from them).
func (vw *viewWriter) writeItem(v *value) {
	conversationID := ""
	if cv := v.get("conversation_id"); cv != nil && cv.kind == kindString {
		conversationID = cv.str
	}
	b := appendCaseHead(vw.buf, v.get("id").str, conversationID)
	const col = viewMessageCol + 2
	for _, m := range v.get("input_messages").vals {
		b = appendMessageHead(b, m.get("role").str)
		if content := m.get("content"); !content.isNull() {
			b = appendMember(b, col, "content", content)
		}
		if tcs := m.get("tool_calls"); tcs != nil && tcs.kind == kindArray && len(tcs.vals) > 0 {
			b = appendSpaces(b, col)
			b = append(b, "tool_calls:\n"...)
			for _, tc := range tcs.vals {
				b = appendToolHead(b, col+2, tc.get("tool").str)
				for _, key := range []string{keyInput, keyOutput} {
					if part := tc.get(key); part != nil {
						b = appendMember(b, col+4, key, part)
					}
				}
			}
		}
	}
	vw.buf = b
}

// appendToolHead appends a tool call's tool at column col.
func appendToolHead(b []byte, col int, tool string) []byte {
	b = appendSpaces(b, col)
	b = append(b, "- tool: "...)
	b = appendScalarString(b, tool)
	return append(b, '\n')
}

// writeCase writes a case kept built (its text is not read item by item) from its parsed fields.
func (vw *viewWriter) writeCase(c *Case) error {
	b := appendCaseHead(vw.buf, c.ID, c.ConversationID)
	const col = viewMessageCol + 2
	for _, m := range c.InputMessages {
		b = appendMessageHead(b, string(m.Role))
		if m.Content.Kind != ContentNone {
			v, err := decodeJSONValue(m.Content.Raw)
			if err != nil {
				return fmt.Errorf("content: %w", err)
			}
			b = appendMember(b, col, "content", v)
		}
		if len(m.ToolCalls) > 0 {
			var err error
			if b, err = appendToolCalls(b, col, m.ToolCalls); err != nil {
				return err
			}
		}
	}
	vw.buf = b
	return nil
}

// appendBlockValue appends v as the value of a key or a sequence entry whose indicator (":" or "-") was just
// written: a scalar or an empty collection on the same line, a collection on the following lines at column col.
func appendBlockValue(b []byte, v *value, col int) []byte {
	switch {
	case v.kind == kindObject && len(v.keys) > 0:
		b = append(b, '\n')
		return appendMembers(b, v, col, false)
	case v.kind == kindArray && len(v.vals) > 0:
		b = append(b, '\n')
		return appendItems(b, v, col)
	}
	b = append(b, ' ')
	b = appendScalar(b, v)
	return append(b, '\n')
}

// appendMembers appends an object's members at column col; the first one on the current line when inline (after
// a sequence entry's "- ").
func appendMembers(b []byte, v *value, col int, inline bool) []byte {
	for i, k := range v.keys {
		if i > 0 || !inline {
			b = appendSpaces(b, col)
		}
		if len(k) > maxViewImplicitKey {
			// YAML's implicit keys end at 1024 characters: an explicit key has no bound.
			b = append(b, "? "...)
			b = appendQuoted(b, k)
			b = append(b, '\n')
			b = appendSpaces(b, col)
		} else {
			b = appendScalarString(b, k)
		}
		b = append(b, ':')
		b = appendBlockValue(b, v.vals[i], col+2)
	}
	return b
}

// maxViewImplicitKey is the longest key the view writes as an implicit key (YAML allows 1024 characters; the
// item reader reads up to maxFastKey).
const maxViewImplicitKey = maxFastKey

// appendItems appends an array's items at column col.
func appendItems(b []byte, v *value, col int) []byte {
	for _, item := range v.vals {
		b = appendSpaces(b, col)
		if item.kind == kindObject && len(item.keys) > 0 {
			b = append(b, "- "...)
			b = appendMembers(b, item, col+2, true)
			continue
		}
		b = append(b, '-')
		b = appendBlockValue(b, item, col+2)
	}
	return b
}

// appendScalar appends a scalar, or an empty collection, in flow style.
func appendScalar(b []byte, v *value) []byte {
	switch v.kind {
	case kindNull:
		return append(b, "null"...)
	case kindBool:
		return strconv.AppendBool(b, v.b)
	case kindNumber:
		return append(b, v.num...)
	case kindString:
		return appendScalarString(b, v.str)
	case kindObject:
		return append(b, "{}"...)
	default:
		return append(b, "[]"...)
	}
}

// appendScalarString appends s as a plain scalar when every YAML reader takes it for that same string, else
// double-quoted.
func appendScalarString(b []byte, s string) []byte {
	if plainSafe(s) {
		return append(b, s...)
	}
	return appendQuoted(b, s)
}

// plainSafe reports whether s can be written plain: it starts with a letter, holds only letters, digits, spaces
// and "_.,-" (no space at either end), and is not a word that YAML 1.1 or 1.2 reads as a boolean or null.
func plainSafe(s string) bool {
	if s == "" || len(s) > 256 || (s[0] < 'a' || s[0] > 'z') && (s[0] < 'A' || s[0] > 'Z') || s[len(s)-1] == ' ' {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '_' || c == '.' || c == '-' || c == ',':
		case c == ' ' && s[i-1] != ' ':
		default:
			return false
		}
	}
	if len(s) > 5 {
		return true
	}
	// Compared without case, without building the lower-case string.
	for _, word := range [...]string{"y", "n", "yes", "no", "true", "false", "on", "off", "null"} {
		if strings.EqualFold(s, word) {
			return false
		}
	}
	return true
}

// appendQuoted appends s as a YAML double-quoted scalar on one line. Printable ASCII and the non-ASCII characters
// every YAML reader keeps as they are stay; '"', '\\', line breaks, control characters, DEL, C1 controls, the
// Unicode line and paragraph separators, byte-order marks and non-characters are escaped (escapes YAML 1.1 and
// 1.2 share).
func appendQuoted(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\t':
				b = append(b, '\\', 't')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c < 0x20 || c == 0x7f:
				b = append(b, '\\', 'x', lowerHex[c>>4], lowerHex[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			b = append(b, `\ufffd`...)
		case r < 0xa0, r == 0x2028, r == 0x2029, r == 0xfeff, r == 0xfffe, r == 0xffff:
			b = append(b, '\\', 'u', lowerHex[r>>12&0xf], lowerHex[r>>8&0xf], lowerHex[r>>4&0xf], lowerHex[r&0xf])
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

const lowerHex = "0123456789abcdef"

func appendSpaces(b []byte, n int) []byte {
	for range n {
		b = append(b, ' ')
	}
	return b
}

// decodeJSONValue reads JSON text (as this package encodes it: object keys in document order) into a value.
func decodeJSONValue(raw []byte) (*value, error) {
	d := jsonDecoder{s: raw}
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	if d.skip(); d.i != len(d.s) {
		return nil, errors.New("content after the JSON value")
	}
	return v, nil
}

// jsonDecoder is a small JSON reader that keeps object keys in order (encoding/json's maps do not).
type jsonDecoder struct {
	s []byte
	i int
}

func (d *jsonDecoder) skip() {
	for d.i < len(d.s) && (d.s[d.i] == ' ' || d.s[d.i] == '\n' || d.s[d.i] == '\t' || d.s[d.i] == '\r') {
		d.i++
	}
}

func (d *jsonDecoder) value(depth int) (*value, error) {
	if depth > maxTreeDepth {
		return nil, errors.New("nested too deeply")
	}
	d.skip()
	if d.i >= len(d.s) {
		return nil, errors.New("unexpected end of JSON")
	}
	switch d.s[d.i] {
	case '{':
		d.i++
		v := &value{kind: kindObject}
		d.skip()
		if d.i < len(d.s) && d.s[d.i] == '}' {
			d.i++
			return v, nil
		}
		for {
			d.skip()
			k, err := d.str()
			if err != nil {
				return nil, err
			}
			d.skip()
			if d.i >= len(d.s) || d.s[d.i] != ':' {
				return nil, errors.New("expected ':' in a JSON object")
			}
			d.i++
			m, err := d.value(depth + 1)
			if err != nil {
				return nil, err
			}
			v.keys, v.vals = append(v.keys, k), append(v.vals, m)
			if done, err := d.next('}'); err != nil || done {
				return v, err
			}
		}
	case '[':
		d.i++
		v := &value{kind: kindArray}
		d.skip()
		if d.i < len(d.s) && d.s[d.i] == ']' {
			d.i++
			return v, nil
		}
		for {
			item, err := d.value(depth + 1)
			if err != nil {
				return nil, err
			}
			v.vals = append(v.vals, item)
			if done, err := d.next(']'); err != nil || done {
				return v, err
			}
		}
	case '"':
		s, err := d.str()
		return &value{kind: kindString, str: s}, err
	default:
		start := d.i
		for d.i < len(d.s) && strings.IndexByte(",]} \n\t\r", d.s[d.i]) < 0 {
			d.i++
		}
		lit := string(d.s[start:d.i])
		switch lit {
		case "null":
			return &value{kind: kindNull}, nil
		case "true", "false":
			return &value{kind: kindBool, b: lit == "true"}, nil
		}
		f, err := strconv.ParseFloat(lit, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) || !json.Valid([]byte(lit)) {
			return nil, fmt.Errorf("invalid JSON literal %q", textbound.Head(lit, 40))
		}
		return &value{kind: kindNumber, num: lit, f: f}, nil
	}
}

// next consumes the separator after a member or item: ok true at the closing bracket.
func (d *jsonDecoder) next(closing byte) (bool, error) {
	d.skip()
	if d.i >= len(d.s) {
		return false, errors.New("unexpected end of JSON")
	}
	switch d.s[d.i] {
	case ',':
		d.i++
		return false, nil
	case closing:
		d.i++
		return true, nil
	}
	return false, fmt.Errorf("unexpected %q in JSON", d.s[d.i])
}

// str reads a JSON string.
func (d *jsonDecoder) str() (string, error) {
	if d.i >= len(d.s) || d.s[d.i] != '"' {
		return "", errors.New("expected a JSON string")
	}
	escaped := false
	for j := d.i + 1; j < len(d.s); j++ {
		switch d.s[j] {
		case '\\':
			escaped = true
			j++
		case '"':
			text := d.s[d.i : j+1]
			d.i = j + 1
			if !escaped {
				return string(text[1 : len(text)-1]), nil
			}
			var s string
			if err := json.Unmarshal(text, &s); err != nil {
				return "", err
			}
			return s, nil
		}
	}
	return "", errors.New("unterminated JSON string")
}

// appendToolCalls appends a message's tool_calls member at column col: each call's tool, input and output.
func appendToolCalls(b []byte, col int, calls []ToolCall) ([]byte, error) {
	b = appendSpaces(b, col)
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
			v, err := decodeJSONValue(part.raw)
			if err != nil {
				return b, fmt.Errorf("tool_calls: %w", err)
			}
			b = appendMember(b, col+4, part.key, v)
		}
	}
	return b, nil
}
