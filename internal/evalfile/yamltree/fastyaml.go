package yamltree

import (
	"strconv"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"
)

// Most eval files write their cases in a small part of YAML: block mappings and sequences, one-line flow collections,
// and one-line plain or quoted scalars. ReadItem reads an item of a block sequence (an evalcases item) written that
// way straight into values, as the YAML parser and the tree builder would together, without building the parser's
// tokens, events and nodes (most of the time and garbage of reading a large file). Anything else, and anything that
// might mean something else, is declined: anchors, aliases, tags, block scalars, multi-line scalars and flow
// collections, complex keys, empty values, duplicate keys, merge keys, tabs, characters YAML treats as line breaks or
// rejects. A declined item is read by the YAML parser as before. Tests and a fuzz target (in evalfile, on the items
// its cut gives: fastyaml_test.go) hold the values (kinds, text, numbers and lines) to those of the YAML parser and
// the tree builder.

// maxFastDepth bounds the nesting ReadItem reads; deeper items go to the YAML parser (far below MaxDepth).
const maxFastDepth = 64

// maxFastKey bounds the length of a key ReadItem reads (YAML's implicit keys end at 1024 characters).
const maxFastKey = 512

// fastParser reads one item. src is the whole file's text as a string (scalars without escapes are cut from it
// without copying); the item is src[start:end].
type fastParser struct {
	src       string
	pos, end  int
	line      int // the 1-based line of pos in the file
	lineStart int // the offset of that line's first byte
	nodes     int // the values built, as Builder counts them
	depth     int
	bad       bool
	a         *Arena
}

// Arena holds the values of items read one after the other: the values of an item live until the arena reads
// the next one (nothing a case keeps refers to them: cases keep strings and JSON encoded anew). Its zero value is
// ready to use; one goroutine uses it at a time. Reusing their
// memory spares the allocations that would otherwise be most of the work.
type Arena struct {
	slabs      [][]Value
	slab, used int
	ptrs       []*Value
	keys       []string
	// vstack and kstack hold the members of the collections being read.
	vstack []*Value
	kstack []string
}

const (
	fastValueSlab = 256
	fastSliceSlab = 1024
)

// reset makes the arena's memory free for the next item.
func (a *Arena) reset() {
	a.slab, a.used = 0, 0
	a.ptrs, a.keys = a.ptrs[:0], a.keys[:0]
	a.vstack, a.kstack = a.vstack[:0], a.kstack[:0]
}

func (a *Arena) value() *Value {
	if a.slab == len(a.slabs) {
		a.slabs = append(a.slabs, make([]Value, fastValueSlab))
	}
	v := &a.slabs[a.slab][a.used]
	*v = Value{}
	if a.used++; a.used == fastValueSlab {
		a.slab, a.used = a.slab+1, 0
	}
	return v
}

// values returns a copy of vs whose capacity is its length.
func (a *Arena) values(vs []*Value) []*Value {
	if cap(a.ptrs)-len(a.ptrs) < len(vs) {
		a.ptrs = make([]*Value, 0, max(fastSliceSlab, len(vs)))
	}
	n := len(a.ptrs)
	a.ptrs = append(a.ptrs, vs...)
	return a.ptrs[n:len(a.ptrs):len(a.ptrs)]
}

// strings returns a copy of ks whose capacity is its length.
func (a *Arena) strings(ks []string) []string {
	if cap(a.keys)-len(a.keys) < len(ks) {
		a.keys = make([]string, 0, max(fastSliceSlab, len(ks)))
	}
	n := len(a.keys)
	a.keys = append(a.keys, ks...)
	return a.keys[n:len(a.keys):len(a.keys)]
}

// ReadItem reads the item src[start:end], whose first line is line and whose dash is at column indent, into
// values held by a (reset first). It returns the item's value and the number of values in it, or ok false when
// the item is not in the subset.
func ReadItem(a *Arena, src string, start, end, line, indent int) (v *Value, nodes int, ok bool) {
	a.reset()
	if !fastChars(src[start:end]) {
		return nil, 0, false
	}
	p := &fastParser{src: src, pos: start, end: end, line: line, lineStart: start, a: a}
	p.spaces()
	if p.col() != indent || !p.seqEntryAt() {
		return nil, 0, false
	}
	v = p.seqEntry(indent)
	if p.bad || p.pos < p.end {
		// Content after the item's own node: not in the subset.
		return nil, 0, false
	}
	return v, p.nodes, true
}

// fastChars reports whether s has only characters ReadItem reads as they are: printable ASCII, line feeds,
// carriage returns before line feeds, and printable non-ASCII characters that YAML neither rejects nor treats as
// line breaks or byte-order marks.
func fastChars(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f || c == '\n' {
			i++
			continue
		}
		if c == '\r' {
			if i+1 < len(s) && s[i+1] == '\n' {
				i++
				continue
			}
			return false
		}
		if c < utf8.RuneSelf {
			return false // tabs, control characters, DEL
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			return false
		case r < 0xa0, r == 0x2028, r == 0x2029, r >= 0xd800 && r < 0xe000, r == 0xfeff, r == 0xfffe, r == 0xffff:
			return false
		}
		i += size
	}
	return true
}

func (p *fastParser) col() int { return p.pos - p.lineStart }

// eolAt reports whether i is at the end of a line (or of the item).
func (p *fastParser) eolAt(i int) bool {
	return i >= p.end || p.src[i] == '\n' || p.src[i] == '\r'
}

func (p *fastParser) eol() bool { return p.eolAt(p.pos) }

// blankzAt reports whether i is a space or the end of a line (no tabs reach the parser).
func (p *fastParser) blankzAt(i int) bool { return p.eolAt(i) || p.src[i] == ' ' }

func (p *fastParser) spaces() {
	for p.pos < p.end && p.src[p.pos] == ' ' {
		p.pos++
	}
}

// seqEntryAt reports whether pos is at a block sequence entry indicator.
func (p *fastParser) seqEntryAt() bool {
	return p.pos < p.end && p.src[p.pos] == '-' && p.blankzAt(p.pos+1)
}

func (p *fastParser) fail() *Value {
	p.bad = true
	return nil
}

// newValue counts and returns a value.
func (p *fastParser) newValue(k Kind) *Value {
	p.nodes++
	v := p.a.value()
	v.Kind, v.Line = k, p.line
	return v
}

// finishLine requires the rest of the line to be blank or a comment after a space, then moves to the first
// character of the next line that is neither blank nor only a comment (or to the end of the item).
func (p *fastParser) finishLine() {
	from := p.pos
	p.spaces()
	if !p.eol() {
		if p.src[p.pos] != '#' || p.pos == from {
			p.bad = true
			return
		}
	}
	p.nextLine()
	p.significant()
}

// nextLine moves to the start of the next line (or the end of the item).
func (p *fastParser) nextLine() {
	for p.pos < p.end && p.src[p.pos] != '\n' {
		p.pos++
	}
	if p.pos < p.end {
		p.pos++
		p.line++
		p.lineStart = p.pos
	}
}

// significant moves from the start of a line to the first character of the first line that is neither blank nor
// only a comment, or to the end of the item.
func (p *fastParser) significant() {
	for p.pos < p.end {
		p.spaces()
		if !p.eol() && p.src[p.pos] != '#' {
			return
		}
		p.nextLine()
		if p.pos >= p.end {
			return
		}
	}
}

// seqEntry reads a block sequence entry whose dash, at column seqCol, is at pos.
func (p *fastParser) seqEntry(seqCol int) *Value {
	p.pos++
	p.spaces()
	if p.eol() || p.src[p.pos] == '#' || p.seqEntryAt() {
		return p.fail() // an empty entry, or its node on the next lines, or a nested sequence on this line
	}
	return p.blockNode(seqCol)
}

// blockNode reads the node at pos, on a line of its own or after a sequence entry's dash: a block mapping when it
// starts with a key, else one scalar or flow collection. parentCol is the column of the enclosing collection.
func (p *fastParser) blockNode(parentCol int) *Value {
	if p.seqEntryAt() {
		if p.col() <= parentCol {
			return p.fail()
		}
		return p.blockSequence(p.col())
	}
	if p.keyAhead() {
		return p.blockMapping(p.col())
	}
	return p.inlineValue(parentCol)
}

// inlineValue reads a scalar or flow collection that ends on this line; the next line must belong to the
// enclosing collection (column parentCol) or one around it, so that no plain scalar continues there.
func (p *fastParser) inlineValue(parentCol int) *Value {
	v := p.flowNode(false)
	if p.bad {
		return nil
	}
	p.finishLine()
	if p.pos < p.end && p.col() > parentCol {
		return p.fail()
	}
	return v
}

// keyAhead reports whether pos starts an implicit key: a one-line plain or quoted scalar followed by ':' and a
// space or the end of the line. It does not move.
func (p *fastParser) keyAhead() bool {
	save, saveBad, saveNodes := p.pos, p.bad, p.nodes
	_, ok := p.key(false)
	p.pos, p.bad, p.nodes = save, saveBad, saveNodes
	return ok
}

// key reads an implicit key and its ':' (and, in a flow mapping, the ':' that may follow a quoted key directly).
func (p *fastParser) key(flow bool) (key string, ok bool) {
	start, plain := p.pos, false
	switch c := p.src[p.pos]; c {
	case '"', '\'':
		if key, ok = p.quoted(c); !ok {
			return "", false
		}
	default:
		if !p.plainStart() {
			return "", false
		}
		key, plain = p.plain(flow), true
		if p.bad || key == "<<" {
			return "", false
		}
	}
	if p.pos-start > maxFastKey {
		return "", false
	}
	p.spaces()
	if p.pos >= p.end || p.src[p.pos] != ':' || !p.blankzAt(p.pos+1) && (!flow || plain) {
		return "", false
	}
	p.pos++
	return key, true
}

// blockMapping reads a block mapping whose first key is at pos, at column mapCol.
func (p *fastParser) blockMapping(mapCol int) *Value {
	if p.depth++; p.depth > maxFastDepth {
		return p.fail()
	}
	defer func() { p.depth-- }()
	v := p.newValue(KindObject)
	kbase, vbase := len(p.a.kstack), len(p.a.vstack)
	for {
		k, ok := p.key(false)
		if !ok || hasKey(p.a.kstack[kbase:], k) {
			return p.fail()
		}
		p.spaces()
		var val *Value
		if p.eol() || p.src[p.pos] == '#' {
			// The value is on the next lines: a more indented node, or a sequence at the key's own column.
			p.finishLine()
			switch {
			case p.bad || p.pos >= p.end:
				return p.fail() // an empty value (null): left to the YAML parser
			case p.col() > mapCol:
				val = p.blockNode(mapCol)
			case p.col() == mapCol && p.seqEntryAt():
				val = p.blockSequence(mapCol)
			default:
				return p.fail()
			}
		} else {
			val = p.inlineValue(mapCol)
		}
		if p.bad {
			return nil
		}
		p.a.kstack = append(p.a.kstack, k)
		p.a.vstack = append(p.a.vstack, val)
		if p.pos >= p.end || p.col() < mapCol {
			p.members(v, kbase, vbase)
			return v
		}
		if p.col() > mapCol || p.seqEntryAt() {
			return p.fail()
		}
	}
}

// members moves the members read since kbase and vbase (keys) from the arena's stacks into v.
func (p *fastParser) members(v *Value, kbase, vbase int) {
	a := p.a
	if kbase >= 0 {
		v.Keys = a.strings(a.kstack[kbase:])
		a.kstack = a.kstack[:kbase]
	}
	v.Vals = a.values(a.vstack[vbase:])
	a.vstack = a.vstack[:vbase]
}

func hasKey(keys []string, k string) bool {
	for _, x := range keys {
		if x == k {
			return true
		}
	}
	return false
}

// blockSequence reads a block sequence whose first dash is at pos, at column seqCol.
func (p *fastParser) blockSequence(seqCol int) *Value {
	if p.depth++; p.depth > maxFastDepth {
		return p.fail()
	}
	defer func() { p.depth-- }()
	v := p.newValue(KindArray)
	vbase := len(p.a.vstack)
	for {
		item := p.seqEntry(seqCol)
		if p.bad {
			return nil
		}
		p.a.vstack = append(p.a.vstack, item)
		if p.pos >= p.end || p.col() < seqCol || !p.seqEntryAt() {
			// The caller decides about a line at seqCol that is not an entry (a key of an enclosing mapping).
			p.members(v, -1, vbase)
			return v
		}
		if p.col() > seqCol {
			return p.fail()
		}
	}
}

// flowNode reads a scalar or a flow collection that ends on this line; flow says whether it is inside a flow
// collection.
func (p *fastParser) flowNode(flow bool) *Value {
	if p.eol() {
		return p.fail()
	}
	switch c := p.src[p.pos]; c {
	case '[':
		return p.flowSequence()
	case '{':
		return p.flowMapping()
	case '"', '\'':
		s, ok := p.quoted(c)
		if !ok {
			return p.fail()
		}
		v := p.newValue(KindString)
		v.Str = s
		return v
	}
	if !p.plainStart() {
		return p.fail()
	}
	s := p.plain(flow)
	if p.bad || s == "<<" {
		return p.fail()
	}
	v := p.newValue(KindString)
	if !plainValue(v, s) {
		return p.fail()
	}
	return v
}

func (p *fastParser) flowSequence() *Value {
	if p.depth++; p.depth > maxFastDepth {
		return p.fail()
	}
	defer func() { p.depth-- }()
	v := p.newValue(KindArray)
	p.pos++
	p.spaces()
	if !p.eol() && p.src[p.pos] == ']' {
		p.pos++
		v.Vals = []*Value{} // as the tree builder leaves it (no allocation)
		return v
	}
	vbase := len(p.a.vstack)
	for {
		if p.eol() || p.src[p.pos] == ',' || p.src[p.pos] == ']' {
			return p.fail()
		}
		item := p.flowNode(true)
		if p.bad {
			return nil
		}
		p.a.vstack = append(p.a.vstack, item)
		if !p.flowNext(']') {
			if p.bad {
				return nil
			}
			p.members(v, -1, vbase)
			return v
		}
	}
}

func (p *fastParser) flowMapping() *Value {
	if p.depth++; p.depth > maxFastDepth {
		return p.fail()
	}
	defer func() { p.depth-- }()
	v := p.newValue(KindObject)
	p.pos++
	p.spaces()
	if !p.eol() && p.src[p.pos] == '}' {
		p.pos++
		v.Keys, v.Vals = []string{}, []*Value{} // as the tree builder leaves them (no allocation)
		return v
	}
	kbase, vbase := len(p.a.kstack), len(p.a.vstack)
	for {
		if p.eol() {
			return p.fail()
		}
		k, ok := p.key(true)
		if !ok || hasKey(p.a.kstack[kbase:], k) {
			return p.fail()
		}
		p.spaces()
		if p.eol() || p.src[p.pos] == ',' || p.src[p.pos] == '}' {
			return p.fail() // an empty value
		}
		val := p.flowNode(true)
		if p.bad {
			return nil
		}
		p.a.kstack = append(p.a.kstack, k)
		p.a.vstack = append(p.a.vstack, val)
		if !p.flowNext('}') {
			if p.bad {
				return nil
			}
			p.members(v, kbase, vbase)
			return v
		}
	}
}

// flowNext reads what follows a flow collection's entry: ',' and the next entry (true) or the closing bracket
// (false). Anything else, or a trailing ',', fails.
func (p *fastParser) flowNext(closing byte) bool {
	p.spaces()
	switch {
	case p.eol():
	case p.src[p.pos] == ',':
		p.pos++
		p.spaces()
		if !p.eol() && p.src[p.pos] != closing {
			return true
		}
	case p.src[p.pos] == closing:
		p.pos++
		return false
	}
	p.bad = true
	return false
}

// plainStart reports whether pos can start a plain scalar ReadItem reads: not an indicator, and '-' only before
// a letter, digit or '.'.
func (p *fastParser) plainStart() bool {
	switch c := p.src[p.pos]; c {
	case ' ', '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`':
		return false
	case '-':
		if p.pos+1 >= p.end {
			return false
		}
		n := p.src[p.pos+1]
		return n >= '0' && n <= '9' || n >= 'a' && n <= 'z' || n >= 'A' && n <= 'Z' || n == '.'
	}
	return !p.eol()
}

// plain reads a one-line plain scalar from pos, as YAML's scanner does: it ends before ": " (or ':' at the end of
// the line), before a space and '#', at the end of the line, and inside a flow collection before ",?[]{}".
// Trailing spaces are not part of it. A line that continues it, and ':' inside a flow collection's scalar, fail.
func (p *fastParser) plain(flow bool) string {
	start, end := p.pos, p.pos
	for !p.eol() {
		c := p.src[p.pos]
		if c == ' ' {
			j := p.pos
			for j < p.end && p.src[j] == ' ' {
				j++
			}
			if p.eolAt(j) || p.src[j] == '#' {
				break
			}
			p.pos = j
			continue
		}
		if c == ':' {
			if p.blankzAt(p.pos + 1) {
				break
			}
			if flow {
				p.bad = true
				return ""
			}
		}
		if flow && (c == ',' || c == '?' || c == '[' || c == ']' || c == '{' || c == '}') {
			break
		}
		p.pos++
		end = p.pos
	}
	p.pos = end
	return p.src[start:end]
}

// quoted reads a single- or double-quoted scalar that ends on this line.
func (p *fastParser) quoted(q byte) (string, bool) {
	i := p.pos + 1
	start := i
	// The common case: no escapes.
	for ; i < p.end; i++ {
		c := p.src[i]
		if c == q {
			if q == '\'' && i+1 < p.end && p.src[i+1] == '\'' {
				break // an escaped quote
			}
			p.pos = i + 1
			return p.src[start:i], true
		}
		if c == '\\' && q == '"' || c == '\n' || c == '\r' {
			break
		}
	}
	buf := []byte(p.src[start:i])
	for i < p.end {
		c := p.src[i]
		switch {
		case c == '\n' || c == '\r':
			return "", false // continues on the next line
		case c == q && q == '\'':
			if i+1 < p.end && p.src[i+1] == '\'' {
				buf = append(buf, '\'')
				i += 2
				continue
			}
			p.pos = i + 1
			return string(buf), true
		case c == q:
			p.pos = i + 1
			return string(buf), true
		case c == '\\' && q == '"':
			var ok bool
			if buf, i, ok = p.escape(buf, i); !ok {
				return "", false
			}
		default:
			buf = append(buf, c)
			i++
		}
	}
	return "", false
}

// yamlEscape is what YAML makes of the one-character escape \c of a double-quoted scalar ("" when \c is not one).
// A switch, not a table indexed by c: a [256]string would be 4 KiB of every binary's data (the launcher's too).
func yamlEscape(c byte) string {
	switch c {
	case '0':
		return "\x00"
	case 'a':
		return "\a"
	case 'b':
		return "\b"
	case 't':
		return "\t"
	case 'n':
		return "\n"
	case 'v':
		return "\v"
	case 'f':
		return "\f"
	case 'r':
		return "\r"
	case 'e':
		return "\x1b"
	case ' ':
		return " "
	case '"':
		return "\""
	case '\'':
		return "'"
	case '\\':
		return "\\"
	case 'N':
		return "\u0085"
	case '_':
		return "\u00a0"
	case 'L':
		return "\u2028"
	case 'P':
		return "\u2029"
	}
	return ""
}

// escape decodes the double-quoted escape at i as YAML does; an escaped line break fails.
func (p *fastParser) escape(buf []byte, i int) ([]byte, int, bool) {
	if i+1 >= p.end {
		return nil, 0, false
	}
	c := p.src[i+1]
	if e := yamlEscape(c); e != "" {
		return append(buf, e...), i + 2, true
	}
	n := 0
	switch c {
	case 'x':
		n = 2
	case 'u':
		n = 4
	case 'U':
		n = 8
	default:
		return nil, 0, false
	}
	i += 2
	if i+n > p.end {
		return nil, 0, false
	}
	r := 0
	for k := range n {
		c := p.src[i+k]
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 + int(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 + int(c-'a') + 10
		case c >= 'A' && c <= 'F':
			r = r<<4 + int(c-'A') + 10
		default:
			return nil, 0, false
		}
	}
	if r >= 0xd800 && r <= 0xdfff || r > 0x10ffff {
		return nil, 0, false
	}
	return utf8.AppendRune(buf, rune(r)), i + n, true
}

// plainValue resolves a plain scalar into v as the YAML parser and the tree builder do. Text that cannot be anything
// but a string (its first character is not one YAML's resolver looks at) and canonical decimal integers are resolved
// here; anything else goes through the YAML library's own resolution (scalarValue). ok is false when the tree builder
// would report a problem.
func plainValue(v *Value, s string) bool {
	switch c := s[0]; {
	case resolvesToString(c):
		v.Kind, v.Str = KindString, s
		return true
	case c >= '0' && c <= '9' || c == '-':
		if len(s) <= 18 {
			// The canonical spelling is compared on the stack: no string per number.
			var canonical [20]byte
			if n, err := strconv.ParseInt(s, 10, 64); err == nil && string(strconv.AppendInt(canonical[:0], n, 10)) == s {
				v.Kind, v.Float, v.Num = KindNumber, float64(n), s
				return true
			}
		}
	}
	n := &yaml.Node{Kind: yaml.ScalarNode, Value: s}
	n.Tag = n.ShortTag()
	sv, problem := scalarValue(n)
	line := v.Line
	*v = *sv
	v.Line = line
	return problem == ""
}

// resolvesToString reports whether YAML's resolver leaves a plain scalar starting with c a string (its table of
// first characters: signs, digits, '.', '~' and the initials of null, true, false and their YAML 1.1 forms).
func resolvesToString(c byte) bool {
	switch {
	case c >= '0' && c <= '9':
		return false
	}
	switch c {
	case '+', '-', '.', '~', 'y', 'Y', 'n', 'N', 't', 'T', 'f', 'F', 'o', 'O':
		return false
	}
	return true
}
