package jsonlresult

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// maxWarnings bounds Response.Warnings.
const maxWarnings = 8

// Trace event types a TraceEvent may have.
const (
	TraceTypeModelStep  = "model_step"
	TraceTypeToolCall   = "tool_call"
	TraceTypeToolResult = "tool_result"
	TraceTypeMessage    = "message"
	TraceTypeError      = "error"
)

// traceType returns the canonical (shared, not allocated) name of a valid trace event type.
func traceType(b []byte) (string, bool) {
	switch string(b) {
	case TraceTypeModelStep:
		return TraceTypeModelStep, true
	case TraceTypeToolCall:
		return TraceTypeToolCall, true
	case TraceTypeToolResult:
		return TraceTypeToolResult, true
	case TraceTypeMessage:
		return TraceTypeMessage, true
	case TraceTypeError:
		return TraceTypeError, true
	}
	return "", false
}

// Member names of the runner contract that appear in more than one object.
const (
	memberID        = "id"
	memberName      = "name"
	memberInput     = "input"
	memberOutput    = "output"
	memberTimestamp = "timestamp"
	memberTool      = "tool"
)

// roleAssistant is the output message role whose content can stand in for a missing text.
const roleAssistant = "assistant"

// internedRole avoids allocating the common role names.
func internedRole(b []byte) string {
	switch string(b) {
	case roleAssistant:
		return roleAssistant
	case "user":
		return "user"
	case "system":
		return "system"
	case memberTool:
		return memberTool
	}
	return string(b)
}

// idState says what the record's id member was.
type idState uint8

const (
	idMissing idState = iota
	idString
	idWrongKind
)

// record is the outcome of reading one JSON object of the runner contract.
type record struct {
	resp    *Response
	id      idState
	idKind  valueKind // kind of a non-string id
	hasText bool
	textRaw []byte // raw non-string text
	// metrics holds token usage, cost and duration, in respBlock with resp; resp points into it.
	metrics   *metricsBlock
	respBlock *responseBlock
}

type metricsBlock struct {
	tokenUsage TokenUsage
	cached     float64
	cost       float64
	duration   float64
}

func (rec *record) block() *metricsBlock {
	if rec.metrics == nil {
		rec.metrics = &rec.respBlock.metrics
	}
	return rec.metrics
}

// responseBlock is a response and its metrics, allocated together (and many at a time, see typedSlab).
type responseBlock struct {
	resp    Response
	metrics metricsBlock
}

// recordParser reads records. It keeps reusable state, so each goroutine needs its own.
type recordParser struct {
	s     scanner
	lines byteSlab // owned copies of batch lines
	// Scratch slices for the elements of one array; the response gets an exact-size copy from the slabs below.
	traceBuf []TraceEvent
	msgBuf   []OutputMessage
	callBuf  []ToolCall
	traces   typedSlab[TraceEvent]
	msgs     typedSlab[OutputMessage]
	calls    typedSlab[ToolCall]
	resps    typedSlab[responseBlock]
	// short says the record being read is on a line short enough to share slabs (see object); alone says the
	// parser reads one record only (slabs would only waste room).
	short, alone bool
	// names caches small strings that repeat across records (tool names, message names) so that they are
	// allocated once per parser instead of once per record.
	names map[string]string
}

const (
	maxInternedLen   = 64
	maxInternedNames = 4096
)

func (p *recordParser) intern(b []byte) string {
	if len(b) > maxInternedLen {
		return p.s.strs.string(b)
	}
	if v, ok := p.names[string(b)]; ok {
		return v
	}
	v := p.s.strs.string(b)
	if p.names == nil {
		p.names = make(map[string]string)
	}
	if len(p.names) < maxInternedNames {
		p.names[v] = v
	}
	return v
}

// warn adds a bounded warning to the response.
func warn(r *Response, format string, args ...any) {
	if len(r.Warnings) < maxWarnings {
		r.Warnings = append(r.Warnings, fmt.Sprintf(format, args...))
	}
}

// object reads the JSON object at the start of buf (which must be owned by the result and valid UTF-8) and
// requires nothing but whitespace after it. On a syntax error it returns the error and a nil record.
func (p *recordParser) object(buf []byte) (record, error) {
	s := &p.s
	s.reset(buf)
	if k := s.peek(); k != kindObject {
		if !s.skip() {
			return record{}, s.err
		}
		if !s.atEnd() {
			return record{}, &syntaxError{off: s.pos, msg: "unexpected content after the value"}
		}
		return record{}, notObjectError{k}
	}
	// Only a short line's response comes from the slabs: a response kept alive keeps its slabs alive, and they keep
	// alive every response carved from them and what those point to, the lines among it. A short line is in a
	// byteSlab with others already; a long one must be freed with its own response.
	p.short = len(buf) <= maxSlabLine && !p.alone
	blk := p.resps.one(p.short)
	rec := record{resp: &blk.resp, respBlock: blk}
	if !p.members(&rec) {
		*blk = responseBlock{} // nothing of a failed record stays reachable through the slab
		return record{}, s.err
	}
	if !s.atEnd() {
		*blk = responseBlock{}
		return record{}, &syntaxError{off: s.pos, msg: "unexpected content after the object"}
	}
	p.finishText(&rec)
	return rec, nil
}

// notObjectError says a line is valid JSON but not an object.
type notObjectError struct{ kind valueKind }

func (e notObjectError) Error() string {
	return fmt.Sprintf("not a JSON object: the line is %s", e.kind)
}

// members reads the top-level object's members. Later duplicates of a member replace earlier ones, as with
// encoding/json.
func (p *recordParser) members(rec *record) bool {
	s := &p.s
	r := rec.resp
	s.enter()
	for first := true; s.next(&first, '}'); {
		key, ok := s.key()
		if !ok {
			return false
		}
		switch string(key) {
		case memberID:
			if s.peek() == kindString {
				if r.ID, ok = s.stringValue(); !ok {
					return false
				}
				rec.id = idString
				continue
			}
			rec.id, rec.idKind = idWrongKind, s.peek()
		case "text":
			switch s.peek() {
			case kindString:
				if r.Text, ok = s.stringValue(); !ok {
					return false
				}
				rec.hasText, rec.textRaw = true, nil
				continue
			case kindNull:
				rec.hasText, rec.textRaw = false, nil
			default:
				if rec.textRaw, ok = s.raw(); !ok {
					return false
				}
				rec.hasText = true
				continue
			}
		case "trace":
			r.Trace, r.DroppedTraceEvents = nil, 0
			if s.peek() == kindArray {
				if !p.trace(r) {
					return false
				}
				continue
			}
			if s.peek() != kindNull {
				warn(r, "trace is %s, not an array; ignored", s.peek())
			}
		case "output_messages":
			if r.OutputMessages, ok = p.messageList(r, "output_messages"); !ok {
				return false
			}
			continue
		case memberOutput:
			// AgentV 4.42's name of the output messages (read before output_messages there); agentv-eval-v2
			// judging does not read it.
			if r.Output, ok = p.messageList(r, memberOutput); !ok {
				return false
			}
			continue
		case "token_usage":
			r.TokenUsage = nil
			if s.peek() == kindObject {
				if !p.tokenUsage(rec) {
					return false
				}
				continue
			}
			if s.peek() != kindNull {
				warn(r, "token_usage is %s, not an object; ignored", s.peek())
			}
		case "cost_usd":
			if r.CostUSD, ok = p.metric(rec, &rec.block().cost, "cost_usd"); !ok {
				return false
			}
			continue
		case "duration_ms":
			if r.DurationMs, ok = p.metric(rec, &rec.block().duration, "duration_ms"); !ok {
				return false
			}
			continue
		}
		if !s.skip() {
			return false
		}
	}
	return s.err == nil
}

// nonNegative reads a value that should be a finite non-negative number; valid is false (and the value skipped)
// when it is anything else.
func (p *recordParser) nonNegative() (v float64, valid, ok bool) {
	s := &p.s
	if s.peek() != kindNumber {
		return 0, false, s.skip()
	}
	v, finite, ok := s.numberValue()
	return v, ok && finite && v >= 0, ok
}

// metric reads cost_usd or duration_ms into dst and returns dst when the value is valid.
func (p *recordParser) metric(rec *record, dst *float64, name string) (*float64, bool) {
	if p.s.peek() == kindNull {
		return nil, p.s.skip()
	}
	v, valid, ok := p.nonNegative()
	if !ok {
		return nil, false
	}
	if !valid {
		warn(rec.resp, "%s is not a non-negative number; ignored", name)
		return nil, true
	}
	*dst = v
	return dst, true
}

// tokenUsage reads token_usage; it is kept only when input and output are non-negative numbers and cached, when
// present, is one too.
func (p *recordParser) tokenUsage(rec *record) bool {
	s := &p.s
	var tu TokenUsage
	var cached float64
	var hasIn, hasOut, hasCached, bad bool
	s.enter()
	for first := true; s.next(&first, '}'); {
		key, ok := s.key()
		if !ok {
			return false
		}
		var dst *float64
		switch string(key) {
		case memberInput:
			dst, hasIn = &tu.Input, true
		case memberOutput:
			dst, hasOut = &tu.Output, true
		case "cached":
			if s.peek() == kindNull {
				hasCached = false
				break
			}
			hasCached, dst = true, &cached
		}
		if dst == nil {
			if !s.skip() {
				return false
			}
			continue
		}
		v, valid, ok := p.nonNegative()
		if !ok {
			return false
		}
		if !valid {
			bad = true
		}
		*dst = v
	}
	if s.err != nil {
		return false
	}
	if bad || !hasIn || !hasOut {
		warn(rec.resp, "token_usage needs non-negative numbers input and output (and cached when given); ignored")
		return true
	}
	b := rec.block()
	b.tokenUsage = tu
	if hasCached {
		b.cached = cached
		b.tokenUsage.Cached = &b.cached
	}
	rec.resp.TokenUsage = &b.tokenUsage
	return true
}

// trace reads the trace array, keeping the valid events.
func (p *recordParser) trace(r *Response) bool {
	s := &p.s
	p.traceBuf = p.traceBuf[:0]
	s.enter()
	for first := true; s.next(&first, ']'); {
		if s.peek() != kindObject {
			if !s.skip() {
				return false
			}
			r.DroppedTraceEvents++
			continue
		}
		start := s.pos
		ev, valid, ok := p.traceEvent()
		if !ok {
			return false
		}
		if !valid {
			r.DroppedTraceEvents++
			continue
		}
		ev.Raw = s.buf[start:s.pos:s.pos]
		p.traceBuf = append(p.traceBuf, ev)
	}
	r.Trace = exactCopy(&p.traceBuf, &p.traces, p.short)
	return s.err == nil
}

// exactCopy returns a copy of the scratch slice, from the slab when share is set, with no spare capacity (nil
// when empty), and empties the scratch.
func exactCopy[T any](scratch *[]T, slab *typedSlab[T], share bool) []T {
	out := slab.copy(*scratch, share)
	clear(*scratch)
	*scratch = (*scratch)[:0]
	return out
}

// traceEvent reads one trace element object; valid says whether it has a known type and a string timestamp.
func (p *recordParser) traceEvent() (ev TraceEvent, valid, ok bool) {
	s := &p.s
	var hasType, hasTimestamp bool
	s.enter()
	for first := true; s.next(&first, '}'); {
		key, ok := s.key()
		if !ok {
			return ev, false, false
		}
		switch string(key) {
		case "type":
			hasType = false
			if s.peek() == kindString {
				b, ok := s.stringBytes()
				if !ok {
					return ev, false, false
				}
				ev.Type, hasType = traceType(b)
				continue
			}
		case memberTimestamp:
			hasTimestamp = false
			if s.peek() == kindString {
				if ev.Timestamp, ok = s.stringValue(); !ok {
					return ev, false, false
				}
				hasTimestamp = true
				continue
			}
		case memberID:
			if ev.ID, ok = p.optString(); !ok {
				return ev, false, false
			}
			continue
		case memberName:
			if ev.Name, ok = p.optName(); !ok {
				return ev, false, false
			}
			continue
		case memberInput:
			if ev.Input, ok = p.optRaw(); !ok {
				return ev, false, false
			}
			continue
		case memberOutput:
			if ev.Output, ok = p.optRaw(); !ok {
				return ev, false, false
			}
			continue
		}
		if !s.skip() {
			return ev, false, false
		}
	}
	if s.err != nil {
		return ev, false, false
	}
	return ev, hasType && hasTimestamp, true
}

// optString reads a value that is kept only when it is a string.
func (p *recordParser) optString() (string, bool) {
	if p.s.peek() == kindString {
		return p.s.stringValue()
	}
	return "", p.s.skip()
}

// optName is optString for short, often repeated names, which are interned.
func (p *recordParser) optName() (string, bool) {
	if p.s.peek() == kindString {
		b, ok := p.s.stringBytes()
		if !ok {
			return "", false
		}
		return p.intern(b), true
	}
	return "", p.s.skip()
}

// optRaw reads a value kept as written; null counts as absent.
func (p *recordParser) optRaw() (json.RawMessage, bool) {
	if p.s.peek() == kindNull {
		return nil, p.s.skip()
	}
	return p.s.raw()
}

// messageList reads the value of member list, a list of output messages (nil, with a warning unless null, when it
// is not an array).
func (p *recordParser) messageList(r *Response, list string) ([]OutputMessage, bool) {
	s := &p.s
	if s.peek() == kindArray {
		return p.outputMessages(r, list)
	}
	if s.peek() != kindNull {
		warn(r, "%s is %s, not an array; ignored", list, s.peek())
	}
	return nil, s.skip()
}

// outputMessages reads a list of output messages: output_messages, or 4.42's output (list names it in warnings).
func (p *recordParser) outputMessages(r *Response, list string) ([]OutputMessage, bool) {
	s := &p.s
	p.msgBuf = p.msgBuf[:0]
	s.enter()
	index := 0
	for first := true; s.next(&first, ']'); index++ {
		if s.peek() != kindObject {
			warn(r, "%s[%d] is %s, not an object; skipped", list, index, s.peek())
			if !s.skip() {
				return nil, false
			}
			continue
		}
		m, valid, ok := p.outputMessage(r, list, index)
		if !ok {
			return nil, false
		}
		if !valid {
			warn(r, "%s[%d] has no string role; skipped", list, index)
			continue
		}
		p.msgBuf = append(p.msgBuf, m)
	}
	return exactCopy(&p.msgBuf, &p.msgs, p.short), s.err == nil
}

// outputMessage reads one output message; valid says whether it has a string role.
func (p *recordParser) outputMessage(r *Response, list string, index int) (m OutputMessage, valid, ok bool) {
	s := &p.s
	s.enter()
	for first := true; s.next(&first, '}'); {
		key, ok := s.key()
		if !ok {
			return m, false, false
		}
		switch string(key) {
		case "role":
			valid = false
			if s.peek() == kindString {
				b, ok := s.stringBytes()
				if !ok {
					return m, false, false
				}
				m.Role, valid = internedRole(b), true
				continue
			}
		case memberName:
			if m.Name, ok = p.optName(); !ok {
				return m, false, false
			}
			continue
		case "content":
			if m.Content, ok = p.optRaw(); !ok {
				return m, false, false
			}
			continue
		case memberTimestamp:
			if m.Timestamp, ok = p.optString(); !ok {
				return m, false, false
			}
			continue
		case "metadata":
			if m.Metadata, ok = p.optRaw(); !ok {
				return m, false, false
			}
			continue
		case "tool_calls":
			m.ToolCalls = nil
			if s.peek() == kindArray {
				if m.ToolCalls, ok = p.toolCalls(r, list, index); !ok {
					return m, false, false
				}
				continue
			}
			if s.peek() != kindNull {
				warn(r, "%s[%d].tool_calls is %s, not an array; ignored", list, index, s.peek())
			}
		}
		if !s.skip() {
			return m, false, false
		}
	}
	return m, valid, s.err == nil
}

// toolCalls reads an output message's tool_calls, skipping calls without a string tool.
func (p *recordParser) toolCalls(r *Response, list string, msgIndex int) ([]ToolCall, bool) {
	s := &p.s
	p.callBuf = p.callBuf[:0]
	s.enter()
	index := 0
	for first := true; s.next(&first, ']'); index++ {
		if s.peek() != kindObject {
			warn(r, "%s[%d].tool_calls[%d] is %s, not an object; skipped", list, msgIndex, index, s.peek())
			if !s.skip() {
				return nil, false
			}
			continue
		}
		tc, valid, ok := p.toolCall()
		if !ok {
			return nil, false
		}
		if !valid {
			warn(r, "%s[%d].tool_calls[%d] has no string tool; skipped", list, msgIndex, index)
			continue
		}
		p.callBuf = append(p.callBuf, tc)
	}
	return exactCopy(&p.callBuf, &p.calls, p.short), s.err == nil
}

// toolCall reads one tool call; valid says whether it has a string tool.
func (p *recordParser) toolCall() (tc ToolCall, valid, ok bool) {
	s := &p.s
	s.enter()
	for first := true; s.next(&first, '}'); {
		key, ok := s.key()
		if !ok {
			return tc, false, false
		}
		switch string(key) {
		case memberTool:
			valid = false
			if s.peek() == kindString {
				b, ok := s.stringBytes()
				if !ok {
					return tc, false, false
				}
				tc.Tool, valid = p.intern(b), true
				continue
			}
		case memberInput:
			if tc.Input, ok = p.optRaw(); !ok {
				return tc, false, false
			}
			continue
		case memberOutput:
			if tc.Output, ok = p.optRaw(); !ok {
				return tc, false, false
			}
			continue
		case memberID:
			if tc.ID, ok = p.optString(); !ok {
				return tc, false, false
			}
			continue
		case memberTimestamp:
			if tc.Timestamp, ok = p.optString(); !ok {
				return tc, false, false
			}
			continue
		case "duration_ms":
			tc.DurationMs = nil
			if s.peek() == kindNumber {
				v, nonNeg, ok := p.nonNegative()
				if !ok {
					return tc, false, false
				}
				if nonNeg {
					tc.DurationMs = &v
				}
				continue
			}
		}
		if !s.skip() {
			return tc, false, false
		}
	}
	return tc, valid, s.err == nil
}

// finishText settles the answer: text when the record has it (non-strings JSON-encoded), else the content of the
// last assistant message that has content.
func (p *recordParser) finishText(rec *record) {
	r := rec.resp
	if rec.hasText {
		if rec.textRaw != nil {
			r.Text = compactString(rec.textRaw)
		}
		return
	}
	r.Text, _ = lastAssistantContent(r.OutputMessages)
}

// lastAssistantContent returns the content of the last assistant message that has content: strings as they are,
// other values JSON-encoded. An empty string counts as no content.
func lastAssistantContent(msgs []OutputMessage) (string, bool) {
	for i := len(msgs) - 1; i >= 0; i-- {
		m := &msgs[i]
		if m.Role != roleAssistant || len(m.Content) == 0 {
			continue
		}
		if m.Content[0] == '"' {
			if str := decodeRawString(m.Content); str != "" {
				return str, true
			}
			continue
		}
		return compactString(m.Content), true
	}
	return "", false
}

// decodeRawString decodes a scanned JSON string value.
func decodeRawString(raw []byte) string {
	body := raw[1 : len(raw)-1]
	if bytes.IndexByte(body, '\\') < 0 {
		return string(body)
	}
	return string(unescape(nil, body))
}

// compactString returns a valid JSON value without insignificant whitespace.
func compactString(raw []byte) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		// Cannot happen for scanned values; keep the text as written rather than lose it.
		return string(raw)
	}
	return b.String()
}

// ownedCopy returns a copy of b in which every byte that is not part of a valid UTF-8 sequence is replaced by
// U+FFFD, as encoding/json does when it decodes strings.
func ownedCopy(b []byte) []byte {
	if utf8.Valid(b) {
		return bytes.Clone(b)
	}
	return sanitizedCopy(b)
}

// ownedLine is ownedCopy for batch lines, carved from the parser's slab.
func (p *recordParser) ownedLine(b []byte) []byte {
	if utf8.Valid(b) {
		if p.alone {
			// A parser of one record shares no slab: a slab's block for a single line would be mostly waste
			// (a re-judge reads 100,000 records, each alone).
			return bytes.Clone(b)
		}
		return p.lines.copy(b)
	}
	return sanitizedCopy(b)
}

func sanitizedCopy(b []byte) []byte {
	out := make([]byte, 0, len(b)+16)
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			out = append(out, c)
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			out = append(out, "\uFFFD"...)
		} else {
			out = append(out, b[i:i+size]...)
		}
		i += size
	}
	return out
}

// parseLine reads one non-blank batch line (without its line ending). It returns the response of a valid record,
// or a message saying what is wrong with the line.
func (p *recordParser) parseLine(line []byte) (*Response, string) {
	owned := p.ownedLine(line)
	rec, err := p.object(owned)
	if err != nil {
		return nil, err.Error()
	}
	switch {
	case rec.id == idWrongKind:
		return nil, fmt.Sprintf(`"id" must be a string, got %s`, rec.idKind)
	case rec.id == idMissing || strings.TrimSpace(rec.resp.ID) == "":
		// An id of nothing but whitespace names no case: reported as a missing id, it points at the line, where
		// as an unexpected id it would be an invisible entry in a list.
		return nil, `missing required string field: id`
	}
	rec.resp.Raw = owned
	return rec.resp, ""
}
