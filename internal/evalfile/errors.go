package evalfile

import (
	"fmt"
	"strings"
)

// Problem is one thing wrong with an eval file.
type Problem struct {
	// CaseIndex is the index of the case in evalcases, -1 for a file-level problem.
	CaseIndex int `json:"caseIndex"`
	// CaseID is the case's id when it has a usable one.
	CaseID string `json:"caseId,omitempty"`
	// File is the file the problem is in when it is not the eval file itself: one a 4.42 suite reads (its tests'
	// file, a case.yaml, an assertion template), as a slash path in its eval bundle.
	File string `json:"file,omitempty"`
	// Path locates the field, for example evalcases[3].execution.evaluators[0].mode.
	Path string `json:"path,omitempty"`
	// Line is the 1-based line in the file, 0 when unknown.
	Line int `json:"line,omitempty"`
	// Message says what is wrong.
	Message string `json:"message"`
}

// String formats the problem on one line.
func (p Problem) String() string {
	var b strings.Builder
	switch {
	case p.File != "" && p.Line > 0:
		fmt.Fprintf(&b, "%s line %d: ", p.File, p.Line)
	case p.File != "":
		fmt.Fprintf(&b, "%s: ", p.File)
	case p.Line > 0:
		fmt.Fprintf(&b, "line %d: ", p.Line)
	}
	if p.Path != "" {
		b.WriteString(p.Path)
		if p.CaseID != "" {
			fmt.Fprintf(&b, " (case %q)", p.CaseID)
		}
		b.WriteString(": ")
	}
	b.WriteString(p.Message)
	return b.String()
}

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
