// Package idindex finds ids in a list of ids: the position of each id's first occurrence. It serves the large
// lists of case ids the collector and `collector check` handle (100,000 ids and more) in a fraction of a Go map's
// memory (a 4-byte slot per id in a table at most four fifths full, and no copy of the ids), and a caller that looks ids
// up in about list order (a runner's output in eval-file order) passes the position it expects, which is checked
// first. The package is pure Go.
package idindex

import "hash/maphash"

// Index finds ids in the list it was built from. It is read-only once built and safe for concurrent use.
type Index struct {
	ids []string
	// slots hold the position of an id plus one (0: empty); the table's size is a power of two.
	slots []int32
	mask  uint64
	seed  maphash.Seed
	// distinct counts the distinct ids.
	distinct int
}

// maxIDs bounds the list: positions are stored in 31 bits.
const maxIDs = 1 << 30

// New indexes ids, which must not change while the Index is used. It returns nil when there are more ids than it
// can hold (2^30).
func New(ids []string) *Index {
	if len(ids) > maxIDs {
		return nil
	}
	// At most about four fifths full: a lookup probes two or three slots on average (the position hint spares most
	// lookups even that).
	size := 8
	for size < len(ids)+len(ids)/4 {
		size *= 2
	}
	x := &Index{ids: ids, slots: make([]int32, size), mask: uint64(size - 1), seed: maphash.MakeSeed()}
	for i, id := range ids {
		j := maphash.String(x.seed, id) & x.mask
		for {
			s := x.slots[j]
			if s == 0 {
				x.slots[j] = int32(i + 1)
				x.distinct++
				break
			}
			if ids[s-1] == id {
				break // a later occurrence: the first one stays
			}
			j = (j + 1) & x.mask
		}
	}
	return x
}

// Len returns the number of ids in the list, duplicates included.
func (x *Index) Len() int { return len(x.ids) }

// Distinct reports whether the ids are all distinct.
func (x *Index) Distinct() bool { return x.distinct == len(x.ids) }

// ID returns the id at position i.
func (x *Index) ID(i int) string { return x.ids[i] }

// Find returns the position of id's first occurrence. hint is where the caller expects it (any int): when the
// list holds id at hint and no earlier duplicate of it, that is the answer without hashing.
func (x *Index) Find(id string, hint int) (int, bool) {
	if hint >= 0 && hint < len(x.ids) && x.ids[hint] == id && x.Distinct() {
		return hint, true
	}
	j := maphash.String(x.seed, id) & x.mask
	for {
		s := x.slots[j]
		if s == 0 {
			return 0, false
		}
		if x.ids[s-1] == id {
			return int(s - 1), true
		}
		j = (j + 1) & x.mask
	}
}
