package evalfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// scanCorpus are eval files for the Scan oracle: the test files, and documents that stream, that do not, and that
// have problems (more than Scan keeps, in many items).
func scanCorpus(t testing.TB) map[string][]byte {
	t.Helper()
	corpus := map[string][]byte{}
	for _, name := range []string{"testdata/screening.yaml", "testdata/full.yaml", "../../examples/screening/eval.yaml"} {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		corpus[name] = data
	}
	docs := map[string]string{
		"header anchors and aliases": "$schema: agentv-eval-v2\nexecution:\n  evaluators: &evs\n    - {name: fast, type: latency, threshold: 10}\n" +
			"evalcases:\n  - id: a\n    input_messages: &msgs [{role: user, content: {b: 1, a: [x, 2.50, true, null]}}]\n" +
			"  - id: b\n    input_messages: [{role: user, content: x}]\n    execution: {evaluators: *evs}\n" +
			"  - {id: c, input_messages: [{role: user, content: \"x\"}], rubrics: [be kind]}\n",
		"problems in the header and in cases": "$schema: v1\nexecution: {evaluators: [{name: x, type: nope}], x: 1, x: 2}\nevalcases:\n" +
			"  - id: a\n    id: b\n    input_messages: []\n  - id: a\n    input_messages: [{role: bot, content: 1, content: 2}]\n  - 7\n" +
			"  - id: \"a b\"\n    input_messages: [{role: user, content: [{type: file, value: \"\"}]}]\n",
		"duplicate ids":             "evalcases:\n- {id: a, input_messages: [{role: user, content: x}]}\n- {id: a, input_messages: [{role: user, content: y}]}\n",
		"alias loop in a case":      "evalcases:\n- &c {id: a, input_messages: [{role: user, content: x}], self: [*c]}\n",
		"merge keys across items":   "evalcases:\n- &c {id: a, input_messages: [{role: user, content: x}]}\n- {<<: *c, id: b}\n",
		"evalcases not last":        "evalcases: [{id: a, input_messages: [{role: user, content: x}]}]\ndescription: d\n",
		"flow sequence":             "evalcases: [{id: a, input_messages: [{role: user, content: x}]}]\n",
		"evalcases twice":           "evalcases:\n  - id: a\nevalcases:\n  - id: b\n",
		"alias to the header":       "x: &m [{role: user, content: x}]\nevalcases:\n  - id: a\n    input_messages: *m\n  - id: b\n    input_messages: *m\n    expected_messages: 5\n",
		"a header anchor shadowed":  "x: &m [{role: user, content: h}]\nevalcases:\n  - id: a\n    input_messages: &m [{role: user, content: i}]\n  - id: b\n    input_messages: *m\n",
		"alias to another item":     "evalcases:\n  - id: a\n    input_messages: &m [{role: user, content: x}]\n  - id: b\n    input_messages: *m\n",
		"a syntax error in an item": "evalcases:\n  - id: a\n    input_messages: [{role: user, content: x}\n  - id: b\n",
		"a tab":                     "evalcases:\n  - id: a\n    input_messages:\t[{role: user, content: x}]\n",
		"CRLF":                      "evalcases:\r\n  - id: a\r\n    input_messages: [{role: user, content: x}]\r\n  - id: b\r\n    input_messages: [{role: user, content: x}]\r\n",
		"a byte-order mark":         "\xef\xbb\xbfevalcases:\n  - id: a\n    input_messages: [{role: user, content: x}]\n",
		"no final line break":       "evalcases:\n  - id: a\n    input_messages: [{role: user, content: x}]",
		"empty":                     "  \n",
		"not a sequence":            "evalcases:\n  a: 1\n",
		"no evalcases":              "description: d\n",
		"code judges and rubrics": "execution:\n  evaluators: [{name: j, type: code_judge, script: ./j.sh}]\nevalcases:\n" +
			"  - {id: a, input_messages: [{role: user, content: x}]}\n" +
			"  - {id: b, input_messages: [{role: user, content: x}], rubrics: [one, two]}\n" +
			"  - id: c\n    input_messages: [{role: user, content: x}]\n    evaluators:\n      - {name: l, type: llm_judge}\n      - {name: r, type: rubric, rubrics: [ok]}\n",
		"a 4.42 suite": "assertions: [Is kind., {type: code-grader, command: ./g.sh}]\ninput: Be brief.\ntests:\n" +
			"  - {id: a, input: q, criteria: c}\n  - {id: b, input: q, assertions: [{type: llm-grader}], execution: {skip_defaults: true}}\n",
		"a 4.42 suite with problems":  "workspace: {path: x}\ntests:\n  - {id: a, input: q}\n  - {id: a, input: q, criteria: c, turns: []}\n",
		"a 4.42 suite with evalcases": "tests:\n  - {id: a, input: q, criteria: c}\nevalcases:\n  - id: b\n    input_messages: [{role: user, content: x}]\n",
	}
	for name, doc := range docs {
		corpus[name] = []byte(doc)
	}
	corpus["many items"] = manyItems(3*itemBatch, false)
	corpus["many items with problems"] = manyItems(3*itemBatch, true)
	return corpus
}

// manyItems is an eval file of n items of several shapes (fast-read and YAML-parsed); with problems, some in many
// items (more than Scan keeps).
func manyItems(n int, problems bool) []byte {
	var b strings.Builder
	b.WriteString("$schema: agentv-eval-v2\nexecution:\n  evaluators:\n    - {name: fast, type: latency, threshold: 1800}\nevalcases:\n")
	for i := range n {
		id := fmt.Sprintf("case-%04d", i)
		if problems && i%97 == 5 {
			id = fmt.Sprintf("case-%04d", i/2)
		}
		switch i % 5 {
		case 1:
			fmt.Fprintf(&b, "  - id: %s\n    input_messages:\n      - role: user\n        content: |\n          line one\n          line two\n", id)
		case 2:
			fmt.Fprintf(&b, "  - id: %s\n    input_messages: [{role: user, content: {q: %d}}]\n    execution:\n      evaluators:\n        - {name: j, type: code_judge, script: ./j.sh}\n", id, i)
		default:
			fmt.Fprintf(&b, "  - id: %s\n    input_messages: [{role: user, content: \"screen row %d\"}]\n", id, i)
		}
		if problems && i%7 == 3 {
			b.WriteString("    conversation_id: [not, a, string]\n")
		}
	}
	return []byte(b.String())
}

// scanDiff compares Scan of data with Parse of it: the same Facts or the same problems (Scan's cut to a prefix of
// Parse's, the rest counted). streamed says Scan read the file one item at a time (its Facts have no Text).
func scanDiff(data []byte, opts ...ParseOption) (streamed bool, diff string) {
	want, wantErr := Parse(data, opts...)
	got, gotErr := Scan(bytes.NewReader(data), opts...)
	if (wantErr == nil) != (gotErr == nil) {
		return false, "errors differ: Parse " + errString(wantErr) + ", Scan " + errString(gotErr)
	}
	if wantErr != nil {
		var wantV, gotV *ValidationError
		if !errors.As(wantErr, &wantV) || !errors.As(gotErr, &gotV) {
			return false, "not validation errors: Parse " + errString(wantErr) + ", Scan " + errString(gotErr)
		}
		if wantV.Error() != gotV.Error() {
			return false, "messages differ:\nParse " + wantV.Error() + "\nScan  " + gotV.Error()
		}
		if len(gotV.Problems)+gotV.More != len(wantV.Problems) {
			return false, fmt.Sprintf("Scan has %d problems and %d more, Parse %d", len(gotV.Problems), gotV.More, len(wantV.Problems))
		}
		return false, cmp.Diff(wantV.Problems[:len(gotV.Problems)], gotV.Problems)
	}
	return got.Text() == nil, cmp.Diff(FactsOf(want), got, cmp.AllowUnexported(Facts{}), cmpopts.IgnoreFields(Facts{}, "text"),
		cmpopts.IgnoreUnexported(EvaluatorConfig{}))
}

// Scan gives what Parse gives for every file of the corpus and for mutations of the test files, with and without
// the EvalRun's evaluators; with an in-memory limit below the file's size, the same again, or, for a file it
// cannot stream, a problem saying it must be written in block style.
func TestScanMatchesParse(t *testing.T) {
	defaults := WithDefaultEvaluators([]map[string]any{{"name": "j", "type": "cost", "budget": 1.0}})
	check := func(t *testing.T, name string, data []byte) bool {
		t.Helper()
		var streamed bool
		for _, opts := range [][]ParseOption{nil, {defaults}} {
			s, diff := scanDiff(data, opts...)
			if diff != "" {
				t.Errorf("%s: Scan differs from Parse:\n%s", name, diff)
			}
			streamed = s
			if len(data) < 2 {
				continue
			}
			tight := append(slices.Clone(opts), WithWholeLimit(len(data)-1))
			got, err := Scan(bytes.NewReader(data), tight...)
			var verr *ValidationError
			switch {
			case errors.As(err, &verr) && strings.Contains(verr.Error(), "block style"):
				if s {
					t.Errorf("%s: streamed, but not within a limit below its size: %v", name, err)
				}
			case !s && err == nil:
				t.Errorf("%s: parsed whole, but within a limit below its size (text held: %v)", name, got.Text() != nil)
			}
		}
		return streamed
	}
	streamed := 0
	corpus := scanCorpus(t)
	for name, data := range corpus {
		if check(t, name, data) {
			streamed++
		}
	}
	for _, name := range []string{"testdata/screening.yaml", "testdata/full.yaml", "many items", "many items with problems",
		"alias to the header", "CRLF", "code judges and rubrics"} {
		if _, diff := scanDiff(corpus[name]); diff != "" {
			continue // reported above
		}
		if f, err := Scan(bytes.NewReader(corpus[name])); err == nil && f.Text() != nil {
			t.Errorf("%s was parsed whole, not streamed", name)
		}
	}
	// Mutations of the test files (as TestSegmentedParseMatchesWholeTreeOnMutations makes them).
	rng := rand.New(rand.NewPCG(3, 4))
	seeds := [][]byte{corpus["testdata/screening.yaml"], corpus["testdata/full.yaml"]}
	mutate := []func(l []string, i int) []string{
		func(l []string, i int) []string { return append(l[:i:i], l[i+1:]...) },
		func(l []string, i int) []string { return append(l[:i+1:i+1], l[i:]...) },
		func(l []string, i int) []string { l[i] = " " + l[i]; return l },
		func(l []string, i int) []string {
			l[i] = strings.Replace(l[i], ": ", ": &a"+fmt.Sprint(i%3)+" ", 1)
			return l
		},
		func(l []string, i int) []string {
			l[i] = strings.Replace(l[i], ": ", ": *a"+fmt.Sprint(i%3)+" #", 1)
			return l
		},
		func(l []string, i int) []string { l[i] = strings.Replace(l[i], "  ", "- ", 1); return l },
		func(l []string, i int) []string { l[i] = strings.Replace(l[i], " ", "\t", 1); return l },
	}
	mutations := 200
	if testing.Short() {
		mutations = 60
	}
	for n := range mutations {
		lines := strings.Split(string(seeds[n%len(seeds)]), "\n")
		for range 1 + rng.IntN(3) {
			if len(lines) < 2 {
				break
			}
			lines = mutate[rng.IntN(len(mutate))](lines, rng.IntN(len(lines)-1))
		}
		if check(t, fmt.Sprintf("mutation %d", n), []byte(strings.Join(lines, "\n"))) {
			streamed++
		}
	}
	t.Logf("%d of %d files streamed", streamed, len(corpus)+mutations)
	if streamed < len(corpus)/2 {
		t.Errorf("only %d files streamed: the test checks little", streamed)
	}
}

// FuzzScanMatchesParse holds Scan to Parse on any input, streamed or parsed whole, and, with an in-memory limit
// below the input's size, to the same answer or a refusal that says the file must be in block style.
func FuzzScanMatchesParse(f *testing.F) {
	for _, data := range scanCorpus(f) {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		streamed, diff := scanDiff(data)
		if diff != "" {
			t.Fatalf("Scan differs from Parse:\n%s", diff)
		}
		if !streamed || len(data) < 2 {
			return
		}
		if _, diff := scanDiff(data, WithWholeLimit(len(data)-1)); diff != "" {
			t.Fatalf("a streamed file differs within a limit below its size:\n%s", diff)
		}
	})
}

// A case that expands past the tree's bound ends Scan as it ends Parse (once: the expansion takes seconds).
func TestScanStopsAtTheTreeBound(t *testing.T) {
	if _, diff := scanDiff([]byte("evalcases:\n" + aliasBomb())); diff != "" {
		t.Errorf("Scan differs from Parse:\n%s", diff)
	}
}

// A streamed file splits as the pods split it: any selection of its items, cut as text (Subset), parses to exactly
// the selected ids.
func TestStreamedFileSplits(t *testing.T) {
	for name, data := range scanCorpus(t) {
		f, err := Scan(bytes.NewReader(data))
		if err != nil || f.Text() != nil || f.NumCases() < 2 {
			continue
		}
		ids := f.CaseIDs()
		for _, r := range [][2]int{{0, 1}, {0, len(ids) / 2}, {len(ids) / 3, len(ids) - 1}, {len(ids) - 1, len(ids)}} {
			sub, err := Subset(data, func(i int) bool { return i >= r[0] && i < r[1] })
			if err != nil {
				t.Errorf("%s %v: %v", name, r, err)
				continue
			}
			got, err := Parse(sub)
			if err != nil {
				t.Errorf("%s %v: the subset does not parse: %v", name, r, err)
				continue
			}
			if diff := cmp.Diff(ids[r[0]:r[1]], got.CaseIDs()); diff != "" {
				t.Errorf("%s %v: ids (-want +got):\n%s", name, r, diff)
			}
		}
	}
}

// failingReader delivers its text, then err instead of the end (as a reader that verifies a digest at the end).
type failingReader struct {
	r   io.Reader
	err error
}

func (f *failingReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if errors.Is(err, io.EOF) {
		return n, f.err
	}
	return n, err
}

// Scan reads to the end whatever it found, so a reader's error at the end (a digest mismatch) wins over any
// verdict on the text, an invalid file's included.
func TestScanReturnsTheReadersError(t *testing.T) {
	errDigest := errors.New("sha256 mismatch")
	for _, doc := range []string{"evalcases: [", "evalcases:\n  - id: a\n    input_messages: [{role: user, content: x}]\n",
		"evalcases:\n  - 7\n" + strings.Repeat("  - {id: x}\n", 1000)} {
		_, err := Scan(&failingReader{r: strings.NewReader(doc), err: errDigest}, WithWholeLimit(16))
		if !errors.Is(err, errDigest) {
			t.Errorf("%.20q: error %v, want the reader's", doc, err)
		}
	}
}

// Above the in-memory limit, a file that cannot be read one item at a time is invalid, with the line and the
// reason, and says it must be written in block style; one that can is read item by item, however large.
func TestScanAboveTheLimit(t *testing.T) {
	body := strings.Repeat("  - id: filler\n    input_messages: [{role: user, content: x}]\n", 1)
	tests := []struct {
		name, doc, want string
		line            int
	}{
		{name: "flow style", doc: "evalcases: [{id: a, input_messages: [{role: user, content: x}]}]\n", want: "flow style", line: 1},
		{name: "alias to another item", doc: "evalcases:\n  - id: a\n    input_messages: &m [{role: user, content: x}]\n  - id: b\n    input_messages: *m\n",
			want: "evalcases[1]", line: 4},
		{name: "a document marker", doc: "---\nevalcases:\n" + body, want: "document marker", line: 1},
		{name: "a key after evalcases", doc: "evalcases:\n" + body + "description: d\n", want: "after evalcases", line: 4},
		{name: "a large item", doc: "evalcases:\n  - id: a\n    input_messages: [{role: user, content: x}]\n    note: |\n" +
			strings.Repeat("      a line of a long note\n", 5), want: "an item larger than", line: 2},
		{name: "a long line", doc: "evalcases:\n  - id: a\n    input_messages: [{role: user, content: " + strings.Repeat("y", 200) + "}]\n",
			want: "a line longer than", line: 3},
	}
	// Comment lines after the text put the files above the limit.
	padding := strings.Repeat("# padding, padding, padding\n", 5)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Scan(strings.NewReader(tt.doc+padding), WithWholeLimit(100))
			var verr *ValidationError
			if !errors.As(err, &verr) || len(verr.Problems) != 1 {
				t.Fatalf("error %v, want one problem", err)
			}
			p := verr.Problems[0]
			if !strings.Contains(p.String(), tt.want) || !strings.Contains(p.Message, "block style") || p.Line != tt.line {
				t.Errorf("problem %q (line %d), want one at line %d containing %q and saying block style", p.String(), p.Line, tt.line, tt.want)
			}
		})
	}
	f, err := Scan(bytes.NewReader(manyItems(2000, false)), WithWholeLimit(4096))
	if err != nil || f.NumCases() != 2000 || f.Text() != nil {
		t.Fatalf("a block-style file above the limit: %v", err)
	}
}

// BenchmarkScan reads the 100,000-case eval file of BenchmarkParse (8 MiB) as Scan does, from a reader.
func BenchmarkScan(b *testing.B) {
	data := benchEvalFile(100_000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		f, err := Scan(bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		if f.NumCases() != 100_000 || f.Text() != nil {
			b.Fatalf("scanned %d cases", f.NumCases())
		}
	}
}

// longCasesFile is an eval file of n cases of about 2.3 KiB each (a 2 KiB user message and an expected outcome),
// as a nightly suite's: the shape of the manager's 256 MiB memory benchmark (test/objectsize).
func longCasesFile(n int) []byte {
	question := strings.Repeat("Screen the applicant's record against the sanctions list and explain the decision. ", 25)
	var b strings.Builder
	b.WriteString("$schema: agentv-eval-v2\nexecution:\n  evaluators:\n    - {name: fast, type: latency, threshold: 1800}\nevalcases:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - id: case-%07d\n    input_messages:\n      - role: user\n        content: \"%s (row %d)\"\n"+
			"    expected_outcome: \"The decision for row %d is CLEAR.\"\n", i, question, i, i)
	}
	return []byte(b.String())
}

// BenchmarkScanLongCases scans a file of 10,000 long cases (22 MiB, above the in-memory limit: streamed).
func BenchmarkScanLongCases(b *testing.B) {
	data := longCasesFile(10_000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if f, err := Scan(bytes.NewReader(data)); err != nil || f.NumCases() != 10_000 {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseLongCases parses the file of BenchmarkScanLongCases.
func BenchmarkParseLongCases(b *testing.B) {
	data := longCasesFile(10_000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if f, err := Parse(data); err != nil || f.NumCases() != 10_000 {
			b.Fatal(err)
		}
	}
}
