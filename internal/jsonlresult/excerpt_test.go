package jsonlresult

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestExcerpt(t *testing.T) {
	tests := []struct {
		name string
		s    string
		n    int
		want string
	}{
		{name: "short", s: "abc", n: 5, want: "abc"},
		{name: "exactly n", s: "abcde", n: 5, want: "abcde"},
		{name: "cut with a mark", s: "abcdef", n: 5, want: "abcd…"},
		{name: "multibyte exactly n", s: "ééééé", n: 5, want: "ééééé"},
		{name: "multibyte cut on a character boundary", s: "éééééé", n: 5, want: "éééé…"},
		{name: "emoji", s: "😀😀😀", n: 2, want: "😀…"},
		{name: "invalid UTF-8 becomes U+FFFD", s: "a\xFFb", n: 5, want: "a\uFFFDb"},
		{name: "invalid UTF-8 when cut", s: "\xFF\xFE\xFD\xFC", n: 3, want: "\uFFFD\uFFFD…"},
		{name: "n is 1", s: "ab", n: 1, want: "…"},
		{name: "n is 1, one character", s: "é", n: 1, want: "é"},
		{name: "n is 0", s: "ab", n: 0, want: ""},
		{name: "empty", s: "", n: 3, want: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Excerpt(tc.s, tc.n)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Excerpt(%q, %d) mismatch (-want +got):\n%s", tc.s, tc.n, diff)
			}
			if diff := cmp.Diff(tc.want, excerptBytes([]byte(tc.s), tc.n)); diff != "" {
				t.Errorf("excerptBytes mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestExcerptBytesLongInput(t *testing.T) {
	s := strings.Repeat("é", 1000) + "\xFF"
	got := excerptBytes([]byte(s), ExcerptChars)
	if n := utf8.RuneCountInString(got); n != ExcerptChars || !utf8.ValidString(got) || !strings.HasSuffix(got, "…") {
		t.Errorf("excerptBytes = %q (%d characters), want %d valid characters ending in the mark", got, n, ExcerptChars)
	}
}

// BenchmarkExcerptBytes measures the excerpt of a line error: a short line returned as it is, and long lines of
// ASCII, of two-byte characters and of invalid bytes, cut.
func BenchmarkExcerptBytes(b *testing.B) {
	for _, bc := range []struct {
		name string
		line []byte
	}{
		{"short", []byte(`{"id":"case-000001","text":`)},
		{"ascii 64KiB", bytes.Repeat([]byte("x"), 64<<10)},
		{"two-byte 64KiB", bytes.Repeat([]byte("é"), 32<<10)},
		{"invalid 64KiB", bytes.Repeat([]byte{0xff}, 64<<10)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = excerptBytes(bc.line, ExcerptChars)
			}
		})
	}
}
