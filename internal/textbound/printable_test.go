package textbound

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// A hostile runner's bytes: terminal escapes, bidi overrides, C1 controls and forged line breaks show as escapes.
func TestPrintable(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain text, tab\tand é 世 \\ kept", "plain text, tab\tand é 世 \\ kept"},
		{"\x1b[2J\x1b[32mPASS", `\x1b[2J\x1b[32mPASS`},
		{"FAIL\r\nPASS  case-2", `FAIL\r\nPASS  case-2`},
		{"\x00\x07\x7f", `\x00\x07\x7f`},
		{"a\u202eSSAP\u202c b\u2066x\u2069 \u200f\u061c", `a\u202eSSAP\u202c b\u2066x\u2069 \u200f\u061c`},
		{"c1 \u009b31m csi", `c1 \u009b31m csi`},
		{"line\u2028sep", `line\u2028sep`},
		{"bad \xff\xfe", "bad \uFFFD\uFFFD"},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, Printable(tt.in)); diff != "" {
			t.Errorf("Printable(%q) (-want +got):\n%s", tt.in, diff)
		}
		if got := PrintableHead(tt.in, 1<<10); got != tt.want {
			t.Errorf("PrintableHead(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if got := PrintableTail(tt.in, 1<<10); got != tt.want {
			t.Errorf("PrintableTail(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// A cut never splits an escape, and the bound holds with the mark.
func TestPrintableCuts(t *testing.T) {
	s := "ab\x1bcd\x1b"
	for _, tt := range []struct {
		max        int
		head, tail string
	}{
		{6, "ab…", "…"},
		{9, "ab\\x1b…", "…cd\\x1b"},
		{11, "ab\\x1bcd…", "…cd\\x1b"},
		{12, "ab\\x1bcd\\x1b", "ab\\x1bcd\\x1b"},
		{2, "ab", ""},
	} {
		if got := PrintableHead(s, tt.max); got != tt.head {
			t.Errorf("PrintableHead(%q, %d) = %q, want %q", s, tt.max, got, tt.head)
		}
		if got := PrintableTail(s, tt.max); got != tt.tail {
			t.Errorf("PrintableTail(%q, %d) = %q, want %q", s, tt.max, got, tt.tail)
		}
	}
}

func FuzzPrintable(f *testing.F) {
	f.Add("\x1b[2J\x1b[32mPASS", 10)
	f.Add("a\u202eb\xff\u009bc", 7)
	f.Fuzz(func(t *testing.T, s string, n int) {
		if n < 0 || n > 1<<12 {
			return
		}
		all := Printable(s)
		if !utf8.ValidString(all) || !printable(all) {
			t.Fatalf("Printable(%q) = %q is not printable", s, all)
		}
		if Printable(all) != all {
			t.Fatalf("Printable is not idempotent on %q", all)
		}
		head, tail := PrintableHead(s, n), PrintableTail(s, n)
		for _, got := range []string{head, tail} {
			if len(got) > n || !printable(got) {
				t.Fatalf("cut of %q to %d: %q", s, n, got)
			}
		}
		if len(all) <= n && (head != all || tail != all) {
			t.Fatalf("%q fits %d but was cut: %q, %q", all, n, head, tail)
		}
		if len(all) > n && n >= len(Mark) {
			if !strings.HasPrefix(all, strings.TrimSuffix(head, Mark)) || !strings.HasSuffix(all, strings.TrimPrefix(tail, Mark)) {
				t.Fatalf("cuts of %q to %d are not its ends: %q, %q", all, n, head, tail)
			}
		}
	})
}
