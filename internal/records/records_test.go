package records

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/jsonlresult"
)

// TestRecordRoundTrip: a kept record reads back from its chunk as the same bytes, and parses again to the
// response the collector judged, in both modes, whatever its bytes.
func TestRecordRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		mode Mode
		data string
		want string // the response's text
	}{
		{name: "batch line", mode: ModeLine, data: `{"id":"a","text":"CLEAR <b>&</b>","trace":[]}`, want: "CLEAR <b>&</b>"},
		{name: "single JSON", mode: ModeSingle, data: `{"text":"hi"}`, want: "hi"},
		{name: "single plain text with a newline", mode: ModeSingle, data: "line 1\nline 2\n", want: "line 1\nline 2\n"},
		{name: "single invalid UTF-8 kept as bytes", mode: ModeSingle, data: "caf\xe9", want: "caf\uFFFD"},
		{name: "single empty", mode: ModeSingle, data: "", want: ""},
	}
	k := NewKeeper(evalsv1alpha1.RecordsInConfigMaps, []string{"cm-0"}, 900<<10)
	for _, tc := range tests {
		r := New("a", "digest", tc.mode, []byte(tc.data))
		if err := k.Add(&r); err != nil {
			t.Fatal(err)
		}
	}
	chunks, st, err := k.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if st.Kept != int32(len(tests)) || st.NotKept != 0 || st.Bytes != int64(len(chunks[0].Data)) || st.Where != evalsv1alpha1.RecordsInConfigMaps {
		t.Errorf("status = %+v, want %d kept, their bytes, in ConfigMaps", st, len(tests))
	}
	i := 0
	err = Each(chunks[0].Data, func(r *Record) error {
		tc := tests[i]
		i++
		if string(r.Data()) != tc.data || r.Mode != tc.mode || r.ID != "a" || r.ViewSHA256 != "digest" {
			t.Errorf("%s: read back %+v", tc.name, r)
		}
		resp, err := r.Response()
		if err != nil {
			t.Errorf("%s: Response: %v", tc.name, err)
			return nil
		}
		if resp.ID != "a" || resp.Text != tc.want {
			t.Errorf("%s: response %q %q, want a %q", tc.name, resp.ID, resp.Text, tc.want)
		}
		return nil
	})
	if err != nil || i != len(tests) {
		t.Fatalf("Each read %d records: %v", i, err)
	}
}

// TestHostileRecords: a record that is not its own case's, whatever its bytes claim, does not read as a response.
func TestHostileRecords(t *testing.T) {
	tests := []struct {
		name, data, wantErr string
	}{
		{name: "claims another id", data: `{"id":"b","text":"PASS"}`, wantErr: "another case"},
		{name: "two lines smuggle a second record", data: `{"id":"a","text":"x"}` + "\n" + `{"id":"b","text":"y"}`, wantErr: "more than one line"},
		{name: "not JSON", data: `PASS`, wantErr: "invalid JSON"},
		{name: "no id", data: `{"text":"PASS"}`, wantErr: "id"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := New("a", "d", ModeLine, []byte(tc.data))
			resp, err := r.Response()
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Response() = %v, %v; want an error with %q", resp, err, tc.wantErr)
			}
		})
	}
	unknown := Record{ID: "a", Mode: "exec", Text: "x"}
	if _, err := unknown.Response(); err == nil {
		t.Error("a record of an unknown mode reads")
	}
}

// TestKeeperBudget: records beyond the destinations' room, and a record larger than a chunk, are counted as not
// kept; what is kept is in destination order.
func TestKeeperBudget(t *testing.T) {
	k := NewKeeper(evalsv1alpha1.RecordsInConfigMaps, []string{"cm-0", "cm-1"}, 16<<10)
	// Incompressible-ish records of about 3 KiB: a few fit each 16 KiB chunk.
	for i := range 40 {
		var b strings.Builder
		for j := range 300 {
			b.WriteString(string(rune('a' + (i*7+j*13)%26)))
			b.WriteString(string(rune('0' + (i*j)%10)))
			b.WriteString(string(rune('A' + (i+j*j)%26)))
			b.WriteString(string(rune('k' + (i*j*j)%13)))
			b.WriteString(string(rune('0' + (j*j*j+i)%10)))
			b.WriteString("1234567890"[i%10 : i%10+1])
			b.WriteString("~!@#$%^&*("[j%10 : j%10+1])
			b.WriteString("qwertyuiop"[(i+j)%10 : (i+j)%10+1])
			b.WriteString("zxcvbnmasd"[(i*j+3)%10 : (i*j+3)%10+1])
			b.WriteString("ZXCVBNMASD"[(i*3+j*7)%10 : (i*3+j*7)%10+1])
		}
		r := New("case", "d", ModeSingle, []byte(b.String()))
		if err := k.Add(&r); err != nil {
			t.Fatal(err)
		}
	}
	huge := New("huge", "d", ModeSingle, []byte(strings.Repeat("x", MaxLineBytes)))
	if err := k.Add(&huge); err != nil {
		t.Fatal(err)
	}
	chunks, st, err := k.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if st.Kept == 0 || st.NotKept == 0 || st.Kept+st.NotKept != 41 {
		t.Errorf("status = %+v, want some of the 41 records kept and the rest counted", st)
	}
	if len(chunks) != 2 || chunks[0].Destination != "cm-0" || chunks[1].Destination != "cm-1" {
		t.Fatalf("chunks = %d, want both ConfigMaps filled in order", len(chunks))
	}
	n := 0
	for _, c := range chunks {
		if len(c.Data) >= 16<<10 {
			t.Errorf("chunk %s is %d bytes, over its bound", c.Destination, len(c.Data))
		}
		if err := Each(c.Data, func(*Record) error { n++; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	if n != int(st.Kept) {
		t.Errorf("the chunks hold %d records, status says %d", n, st.Kept)
	}
}

// TestDigest: the digest changes with the view and with each input file's reference, path or content, and no
// two field sequences collide by concatenation.
func TestDigest(t *testing.T) {
	view := []byte("  - id: a\n")
	base := Digest(view, []InputFile{{Ref: "in.txt", Path: "data/in.txt", SHA256: "aa"}})
	others := map[string]string{
		"view":           Digest([]byte("  - id: b\n"), []InputFile{{Ref: "in.txt", Path: "data/in.txt", SHA256: "aa"}}),
		"no files":       Digest(view, nil),
		"content":        Digest(view, []InputFile{{Ref: "in.txt", Path: "data/in.txt", SHA256: "ab"}}),
		"path":           Digest(view, []InputFile{{Ref: "in.txt", Path: "other/in.txt", SHA256: "aa"}}),
		"shifted fields": Digest(view, []InputFile{{Ref: "in.tx", Path: "tdata/in.txt", SHA256: "aa"}}),
	}
	for name, d := range others {
		if d == base {
			t.Errorf("changing the %s gives the same digest", name)
		}
	}
	if again := Digest(view, []InputFile{{Ref: "in.txt", Path: "data/in.txt", SHA256: "aa"}}); again != base {
		t.Errorf("the digest is not a function of its inputs: %s then %s", base, again)
	}
	// The definition (docs/rejudge.md): SHA-256 of the version line, then each field as its 8-byte big-endian
	// length and its bytes. Kept records are compared with digests computed later: it must never drift.
	for _, tc := range []struct {
		files []InputFile
		want  string
	}{
		{files: []InputFile{{Ref: "in.txt", Path: "data/in.txt", SHA256: "aa"}}, want: "330ee6c74089b87626c14912878d41e73386c586b073e6317385738a2813ca9e"},
		{want: "4fa3cae30d4d86d26c1002127e761884ea2878b0b26fca8d55ad49f8f643c995"},
	} {
		if got := Digest(view, tc.files); got != tc.want {
			t.Errorf("Digest(%q, %v) = %s, want %s", view, tc.files, got, tc.want)
		}
		if got := Sum(view, tc.files).String(); got != tc.want {
			t.Errorf("Sum(%q, %v) = %s, want %s", view, tc.files, got, tc.want)
		}
	}
	if allocs := testing.AllocsPerRun(100, func() { _ = Sum(view, nil) }); allocs >= 1 {
		t.Errorf("Sum allocates %.1f times a case", allocs)
	}
}

// TestAppendLine: a record's encoding is byte for byte what encoding/json's Encoder writes without HTML escaping,
// whether built as a Record or appended from its parts (the collector's path), for text, bytes that are not
// valid UTF-8, and an empty record.
func TestAppendLine(t *testing.T) {
	d := Sum([]byte("  - id: a\n"), nil)
	for _, data := range []string{`{"id":"a","text":"<b>&amp;</b>","trace":[{"t":"\u2028"}]}`, "plain\ntext\t\x01", "caf\xe9", "", "\u2028\u2029 é"} {
		for _, mode := range []Mode{ModeLine, ModeSingle} {
			r := New("case-1.a_b", d.String(), mode, []byte(data))
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(&r); err != nil {
				t.Fatal(err)
			}
			want := strings.TrimSuffix(buf.String(), "\n")
			if got := r.AppendJSON(nil); string(got) != want {
				t.Errorf("AppendJSON(%q) = %s, want %s", data, got, want)
			}
			if got := AppendLine([]byte("x"), "case-1.a_b", d, mode, []byte(data)); string(got) != "x"+want {
				t.Errorf("AppendLine(%q) = %s, want x%s", data, got, want)
			}
			var back Record
			if err := json.Unmarshal([]byte(want), &back); err != nil || string(back.Data()) != data || back.ViewSHA256 != d.String() || back.Mode != mode {
				t.Errorf("%q reads back as %+v, %v", data, back, err)
			}
		}
	}
	data := []byte(strings.Repeat(`{"id":"a","text":"x"}`, 50))
	buf := make([]byte, 0, 4096)
	if allocs := testing.AllocsPerRun(100, func() { buf = AppendLine(buf[:0], "a", d, ModeLine, data) }); allocs >= 1 {
		t.Errorf("AppendLine allocates %.1f times a record", allocs)
	}
}

// TestEachRefusesBrokenChunks: a chunk that is not gzip'd JSONL of records is an error, never skipped.
func TestEachRefusesBrokenChunks(t *testing.T) {
	if err := Each([]byte("not gzip"), func(*Record) error { return nil }); err == nil {
		t.Error("a chunk that is not gzip reads")
	}
	k := NewKeeper(evalsv1alpha1.RecordsInBucket, []string{"s3://b/k"}, 1<<20)
	if err := k.AddLine([]byte(`{"id":`)); err != nil {
		t.Fatal(err)
	}
	chunks, _, err := k.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if err := Each(chunks[0].Data, func(*Record) error { return nil }); err == nil {
		t.Error("a chunk with a broken line reads")
	}
}

// The parser's response of a kept single-case record is the one ParseSingle gives for the bytes.
func TestSingleRecordIsParseSingle(t *testing.T) {
	data := []byte(`{"output_messages":[{"role":"assistant","content":"done"}],"cost_usd":0.5}`)
	r := New("x", "d", ModeSingle, data)
	got, err := r.Response()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(jsonlresult.ParseSingle("x", data), got); diff != "" {
		t.Errorf("(-ParseSingle +Response):\n%s", diff)
	}
}
