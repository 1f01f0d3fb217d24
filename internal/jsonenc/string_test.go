package jsonenc

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
)

func TestAppendJSONStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "plain", `"q" \ /`, "<a>&b", "\x00\x1f\t\n\r\b\f", "é 世 \u2028\u2029", "bad \xff\xfe utf8", "\U0001F600"} {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendString(nil, s); string(got) != string(want) {
			t.Errorf("AppendString(%q) = %s, want %s", s, got, want)
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
	})
}

// plain8 says "copy as is" exactly when each of the eight bytes is one AppendString copies as it is.
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
		want := true
		for _, c := range w {
			want = want && c >= 0x20 && c < 0x80 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
		}
		if got := plain8(string(w[:])); got != want {
			t.Fatalf("plain8(%q) = %v, want %v", w, got, want)
		}
	}
}
