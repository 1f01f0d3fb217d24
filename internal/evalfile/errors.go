package evalfile

import (
	"fmt"
	"strings"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile/yamltree"
)

// Problem is one thing wrong with an eval file: its case, its file (a 4.42 suite's other files), the path of the
// field, its line and what is wrong. The readers of every format record it alike (yamltree.Reader).
type Problem = yamltree.Problem

// maxProblemsInError bounds how many problems Error lists.
const maxProblemsInError = 20

// ValidationError lists every problem found in an eval file.
type ValidationError struct {
	Problems []Problem
	// More counts the problems found but not listed: Scan keeps the first ones of a file read as a stream, so that
	// a large file with a problem in every case holds no more memory than a valid one (Parse lists them all).
	More int `json:"more,omitempty"`
}

// Error lists the first problems and says how many there are in all.
func (e *ValidationError) Error() string {
	var b strings.Builder
	n := len(e.Problems) + e.More
	if n == 1 {
		b.WriteString("invalid eval file: 1 problem: ")
	} else {
		fmt.Fprintf(&b, "invalid eval file: %d problems: ", n)
	}
	for i, p := range e.Problems {
		if i == maxProblemsInError {
			fmt.Fprintf(&b, "; ... and %d more", n-maxProblemsInError)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(p.String())
	}
	if len(e.Problems) <= maxProblemsInError && e.More > 0 {
		fmt.Fprintf(&b, "; ... and %d more", e.More)
	}
	return b.String()
}
