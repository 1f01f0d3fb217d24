// Package evalconvert writes an agentv-eval-v2 file (AgentV v2.0.1's format) as an AgentV 4.42 suite, for a team
// that moves its suites forward once (`kubectl evalrun convert`). Every key the operator's v2 reader reads becomes
// the 4.42 key its 4.42 reader reads into the same case or evaluator (internal/evalfile: both formats read into one
// model); what cannot be carried, or would be judged differently, is said in a Note with the v2 key and its line.
// A Note that Differs means the suite would not judge the file's cases as the v2 file is judged; the others say
// what was renamed, dropped without effect, or is judged the 4.42 way by design (docs/formats.md, "Converting").
//
// The converted suite is read back with the 4.42 reader before it is returned: a suite that reader refuses is never
// handed out silently. Pure Go: the eval bundle's files (prompt files, AgentV's config) are read only through the
// bundle.Dir given.
package evalconvert

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/evalrun-operator/evalrun-operator/internal/bundle"
	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"

	// The converted suite is read back with the 4.42 reader: this package needs it, whatever binary links it.
	_ "github.com/evalrun-operator/evalrun-operator/internal/evalfile/suite42"
)

// Options says where the v2 file's other files are.
type Options struct {
	// Bundle is the eval bundle: its root directory and the eval file's slash-separated path in it. With Root ""
	// no file is read: prompt files and AgentV's config (.agentv/config.yaml) are not checked, and notes say so.
	Bundle bundle.Dir
}

// Note is one thing the conversion says about a v2 key.
type Note struct {
	// File is the file the note is about: "" for the eval file, else a bundle path (a prompt file) or
	// SuiteFile (the converted suite, as the 4.42 reader read it).
	File string
	// Line is the line of the key in File (0 when unknown); Path is the key's path ("evalcases[0].evaluators[1]").
	Line int
	Path string
	// Message says what happened and what to do.
	Message string
	// Differs says that the converted suite would judge the file's cases differently (or not read them): a
	// converter that writes it anyway must be told to (kubectl evalrun convert --force).
	Differs bool
	// More counts the other keys the same note was made for (cases alike), which are not listed.
	More int
}

// SuiteFile is the File of a Note about the converted suite itself.
const SuiteFile = "(converted suite)"

// String is the note as `LINE: PATH: differs|note: MESSAGE (and N more)`, File first when set.
func (n Note) String() string {
	var b strings.Builder
	if n.File != "" {
		b.WriteString(n.File + ":")
	}
	if n.Line > 0 {
		b.WriteString(strconv.Itoa(n.Line) + ":")
	}
	if b.Len() > 0 {
		b.WriteString(" ")
	}
	if n.Path != "" {
		b.WriteString(n.Path + ": ")
	}
	if n.Differs {
		b.WriteString("differs: ")
	} else {
		b.WriteString("note: ")
	}
	b.WriteString(n.Message)
	if n.More > 0 {
		fmt.Fprintf(&b, " (and %d more like it)", n.More)
	}
	return b.String()
}

// Result is a converted suite and what the conversion said.
type Result struct {
	// Suite is the AgentV 4.42 suite, as YAML.
	Suite []byte
	// Notes are in the order of their lines, the eval file's first; notes alike are counted in the first's More.
	Notes []Note
	// Cases is the number of tests written.
	Cases int
}

// Differs reports whether a note says the suite would judge differently.
func (r *Result) Differs() bool {
	return slices.ContainsFunc(r.Notes, func(n Note) bool { return n.Differs })
}

// ErrNotV2 says the file is not an agentv-eval-v2 file (it is a 4.42 suite already).
var ErrNotV2 = errors.New("the file is already an AgentV 4.42 suite (it has tests): there is nothing to convert")

// Convert writes data, an agentv-eval-v2 file, as an AgentV 4.42 suite. An invalid v2 file is an error (the v2
// reader's *evalfile.ValidationError, every problem with its line), and so is a 4.42 suite (ErrNotV2).
func Convert(data []byte, o Options) (*Result, error) {
	f, err := evalfile.Parse(data, evalfile.WithFiles(nil, o.Bundle.EvalFile))
	if err != nil {
		return nil, err
	}
	if f.Format != evalfile.FormatV2 {
		return nil, ErrNotV2
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("not valid YAML: %w", err)
	}
	c := &converter{o: o, f: f}
	if err := c.guidelines(); err != nil {
		return nil, err
	}
	out := c.file(&doc)
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(out); err != nil {
		return nil, fmt.Errorf("writing the suite: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("writing the suite: %w", err)
	}
	r := &Result{Suite: buf.Bytes(), Cases: f.NumCases()}
	c.readBack(r.Suite)
	r.Notes = merge(c.notes)
	return r, nil
}

// converter holds one conversion's state.
type converter struct {
	o Options
	f *evalfile.File
	// patterns are the guideline patterns of AgentV's config nearest the eval file (nil: none).
	patterns []string
	// inputFilesNoted says the note on how input files are shown was made (once a file).
	inputFilesNoted bool
	// fileAssertions are the file-level evaluators converted (nil: none).
	fileAssertions *yaml.Node
	notes          []Note
}

// note records a note about the v2 key k (its line) at path.
func (c *converter) note(k *yaml.Node, path string, differs bool, format string, args ...any) {
	line := 0
	if k != nil {
		line = k.Line
	}
	c.notes = append(c.notes, Note{Line: line, Path: path, Message: fmt.Sprintf(format, args...), Differs: differs})
}

// guidelines reads the guideline patterns of AgentV's config as AgentV v2.0.1 finds it (the v2 judges set input
// files that match them aside; AgentV 4.42 reads no such patterns).
func (c *converter) guidelines() error {
	if c.o.Bundle.Root == "" {
		return nil
	}
	p, err := c.o.Bundle.GuidelinePatterns()
	if err != nil {
		return err
	}
	c.patterns = p
	return nil
}

// file converts the document.
func (c *converter) file(doc *yaml.Node) *yaml.Node {
	root := expand(doc.Content[0])
	if exec := lookup(root, "execution"); exec != nil {
		if ev := lookup(exec, "evaluators"); !isNull(ev) {
			c.fileAssertions = c.evaluatorList(ev, "execution.evaluators")
		}
	}
	out := newMapping()
	out.n.HeadComment = strings.TrimSpace(doc.HeadComment + "\n" + root.HeadComment)
	pairs(root, func(k, v *yaml.Node) {
		switch k.Value {
		case "$schema":
			// The format's marker: a 4.42 suite names none (agentv-eval-v2 here would make it a v2 file).
		case "description":
			out.set("description", v, k)
		case "dataset":
			c.dataset(out, k, v)
		case "execution":
			c.fileExecution(out, k, v)
		case "evalcases":
			c.cases(out, k, v)
		default:
			c.note(k, k.Value, false, "dropped: the v2 reader ignores this key (anchors it defined were expanded where they were used)")
		}
	})
	if root.FootComment != "" {
		out.n.FootComment = root.FootComment
	}
	return &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{out.n}}
}

// dataset carries the file's dataset as the suite's name when it is one (lower-case letters, digits and '-', at
// most 64): AgentV 4.42 names a suite's results by it.
func (c *converter) dataset(out *mapping, k, v *yaml.Node) {
	name := v.Value
	valid := isString(v) && name != "" && len(name) <= 64 && strings.Trim(name, "abcdefghijklmnopqrstuvwxyz0123456789-") == ""
	desc := c.f.Description
	if valid && len(desc) > 1024 {
		valid = false
	}
	if !valid {
		c.note(k, "dataset", false, "dropped: AgentV 4.42 has no dataset key, and %q cannot be the suite's name (1 to 64 "+
			"lower-case letters, digits and '-', with a description of at most 1024 characters); the operator reads "+
			"neither", name)
		return
	}
	out.set("name", v, k)
	c.note(k, "dataset", false, "written as the suite's name (AgentV 4.42 has no dataset key)")
}

// fileExecution carries execution.target and makes the file-level evaluators the suite's assertions.
func (c *converter) fileExecution(out *mapping, k, v *yaml.Node) {
	exec := newMapping()
	pairs(v, func(ek, ev *yaml.Node) {
		switch ek.Value {
		case "target":
			exec.set("target", ev, ek)
		case "evaluators":
		default:
			c.note(ek, "execution."+ek.Value, false, "dropped: the v2 reader ignores this key")
		}
	})
	if !exec.empty() {
		out.set("execution", exec.n, k)
	}
	if c.fileAssertions != nil && len(c.fileAssertions.Content) > 0 {
		out.set("assertions", c.fileAssertions, keyNode(v, "evaluators"))
	}
}

// cases converts evalcases into tests.
func (c *converter) cases(out *mapping, k, v *yaml.Node) {
	tests := seq()
	for i, cn := range v.Content {
		tests.Content = append(tests.Content, c.evalCase(cn, i))
	}
	out.set("tests", tests, k)
}

// caseKeys are the keys of a v2 case the v2 reader reads.
var caseKeys = []string{"id", "expected_outcome", "outcome", "conversation_id", "input_messages", "expected_messages",
	"rubrics", "execution", "evaluators"}

// evalCase converts evalcases[i].
func (c *converter) evalCase(cn *yaml.Node, i int) *yaml.Node {
	path := "evalcases[" + strconv.Itoa(i) + "]"
	vc := c.f.CaseAt(i)
	t := newMapping()
	t.n.HeadComment, t.n.LineComment, t.n.FootComment = cn.HeadComment, cn.LineComment, cn.FootComment
	for _, k := range without(cn, caseKeys...) {
		c.note(k, path+"."+k.Value, false, "dropped: the v2 reader ignores this key")
	}
	t.set("id", lookup(cn, "id"), keyNode(cn, "id"))

	// criteria: expected_outcome, else its alias outcome (as the v2 reader takes them).
	criteriaKey := keyNode(cn, "expected_outcome")
	criteria := lookup(cn, "expected_outcome")
	if isNull(criteria) || criteria.Value == "" {
		criteriaKey, criteria = keyNode(cn, "outcome"), lookup(cn, "outcome")
	}
	hasCriteria := false
	switch {
	case isNull(criteria) || criteria.Value == "":
	case strings.TrimSpace(criteria.Value) == "":
		c.note(criteriaKey, path+"."+criteriaKey.Value, true, "a blank expected outcome, which AgentV 4.42 refuses as "+
			"criteria: left out (the v2 judges send it as it is)")
	default:
		t.set("criteria", criteria, criteriaKey)
		hasCriteria = true
	}
	if k := keyNode(cn, "conversation_id"); k != nil && !isNull(lookup(cn, "conversation_id")) {
		t.set("conversation_id", lookup(cn, "conversation_id"), k)
	}
	if k := keyNode(cn, "input_messages"); k != nil {
		t.set("input", c.input(lookup(cn, "input_messages"), path+".input_messages", vc), k)
	}
	hasExpected := false
	if k := keyNode(cn, "expected_messages"); k != nil {
		if list := lookup(cn, "expected_messages"); len(list.Content) > 0 {
			t.set("expected_output", c.expected(list, path+".expected_messages"), k)
			hasExpected = true
		}
	}

	c.caseEvaluators(t, cn, path, hasCriteria || hasExpected)
	return t.n
}

// caseEvaluators writes case cn's evaluators into test t: inline rubrics, the case's own (execution.evaluators or
// evaluators), or the inherited ones where AgentV 4.42 would not count them; judged says the case has criteria or an
// expected output (which 4.42 counts).
func (c *converter) caseEvaluators(t *mapping, cn *yaml.Node, path string, judged bool) {
	// Evaluators: inline rubrics, the case's own (execution.evaluators or evaluators), else inherited.
	rubricsKey, rubrics := keyNode(cn, "rubrics"), lookup(cn, "rubrics")
	var own *yaml.Node
	var ownKey *yaml.Node
	ownPath := ""
	if exec := lookup(cn, "execution"); exec != nil {
		for _, ek := range without(exec, "evaluators") {
			c.note(ek, path+".execution."+ek.Value, false, "dropped: the v2 reader ignores this key")
		}
		if ev := lookup(exec, "evaluators"); !isNull(ev) {
			own, ownKey, ownPath = ev, keyNode(exec, "evaluators"), path+".execution.evaluators"
		}
	}
	if own == nil && !isNull(lookup(cn, "evaluators")) {
		own, ownKey, ownPath = lookup(cn, "evaluators"), keyNode(cn, "evaluators"), path+".evaluators"
	}
	var assertions *yaml.Node
	if own != nil {
		assertions = c.evaluatorList(own, ownPath)
		if len(own.Content) == 0 && isNull(rubrics) {
			c.note(ownKey, ownPath, true, "an empty list: the v2 reader judges the case by no evaluator (Skipped); "+
				"AgentV 4.42 reads no such thing, and grades the test as it grades one without assertions")
		}
	}
	fileLevel := len(c.f.Evaluators) > 0
	switch {
	case !isNull(rubrics) && own == nil && !judged:
		// AgentV 4.42 skips a test without criteria, expected output or assertions: the rubrics become its first
		// assertion, and the suite's assertions still follow.
		assertions = seq(c.rubricsGrader(rubrics, path+".rubrics"))
		c.note(rubricsKey, path+".rubrics", false, "written as the test's first assertion (AgentV 4.42 skips a test "+
			"without criteria, expected output or assertions): when the EvalRun sets spec.judging.evaluators they no "+
			"longer replace the file-level evaluators for this test, as they do in the v2 file")
	case !isNull(rubrics):
		t.set("rubrics", c.rubricItems(rubrics, path+".rubrics", true), rubricsKey)
	}
	switch {
	case assertions != nil && len(assertions.Content) > 0:
		t.set("assertions", assertions, ownKey)
	case own == nil && isNull(rubrics) && !judged && fileLevel:
		// Judged by the file-level evaluators alone, which 4.42 does not count: they are written as its own.
		t.set("assertions", expand(c.fileAssertions), nil)
		own = t.n
		c.note(keyNode(cn, "id"), path, false, "the case has no expected outcome, expected messages or evaluators of its "+
			"own, which AgentV 4.42 skips: the file-level evaluators are written as its assertions; when the EvalRun "+
			"sets spec.judging.evaluators they no longer replace them for this test, as they do in the v2 file")
	case own == nil && isNull(rubrics) && !fileLevel:
		c.note(keyNode(cn, "id"), path, false, "a case without evaluators is judged by the implicit LLM judge, named "+
			"llm-grader in its results (v2: llm_judge), unless the EvalRun sets spec.judging.evaluators")
	}
	if own == nil && isNull(rubrics) && !judged && !fileLevel {
		c.note(keyNode(cn, "id"), path, true, "the case has no expected outcome, expected messages or evaluators, and the "+
			"file none: AgentV 4.42 skips such a test (the v2 file judges it by spec.judging.evaluators, or the default "+
			"llm_judge): give it criteria or assertions")
	}
	if own != nil && fileLevel {
		exec := newMapping()
		exec.set("skip_defaults", boolean(true), nil)
		t.set("execution", exec.n, nil)
	}
}

// readBack reads the converted suite with the 4.42 reader; each problem it finds becomes a Note that Differs.
func (c *converter) readBack(suite []byte) {
	var fsys fs.FS
	if c.o.Bundle.Root != "" {
		fsys = os.DirFS(c.o.Bundle.Root)
	}
	_, err := evalfile.Parse(suite, evalfile.WithFiles(fsys, c.o.Bundle.EvalFile))
	var ve *evalfile.ValidationError
	switch {
	case err == nil:
	case errors.As(err, &ve):
		for _, p := range ve.Problems {
			c.notes = append(c.notes, Note{File: SuiteFile, Line: p.Line, Path: p.Path, Differs: true,
				Message: "AgentV 4.42's reader refuses the converted suite: " + p.Message})
		}
	default:
		c.notes = append(c.notes, Note{File: SuiteFile, Differs: true, Message: "AgentV 4.42's reader refuses the converted suite: " + err.Error()})
	}
}

// merge orders notes by file and line and counts notes alike (the same message at the same key of another case)
// in the first's More.
func merge(notes []Note) []Note {
	slices.SortStableFunc(notes, func(a, b Note) int {
		if a.File != b.File {
			return cmp.Compare(fileRank(a.File), fileRank(b.File))
		}
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Path, b.Path))
	})
	var out []Note
	seen := map[string]int{}
	for _, n := range notes {
		key := n.File + "\x00" + casePattern(n.Path) + "\x00" + n.Message
		if fileRank(n.File) == 1 {
			// A prompt file's note is about the file, whichever evaluator names it.
			key = n.File + "\x00" + strconv.Itoa(n.Line) + "\x00" + n.Message
		}
		if i, ok := seen[key]; ok {
			out[i].More++
			continue
		}
		seen[key] = len(out)
		out = append(out, n)
	}
	return out
}

// fileRank orders notes: the eval file's, then other files', then the converted suite's.
func fileRank(f string) int {
	switch f {
	case "":
		return 0
	case SuiteFile:
		return 2
	}
	return 1
}

// casePattern is a path with its case index left out, so that the same key of two cases compares equal.
func casePattern(p string) string {
	rest, ok := strings.CutPrefix(p, "evalcases[")
	if !ok {
		return p
	}
	if i := strings.IndexByte(rest, ']'); i >= 0 {
		return "evalcases[]" + rest[i+1:]
	}
	return p
}
