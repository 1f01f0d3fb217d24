package textbound

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestHeadAndTail(t *testing.T) {
	tests := []struct {
		name       string
		s          string
		max        int
		head, tail string
	}{
		{name: "empty", s: "", max: 3, head: "", tail: ""},
		{name: "short", s: "abc", max: 5, head: "abc", tail: "abc"},
		{name: "exactly max", s: "abcde", max: 5, head: "abcde", tail: "abcde"},
		{name: "cut with the mark inside the bound", s: "abcdefgh", max: 5, head: "ab…", tail: "…gh"},
		{name: "only the mark fits", s: "abcd", max: 3, head: "…", tail: "…"},
		{name: "no room for the mark", s: "abcd", max: 2, head: "ab", tail: "cd"},
		{name: "one byte", s: "abcd", max: 1, head: "a", tail: "d"},
		{name: "zero", s: "abcd", max: 0, head: "", tail: ""},
		{name: "negative", s: "abcd", max: -1, head: "", tail: ""},
		{name: "two-byte runes fit", s: "éé", max: 4, head: "éé", tail: "éé"},
		{name: "never split a rune", s: "ééééé", max: 8, head: "éé…", tail: "…éé"},
		{name: "never split a rune without the mark", s: "éé", max: 1, head: "", tail: ""},
		{name: "a rune wider than the room left", s: "a😀b", max: 5, head: "a…", tail: "…b"},
		{name: "emoji", s: "😀😀😀", max: 8, head: "😀…", tail: "…😀"},
		{name: "invalid bytes become U+FFFD", s: "a\xffb", max: 8, head: "a\uFFFDb", tail: "a\uFFFDb"},
		{name: "each invalid byte", s: "\xe2\x82", max: 8, head: "\uFFFD\uFFFD", tail: "\uFFFD\uFFFD"},
		{name: "replaced before measuring", s: "a\xffb", max: 4, head: "a…", tail: "…b"},
		{name: "invalid bytes when cut", s: "\xff\xfe\xfd\xfc", max: 9, head: "\uFFFD\uFFFD…", tail: "…\uFFFD\uFFFD"},
		{name: "invalid short of the mark", s: "\xffa", max: 2, head: "", tail: "a"},
		{name: "a valid U+FFFD stays", s: "\uFFFDx", max: 4, head: "\uFFFDx", tail: "\uFFFDx"},
		{name: "the mark in the text", s: "……x", max: 6, head: "……", tail: "…x"},
		{name: "a stray continuation byte at the cut", s: "abc\x80defg", max: 6, head: "abc…", tail: "…efg"},
		{name: "a stray continuation byte after a whole rune", s: "0\xb40", max: 1, head: "0", tail: "0"},
		{name: "an invalid byte right after the kept text", s: "abc\xffdefg", max: 6, head: "abc…", tail: "…efg"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.head, Head(tc.s, tc.max)); diff != "" {
				t.Errorf("Head(%q, %d) mismatch (-want +got):\n%s", tc.s, tc.max, diff)
			}
			if diff := cmp.Diff(tc.head, HeadBytes([]byte(tc.s), tc.max)); diff != "" {
				t.Errorf("HeadBytes(%q, %d) mismatch (-want +got):\n%s", tc.s, tc.max, diff)
			}
			if diff := cmp.Diff(tc.tail, Tail(tc.s, tc.max)); diff != "" {
				t.Errorf("Tail(%q, %d) mismatch (-want +got):\n%s", tc.s, tc.max, diff)
			}
		})
	}
}

func TestValid(t *testing.T) {
	for s, want := range map[string]string{
		"":               "",
		"abc":            "abc",
		"é😀":             "é😀",
		"a\xffb":         "a\uFFFDb",
		"\xff\xfe":       "\uFFFD\uFFFD",
		"\xe2\x82":       "\uFFFD\uFFFD", // a rune's first two bytes: each is replaced
		"x\xe2\x82\xacx": "x€x",
	} {
		if got := Valid(s); got != want {
			t.Errorf("Valid(%q) = %q, want %q", s, got, want)
		}
	}
}

// A long text is cut after reading at most the bytes it keeps, however long it is.
func TestHeadBytesLongInput(t *testing.T) {
	b := []byte(strings.Repeat("é", 1<<20) + "\xff")
	got := HeadBytes(b, 120)
	if want := strings.Repeat("é", 58) + Mark; got != want {
		t.Errorf("HeadBytes = %q, want %q", got, want)
	}
}

// Text that is valid and within the bound is returned as it is, without an allocation.
func TestFastPathDoesNotAllocate(t *testing.T) {
	s := strings.Repeat("é", 50)
	var sink string
	allocs := testing.AllocsPerRun(100, func() {
		sink = Head(s, 100)
		sink = Tail(s, 100)
		sink = Valid(s)
	})
	if allocs != 0 || sink != s {
		t.Errorf("fast path: %v allocations, want none", allocs)
	}
}

// The general forms of Head and Tail: replace invalid bytes (a []rune conversion turns each into U+FFFD), then
// keep whole runes within the bound, the mark included.
func generalHead(s string, n int) string {
	v := string([]rune(s))
	if len(v) <= n {
		return v
	}
	mark := Mark
	if n < len(mark) {
		mark = ""
	}
	var b strings.Builder
	for _, r := range v {
		if b.Len()+utf8.RuneLen(r)+len(mark) > n {
			break
		}
		b.WriteRune(r)
	}
	return b.String() + mark
}

func generalTail(s string, n int) string {
	v := []rune(s)
	if len(string(v)) <= n {
		return string(v)
	}
	mark := Mark
	if n < len(mark) {
		mark = ""
	}
	kept, i := 0, len(v)
	for i > 0 && kept+utf8.RuneLen(v[i-1])+len(mark) <= n {
		kept += utf8.RuneLen(v[i-1])
		i--
	}
	return mark + string(v[i:])
}

func FuzzBounds(f *testing.F) {
	for _, s := range []string{"", "abc", "ééééé", "a😀b", "\xff\xfe\xfd", "\xe2\x82\xac\xe2\x82", "……x", "\uFFFD"} {
		for _, n := range []int{0, 1, 2, 3, 4, 5, 8} {
			f.Add(s, n)
		}
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		n %= 64
		for name, got := range map[string]string{
			"Head": Head(s, n), "HeadBytes": HeadBytes([]byte(s), n), "Tail": Tail(s, n),
		} {
			want := generalHead(s, n)
			if name == "Tail" {
				want = generalTail(s, n)
			}
			if n <= 0 {
				want = ""
			}
			if got != want {
				t.Fatalf("%s(%q, %d) = %q, want %q", name, s, n, got, want)
			}
			if !utf8.ValidString(got) || len(got) > max(n, 0) {
				t.Fatalf("%s(%q, %d) = %q: invalid or over the bound", name, s, n, got)
			}
		}
		if got, want := Valid(s), string([]rune(s)); got != want {
			t.Fatalf("Valid(%q) = %q, want %q", s, got, want)
		}
	})
}

func BenchmarkHead(b *testing.B) {
	for _, bc := range []struct {
		name string
		s    string
	}{
		{"short", "case-000001"},
		{"ascii 64KiB", strings.Repeat("x", 64<<10)},
		{"two-byte 64KiB", strings.Repeat("é", 32<<10)},
		{"invalid 64KiB", strings.Repeat("\xff", 64<<10)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = Head(bc.s, 512)
			}
		})
	}
}

func BenchmarkTail(b *testing.B) {
	for _, bc := range []struct {
		name string
		s    string
	}{
		{"short", "exit status 1"},
		{"ascii 64KiB", strings.Repeat("x", 64<<10)},
		{"invalid 64KiB", strings.Repeat("\xff", 64<<10)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = Tail(bc.s, 4096)
			}
		})
	}
}
