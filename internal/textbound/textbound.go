// Package textbound cuts text to a bound in bytes, the one way the project cuts a string: for a status field, a
// condition or an error message, a log line or a table cell.
//
// Every function returns valid UTF-8: each byte that is not part of a valid UTF-8 sequence becomes U+FFFD, before
// the text is measured, so the result never exceeds the bound. A cut text is marked with Mark, counted inside the
// bound; a cut never splits a rune. A bound smaller than Mark cuts without a mark. Text that is already valid and
// within the bound is returned as it is, without an allocation. Printable (printable.go) is the one way the
// runner's text is shown to people: control characters and bidi overrides escaped, in status texts, conditions,
// events and terminal tables (PrintableHead and PrintableTail also cut it). The package does no I/O.
package textbound

import (
	"strings"
	"unicode/utf8"
)

// Mark marks where a text was cut.
const Mark = "…"

// replacement is what each invalid byte becomes.
const replacement = "\uFFFD"

// Valid returns s with each byte that is not part of a valid UTF-8 sequence replaced by U+FFFD (unlike
// strings.ToValidUTF8, which replaces a run of them by one).
func Valid(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 2*invalidBytes(s))
	writeValid(&b, s)
	return b.String()
}

// Head returns the start of s, valid and at most maxBytes bytes long, ending with Mark when cut.
func Head(s string, maxBytes int) string {
	if maxBytes <= 0 {
		return ""
	}
	if len(s) <= maxBytes && utf8.ValidString(s) {
		return s
	}
	mark, keep := markFor(maxBytes)
	if len(s) > maxBytes {
		if cut, ok := validHead(s, keep); ok {
			return s[:cut] + mark
		}
	}
	// n counts the bytes of Valid(s[:i]); the runes that end within keep are kept should s need a cut.
	n, cut := 0, -1
	for i := 0; i < len(s); {
		w, size := 1, 1
		if s[i] >= utf8.RuneSelf {
			w, size = widthAt(s, i)
		}
		if cut < 0 && n+w > keep {
			cut = i
		}
		if n += w; n > maxBytes {
			var b strings.Builder
			b.Grow(keep + len(mark))
			writeValid(&b, s[:cut])
			b.WriteString(mark)
			return b.String()
		}
		i += size
	}
	return Valid(s) // invalid bytes, and it fits once they are replaced
}

// HeadBytes is Head for a byte slice; it converts at most maxBytes+1 bytes of b, however long b is.
func HeadBytes(b []byte, maxBytes int) string {
	if maxBytes <= 0 {
		return ""
	}
	// Each byte of b takes at least one byte of the result, so the bytes past maxBytes+1 cannot change it.
	if len(b) > maxBytes+1 {
		b = b[:maxBytes+1]
	}
	return Head(string(b), maxBytes)
}

// Tail returns the end of s, valid and at most maxBytes bytes long, starting with Mark when cut.
func Tail(s string, maxBytes int) string {
	if maxBytes <= 0 {
		return ""
	}
	if len(s) <= maxBytes && utf8.ValidString(s) {
		return s
	}
	mark, keep := markFor(maxBytes)
	if len(s) > maxBytes {
		if cut, ok := validTail(s, keep); ok {
			return mark + s[cut:]
		}
	}
	// n counts the bytes of Valid(s[i:]); the runes that start within keep of the end are kept should s need a cut.
	n, cut := 0, -1
	for i := len(s); i > 0; {
		w, size := 1, 1
		if s[i-1] >= utf8.RuneSelf {
			w, size = widthBefore(s, i)
		}
		if cut < 0 && n+w > keep {
			cut = i
		}
		if n += w; n > maxBytes {
			var b strings.Builder
			b.Grow(keep + len(mark))
			b.WriteString(mark)
			writeValid(&b, s[cut:])
			return b.String()
		}
		i -= size
	}
	return Valid(s)
}

// markFor returns the mark a text cut to maxBytes ends or starts with, and how many bytes of text it leaves.
func markFor(maxBytes int) (mark string, keep int) {
	if maxBytes < len(Mark) {
		return "", maxBytes
	}
	return Mark, maxBytes - len(Mark)
}

// validHead is the fast path of Head for a text longer than the bound: when the runes that fit in keep bytes
// are valid, and so is the one cut, s[:cut] is the text to keep.
func validHead(s string, keep int) (cut int, ok bool) {
	cut = keep // keep < len(s)
	for cut > 0 && keep-cut < utf8.UTFMax-1 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if !utf8.RuneStart(s[cut]) || !utf8.ValidString(s[:cut]) {
		return 0, false
	}
	if cut < keep { // the bytes from cut to keep must be the start of one valid rune, which is cut
		if r, size := utf8.DecodeRuneInString(s[cut:]); r == utf8.RuneError && size == 1 || cut+size <= keep {
			return 0, false
		}
	}
	return cut, true
}

// validTail is validHead for Tail: when the runes in the last keep bytes are valid, and so is the one cut,
// s[cut:] is the text to keep.
func validTail(s string, keep int) (cut int, ok bool) {
	start := len(s) - keep // > 0
	cut = start
	for cut < len(s) && cut-start < utf8.UTFMax-1 && !utf8.RuneStart(s[cut]) {
		cut++
	}
	if cut < len(s) && !utf8.RuneStart(s[cut]) || !utf8.ValidString(s[cut:]) {
		return 0, false
	}
	if cut > start { // the bytes from start to cut must be the end of one valid rune, which is cut
		if r, size := utf8.DecodeLastRuneInString(s[:cut]); r == utf8.RuneError && size == 1 || cut-size >= start {
			return 0, false
		}
	}
	return cut, true
}

// widthAt returns how many bytes the rune at s[i:] takes in valid text, and how many bytes of s it spans.
func widthAt(s string, i int) (width, size int) {
	r, size := utf8.DecodeRuneInString(s[i:])
	if r == utf8.RuneError && size == 1 {
		return len(replacement), 1
	}
	return size, size
}

// widthBefore is widthAt for the rune that ends at s[:i].
func widthBefore(s string, i int) (width, size int) {
	r, size := utf8.DecodeLastRuneInString(s[:i])
	if r == utf8.RuneError && size == 1 {
		return len(replacement), 1
	}
	return size, size
}

// writeValid writes s to b with each invalid byte replaced by U+FFFD.
func writeValid(b *strings.Builder, s string) {
	start := 0 // s[start:i] is valid and not written yet
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteString(s[start:i])
			b.WriteString(replacement)
			start = i + 1
		}
		i += size
	}
	b.WriteString(s[start:])
}

// invalidBytes counts the bytes of s that are not part of a valid UTF-8 sequence.
func invalidBytes(s string) int {
	n := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			n++
		}
		i += size
	}
	return n
}
