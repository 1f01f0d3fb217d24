package jsonlresult

import (
	"bytes"
	"strings"
)

// Slab sizes. Strings and line copies of many records share one allocation, which saves an allocation per field;
// the price is that a response kept alive keeps its slabs alive (at most a few tens of KiB), not only its own bytes.
// String slabs start small and double, so that parsing one small output does not reserve a whole slab.
const (
	firstStringSlabBytes = 512
	stringSlabBytes      = 8 << 10
	byteSlabBytes        = 64 << 10
)

// stringSlab hands out strings carved from a shared buffer. It only ever appends to a strings.Builder whose
// capacity was reserved up front, so the bytes behind a string it returned never change.
type stringSlab struct {
	b    strings.Builder
	size int // capacity of the current slab
}

func (s *stringSlab) string(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > stringSlabBytes/4 {
		return string(b)
	}
	if s.b.Cap()-s.b.Len() < len(b) {
		s.size = min(max(2*s.size, firstStringSlabBytes), stringSlabBytes)
		s.b = strings.Builder{}
		s.b.Grow(max(s.size, len(b)))
	}
	start := s.b.Len()
	s.b.Write(b)
	return s.b.String()[start:]
}

// byteSlab hands out copies carved from a shared buffer; each copy's capacity ends at its length, so appending to
// one never touches another.
type byteSlab struct {
	buf []byte
}

func (s *byteSlab) copy(b []byte) []byte {
	if len(b) > maxSlabLine {
		return bytes.Clone(b)
	}
	if cap(s.buf)-len(s.buf) < len(b) {
		s.buf = make([]byte, 0, byteSlabBytes)
	}
	start := len(s.buf)
	s.buf = append(s.buf, b...)
	return s.buf[start:len(s.buf):len(s.buf)]
}

// maxSlabLine is the longest line whose copy shares a byteSlab, and whose response shares typed slabs.
const maxSlabLine = byteSlabBytes / 4

// Slab sizes, in elements, of the typed slabs: they start small and double, as string slabs do.
const (
	firstTypedSlab = 4
	maxTypedSlab   = 256
)

// typedSlab hands out exact-size copies of slices carved from shared arrays, like byteSlab: one allocation for the
// trace events (or messages, or tool calls) of many records instead of one a record. Each copy's capacity ends at
// its length, so appending to one copies it.
type typedSlab[T any] struct {
	buf  []T
	size int
}

// copy returns a copy of src (nil when empty), carved from the slab when share is set.
func (s *typedSlab[T]) copy(src []T, share bool) []T {
	if len(src) == 0 {
		return nil
	}
	if !share || len(src) > maxTypedSlab/4 {
		out := make([]T, len(src))
		copy(out, src)
		return out
	}
	if cap(s.buf)-len(s.buf) < len(src) {
		s.size = min(max(2*s.size, firstTypedSlab), maxTypedSlab)
		s.buf = make([]T, 0, max(s.size, len(src)))
	}
	start := len(s.buf)
	s.buf = append(s.buf, src...)
	return s.buf[start:len(s.buf):len(s.buf)]
}

// one returns a pointer to a new zero T, carved from the slab when share is set.
func (s *typedSlab[T]) one(share bool) *T {
	if !share {
		return new(T)
	}
	if cap(s.buf) == len(s.buf) {
		s.size = min(max(2*s.size, firstTypedSlab), maxTypedSlab)
		s.buf = make([]T, 0, s.size)
	}
	var zero T
	s.buf = append(s.buf, zero)
	return &s.buf[len(s.buf)-1]
}
