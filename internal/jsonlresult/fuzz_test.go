package jsonlresult

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

var fuzzSeeds = []string{
	`{"id":"a","text":"A"}` + "\n" + `{"id":"b","text":"B"}` + "\n",
	"\xEF\xBB\xBF" + `{"id":"a","text":"A"}` + "\r\n\r\n" + `{"id":"a"}`,
	`{"id":"a","trace":[{"type":"message","timestamp":"t"},{"type":"x"},1]}` + "\n[1]\n\"s\"\nnull\n",
	`{"id":"b","output_messages":[{"role":"assistant","content":{"k":[1,2]},"tool_calls":[{"tool":"t","input":{}}]}]}`,
	`{"id":"c","text":{"nested":"json"},"token_usage":{"input":1,"output":2},"cost_usd":-1}` + "\n" + `{"id":"z"}`,
	"{\"id\":\"a\",\"text\":\"\xFF\xFE\"}\n{\"id\":\"b\xC0\"}\n",
	`{"id":"a","text":"\ud83d\ude00\u0000\ud800"}` + "\n" + `{"\u0069d":"b"}`,
	`{"id":"a"` + "\n" + `{"id":1}` + "\n" + `{"id":""}` + "\n" + `{}` + "\n" + `{"id":"a",}`,
	`{"id":"   "}` + "\n" + `{"id":"\u00a0"}` + "\n" + `{"id":" a "}` + "\n",
	strings.Repeat("x", 300) + "\n" + `{"id":"c","text":"` + strings.Repeat("y", 250) + `"}`,
	"  \t \n\n\n" + `   {"id":"a"}   ` + "\n",
	`{"id":"a","x":[[[[[[[[[[]]]]]]]]]],"y":{"z":{"w":1e-5}}}`,
}

// physicalLines splits the input as ParseBatch numbers it: on "\n", without a trailing empty line, with "\r"
// before the newline and a byte-order mark at the start of the input removed.
func physicalLines(data []byte) [][]byte {
	if len(data) == 0 {
		return nil
	}
	lines := bytes.Split(data, []byte("\n"))
	if len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	return lines
}

func FuzzParseBatch(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	const maxLine = 200
	requested := []string{"a", "b", "c"}
	f.Fuzz(func(t *testing.T, data []byte) {
		run := func(opts Options) batchRun {
			var got batchRun
			res, err := ParseBatch(bytes.NewReader(data), requested, opts, func(r *Response) error {
				got.Responses = append(got.Responses, r)
				return nil
			})
			if err != nil {
				t.Fatalf("ParseBatch: %v", err)
			}
			got.Result = res
			return got
		}
		got := run(Options{MaxLineBytes: maxLine, Workers: 1})
		if diff := cmp.Diff(got, run(Options{MaxLineBytes: maxLine, Workers: 2, chunkBytes: 7})); diff != "" {
			t.Fatalf("the result depends on chunking (-one chunk +small chunks):\n%s", diff)
		}

		raw := physicalLines(data)
		line := func(n int64) []byte {
			if n < 1 || n > int64(len(raw)) {
				t.Fatalf("line %d is outside the input's %d lines", n, len(raw))
			}
			l := bytes.TrimSuffix(raw[n-1], []byte("\r"))
			if n == 1 {
				l = bytes.TrimPrefix(l, bom)
			}
			return l
		}
		var rp recordParser
		nonBlank := 0
		for i := range raw {
			if !isBlank(line(int64(i + 1))) {
				nonBlank++
			}
		}
		res := got.Result
		if n := res.ParseErrorCount + res.Present + res.UnexpectedCount; n != nonBlank {
			t.Errorf("%d errors + %d present + %d unexpected != %d non-blank lines", res.ParseErrorCount, res.Present,
				res.UnexpectedCount, nonBlank)
		}
		for _, e := range res.ParseErrors {
			if !utf8.ValidString(e.Excerpt) || len(e.Excerpt) > ExcerptBytes {
				t.Errorf("line %d: bad excerpt %q", e.Line, e.Excerpt)
			}
			if len(raw[e.Line-1]) > maxLine {
				if !strings.HasPrefix(e.Message, "line is ") {
					t.Errorf("line %d is over the limit but reported as %q", e.Line, e.Message)
				}
				continue
			}
			l := line(e.Line)
			if isBlank(l) {
				t.Errorf("line %d is blank but reported as %q", e.Line, e.Message)
				continue
			}
			resp, msg := rp.parseLine(l)
			var first int64
			if _, err := fmt.Sscanf(e.Message[strings.LastIndex(e.Message, "(first seen on line ")+1:], "first seen on line %d)",
				&first); err == nil && strings.HasPrefix(e.Message, "duplicate id") {
				firstResp, _ := rp.parseLine(line(first))
				if resp == nil || firstResp == nil || resp.ID != firstResp.ID || first >= e.Line {
					t.Errorf("line %d reported as %q, but it does not repeat the id of line %d", e.Line, e.Message, first)
				}
				continue
			}
			if msg != e.Message {
				t.Errorf("line %d reported as %q, but alone it gives %q", e.Line, e.Message, msg)
			}
			if strings.HasPrefix(msg, "invalid JSON") == json.Valid(ownedCopy(l)) {
				t.Errorf("line %d: %q disagrees with json.Valid", e.Line, msg)
			}
		}
		for _, r := range got.Responses {
			alone, msg := rp.parseLine(line(r.Line))
			if alone == nil || alone.ID != r.ID {
				t.Errorf("response %q from line %d, but alone that line gives %q", r.ID, r.Line, msg)
			}
			b, err := json.Marshal(r)
			if err != nil || !utf8.Valid(b) {
				t.Errorf("response %q does not marshal to valid UTF-8: %v", r.ID, err)
			}
		}
	})
}

func FuzzParseSingle(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := ParseSingle("c", data)
		b, err := json.Marshal(r)
		if err != nil || !utf8.Valid(b) || r.ID != "c" {
			t.Fatalf("ParseSingle gave %+v, marshalled with %v", r, err)
		}
		if !json.Valid(bytes.TrimPrefix(data, bom)) && r.Text != string(ownedCopy(bytes.TrimPrefix(data, bom))) {
			t.Errorf("invalid JSON must be the answer as written, got %q", r.Text)
		}
	})
}
