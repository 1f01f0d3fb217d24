package idindex

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// The index finds what a map of first occurrences finds, with any hint, with and without duplicates.
func TestIndexMatchesAMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		n := rng.IntN(3000)
		ids := make([]string, n)
		for i := range ids {
			ids[i] = fmt.Sprintf("case-%d", i)
			if round%2 == 1 && i > 0 && rng.IntN(10) == 0 {
				ids[i] = ids[rng.IntN(i)] // a duplicate
			}
		}
		first := map[string]int{}
		for i, id := range ids {
			if _, ok := first[id]; !ok {
				first[id] = i
			}
		}
		x := New(ids)
		if x.Len() != n || x.Distinct() != (len(first) == n) {
			t.Fatalf("round %d: Len %d, Distinct %v; want %d, %v", round, x.Len(), x.Distinct(), n, len(first) == n)
		}
		for k := range 2 * n {
			id := fmt.Sprintf("case-%d", rng.IntN(n+n/4+1))
			hint := rng.IntN(n+2) - 1
			if k%2 == 0 && n > 0 {
				hint = first[ids[rng.IntN(n)]] // often the right place
				id = ids[hint]
			}
			got, ok := x.Find(id, hint)
			want, wantOK := first[id]
			if ok != wantOK || got != want {
				t.Fatalf("round %d: Find(%q, %d) = %d, %v; want %d, %v", round, id, hint, got, ok, want, wantOK)
			}
		}
	}
}
