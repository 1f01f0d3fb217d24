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
