package evaluate

import (
	"fmt"
	"unicode/utf8"

	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// scoreEpsilon absorbs float rounding when a score is compared with the threshold (0.7 and 0.9 average to
// 0.7999999999999999).
const scoreEpsilon = 1e-9

// Bounded returns at most verdict.MaxNotes notes, each at most verdict.MaxNoteLength bytes, never nil.
func Bounded(notes []string) []string {
	within := len(notes) <= verdict.MaxNotes
	for _, n := range notes {
		within = within && len(n) <= verdict.MaxNoteLength && utf8.ValidString(n)
	}
	if within {
		// Nothing to cut: the notes themselves (their capacity cut, so that appending copies).
		if notes == nil {
			return []string{}
		}
		return notes[:len(notes):len(notes)]
	}
	out := make([]string, 0, min(len(notes), verdict.MaxNotes+1))
	for i, n := range notes {
		if i == verdict.MaxNotes {
			out = append(out, fmt.Sprintf("... and %d more", len(notes)-verdict.MaxNotes))
			break
		}
		out = append(out, textbound.Head(n, verdict.MaxNoteLength))
	}
	return out
}
