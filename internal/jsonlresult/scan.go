package jsonlresult

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// maxNestingDepth bounds how deeply arrays and objects may nest, as encoding/json does, so that a hostile line of
// brackets cannot exhaust the stack.
const maxNestingDepth = 10000

// syntaxError is a JSON syntax problem at a byte offset of the scanned text.
type syntaxError struct {
	off int
	msg string
}

func (e *syntaxError) Error() string {
	return fmt.Sprintf("invalid JSON: %s at column %d", e.msg, e.off+1)
}

// valueKind names the kind of a JSON value by its first byte.
type valueKind uint8

const (
	kindInvalid valueKind = iota
	kindString
	kindNumber
	kindObject
	kindArray
	kindBool
	kindNull
)

func (k valueKind) String() string {
	switch k {
	case kindString:
		return "a string"
	case kindNumber:
		return "a number"
	case kindObject:
		return "an object"
	case kindArray:
		return "an array"
	case kindBool:
		return "a boolean"
	case kindNull:
		return "null"
	}
	return "not a JSON value"
}

func kindOf(c byte) valueKind {
	switch {
	case c == '"':
		return kindString
	case c == '{':
		return kindObject
	case c == '[':
		return kindArray
	case c == 't' || c == 'f':
		return kindBool
	case c == 'n':
		return kindNull
	case c == '-' || (c >= '0' && c <= '9'):
		return kindNumber
	}
	return kindInvalid
}

// plainStringByte is true for the bytes that may appear in a JSON string without ending it or starting an escape.
var plainStringByte = func() (t [256]bool) {
	for i := range t {
		t[i] = i >= 0x20 && i != '"' && i != '\\'
	}
	return t
}()

// scanner is a single-pass validating JSON scanner over text that is already valid UTF-8. Its methods return false
// once a syntax error is recorded in err; callers stop at the first false.
type scanner struct {
	buf     []byte
	pos     int
	depth   int
	err     *syntaxError
	scratch []byte // reused buffer for unescaping strings
	strs    stringSlab
}

func (s *scanner) reset(buf []byte) {
	s.buf = buf
	s.pos = 0
	s.depth = 0
	s.err = nil
}

func (s *scanner) fail(msg string) bool {
	if s.err == nil {
		s.err = &syntaxError{off: s.pos, msg: msg}
	}
	return false
}

func (s *scanner) failUnexpected() bool {
	if s.pos >= len(s.buf) {
		return s.fail("unexpected end of input")
	}
	c := s.buf[s.pos]
	if c < 0x20 || c >= 0x7f {
		return s.fail(fmt.Sprintf("unexpected character %U", rune(c)))
	}
	return s.fail(fmt.Sprintf("unexpected character %q", rune(c)))
}

// ws skips JSON whitespace.
func (s *scanner) ws() {
	// Fast path: compact JSON has no whitespace between tokens.
	if s.pos < len(s.buf) && s.buf[s.pos] > ' ' {
		return
	}
	for s.pos < len(s.buf) {
		switch s.buf[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// peek returns the kind of the value at the current position (after whitespace).
func (s *scanner) peek() valueKind {
	s.ws()
	if s.pos >= len(s.buf) {
		return kindInvalid
	}
	return kindOf(s.buf[s.pos])
}

// atEnd reports whether only whitespace is left.
func (s *scanner) atEnd() bool {
	s.ws()
	return s.pos == len(s.buf)
}

// enter consumes the opening bracket of an array or object.
func (s *scanner) enter() bool {
	s.depth++
	if s.depth > maxNestingDepth {
		return s.fail(fmt.Sprintf("nesting deeper than %d levels", maxNestingDepth))
	}
	s.pos++
	return true
}

// next advances through the members of an object or the elements of an array. first must be true on the first
// call after enter. It returns true when another member or element follows (positioned at it) and false at the
// closing bracket (consumed) or on a syntax error.
func (s *scanner) next(first *bool, closing byte) bool {
	if s.err != nil {
		return false
	}
	s.ws()
	if s.pos >= len(s.buf) {
		return s.failUnexpected()
	}
	c := s.buf[s.pos]
	if *first {
		*first = false
		if c == closing {
			s.pos++
			s.depth--
			return false
		}
		return true
	}
	switch c {
	case ',':
		s.pos++
		s.ws()
		return true
	case closing:
		s.pos++
		s.depth--
		return false
	}
	if closing == '}' {
		return s.fail("expected ',' or '}' after an object member")
	}
	return s.fail("expected ',' or ']' after an array element")
}

// key reads an object member's name and the colon after it. The returned bytes are only valid until the next
// string is scanned.
func (s *scanner) key() ([]byte, bool) {
	if s.pos >= len(s.buf) || s.buf[s.pos] != '"' {
		if s.pos < len(s.buf) {
			return nil, s.fail("expected a string object key")
		}
		return nil, s.failUnexpected()
	}
	start, end, escaped, ok := s.str()
	if !ok {
		return nil, false
	}
	s.ws()
	if s.pos >= len(s.buf) || s.buf[s.pos] != ':' {
		return nil, s.fail("expected ':' after an object key")
	}
	s.pos++
	s.ws()
	if escaped {
		s.scratch = unescape(s.scratch[:0], s.buf[start:end])
		return s.scratch, true
	}
	return s.buf[start:end], true
}

// str scans the string at the current position (which must be '"') and returns the span of its contents.
func (s *scanner) str() (start, end int, escaped, ok bool) {
	buf := s.buf
	i := s.pos + 1
	start = i
	for {
		i = skipPlain(buf, i)
		if i >= len(buf) {
			s.pos = i
			return 0, 0, false, s.fail("unterminated string")
		}
		switch c := buf[i]; c {
		case '"':
			s.pos = i + 1
			return start, i, escaped, true
		case '\\':
			escaped = true
			if i+1 >= len(buf) {
				s.pos = i + 1
				return 0, 0, false, s.fail("unterminated string")
			}
			switch buf[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				for j := i + 2; j < i+6; j++ {
					if j >= len(buf) || !isHex(buf[j]) {
						s.pos = min(j, len(buf))
						return 0, 0, false, s.fail("invalid \\u escape in string")
					}
				}
				i += 6
			default:
				s.pos = i + 1
				return 0, 0, false, s.fail("invalid escape in string")
			}
		default:
			s.pos = i
			return 0, 0, false, s.fail(fmt.Sprintf("control character %U in string", rune(c)))
		}
	}
}

// stringValue scans a string and returns it decoded.
func (s *scanner) stringValue() (string, bool) {
	start, end, escaped, ok := s.str()
	if !ok {
		return "", false
	}
	if !escaped {
		return s.strs.string(s.buf[start:end]), true
	}
	s.scratch = unescape(s.scratch[:0], s.buf[start:end])
	return s.strs.string(s.scratch), true
}

// stringBytes scans a string and returns its decoded bytes, valid only until the next string is scanned.
func (s *scanner) stringBytes() ([]byte, bool) {
	start, end, escaped, ok := s.str()
	if !ok {
		return nil, false
	}
	if !escaped {
		return s.buf[start:end], true
	}
	s.scratch = unescape(s.scratch[:0], s.buf[start:end])
	return s.scratch, true
}

// SWAR constants: a byte value repeated in every byte of a word.
const (
	swarOnes  = 0x0101010101010101
	swarHighs = 0x8080808080808080
)

// skipPlain returns the position of the first byte at or after i that is not a plainStringByte (or len(buf)). It
// tests 8 bytes at a time: the lowest byte flagged by the zero-byte trick is always a true match, which is all
// that is needed to find the first one.
func skipPlain(buf []byte, i int) int {
	for i+8 <= len(buf) {
		w := binary.LittleEndian.Uint64(buf[i:])
		quote := w ^ (swarOnes * '"')
		backslash := w ^ (swarOnes * '\\')
		m := (quote - swarOnes) & ^quote
		m |= (backslash - swarOnes) & ^backslash
		m |= (w - swarOnes*0x20) & ^w
		if m &= swarHighs; m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
		i += 8
	}
	for i < len(buf) && plainStringByte[buf[i]] {
		i++
	}
	return i
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func hexVal(c byte) rune {
	switch {
	case c >= '0' && c <= '9':
		return rune(c - '0')
	case c >= 'a' && c <= 'f':
		return rune(c - 'a' + 10)
	default:
		return rune(c - 'A' + 10)
	}
}

func hex4(b []byte) rune {
	return hexVal(b[0])<<12 | hexVal(b[1])<<8 | hexVal(b[2])<<4 | hexVal(b[3])
}

// unescape appends the decoded form of validated string contents to dst. Unpaired surrogates become U+FFFD, as
// encoding/json does.
func unescape(dst, src []byte) []byte {
	for i := 0; i < len(src); {
		c := src[i]
		if c != '\\' {
			j := i + 1
			for j < len(src) && src[j] != '\\' {
				j++
			}
			dst = append(dst, src[i:j]...)
			i = j
			continue
		}
		switch src[i+1] {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r := hex4(src[i+2 : i+6])
			i += 6
			if utf16.IsSurrogate(r) {
				r2 := utf8.RuneError
				if i+6 <= len(src) && src[i] == '\\' && src[i+1] == 'u' {
					r2 = utf16.DecodeRune(r, hex4(src[i+2:i+6]))
				}
				if r2 != utf8.RuneError {
					i += 6
					r = r2
				} else {
					r = utf8.RuneError
				}
			}
			dst = utf8.AppendRune(dst, r)
			continue
		default: // '"', '\\', '/'
			dst = append(dst, src[i+1])
		}
		i += 2
	}
	return dst
}

// number scans a number.
func (s *scanner) number() bool {
	buf := s.buf
	i := s.pos
	if i < len(buf) && buf[i] == '-' {
		i++
	}
	switch {
	case i < len(buf) && buf[i] == '0':
		i++
	case i < len(buf) && isDigit(buf[i]):
		i = digits(buf, i)
	default:
		s.pos = i
		return s.fail("invalid number")
	}
	if i < len(buf) && buf[i] == '.' {
		i++
		if i >= len(buf) || !isDigit(buf[i]) {
			s.pos = i
			return s.fail("invalid number: expected a digit after the decimal point")
		}
		i = digits(buf, i)
	}
	if i < len(buf) && (buf[i] == 'e' || buf[i] == 'E') {
		i++
		if i < len(buf) && (buf[i] == '+' || buf[i] == '-') {
			i++
		}
		if i >= len(buf) || !isDigit(buf[i]) {
			s.pos = i
			return s.fail("invalid number: expected a digit in the exponent")
		}
		i = digits(buf, i)
	}
	s.pos = i
	return true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// digits returns the position after the run of digits starting at i.
func digits(buf []byte, i int) int {
	for i < len(buf) && isDigit(buf[i]) {
		i++
	}
	return i
}

// numberValue scans a number and returns it as a float64; ok is false on a syntax error, finite is false when the
// number is out of the float64 range.
func (s *scanner) numberValue() (v float64, finite, ok bool) {
	start := s.pos
	if !s.number() {
		return 0, false, false
	}
	v, err := strconv.ParseFloat(string(s.buf[start:s.pos]), 64)
	return v, err == nil, true
}

func (s *scanner) literal(lit string) bool {
	if len(s.buf)-s.pos >= len(lit) && string(s.buf[s.pos:s.pos+len(lit)]) == lit {
		s.pos += len(lit)
		return true
	}
	// Point at the first byte that differs.
	for i := 0; i < len(lit) && s.pos < len(s.buf) && s.buf[s.pos] == lit[i]; i++ {
		s.pos++
	}
	return s.failUnexpected()
}

// skip validates and skips the value at the current position (after whitespace).
func (s *scanner) skip() bool {
	s.ws()
	if s.pos >= len(s.buf) {
		return s.failUnexpected()
	}
	switch s.buf[s.pos] {
	case '"':
		_, _, _, ok := s.str()
		return ok
	case '{':
		if !s.enter() {
			return false
		}
		for first := true; s.next(&first, '}'); {
			if _, ok := s.key(); !ok {
				return false
			}
			if !s.skip() {
				return false
			}
		}
		return s.err == nil
	case '[':
		if !s.enter() {
			return false
		}
		for first := true; s.next(&first, ']'); {
			if !s.skip() {
				return false
			}
		}
		return s.err == nil
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.literal("null")
	}
	c := s.buf[s.pos]
	if c == '-' || (c >= '0' && c <= '9') {
		return s.number()
	}
	return s.failUnexpected()
}

// raw validates and skips the value at the current position and returns it as written. The slice's capacity ends
// at its length so that appending to it never overwrites the text after it.
func (s *scanner) raw() ([]byte, bool) {
	s.ws()
	start := s.pos
	if !s.skip() {
		return nil, false
	}
	return s.buf[start:s.pos:s.pos], true
}
