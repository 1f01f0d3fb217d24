package jsonlresult

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSlabsNeverChangeWhatTheyHandedOut checks that strings and copies from the slabs keep their content while the
// slabs fill and roll over, and that appending to a copy does not overwrite the next one.
func TestSlabsNeverChangeWhatTheyHandedOut(t *testing.T) {
	var ss stringSlab
	var bs byteSlab
	var wantStrings, gotStrings []string
	var copies [][]byte
	for i := range 5000 {
		word := strings.Repeat(string(rune('a'+i%26)), 1+i%700)
		wantStrings = append(wantStrings, word)
		gotStrings = append(gotStrings, ss.string([]byte(word)))
		copies = append(copies, bs.copy([]byte(word)))
	}
	for i := range copies {
		copies[i] = append(copies[i], '!')
	}
	if diff := cmp.Diff(wantStrings, gotStrings); diff != "" {
		t.Errorf("slab strings changed (-want +got):\n%s", diff)
	}
	for i, c := range copies {
		if string(c) != wantStrings[i]+"!" {
			t.Fatalf("copy %d = %q, want %q", i, c, wantStrings[i]+"!")
		}
	}
}

// Typed slabs hand out copies and new values that keep what they were given while the slabs fill and roll over;
// appending to a copy does not overwrite the next one.
func TestTypedSlabsNeverChangeWhatTheyHandedOut(t *testing.T) {
	var ts typedSlab[int]
	var copies [][]int
	var ones []*int
	for i := range 3000 {
		src := make([]int, i%(maxTypedSlab/2))
		for k := range src {
			src[k] = i*1000 + k
		}
		copies = append(copies, ts.copy(src, i%7 != 0))
		p := ts.one(i%5 != 0)
		*p = i
		ones = append(ones, p)
	}
	for i := range copies {
		copies[i] = append(copies[i], -1)
	}
	for i, c := range copies {
		n := i % (maxTypedSlab / 2)
		if len(c) != n+1 || c[n] != -1 || *ones[i] != i {
			t.Fatalf("copy %d has %d elements, value %d", i, len(c), *ones[i])
		}
		for k := range n {
			if c[k] != i*1000+k {
				t.Fatalf("copy %d element %d = %d", i, k, c[k])
			}
		}
	}
}
