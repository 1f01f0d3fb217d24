package jsonenc

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// encodeNoHTML is encoding/json's encoding of s by an Encoder with SetEscapeHTML(false).
func encodeNoHTML(t *testing.T, s string) string {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return string(bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}))
}

func TestAppendJSONStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "plain", `"q" \ /`, "<a>&b", "\x00\x1f\t\n\r\b\f", "é 世 \u2028\u2029", "bad \xff\xfe utf8", "\U0001F600",
		"0123456789abcdef<<<<>>>>&&&&", `{"id":"a","text":"<b>&amp;</b>"}`} {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendString(nil, s); string(got) != string(want) {
			t.Errorf("AppendString(%q) = %s, want %s", s, got, want)
		}
		if got, want := AppendStringNoHTML(nil, s), encodeNoHTML(t, s); string(got) != want {
			t.Errorf("AppendStringNoHTML(%q) = %s, want %s", s, got, want)
		}
		if got := StringLen(s); got != len(want) {
			t.Errorf("StringLen(%q) = %d, want %d", s, got, len(want))
		}
	}
}

func FuzzAppendJSONString(f *testing.F) {
	f.Add("<é\u2028\xff\"\\\x01>")
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendString(nil, s); string(got) != string(want) {
			t.Fatalf("AppendString(%q) = %s, want %s", s, got, want)
		}
		if got, want := AppendStringNoHTML(nil, s), encodeNoHTML(t, s); string(got) != want {
			t.Fatalf("AppendStringNoHTML(%q) = %s, want %s", s, got, want)
		}
		if got := StringLen(s); got != len(want) {
			t.Fatalf("StringLen(%q) = %d, want %d", s, got, len(want))
		}
	})
}

// plain8 says "copy as is" exactly when each of the eight bytes is one appendString copies as it is, with and
// without HTML escaping.
func TestPlain8(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var w [8]byte
	for range 200000 {
		for i := range w {
			w[i] = byte(0x20 + rng.IntN(0x60))
			if rng.IntN(16) == 0 {
				w[i] = byte(rng.IntN(256))
			}
		}
		want, wantNoHTML := true, true
		for _, c := range w {
			wantNoHTML = wantNoHTML && c >= 0x20 && c < 0x80 && c != '"' && c != '\\'
			want = want && c >= 0x20 && c < 0x80 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
		}
		if got := plain8(string(w[:]), true); got != want {
			t.Fatalf("plain8(%q, html) = %v, want %v", w, got, want)
		}
		if got := plain8(string(w[:]), false); got != wantNoHTML {
			t.Fatalf("plain8(%q, no html) = %v, want %v", w, got, wantNoHTML)
		}
	}
}

// TestAppendStringJS: JavaScript's JSON.stringify of a string (the wants are what node 20 printed): no HTML escaping,
// U+2028 and U+2029 as they are, control characters as \u00XX, DEL as it is, invalid UTF-8 as U+FFFD itself; and
// where JavaScript and encoding/json (SetEscapeHTML(false)) agree, the same bytes as encoding/json.
func TestAppendStringJS(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"a\u2028b\u2029c", "\"a\u2028b\u2029c\""},
		{"<&>", `"<&>"`},
		{"\x01\x1f\x7f", "\"\\u0001\\u001f\x7f\""},
		{"q\"\\\n\t\b\f\r", `"q\"\\\n\t\b\f\r"`},
		{"é😀", `"é😀"`},
		{"a\xffb", "\"a\uFFFDb\""},
		{"a long plain ASCII run past eight bytes", `"a long plain ASCII run past eight bytes"`},
	} {
		if got := string(AppendStringJS(nil, tc.in)); got != tc.want {
			t.Errorf("AppendStringJS(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	for _, s := range []string{"plain", "<tag> & \"quoted\"\n", "é\x00\x1f"} {
		if got, want := string(AppendStringJS(nil, s)), encodeNoHTML(t, s); got != want {
			t.Errorf("AppendStringJS(%q) = %q, encoding/json %q", s, got, want)
		}
	}
}

// TestUTF16Len: JavaScript's length of a string, in UTF-16 code units: a character past U+FFFF counts two, an
// invalid byte one.
func TestUTF16Len(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want int
	}{{"", 0}, {"abc", 3}, {"é", 1}, {"日本", 2}, {"😀", 2}, {"a😀b", 4}, {"\xff\xfe", 2}} {
		if got := UTF16Len(tc.s); got != tc.want {
			t.Errorf("UTF16Len(%q) = %d, want %d", tc.s, got, tc.want)
		}
	}
}
