package evalfile

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	yaml "go.yaml.in/yaml/v3"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile/yamltree"
)

// checkFastItems holds yamltree.ReadItem to the YAML parser and the tree builder on every item of data that it reads:
// the YAML parser must read the item alone, into the same values (kinds, text, numbers, lines), the same number of
// them, and without a problem. It returns how many items ReadItem read.
func checkFastItems(t *testing.T, data []byte) int {
	t.Helper()
	sg := segment(data)
	if sg == nil {
		return 0
	}
	sg.src = string(data)
	read := 0
	for i := range sg.items {
		got, nodes, ok := sg.fast(&yamltree.Arena{}, i)
		if !ok {
			continue
		}
		read++
		r := sg.items[i]
		item := data[r[0]:r[1]]
		var doc yaml.Node
		if err := yaml.Unmarshal(item, &doc); err != nil {
			t.Errorf("fastItem reads item %d, which YAML rejects (%v):\n%s", i, err, item)
			continue
		}
		items, ok := sequenceItems(&doc, 1)
		if !ok {
			t.Errorf("fastItem reads item %d, which YAML reads as something else than one item:\n%s", i, item)
			continue
		}
		shiftLines(items[0], sg.itemLines[i]-1)
		tb := yamltree.NewBuilder(0, casesKey)
		casesPath := yamltree.KeyPath(nil, casesKey)
		ip := yamltree.IndexPath(&casesPath, i)
		want := tb.Build(items[0], &ip, 2)
		if len(tb.Problems) > 0 {
			t.Errorf("fastItem reads item %d, in which the tree builder finds problems %v:\n%s", i, tb.Problems, item)
			continue
		}
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(yamltree.Value{})); diff != "" {
			t.Errorf("fastItem reads item %d differently (-yaml +fast):\n%s\n--- item:\n%s", i, diff, item)
		}
		if nodes != tb.Values {
			t.Errorf("fastItem counts %d values in item %d, the tree builder %d:\n%s", nodes, i, tb.Values, item)
		}
	}
	return read
}

func TestFastItemMatchesYAML(t *testing.T) {
	tests := []struct {
		name string
		item string
		read bool
	}{
		{name: "the benchmark's case", read: true, item: "  - id: case-000001\n    input_messages: [{role: user, content: \"screen row 1\"}]\n"},
		{name: "block mapping and sequence", read: true, item: "  - id: a\n    input_messages:\n      - role: user\n        content: hello world\n      - role: assistant\n        content: {b: 1, a: [x, 2.50, true, null]}\n"},
		{name: "indentless sequence", read: true, item: "- id: a\n  input_messages:\n  - role: user\n    content: x\n  expected_messages:\n  - {role: assistant, content: y}\n"},
		{name: "comments and blank lines", read: true, item: "  - id: a # the id\n\n    # a comment\n    input_messages: [{role: user, content: x}]  # trailing\n# at column 0\n\n"},
		{name: "scalars", read: true, item: "  - id: a\n    s: [plain text, 'single ''q''', \"double \\\"q\\\" \\u00e9\\n\\t\\x41\\U0001F600\", ~, null, Null, true, False, yes, no, on, 0x1F, 0o17, 017, 1_000, -0, +1, 1.5, -2.5e3, .5, 2001-12-14, 9223372036854775808, 1e400]\n    time: 12:30\n"},
		{name: "plain scalars with indicators inside", read: true, item: "  - id: a\n    url: http://example.com:8080/x#y\n    text: a, b [c] {d} 'e' \"f\" - g :h\n    hash: a#b\n    colon: 'a: b'\n"},
		{name: "keys", read: true, item: "  - \"id\": a\n    'in put': x\n    1: one\n    true: yes\n    ~: nothing\n    k : v\n"},
		{name: "json style flow", read: true, item: "  - {\"id\":\"a\",\"input_messages\":[{\"role\":\"user\",\"content\":\"x\"}]}\n"},
		{name: "nested flow", read: true, item: "  - id: a\n    x: [[], {}, [1, [2, [3]]], {a: {b: {c: d}}}]\n"},
		{name: "unicode", read: true, item: "  - id: a\n    t: décision — \"CLEAR\" 漢字 😀\n"},
		{name: "CRLF", read: true, item: "  - id: a\r\n    input_messages: [{role: user, content: x}]\r\n"},
		{name: "scalar item", read: true, item: "  - just text\n"},
		{name: "mapping after dash with wide spacing", read: true, item: "  -   id: a\n      b: c\n"},
		{name: "numbers", read: true, item: "  - [0, 7, -7, 123456789012345678, 1234567890123456789, 3.0, 1e3, 0.1]\n"},
		{name: "anchor", item: "  - id: &a x\n"},
		{name: "alias", item: "  - id: *a\n"},
		{name: "tag", item: "  - id: !!str 1\n"},
		{name: "block scalar", item: "  - id: a\n    t: |\n      x\n"},
		{name: "multi-line plain", item: "  - id: a\n    t: one\n      two\n"},
		{name: "multi-line flow", item: "  - id: a\n    t: [a,\n      b]\n"},
		{name: "multi-line quoted", item: "  - id: a\n    t: \"a\n      b\"\n"},
		{name: "empty value", item: "  - id:\n    t: x\n"},
		{name: "empty flow value", item: "  - {id: }\n"},
		{name: "duplicate key", item: "  - id: a\n    id: b\n"},
		{name: "merge key", item: "  - <<: {a: b}\n"},
		{name: "complex key", item: "  - ? a\n    : b\n"},
		{name: "nested sequence on the dash line", item: "  - - a\n"},
		{name: "empty entry", item: "  -\n    id: a\n"},
		{name: "unknown escape", item: "  - \"a\\/b\"\n"},
		{name: "surrogate escape", item: "  - \"\\ud800\"\n"},
		{name: "trailing comma", item: "  - [a, b, ]\n"},
		{name: "flow pair", item: "  - [a: b]\n"},
		{name: "mapping value on the same line", item: "  - a: b: c\n"},
		{name: "wrong indentation", item: "  - a: b\n     c: d\n"},
		{name: "control character", item: "  - a: b\x01\n"},
		{name: "NEL", item: "  - a: b\u0085c\n"},
		{name: "line separator", item: "  - a: b\u2028c\n"},
		{name: "byte-order mark", item: "  - a: \ufeffb\n"},
		{name: "invalid UTF-8", item: "  - a: b\xff\n"},
		{name: "not finite", item: "  - [.nan]\n"},
		{name: "flow colon", item: "  - {a:b}\n"},
		{name: "comment without a space", item: "  - [a]#c\n"},
		{name: "document marker in a scalar", item: "  - a: b --- c\n", read: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := []byte("evalcases:\n" + tt.item)
			if got := checkFastItems(t, data); (got == 1) != tt.read {
				t.Errorf("fastItem read %d items, want read %v", got, tt.read)
			}
		})
	}
	for _, name := range []string{"testdata/screening.yaml", "testdata/full.yaml", "../../examples/screening/eval.yaml"} {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		checkFastItems(t, data)
	}
	if n := checkFastItems(t, benchEvalFile(1000)); n != 1000 {
		t.Errorf("fastItem read %d of the benchmark file's 1000 items", n)
	}
}

// randomItems writes random evalcases items in the YAML that ReadItem reads and near it: block and flow
// collections, every scalar style, tricky plain scalars, comments, blank lines, odd spacing.
func randomItems(rng *rand.Rand, n int) string {
	var b strings.Builder
	b.WriteString("evalcases:\n")
	indent := rng.IntN(3)
	for range n {
		b.WriteString(strings.Repeat(" ", indent) + "-" + strings.Repeat(" ", 1+rng.IntN(2)))
		randomBlock(rng, &b, indent+2, 0)
	}
	return b.String()
}

var randomScalars = []string{
	"a", "id", "hello world", "x y  z", "case-000001", "~", "null", "Null", "NULL", "true", "True", "false", "yes",
	"no", "on", "off", "y", "n", "0", "1", "-1", "+1", "01", "007", "0x1F", "0o7", "0b1", "1_000", "1.5", "-2.5e3",
	".5", "5.", ".inf", "-.inf", ".nan", "2001-12-14", "2001-12-14t21:59:43.10-05:00", "12:30:45", "-", "--", "-a",
	"-.5", "a:b", "a: b", "a :b", "a #b", "a#b", "#a", "a,b", "a, b", "[a]", "{a}", "a]", "a}", "'a'", "\"a\"",
	"it's", "say \"hi\"", "é", "漢字", "😀", "<<", "<", "!a", "&a", "*a", "|", ">", "%a", "@a", "`a", "?a", "? a",
	":a", "a?", "a\\b", "\\n", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
	"18446744073709551616", "1e400", "0.1", "3.0", "+.5", "=", "a   ", "  a",
}

func randomScalar(rng *rand.Rand) string {
	s := randomScalars[rng.IntN(len(randomScalars))]
	switch rng.IntN(6) {
	case 0:
		return "'" + strings.ReplaceAll(s, "'", "''") + "'"
	case 1:
		q := strings.NewReplacer("\\", "\\\\", "\"", "\\\"").Replace(s)
		if rng.IntN(3) == 0 {
			q += []string{"\\t", "\\u00e9", "\\x41", "\\U0001F600", "\\/", "\\ ", "\\N", "\\_", "\\0", "\\q"}[rng.IntN(10)]
		}
		return "\"" + q + "\""
	}
	return s
}

func randomFlow(rng *rand.Rand, b *strings.Builder, depth int) {
	switch k := rng.IntN(8); {
	case depth < 3 && k == 0:
		b.WriteString("[")
		for i := range rng.IntN(4) {
			if i > 0 {
				b.WriteString(", ")
			}
			randomFlow(rng, b, depth+1)
		}
		b.WriteString("]")
	case depth < 3 && k == 1:
		b.WriteString("{")
		for i := range rng.IntN(4) {
			if i > 0 {
				b.WriteString([]string{", ", ",", " , "}[rng.IntN(3)])
			}
			fmt.Fprintf(b, "%s%s", randomScalar(rng), []string{": ", ":", " : "}[rng.IntN(3)])
			randomFlow(rng, b, depth+1)
		}
		b.WriteString("}")
	default:
		b.WriteString(randomScalar(rng))
	}
}

// randomBlock writes a node whose first line is already started, at column col.
func randomBlock(rng *rand.Rand, b *strings.Builder, col, depth int) {
	pad := strings.Repeat(" ", col)
	switch k := rng.IntN(6); {
	case depth < 3 && k <= 2: // a mapping
		for i := range 1 + rng.IntN(4) {
			if i > 0 {
				b.WriteString(pad)
			}
			b.WriteString(randomScalar(rng) + ":")
			switch rng.IntN(4) {
			case 0: // nested, more indented
				b.WriteString(randomEnd(rng))
				inner := col + 1 + rng.IntN(3)
				b.WriteString(strings.Repeat(" ", inner))
				if rng.IntN(2) == 0 {
					b.WriteString("- ")
					inner += 2
				}
				randomBlock(rng, b, inner, depth+1)
			case 1: // an indentless sequence
				b.WriteString(randomEnd(rng))
				for range 1 + rng.IntN(3) {
					b.WriteString(pad + "- ")
					randomBlock(rng, b, col+2, depth+1)
				}
			default:
				b.WriteString(" ")
				randomFlow(rng, b, 0)
				b.WriteString(randomEnd(rng))
			}
		}
	case depth < 3 && k == 3: // a sequence
		b.WriteString(randomEnd(rng))
		for range 1 + rng.IntN(3) {
			b.WriteString(pad + "- ")
			randomBlock(rng, b, col+2, depth+1)
		}
	default:
		randomFlow(rng, b, 0)
		b.WriteString(randomEnd(rng))
	}
}

// randomEnd ends a line: maybe a comment, maybe blank or comment lines after it.
func randomEnd(rng *rand.Rand) string {
	s := []string{"", "", "", " # c", "  #c", "#c", " "}[rng.IntN(7)] + "\n"
	switch rng.IntN(8) {
	case 0:
		s += "\n"
	case 1:
		s += "# comment\n"
	case 2:
		s += "      # indented comment\n"
	}
	return s
}

// Random items, and random character edits of them, read by ReadItem exactly as by the YAML parser.
func TestFastItemMatchesYAMLOnRandomItems(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	rounds := 3000
	if testing.Short() {
		rounds = 500
	}
	read, total, plainRead, plainTotal := 0, 0, 0, 0
	edits := []string{" ", "  ", "\n", ":", ": ", "#", " #", "-", "- ", "[", "]", "{", "}", ",", "'", "\"", "\\", "\t", "?", "&", "*", "!", "|", ">"}
	for round := range rounds {
		doc := randomItems(rng, 1+rng.IntN(4))
		if round%2 == 1 {
			for range 1 + rng.IntN(3) {
				i := rng.IntN(len(doc))
				switch rng.IntN(3) {
				case 0:
					doc = doc[:i] + doc[min(i+1, len(doc)):]
				default:
					doc = doc[:i] + edits[rng.IntN(len(edits))] + doc[i:]
				}
			}
		}
		n := 0
		if sg := segment([]byte(doc)); sg != nil {
			n = len(sg.items)
		}
		r := checkFastItems(t, []byte(doc))
		read, total = read+r, total+n
		if round%2 == 0 {
			plainRead, plainTotal = plainRead+r, plainTotal+n
		}
		if t.Failed() {
			t.Fatalf("round %d, document:\n%s", round, doc)
		}
	}
	t.Logf("fastItem read %d of %d items (%d of %d unedited)", read, total, plainRead, plainTotal)
	if read < total/8 {
		t.Errorf("fastItem read only %d of %d items: the test checks little", read, total)
	}
}

func FuzzFastItem(f *testing.F) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 20 {
		f.Add([]byte(randomItems(rng, 2)))
	}
	for _, name := range []string{"testdata/screening.yaml", "testdata/full.yaml"} {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkFastItems(t, data)
	})
}

// rawMember encodes an object exactly as raw does, and the span it returns encodes the member exactly as the
// member's own raw does (messages keep their content's JSON as that span).
func TestRawMemberMatchesRaw(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	var walk func(v *yamltree.Value)
	checked := 0
	walk = func(v *yamltree.Value) {
		if v.Kind == yamltree.KindObject {
			for _, key := range append([]string{"content", "absent"}, v.Keys...) {
				raw, start, end := v.RawMember(key)
				if string(raw) != string(v.Raw()) {
					t.Fatalf("rawMember(%q) = %s, raw = %s", key, raw, v.Raw())
				}
				want := ""
				if m := v.Get(key); m != nil {
					want = string(m.Raw())
				}
				if got := string(raw[start:end]); got != want {
					t.Fatalf("rawMember(%q) span %s, want %s (object %s)", key, got, want, raw)
				}
				checked++
			}
		}
		for _, c := range v.Vals {
			walk(c)
		}
	}
	for range 300 {
		doc := []byte(randomItems(rng, 3))
		sg := segment(doc)
		if sg == nil {
			continue
		}
		sg.src = string(doc)
		for i := range sg.items {
			if v, _, ok := sg.fast(&yamltree.Arena{}, i); ok {
				walk(v)
			}
		}
	}
	if checked < 100 {
		t.Errorf("only %d objects checked", checked)
	}
}
