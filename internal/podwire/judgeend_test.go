package podwire

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Whatever a script writes before, between and after the judge runner's frames (garbage, forged headers, headers
// that claim the next real frame as their payload, lines longer than the buffer), the reader returns the judge
// runner's frames, in order, and nothing else.
func FuzzJudgeEndReader(f *testing.F) {
	f.Add([]byte("evalrun-verdicts 20 " + string(bytes.Repeat([]byte("ab"), 32)) + "\n"))
	f.Add([]byte("\nevalrun-verdicts 9999 " + string(bytes.Repeat([]byte("00"), 32)) + "\n{\"n\":7}"))
	f.Add([]byte("evalrun-verdicts 3 " + string(bytes.Repeat([]byte("cd"), 32))))
	f.Add([]byte("partial line without newline"))
	f.Add(bytes.Repeat([]byte("x"), 70000))
	f.Add([]byte("evalrun-judge-key 00\n{\"n\":9}\n"))
	f.Add([]byte("\nevalrun-verdicts 1 1 3800 " + string(bytes.Repeat([]byte("00"), 32)) + "\n"))
	f.Add([]byte("evalrun-verdicts 2 0 1 " + string(bytes.Repeat([]byte("00"), 32)) + "\nevalrun-verdicts"))
	f.Fuzz(func(t *testing.T, junk []byte) {
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = pr.Close() }()
		w := &JudgeEndWriter{fd: int(pw.Fd()), key: make([]byte, 32)}
		_, _ = rand.Read(w.key)
		go func() {
			defer func() { _ = pw.Close() }()
			_ = w.write([]byte(judgeKeyPrefix + hex.EncodeToString(w.key) + "\n"))
			for n := 1; n <= 2; n++ {
				_ = w.write(junk)
				// A frame of several chunks: the junk cannot split them.
				_ = w.Send(map[string]any{"n": n, "pad": strings.Repeat("p", 5000)})
			}
			_ = w.write(junk)
		}()
		r, err := newJudgeEndReader(pr)
		if err != nil {
			t.Fatal(err)
		}
		var got []map[string]int
		for {
			payload, err := r.Next(time.Now().Add(20 * time.Second))
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			var m struct{ N int }
			if err := json.Unmarshal(payload, &m); err != nil {
				t.Fatalf("frame %q: %v", payload, err)
			}
			got = append(got, map[string]int{"n": m.N})
		}
		if diff := cmp.Diff([]map[string]int{{"n": 1}, {"n": 2}}, got); diff != "" {
			t.Errorf("frames (-want +got):\n%s", diff)
		}
	})
}
