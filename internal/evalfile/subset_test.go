package evalfile

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile/yamltree"
)

// subsetCases are valid eval files of the shapes a subset must handle: text cut at items (with header anchors,
// comments between items, no final newline) and the whole-document fallback (anchors across items, flow style,
// evalcases not last, an aliased evalcases).
var subsetCases = map[string]string{
	"block items with header anchors": `$schema: agentv-eval-v2
description: d
execution:
  evaluators: &evs
    - {name: fast, type: latency, threshold: 10}
evalcases:
  # the first case
  - id: a
    input_messages: [{role: user, content: "x"}]
    execution: {evaluators: *evs}

  - id: b
    input_messages: [{role: user, content: {b: 1, a: [x, 2.50, true, null]}}]
  - {id: c, input_messages: [{role: user, content: "x"}], rubrics: [be kind]}
  - id: d
    input_messages: [{role: user, content: "last, no newline"}]`,
	"anchors across items": `evalcases:
  - id: a
    input_messages: &msgs [{role: user, content: {b: 1, a: [x, 2.50]}}]
  - id: b
    input_messages: *msgs
  - &c {id: c, input_messages: [{role: user, content: y}]}
  - {<<: *c, id: d}
`,
	"flow sequence and evalcases not last": "evalcases: [{id: a, input_messages: [{role: user, content: x}]}, {id: b, input_messages: [{role: user, content: y}]}, {id: c, input_messages: [{role: user, content: z}]}]\ndescription: d\n",
	"aliased evalcases":                    "x: &c [{id: a, input_messages: [{role: user, content: x}]}, {id: b, input_messages: [{role: user, content: y}]}]\nevalcases: *c\n",
}

// TestSubsetKeepsExactlyTheSelectedCases checks, for every selection of cases of each file, that the subset parses
// to exactly the selected cases, each as the whole file has it (content, evaluators, settings), in order.
func TestSubsetKeepsExactlyTheSelectedCases(t *testing.T) {
	files := map[string][]byte{}
	for name, doc := range subsetCases {
		files[name] = []byte(doc)
	}
	for _, name := range []string{"testdata/screening.yaml", "testdata/full.yaml"} {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		files[name] = data
	}
	for name, data := range files {
		whole, err := Parse(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		n := whole.NumCases()
		for mask := 1; mask < 1<<n && mask < 1<<10; mask++ {
			keep := func(i int) bool { return mask&(1<<i) != 0 }
			sub, err := Subset(data, keep)
			if err != nil {
				t.Fatalf("%s, mask %b: %v", name, mask, err)
			}
			got, err := Parse(sub)
			if err != nil {
				t.Fatalf("%s, mask %b: the subset does not parse: %v\n%s", name, mask, err, sub)
			}
			var want []caseView
			for i, c := range allCases(whole) {
				if keep(i) {
					want = append(want, viewCase(c))
				}
			}
			var have []caseView
			for _, c := range allCases(got) {
				have = append(have, viewCase(c))
			}
			if diff := cmp.Diff(want, have); diff != "" {
				t.Fatalf("%s, mask %b: subset cases differ (-want +got):\n%s\nsubset:\n%s", name, mask, diff, sub)
			}
			if got.Description != whole.Description || got.Schema != whole.Schema {
				t.Errorf("%s, mask %b: header changed: %q %q", name, mask, got.Schema, got.Description)
			}
		}
	}
}

// TestSubsetOfCutTextIsTheFilesOwnText checks the fast path: the kept items' text is copied byte for byte.
func TestSubsetOfCutTextIsTheFilesOwnText(t *testing.T) {
	data := []byte(subsetCases["block items with header anchors"])
	sub, err := Subset(data, func(i int) bool { return i == 1 })
	if err != nil {
		t.Fatal(err)
	}
	want := data[:bytes.Index(data, []byte("  - id: a"))]
	want = append(want, "  - id: b\n    input_messages: [{role: user, content: {b: 1, a: [x, 2.50, true, null]}}]\n"...)
	if diff := cmp.Diff(string(want), string(sub)); diff != "" {
		t.Errorf("subset (-want +got):\n%s", diff)
	}
}

func TestSubsetProblems(t *testing.T) {
	none := func(int) bool { return false }
	all := func(int) bool { return true }
	for _, tt := range []struct {
		name, doc string
		keep      func(int) bool
		want      string
	}{
		{"nothing kept", subsetCases["anchors across items"], none, "no case is selected"},
		{"nothing kept, cut text", subsetCases["block items with header anchors"], none, "no case is selected"},
		{"not yaml", "evalcases: [", all, "does not parse"},
		{"no evalcases", "description: d\n", all, "no evalcases sequence"},
		{"evalcases a mapping", "evalcases: {a: 1}\n", all, "no evalcases sequence"},
		{"root a list", "- a\n", all, "not a mapping"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Subset([]byte(tt.doc), tt.keep)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Subset() error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// TestSubsetOfALargeFileShards splits a generated file into shards and checks that their cases, concatenated,
// are the file's, in order.
func TestSubsetOfALargeFileShards(t *testing.T) {
	data := benchEvalFile(5000)
	whole, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 5 {
		shards := 1 + r.IntN(40)
		var ids []string
		for k := range shards {
			lo, hi := k*whole.NumCases()/shards, (k+1)*whole.NumCases()/shards
			sub, err := Subset(data, func(i int) bool { return i >= lo && i < hi })
			if err != nil {
				t.Fatalf("shard %d of %d: %v", k, shards, err)
			}
			f, err := Parse(sub)
			if err != nil {
				t.Fatalf("shard %d of %d: %v", k, shards, err)
			}
			ids = append(ids, f.CaseIDs()...)
		}
		if diff := cmp.Diff(whole.CaseIDs(), ids); diff != "" {
			t.Fatalf("%d shards: ids differ:\n%s", shards, fmt.Sprint(diff[:min(len(diff), 2000)]))
		}
	}
}

// TestLargeFileWithoutAliasesIsNotABomb parses a file of more values than the alias expansion bound, none of them
// from an alias: only aliases count toward the bound.
func TestLargeFileWithoutAliasesIsNotABomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("evalcases:\n")
	n := yamltree.MaxNodes/14 + 1000
	for i := range n {
		fmt.Fprintf(&b, "  - id: c%06d\n    input_messages:\n      - role: user\n        content: {row: {amount: 100, origin_country: NZ}}\n"+
			"    expected_messages:\n      - role: assistant\n        content: {decision: CLEAR}\n", i)
	}
	f, err := Parse([]byte(b.String()))
	if err != nil {
		t.Fatalf("a %d-case file without aliases: %v", n, err)
	}
	if len(f.CaseIDs()) != n {
		t.Errorf("%d cases, want %d", len(f.CaseIDs()), n)
	}
}
