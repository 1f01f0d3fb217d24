package textbound

import (
	"strings"
	"unicode/utf8"
)

// Printable returns s as text that shows on a terminal as the bytes it holds, and does nothing else there: Valid,
// and with every character that would act on the terminal or reorder what follows written as an escape, so that
// a runner's answer of "ESC[2J ESC[32mPASS" shows as `\x1b[2J\x1b[32mPASS` in a status field, an event, a table
// or `kubectl describe`. The escaped characters are the C0 controls but tab (newline included: a line break in a
// table cell or a condition message forges a row: `\n`, `\r`), DEL (`\x1b`, `\x7f`), the C1 controls (U+0080-U+009F,
// `\u009b`), the line and paragraph separators (U+2028, U+2029) and the bidirectional formatting characters that
// reorder text (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069; `\u202e`). A backslash stays as it is.
//
// It is for presentation only: the runner's records and answers are stored as written (lossless), and the
// encoders of JSON and YAML output escape by themselves; text written into status fields, conditions, events and
// terminal tables goes through Printable (or PrintableHead, PrintableTail, which also cut it).
func Printable(s string) string {
	if printable(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		piece, size := escapeAt(s, i)
		b.WriteString(piece)
		i += size
	}
	return b.String()
}

// PrintableHead is Head(Printable(s), maxBytes) that never cuts inside an escape. It reads at most maxBytes+1
// runes of s, however long s is.
func PrintableHead(s string, maxBytes int) string {
	if maxBytes <= 0 {
		return ""
	}
	if len(s) <= maxBytes && printable(s) {
		return s
	}
	mark, keep := markFor(maxBytes)
	var b strings.Builder
	cut := -1 // the length of b when the pieces written fit keep, once a piece did not
	for i := 0; i < len(s); {
		piece, size := escapeAt(s, i)
		if cut < 0 && b.Len()+len(piece) > keep {
			cut = b.Len()
		}
		if b.Len()+len(piece) > maxBytes {
			out := b.String()[:cut]
			return out + mark
		}
		b.WriteString(piece)
		i += size
	}
	return b.String()
}

// PrintableTail is Tail(Printable(s), maxBytes) that never cuts inside an escape. It reads at most maxBytes+1
// runes from the end of s.
func PrintableTail(s string, maxBytes int) string {
	if maxBytes <= 0 {
		return ""
	}
	if len(s) <= maxBytes && printable(s) {
		return s
	}
	mark, keep := markFor(maxBytes)
	// The pieces, from the end; n counts their bytes.
	var pieces []string
	n, cut := 0, -1 // cut: how many pieces fit keep, once one did not
	for i := len(s); i > 0; {
		start := i - 1
		for start > 0 && i-start < utf8.UTFMax && !utf8.RuneStart(s[start]) {
			start--
		}
		piece, size := escapeAt(s, start)
		if start+size != i { // s[start:i] is not one rune: its last byte alone is invalid
			start = i - 1
			piece, _ = escapeAt(s, start)
		}
		if cut < 0 && n+len(piece) > keep {
			cut = len(pieces)
		}
		if n += len(piece); n > maxBytes {
			var b strings.Builder
			b.WriteString(mark)
			for k := cut - 1; k >= 0; k-- {
				b.WriteString(pieces[k])
			}
			return b.String()
		}
		pieces = append(pieces, piece)
		i = start
	}
	var b strings.Builder
	b.Grow(n)
	for k := len(pieces) - 1; k >= 0; k-- {
		b.WriteString(pieces[k])
	}
	return b.String()
}

// printable reports whether s is valid UTF-8 that Printable leaves as it is.
func printable(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\t' || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || escaped(r) {
			return false
		}
		i += size
	}
	return true
}

// escaped reports whether Printable escapes the character r (at or above utf8.RuneSelf).
func escaped(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f, r == 0x2028, r == 0x2029:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

const hexDigits = "0123456789abcdef"

// escapeAt returns what Printable writes for the rune at s[i:], and how many bytes of s it spans.
func escapeAt(s string, i int) (piece string, size int) {
	c := s[i]
	if c < utf8.RuneSelf {
		switch {
		case c == '\n':
			return `\n`, 1
		case c == '\r':
			return `\r`, 1
		case c < 0x20 && c != '\t' || c == 0x7f:
			return `\x` + string([]byte{hexDigits[c>>4], hexDigits[c&0xf]}), 1
		}
		return s[i : i+1], 1
	}
	r, size := utf8.DecodeRuneInString(s[i:])
	switch {
	case r == utf8.RuneError && size == 1:
		return replacement, 1
	case escaped(r):
		return `\u` + string([]byte{hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf]}), size
	}
	return s[i : i+size], size
}
