package evalfile

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile/yamltree"
)

// Scan is Parse for a reader that must not hold the file: the manager checks an eval file of up to 512 MiB from a
// bucket, with a memory limit of 256 MiB, while the pods download, verify and split their own copy. It reads r
// through a bounded buffer, cuts the text into its header and evalcases items by the rules Parse cuts a file by
// (cutter, see segment), parses and validates the header, then each item alone, and keeps only the Facts: the case
// ids in order and what judging the cases takes. Its memory grows with the number of cases (their ids), never with
// the file's size or a case's text.
//
// The result is Parse's: the same ids, counts and problems, in the same order, except that a file with more than
// maxKeptProblems problems of a kind lists the first ones and counts the rest (ValidationError.More; Error's text
// is Parse's). Scan reads r to its end whatever it finds, so a reader that verifies what it delivers (a digest
// checked at the end) reports its error, which Scan returns wrapped, before any verdict on the text.
//
// A file that cannot be read one item at a time (a document marker, a tab, a flow-style evalcases, an item that
// refers to another item's anchor, a header that does not parse alone: see segment) is parsed whole, as Parse
// does, when it is at most the in-memory limit (MaxWholeBytes, WithWholeLimit); Facts.Text then holds it. A larger
// one is invalid, with a problem that says why and that such a file must be written in block style.
func Scan(r io.Reader, opts ...ParseOption) (*Facts, error) {
	o := newParseOptions(opts)
	s := &scanner{o: o, limit: MaxWholeBytes, br: bufio.NewReaderSize(r, scanBuffer), holding: true}
	if o.wholeLimit > 0 {
		s.limit = o.wholeLimit
	}
	s.cut.indent = -1
	if err := s.read(); err != nil {
		return nil, fmt.Errorf("reading the eval file: %w", err)
	}
	return s.result()
}

// MaxWholeBytes is Scan's in-memory limit: a file that cannot be read one item at a time is parsed whole up to
// this size (the manager's memory then grows by a few times it, well within its limit), and refused above it. No
// header, item or line of a file Scan streams may be larger either.
const MaxWholeBytes = 16 << 20

// MaxExpansionBytes bounds what alias expansion (aliases, and merge keys through them) may add to an eval file:
// the bytes of compact JSON the values built through aliases take, which is what they cost the reader in memory
// (each case keeps its JSON), and yamltree.ExpansionValueBytes more for each of those values. It is MaxWholeBytes,
// the largest text the manager holds whole: aliases may add at most this much to any one case, and at most this
// much, or the file's own size when that is larger (a file the manager reads one case at a time), to the whole
// file. docs/design/large-eval-files.md#alias-expansion documents it; an alias bomb ends InvalidEvalFile naming it.
// The YAML tree (yamltree) enforces it; TestExpansionBoundIsTheWholeLimit holds the two constants equal.
const MaxExpansionBytes = yamltree.MaxExpansionBytes

// WithWholeLimit sets Scan's in-memory limit (MaxWholeBytes unless set; n > 0). Parse ignores it.
func WithWholeLimit(n int) ParseOption {
	return func(o *parseOptions) { o.wholeLimit = n }
}

// scanBuffer is the size of Scan's read buffer; wholeBlock the size of the blocks it keeps the text in while the
// text is within the in-memory limit (blocks, not one growing slice: no copy of it as it grows).
const (
	scanBuffer = 64 << 10
	wholeBlock = 256 << 10
)

// maxKeptProblems bounds the problems Scan keeps of each kind (the tree builder's and the validation's); the
// others are counted. It is above maxProblemsInError, so the error's text lists what Parse's would.
const maxKeptProblems = 64

// Facts are what the manager needs of an eval file, as Scan (or FactsOf a parsed File) established them: its case
// ids in order and what judging its cases takes. Their methods answer as File's do for the same file.
type Facts struct {
	// Evaluators and DefaultEvaluators are File's: the file-level execution.evaluators and the EvalRun's
	// judging.evaluators.
	Evaluators        []*EvaluatorConfig
	DefaultEvaluators []*EvaluatorConfig

	ids []string
	// codeJudgeCases counts the cases with a code_judge; bare those without evaluators; llm and llmPerCase are
	// the model requests of all cases and of the most demanding one, without a model endpoint.
	codeJudgeCases, bare int
	llm, llmPerCase      int
	// notShared says some case does not inherit its evaluators (see File.SharedEvaluators).
	notShared bool
	// text is the file when it was parsed whole (not streamed).
	text []byte
	// Format is the file's format.
	Format Format
	// Trials are File's: the file's own trials, nil when it has none.
	Trials *FileTrials
}

// FactsOf returns the facts of a parsed File (Text nil).
func FactsOf(f *File) *Facts {
	x := &Facts{Evaluators: f.Evaluators, DefaultEvaluators: f.DefaultEvaluators, ids: f.CaseIDs(),
		notShared: !f.SharedEvaluators(), Format: f.Format, Trials: f.Trials}
	for i := range f.NumCases() {
		x.count(loadOf(f.CaseAt(i).Evaluators))
	}
	return x
}

// add records a valid case: its id, its caseEntry.inherits and its load.
func (x *Facts) add(id string, inherits uint8, l caseLoad) {
	x.ids = append(x.ids, id)
	x.notShared = x.notShared || inherits == 0
	x.count(l)
}

func (x *Facts) count(l caseLoad) {
	if l.codeJudge {
		x.codeJudgeCases++
	}
	if l.bare {
		x.bare++
	}
	x.llm += int(l.llm)
	x.llmPerCase = max(x.llmPerCase, int(l.llm))
}

// NumCases returns the number of cases.
func (x *Facts) NumCases() int { return len(x.ids) }

// CaseIDs returns the case ids in file order; the slice is the Facts' own, not to be changed.
func (x *Facts) CaseIDs() []string { return x.ids }

// CodeJudgeCases counts the cases with a code_judge evaluator (File.CodeJudgeCases).
func (x *Facts) CodeJudgeCases() int { return x.codeJudgeCases }

// LLMRequests counts the model requests of every case and of the most demanding one (File.LLMRequests).
func (x *Facts) LLMRequests(withModel bool) (total, perCase int) {
	total, perCase = x.llm, x.llmPerCase
	if withModel && x.bare > 0 {
		total += x.bare
		perCase = max(perCase, 1)
	}
	return total, perCase
}

// SharedEvaluators reports whether every case inherits its evaluators (File.SharedEvaluators).
func (x *Facts) SharedEvaluators() bool { return !x.notShared }

// LightCase returns case i with its Index, ID, Evaluators and EvaluatorSource when every case inherits its
// evaluators (File.LightCase answers the same for such a file); ok is false otherwise.
func (x *Facts) LightCase(i int) (c *Case, ok bool) {
	if x.notShared || i < 0 || i >= len(x.ids) {
		return nil, false
	}
	c = &Case{Index: i, ID: x.ids[i], EvaluatorSource: inheritedSource(x.DefaultEvaluators, x.Evaluators)}
	switch c.EvaluatorSource {
	case SourceFile:
		c.Evaluators = Inherit(nil, x.Evaluators)
	case SourceJudging:
		c.Evaluators = Inherit(nil, x.DefaultEvaluators)
	}
	return c, true
}

// Text returns the file when Scan parsed it whole (it could not be read one item at a time, and it is at most the
// in-memory limit), nil when Scan streamed it: a streamed file's every item parsed alone after the header, so any
// selection of its items cut as text (Subset, as the pods cut their shards) reads as those items.
func (x *Facts) Text() []byte { return x.text }

// scanner is Scan's state.
type scanner struct {
	o     parseOptions
	limit int
	br    *bufio.Reader
	// line is the line being read (up to limit bytes; longLine says it was longer).
	line     []byte
	longLine bool
	// whole holds the text read so far while holding (total at most limit).
	whole   [][]byte
	holding bool
	total   int64
	cut     cutter
	// header is the text before the evalcases key, keyLine the key's line; item the current item's text, from
	// line itemLine; items counts the items built.
	header   []byte
	keyLine  int
	item     []byte
	itemLine int
	items    int
	// unstreamable says why the file cannot be read one item at a time (at line unstreamableLine, item
	// unstreamableItem or -1); "" while it can. stopped says the tree grew too large: the rest is only read.
	unstreamable     string
	unstreamableLine int
	unstreamableItem int
	stopped          bool
	// The parse of the header and the items (see parseSegmented).
	tb        *yamltree.Builder
	p         *Parser
	f         *File
	adder     *caseAdder
	facts     *Facts
	casesPath yamltree.Path
	arena     yamltree.Arena
	// anchors says an item read so far may define an anchor (see parseAlone).
	anchors bool
	// moreTree and moreProblems count the problems not kept.
	moreTree, moreProblems int
	// suite42 says the header may make the file an AgentV 4.42 suite (mayBeSuite42), which is read whole.
	suite42 bool
}

// read reads r to its end, line by line.
func (s *scanner) read() error {
	for {
		err := s.readLine()
		if len(s.line) > 0 || s.longLine {
			s.feed()
		}
		if errors.Is(err, io.EOF) {
			s.end()
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// readLine reads the next line (with its line break) into s.line, keeping at most limit bytes of it.
func (s *scanner) readLine() error {
	s.line, s.longLine = s.line[:0], false
	for {
		frag, err := s.br.ReadSlice('\n')
		s.keep(frag)
		if len(s.line)+len(frag) > s.limit {
			s.longLine = true
		} else if !s.longLine {
			s.line = append(s.line, frag...)
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return err
		}
	}
}

// keep adds b to the text held while it is within the in-memory limit, and lets go of the text once it is not.
func (s *scanner) keep(b []byte) {
	s.total += int64(len(b))
	if !s.holding {
		return
	}
	if s.total > int64(s.limit) {
		s.holding, s.whole = false, nil
		return
	}
	for len(b) > 0 {
		if n := len(s.whole); n == 0 || len(s.whole[n-1]) == cap(s.whole[n-1]) {
			s.whole = append(s.whole, make([]byte, 0, wholeBlock))
		}
		last := &s.whole[len(s.whole)-1]
		k := min(len(b), cap(*last)-len(*last))
		*last = append(*last, b[:k]...)
		b = b[k:]
	}
}

// feed takes the line just read.
func (s *scanner) feed() {
	if s.unstreamable != "" || s.stopped {
		return
	}
	if s.longLine {
		s.giveUp(s.cut.line+1, -1, fmt.Sprintf("a line longer than %s", yamltree.SizeText(s.limit)))
		return
	}
	if s.cut.line == 0 && hasBOM(s.line) {
		s.giveUp(1, -1, "a byte-order mark")
		return
	}
	switch s.cut.next(s.line) {
	case lineUncut:
		s.giveUp(s.cut.line, -1, s.cut.why)
	case lineHeader:
		if suiteHeaderLine.Match(s.line) {
			s.suite42 = true
			s.giveUp(s.cut.line, -1, "a top-level tests key (an AgentV 4.42 suite, which is read whole)")
			return
		}
		if bytes.HasPrefix(s.line, []byte(casesKey+":")) {
			s.giveUp(s.cut.line, -1, "evalcases with its value on the same line (flow style or an alias), not a block sequence of items")
			return
		}
		s.header = append(s.header, s.line...)
		if len(s.header) > s.limit {
			s.giveUp(s.cut.line, -1, fmt.Sprintf("more than %s before evalcases", yamltree.SizeText(s.limit)))
		}
	case lineKey:
		s.keyLine = s.cut.line
		if headerHasEvalcases(s.header) {
			s.giveUp(s.cut.line, -1, "evalcases more than once at the top level")
		}
	case lineItem:
		s.flush()
		s.item, s.itemLine = append(s.item[:0], s.line...), s.cut.line
	case lineInItem:
		s.item = append(s.item, s.line...)
		if len(s.item) > s.limit {
			s.giveUp(s.itemLine, s.items, fmt.Sprintf("an item larger than %s", yamltree.SizeText(s.limit)))
		}
	}
}

// end takes the end of the text: the last item, or why the file has none to stream.
func (s *scanner) end() {
	if s.unstreamable != "" || s.stopped {
		return
	}
	if len(s.item) == 0 {
		s.giveUp(s.cut.line, -1, "no top-level evalcases key followed by a block sequence of items")
		return
	}
	s.flush()
}

// giveUp records why the file cannot be streamed and lets go of the parse.
func (s *scanner) giveUp(line, item int, why string) {
	s.unstreamable, s.unstreamableLine, s.unstreamableItem = why, line, item
	s.header, s.item, s.tb, s.p, s.f, s.adder, s.facts = nil, nil, nil, nil, nil, nil, nil
}

// flush builds the item read so far, if any, after the header when it is the first.
func (s *scanner) flush() {
	if len(s.item) == 0 {
		return
	}
	if s.tb == nil && !s.start() {
		return
	}
	i := s.items
	s.items++
	src := string(s.item)
	var r readItem
	if readOne(&s.arena, src, 0, len(src), s.itemLine, s.cut.indent, s.f, i, &r); r.read {
		r.id = strings.Clone(r.id) // not a piece of the item's text, which goes now
		s.adder.addRead(&r, i)
	} else {
		n, ok := parseAlone(s.header, s.item, s.itemLine, !s.anchors)
		if !ok {
			s.giveUp(s.itemLine, i, "an item that does not parse on its own (it refers to another item's anchor, or is not valid YAML)")
			return
		}
		s.tb.TextBytes = s.total
		v := s.tb.BuildNode(n, i, &s.casesPath, 1)
		if s.tb.TooLarge {
			s.stopped = true
			return
		}
		s.adder.add(v, i)
	}
	s.anchors = s.anchors || bytes.IndexByte(s.item, '&') >= 0
	s.moreTree += clip(&s.tb.Problems)
	s.moreProblems += clip(&s.p.Problems)
}

// clip cuts problems to maxKeptProblems and returns how many it dropped.
func clip(problems *[]Problem) int {
	n := len(*problems) - maxKeptProblems
	if n <= 0 {
		return 0
	}
	*problems = (*problems)[:maxKeptProblems]
	return n
}

// start parses and validates the header, before the first item (see parseSegmented).
func (s *scanner) start() bool {
	doc, cases, ok := headerDocument(s.header, s.keyLine, s.itemLine, s.cut.indent, 1)
	if !ok || streamableCases(doc) != cases {
		s.giveUp(1, -1, "a text before evalcases that is not a block mapping parsing on its own")
		return false
	}
	s.tb, s.p = yamltree.NewBuilder(s.total, casesKey), &Parser{}
	f, cv := s.p.streamHeader(s.tb, doc, cases, s.o)
	if s.tb.TooLarge || cv == nil {
		s.stopped = true
		return false
	}
	s.f, s.facts = f, &Facts{Evaluators: f.Evaluators, DefaultEvaluators: f.DefaultEvaluators, Format: FormatV2}
	s.adder = s.p.newCases(f, 0)
	s.adder.facts = s.facts
	s.casesPath = yamltree.KeyPath(nil, casesKey)
	return true
}

// result is the Facts or the problems.
func (s *scanner) result() (*Facts, error) {
	if s.unstreamable != "" {
		if !s.holding {
			return nil, s.notStreamable()
		}
		data := slices.Concat(s.whole...)
		s.whole = nil
		o := s.o
		o.owned = true
		f, err := Parse(data, func(p *parseOptions) { *p = o })
		if err != nil {
			return nil, err
		}
		x := FactsOf(f)
		x.text = data
		return x, nil
	}
	if s.tb.TooLarge {
		return nil, &ValidationError{Problems: s.tb.Problems, More: s.moreTree}
	}
	if len(s.tb.Problems)+len(s.p.Problems) > 0 {
		return nil, &ValidationError{Problems: append(s.tb.Problems, s.p.Problems...), More: s.moreTree + s.moreProblems}
	}
	return s.facts, nil
}

// notStreamable is the problem of a file over the in-memory limit that cannot be read one item at a time.
func (s *scanner) notStreamable() error {
	if s.suite42 {
		return &ValidationError{Problems: []Problem{{CaseIndex: -1, Line: s.unstreamableLine, Message: fmt.Sprintf(
			"the file is larger than %s and has a top-level tests key: an AgentV 4.42 suite is read whole, "+
				"its files included, and may hold at most %s", yamltree.SizeText(s.limit), yamltree.SizeText(s.limit))}}}
	}
	p := Problem{CaseIndex: -1, Line: s.unstreamableLine, Message: fmt.Sprintf(
		"the file is larger than %s and has %s, so it cannot be read one case at a time; a file this large is "+
			"checked while it streams, never held whole, so it must be written in block style: a top-level mapping "+
			"whose last key is evalcases, its items a block sequence (\"- id: ...\"), each parsing on its own "+
			"(anchors used only within their item or defined before evalcases), no document markers, directives or tabs",
		yamltree.SizeText(s.limit), s.unstreamable)}
	if s.unstreamableItem >= 0 {
		p.CaseIndex, p.Path = s.unstreamableItem, casePath(s.unstreamableItem)
	}
	return &ValidationError{Problems: []Problem{p}}
}
