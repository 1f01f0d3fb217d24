// Package jsonenc holds append-style JSON encoding helpers for hot paths that must produce exactly what
// encoding/json produces.
package jsonenc

import (
	"unicode/utf16"
	"unicode/utf8"
)

const lowerHex = "0123456789abcdef"

// AppendString appends s quoted as encoding/json does with HTML escaping: '<', '>' and '&' as \u003c, \u003e and
// \u0026, U+2028 and U+2029 escaped, invalid UTF-8 replaced by \ufffd.
func AppendString(b []byte, s string) []byte { return appendString(b, s, true, false) }

// AppendStringNoHTML appends s quoted as an encoding/json Encoder with SetEscapeHTML(false) does: as AppendString,
// but '<', '>' and '&' as they are.
func AppendStringNoHTML(b []byte, s string) []byte { return appendString(b, s, false, false) }

// AppendStringJS appends s quoted as JavaScript's JSON.stringify quotes a string read from these bytes: as
// AppendStringNoHTML, but U+2028 and U+2029 as they are and invalid UTF-8 as U+FFFD itself (what a JavaScript string
// decoded from such bytes holds), not escaped.
func AppendStringJS(b []byte, s string) []byte { return appendString(b, s, false, true) }

// appendString is AppendString, with '<', '>' and '&' escaped only when html is set, and JavaScript's spelling of
// U+2028, U+2029 and invalid UTF-8 when js is set.
func appendString(b []byte, s string, html, js bool) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		// Eight bytes at a time while none needs attention.
		if i+8 <= len(s) && plain8(s[i:i+8], html) {
			i += 8
			continue
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && (!html || (c != '<' && c != '>' && c != '&')) {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', lowerHex[c>>4], lowerHex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			if js {
				b = append(b, "\uFFFD"...)
			} else {
				b = append(b, `\ufffd`...)
			}
			i += size
			start = i
			continue
		}
		if !js && (r == '\u2028' || r == '\u2029') {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', lowerHex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// SWAR constants: a byte's value in every byte of a word.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// plain8 reports whether the eight bytes of w (len 8) are all ASCII that appendString copies as they are: none is
// a control character, '"', '\\', outside ASCII or, with html, '<', '>' or '&'.
func plain8(w string, html bool) bool {
	x := uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
		uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
	if x&highs != 0 {
		return false
	}
	// With every byte below 0x80, (v - ones) & ^v & highs is non-zero exactly when some byte of v is zero.
	zero := func(v uint64) uint64 { return (v - ones) & ^v & highs }
	// A byte below 0x20: (x - 0x20) borrows into its high bit.
	below := (x - 0x20*ones) & ^x & highs
	special := below | zero(x^('"'*ones)) | zero(x^('\\'*ones))
	if html {
		special |= zero(x^('<'*ones)) | zero(x^('>'*ones)) | zero(x^('&'*ones))
	}
	return special == 0
}

// StringLen returns len(AppendString(nil, s)) without encoding: the bytes s takes quoted as encoding/json writes
// it. It is how a parser counts the bytes a value would produce before it produces them.
func StringLen(s string) int {
	n := 2 + len(s)
	for i := 0; i < len(s); {
		if i+8 <= len(s) && plain8(s[i:i+8], true) {
			i += 8
			continue
		}
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t':
				n++
			case c < 0x20 || c == '<' || c == '>' || c == '&':
				n += 5
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			n += 5
		case r == '\u2028' || r == '\u2029':
			n += 3
		}
		i += size
	}
	return n
}

// UTF16Len is JavaScript's s.length: the UTF-16 code units of s (a byte that is not UTF-8 counts one, as the
// replacement character it decodes to).
func UTF16Len(s string) int {
	n := 0
	for _, r := range s {
		if w := utf16.RuneLen(r); w > 0 {
			n += w
		} else {
			n++
		}
	}
	return n
}
