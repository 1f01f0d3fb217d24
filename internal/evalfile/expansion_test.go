package evalfile_test

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
)

// allocated returns the bytes fn allocates (all of it, freed or not): what an alias bomb would make the reader
// allocate, measured without holding it.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// readers are the three ways an eval file is read: Parse (the manager's inline and ConfigMap files, the pod, the
// plugin, collector check), Scan (the manager's bucket files) and Subset (the pod's shard, the manager's split
// check and resume).
var readers = []struct {
	name string
	read func([]byte) error
}{
	{"Parse", func(data []byte) error { _, err := evalfile.Parse(data); return err }},
	{"Scan", func(data []byte) error { _, err := evalfile.Scan(bytes.NewReader(data)); return err }},
	{"Subset", func(data []byte) error { _, err := evalfile.Subset(data, func(int) bool { return true }); return err }},
}

// MaxExpansionBytes, the YAML tree's bound (yamltree.MaxExpansionBytes), is MaxWholeBytes: the docs, the manager's
// memory and the bound on a case's files (internal/evaluate) take it to be.
func TestExpansionBoundIsTheWholeLimit(t *testing.T) {
	if evalfile.MaxExpansionBytes != evalfile.MaxWholeBytes {
		t.Errorf("MaxExpansionBytes is %d, MaxWholeBytes %d: they are one bound", evalfile.MaxExpansionBytes, evalfile.MaxWholeBytes)
	}
}

// The alias bomb of issue 37 (100 KB anchored string, 20 aliases to it in a message list, 1,500 cases aliasing
// the list: 155 KB of text, 3 GB expanded) is refused by every reader, naming the bound and the alias's line,
// after allocating a bounded amount (it took 504 MB of heap and 10 s at a tenth of its cases before the bound).
func TestAliasBombRefusedByEveryReader(t *testing.T) {
	data := testutil.AliasBomb(100_000, 20, 1500)
	for _, r := range readers {
		t.Run(r.name, func(t *testing.T) {
			var err error
			n := allocated(func() { err = r.read(data) })
			if err == nil {
				t.Fatal("the alias bomb was accepted")
			}
			for _, want := range []string{"alias *", "16 MiB", "line "} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			// The line named is one of a case's "input_messages: *m".
			m := regexp.MustCompile(`line (\d+): `).FindStringSubmatch(err.Error())
			if m == nil {
				t.Fatalf("error %q names no line", err)
			}
			line, _ := strconv.Atoi(m[1])
			if lines := strings.Split(string(data), "\n"); line < 1 || line > len(lines) || strings.TrimSpace(lines[line-1]) != "input_messages: *m" {
				t.Errorf("error %q names line %d, not the line of an alias *m", err, line)
			}
			// The bound is 16 MiB of JSON; what is built on the way to it (each message's JSON twice, the
			// values) stays within a few times that.
			if n > 128<<20 {
				t.Errorf("refusing the bomb allocated %d MiB", n>>20)
			}
			t.Logf("%s: %d MiB allocated: %v", r.name, n>>20, err)
		})
	}
}

// Merge keys expand through aliases too: a mapping merged into many cases counts each time.
func TestMergeKeyBombRefused(t *testing.T) {
	var b strings.Builder
	fmt.Fprintf(&b, "$schema: agentv-eval-v2\nevalcases:\n  - id: c0\n    input_messages:\n      - &msg {role: user, content: \"%s\"}\n", strings.Repeat("B", 200_000))
	for i := 1; i < 200; i++ {
		fmt.Fprintf(&b, "  - id: c%d\n    input_messages:\n      - {<<: *msg, name: n}\n      - {<<: *msg, name: n}\n", i)
	}
	for _, r := range readers {
		if err := r.read([]byte(b.String())); err == nil || !strings.Contains(err.Error(), "alias *msg") {
			t.Errorf("%s: merge-key bomb: err = %v, want the alias named", r.name, err)
		}
	}
}

// One case may not expand past the bound even in a file large enough that the whole-file bound is its size.
func TestOneCaseExpansionBound(t *testing.T) {
	big := strings.Repeat("C", 1<<20)
	var b strings.Builder
	fmt.Fprintf(&b, "$schema: agentv-eval-v2\ndescription: &big \"%s\"\nevalcases:\n", big)
	// Cases that carry their own text make the file larger than the bound (so the whole-file bound is its size).
	for i := range 18 {
		fmt.Fprintf(&b, "  - id: own%d\n    input_messages: [{role: user, content: \"%s\"}]\n", i, big)
	}
	b.WriteString("  - id: bomb\n    input_messages:\n")
	for range 17 {
		b.WriteString("      - {role: user, content: *big}\n")
	}
	data := []byte(b.String())
	if len(data) <= evalfile.MaxExpansionBytes {
		t.Fatalf("the file has %d bytes, want more than the bound", len(data))
	}
	for _, r := range readers[:2] {
		err := r.read(data)
		if err == nil || !strings.Contains(err.Error(), "expands its case by more than 16 MiB:") {
			t.Errorf("%s: err = %v, want the case's bound", r.name, err)
		}
	}
}

// Anchors used as people use them (a shared prompt and shared evaluators, defined before evalcases and aliased by
// every case) read as before, by every reader, also when their expansion passes the file's own size many times
// over: only the bytes count, not the ratio.
func TestOrdinaryAliasesAccepted(t *testing.T) {
	var b strings.Builder
	fmt.Fprintf(&b, "$schema: agentv-eval-v2\ndescription: &prompt \"%s\"\nexecution:\n  evaluators: &ev\n    - {name: fast, type: latency, threshold: 1800}\nevalcases:\n", strings.Repeat("p", 2000))
	for i := range 2000 {
		fmt.Fprintf(&b, "  - id: c%d\n    input_messages: [{role: system, content: *prompt}, {role: user, content: q%d}]\n    execution: {evaluators: *ev}\n", i, i)
	}
	data := []byte(b.String())
	for _, r := range readers {
		if err := r.read(data); err != nil {
			t.Errorf("%s: %v", r.name, err)
		}
	}
	f, err := evalfile.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.CaseAt(1999).InputMessages[0].Content.Text; len(got) != 2000 {
		t.Errorf("the aliased prompt has %d bytes, want 2000", len(got))
	}
}

// caseJSONBytes is the JSON of the cases' messages a parsed file holds: what alias expansion multiplies.
func caseJSONBytes(f *evalfile.File) int {
	n := 0
	for i := range f.NumCases() {
		c := f.CaseAt(i)
		for _, m := range append(c.InputMessages, c.ExpectedMessages...) {
			n += len(m.Raw)
		}
	}
	return n
}

// FuzzAliasExpansion feeds alias-heavy documents (seeded with the bomb's shapes: a string aliased in a list
// aliased by many cases, merge keys, nested and self-referring aliases) to every reader: none panics, and what a
// file that parses holds is bounded by its size and MaxExpansionBytes, never by what its aliases multiply.
func FuzzAliasExpansion(f *testing.F) {
	f.Add(testutil.AliasBomb(2000, 20, 60))
	f.Add(testutil.AliasBomb(30, 3, 4))
	f.Add(testutil.AliasBombOfTinyValues(50, 40, true))
	f.Add(testutil.AliasBombOfTinyValues(50, 40, false))
	f.Add([]byte("$schema: agentv-eval-v2\nevalcases:\n  - id: a\n    input_messages: &m [{role: user, content: &s x}, {role: user, content: *s}]\n  - id: b\n    input_messages: [*m, *m]\n"))
	f.Add([]byte("evalcases:\n  - &c {id: a, input_messages: [{<<: &x {role: user, content: yy}}, {<<: [*x, *x]}]}\n  - *c\n"))
	f.Add([]byte("a: &a [*a, *a]\nevalcases:\n  - {id: a, input_messages: [{role: user, content: *a}]}\n"))
	f.Add([]byte("d: &d0 [zz, zz, zz, zz, zz, zz, zz, zz]\ne: &d1 [*d0, *d0, *d0, *d0, *d0, *d0, *d0, *d0]\ng: &d2 [*d1, *d1, *d1, *d1, *d1, *d1, *d1, *d1]\nh: &d3 [*d2, *d2, *d2, *d2, *d2, *d2, *d2, *d2]\nevalcases:\n  - {id: a, input_messages: [{role: user, content: *d3}]}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<16 {
			return
		}
		for _, r := range readers[1:] {
			_ = r.read(data)
		}
		file, err := evalfile.Parse(data)
		if err != nil {
			var verr *evalfile.ValidationError
			if !errors.As(err, &verr) {
				t.Fatalf("Parse returned %T, want a *ValidationError", err)
			}
			return
		}
		// Each message's JSON is held twice (the message's and its content's); text may take up to six times its
		// bytes as JSON (\u00XX escapes).
		if n, bound := caseJSONBytes(file), 2*(6*len(data)+evalfile.MaxExpansionBytes); n > bound {
			t.Fatalf("a %d-byte file parsed to %d bytes of messages (bound %d)", len(data), n, bound)
		}
	})
}
