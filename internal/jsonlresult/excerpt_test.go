package jsonlresult

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
)

func TestExcerptBytesLongInput(t *testing.T) {
	s := strings.Repeat("é", 1000) + "\xFF"
	got := textbound.HeadBytes([]byte(s), ExcerptBytes)
	if n := len(got); n > ExcerptBytes || n < ExcerptBytes-utf8.UTFMax || !utf8.ValidString(got) || !strings.HasSuffix(got, "…") {
		t.Errorf("excerpt = %q (%d bytes), want at most %d bytes of valid text ending in the mark", got, n, ExcerptBytes)
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
				_ = textbound.HeadBytes(bc.line, ExcerptBytes)
			}
		})
	}
}
