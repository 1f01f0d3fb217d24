package jsonlresult

import (
	"strings"
	"unicode/utf8"
)

// ExcerptChars is the length, in characters, of the excerpts in LineError.
const ExcerptChars = 120

// excerptMark ends an excerpt that was cut.
const excerptMark = "…"

// Excerpt returns at most n characters of s cut on a UTF-8 boundary, marked with "…" when cut (the mark counts as
// one of the n characters). Bytes that are not valid UTF-8 become U+FFFD, so the result is always valid UTF-8.
func Excerpt(s string, n int) string {
	if n <= 0 {
		return ""
	}
	// Fast path: short valid text is returned as it is.
	if len(s) <= n && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	chars := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if chars == n-1 && i+size < len(s) {
			// One more character fits only if it is the last one.
			b.WriteString(excerptMark)
			return b.String()
		}
		if r == utf8.RuneError && size == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+size])
		}
		chars++
		i += size
	}
	return b.String()
}

// excerptBytes is Excerpt for a byte slice; it converts only the bytes it needs.
func excerptBytes(b []byte, n int) string {
	// n characters take at most 4n bytes; one more byte tells whether the text was cut.
	if limit := 4*n + 1; len(b) > limit {
		b = b[:limit]
	}
	return Excerpt(string(b), n)
}
