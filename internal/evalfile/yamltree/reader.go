package yamltree

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Problem is one thing wrong with an eval file (evalfile.Problem is this type).
type Problem struct {
	// CaseIndex is the index of the case (an evalcases item, a 4.42 suite's test), -1 for a file-level problem.
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

// yamlLine finds the line number in a YAML library error message.
var yamlLine = regexp.MustCompile(`line (\d+)`)

// SyntaxProblem is the file-level problem of a text the YAML library refuses (err), at the line its message names.
func SyntaxProblem(err error) Problem {
	p := Problem{CaseIndex: -1, Message: "not valid YAML: " + err.Error()}
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		p.Line, _ = strconv.Atoi(m[1])
	}
	return p
}

// Reader is what the readers of eval files share as they read values: the problems found so far, each placed in
// the case and the file being read, and the reading of members every reader checks alike. The readers embed it.
type Reader struct {
	// Problems are the problems found so far, in order.
	Problems []Problem
	// CaseIndex and CaseID locate problems inside a case; CaseIndex is -1 outside cases. InFile is the file being
	// read when it is not the eval file (a 4.42 suite's other files).
	CaseIndex int
	CaseID    string
	InFile    string
	// ValidateOnly says the values read are only validated and then dropped (a case read ahead, only to validate
	// it): the JSON of what is read, which no validation reads, is not encoded (Raw).
	ValidateOnly bool
}

// Raw is v.Raw(), or nil when validating only.
func (r *Reader) Raw(v *Value) json.RawMessage {
	if r.ValidateOnly {
		return nil
	}
	return v.Raw()
}

// Add records a problem at path, on v's line (0 when v is nil).
func (r *Reader) Add(path string, v *Value, format string, args ...any) {
	line := 0
	if v != nil {
		line = v.Line
	}
	r.Problems = append(r.Problems, Problem{
		CaseIndex: r.CaseIndex, CaseID: r.CaseID, File: r.InFile, Path: path, Line: line, Message: fmt.Sprintf(format, args...),
	})
}

// AddAt records a problem at an explicit line.
func (r *Reader) AddAt(path string, line int, format string, args ...any) {
	r.Problems = append(r.Problems, Problem{
		CaseIndex: r.CaseIndex, CaseID: r.CaseID, File: r.InFile, Path: path, Line: line, Message: fmt.Sprintf(format, args...),
	})
}

// OptString reads an optional string member; a present non-string is a problem.
func (r *Reader) OptString(obj *Value, key, path string) string {
	v := obj.Get(key)
	if v.IsNull() {
		return ""
	}
	if v.Kind != KindString {
		r.Add(JoinPath(path, key), v, "must be a string, got %s", v.Kind)
		return ""
	}
	return v.Str
}

// OptBool reads an optional boolean member.
func (r *Reader) OptBool(obj *Value, key, path string, def bool) bool {
	v := obj.Get(key)
	if v.IsNull() {
		return def
	}
	if v.Kind != KindBool {
		r.Add(JoinPath(path, key), v, "must be true or false, got %s", v.Kind)
		return def
	}
	return v.Bool
}

// NonNegative reads a number that must be finite and >= 0; ok is false (after recording a problem) otherwise.
func (r *Reader) NonNegative(v *Value, path string) (float64, bool) {
	if v.Kind != KindNumber {
		r.Add(path, v, "must be a number, got %s", v.Kind)
		return 0, false
	}
	if v.Float < 0 {
		r.Add(path, v, "must not be negative, got %s", v.Num)
		return 0, false
	}
	return v.Float, true
}

// RequiredNonNegative reads the non-negative number under v's key, which must be set (meaning says what it is).
func (r *Reader) RequiredNonNegative(v *Value, key, path, meaning string) (float64, bool) {
	x := v.Get(key)
	if x.IsNull() {
		r.Add(JoinPath(path, key), v, "is required (%s)", meaning)
		return 0, false
	}
	return r.NonNegative(x, JoinPath(path, key))
}

// NonNegativeOf reads the non-negative number under v's key snake, else under camel (AgentV reads both spellings);
// nil when neither is set or the value is invalid (the problem is added at its path).
func (r *Reader) NonNegativeOf(v *Value, path, snake, camel string) *float64 {
	key, x := snake, v.Get(snake)
	if x.IsNull() {
		key, x = camel, v.Get(camel)
	}
	if x.IsNull() {
		return nil
	}
	f, ok := r.NonNegative(x, JoinPath(path, key))
	if !ok {
		return nil
	}
	return &f
}

// SizeText formats a size in bytes as MiB when it is a whole number of them.
func SizeText(n int) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return strconv.Itoa(n>>20) + " MiB"
	}
	return strconv.Itoa(n) + " bytes"
}
