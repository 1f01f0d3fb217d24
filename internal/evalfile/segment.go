package evalfile

import (
	"bytes"

	yaml "go.yaml.in/yaml/v3"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile/yamltree"
)

// Reading a large eval file as one YAML document builds a node tree of the whole file first (about 300 MiB for
// 100,000 cases) before any case is converted. segments cuts the text instead: when evalcases is the document's
// last top-level key and its value a block sequence, each item's lines are parsed on their own, one at a time,
// while the cases are built, so that only one case's nodes are alive at once. The cut is made only where it
// cannot change the meaning: any anchor or alias that crosses items, any document marker or directive, any line
// that does not belong to an item, or any item that does not parse alone sends Parse back to the whole document,
// which then also gives YAML's own error message. A test and a fuzz target check that both ways give the same
// File and the same problems.
//
// Most items are not parsed by the YAML library at all: yamltree.ReadItem reads items written in plain YAML straight
// into values, on several goroutines (items.go), and the File keeps such a case as the place of its text. Only the
// items yamltree.ReadItem declines are parsed as above, in chunks of items.

// segmented is an eval file cut into its header (everything before evalcases) and its evalcases items.
type segmented struct {
	data []byte
	// src is data as a string, which fast items' scalars are cut from.
	src string
	// header is the text before the evalcases key.
	header []byte
	// keyLine is the 1-based line of the evalcases key; items are the byte ranges of the items, itemLines their
	// first lines, and indent the column (0-based) of their dashes.
	keyLine   int
	items     [][2]int
	itemLines []int
	indent    int
	// anchors caches itemsDefineAnchors: 0 unknown, 1 no, 2 yes.
	anchors int
	// chunk holds the parsed, not yet built items from chunkStart on.
	chunk      []*yaml.Node
	chunkStart int
}

// segment cuts data, or returns nil when the cut is not certain to be faithful.
func segment(data []byte) *segmented {
	if hasBOM(data) {
		return nil
	}
	s := &segmented{data: data, indent: -1}
	if lines := bytes.Count(data, []byte("\n")); lines > 1024 {
		// At most one item a line: no growing of the item lists as a large file is cut.
		s.items, s.itemLines = make([][2]int, 0, lines/2), make([]int, 0, lines/2)
	}
	var c cutter
	c.indent = -1
	off := 0
	for off < len(data) {
		end := bytes.IndexByte(data[off:], '\n')
		next := len(data)
		if end >= 0 {
			next = off + end + 1
		}
		switch c.next(data[off:next]) {
		case lineUncut:
			return nil
		case lineKey:
			s.header, s.keyLine = data[:off], c.line
			if headerHasEvalcases(s.header) {
				return nil
			}
		case lineItem:
			if n := len(s.items); n > 0 {
				s.items[n-1][1] = off
			}
			s.items = append(s.items, [2]int{off, 0})
			s.itemLines = append(s.itemLines, c.line)
		}
		off = next
	}
	if !c.inCases || len(s.items) == 0 {
		return nil
	}
	s.indent = c.indent
	s.items[len(s.items)-1][1] = len(data)
	return s
}

// hasBOM reports whether data starts with a UTF-8 byte-order mark (the cut leaves such a file to the YAML parser).
func hasBOM(data []byte) bool { return bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) }

// lineKind is what a line is to the cut (see cutter).
type lineKind int

const (
	// lineHeader is a line before the evalcases key.
	lineHeader lineKind = iota
	// lineKey is the evalcases key's line.
	lineKey
	// lineGap is a blank or comment line between the evalcases key and the first item: part of neither.
	lineGap
	// lineItem starts an item; lineInItem continues the current one (blank and comment lines included).
	lineItem
	lineInItem
	// lineUncut says the file cannot be cut faithfully (see segment).
	lineUncut
)

// cutter classifies an eval file's lines one at a time, in order: the one set of rules by which segment cuts a
// file held whole and Scan cuts a file it reads as a stream. Its zero value with indent -1 is ready for line 1.
type cutter struct {
	// line is the 1-based number of the line last classified.
	line int
	// inCases says the evalcases key was seen; rootSeen that the root's first line was.
	inCases, rootSeen bool
	// indent is the column (0-based) of the items' dashes, -1 before the first item.
	indent int
	// why says why the line last classified lineUncut cannot be cut.
	why string
}

// next classifies the next line (with or without its line break).
func (c *cutter) next(line []byte) lineKind {
	c.line++
	text := bytes.TrimRight(line, "\r\n")
	content := bytes.TrimLeft(text, " ")
	indent := len(text) - len(content)
	blank := len(content) == 0 || content[0] == '#'
	switch {
	case bytes.HasPrefix(text, []byte("---")) || bytes.HasPrefix(text, []byte("...")) || bytes.HasPrefix(text, []byte("%")):
		c.why = "a document marker (---, ...) or a directive (%)"
		return lineUncut // several documents, or directives
	case bytes.IndexByte(text, '\t') >= 0 && !blank:
		c.why = "a tab"
		return lineUncut // tabs: leave the subtleties to the YAML parser
	case !c.inCases && !blank && !c.rootSeen:
		if indent != 0 {
			c.why = "an indented top-level mapping"
			return lineUncut // the root is indented: leave it to the YAML parser
		}
		c.rootSeen = true
		fallthrough
	case !c.inCases:
		if indent == 0 && !blank && isEvalcasesKey(content) {
			c.inCases = true
			return lineKey
		}
		return lineHeader
	case blank:
		if c.indent < 0 {
			return lineGap
		}
		return lineInItem
	case c.indent < 0:
		if !isItemStart(content) {
			c.why = "evalcases is not a block sequence (\"- id: ...\" items, one a line)"
			return lineUncut // a flow sequence, or not a sequence
		}
		c.indent = indent
		return lineItem
	case indent == c.indent && isItemStart(content):
		return lineItem
	case indent <= c.indent:
		c.why = "a top-level key after evalcases, or a line outside its items"
		return lineUncut // another top-level key after evalcases, or a line outside the items
	}
	return lineInItem
}

// isEvalcasesKey reports whether a top-level line is "evalcases:" with nothing but a comment after it.
func isEvalcasesKey(content []byte) bool {
	rest, ok := bytes.CutPrefix(content, []byte("evalcases:"))
	if !ok {
		return false
	}
	rest = bytes.TrimLeft(rest, " ")
	return len(rest) == 0 || rest[0] == '#'
}

// isItemStart reports whether a line (without its indentation) starts a block sequence item.
func isItemStart(content []byte) bool {
	return len(content) > 0 && content[0] == '-' && (len(content) == 1 || content[1] == ' ')
}

// headerHasEvalcases reports whether the header's own top-level keys include evalcases (then the whole document
// decides what that means).
func headerHasEvalcases(header []byte) bool {
	for l := range bytes.SplitSeq(header, []byte("\n")) {
		if bytes.HasPrefix(l, []byte(casesKey)) {
			return true
		}
	}
	return false
}

// document parses the header into a document node whose root mapping ends with the evalcases key and a sequence
// node with one empty slot per item (filled by item). ok is false when the header does not parse alone or its
// root is not a mapping.
func (s *segmented) document() (doc, cases *yaml.Node, ok bool) {
	return headerDocument(s.header, s.keyLine, s.itemLines[0], s.indent, len(s.items))
}

// headerDocument parses header, the text before the evalcases key at line keyLine, into a document node whose
// root mapping ends with the evalcases key and a sequence node of n empty slots, the first item at line firstLine
// and its dash at column indent (0-based). ok is false when the header does not parse alone or its root is not a
// block mapping.
func headerDocument(header []byte, keyLine, firstLine, indent, n int) (doc, cases *yaml.Node, ok bool) {
	doc = &yaml.Node{}
	if len(bytes.TrimSpace(header)) > 0 {
		if err := yaml.Unmarshal(header, doc); err != nil {
			return nil, nil, false
		}
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		doc = &yaml.Node{Kind: yaml.DocumentNode, Line: keyLine, Column: 1,
			Content: []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map", Line: keyLine, Column: 1}}}
	}
	root := doc.Content[0]
	if doc.Kind != yaml.DocumentNode || root.Kind != yaml.MappingNode || root.Style&yaml.FlowStyle != 0 {
		return nil, nil, false
	}
	key := &yaml.Node{Kind: yaml.ScalarNode, Tag: yamltree.StrTag, Value: casesKey, Line: keyLine, Column: 1}
	cases = &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Line: firstLine, Column: indent + 1,
		Content: make([]*yaml.Node, n)}
	root.Content = append(root.Content, key, cases)
	return doc, cases, true
}

// chunkBytes is about how much item text one YAML parse reads: the parser's set-up is paid once per chunk, and only
// one chunk's nodes are alive at a time.
const chunkBytes = 64 << 10

// item returns item i's nodes, with the line numbers it has in the whole file, parsing the items in chunks of
// consecutive items (as the whole document would: aliases within a chunk resolve as they do there). An item of a
// chunk that does not parse is parsed alone (single).
func (s *segmented) item(i int) (*yaml.Node, bool) {
	if i < s.chunkStart || i >= s.chunkStart+len(s.chunk) {
		s.loadChunk(i)
	}
	if n := s.chunk[i-s.chunkStart]; n != nil {
		s.chunk[i-s.chunkStart] = nil
		return n, true
	}
	return s.single(i)
}

// loadChunk parses the items from i on, up to about chunkBytes of text; on failure the chunk's slots stay empty.
func (s *segmented) loadChunk(i int) {
	j := i + 1
	for j < len(s.items) && s.items[j][1]-s.items[i][0] <= chunkBytes {
		j++
	}
	s.chunkStart, s.chunk = i, make([]*yaml.Node, j-i)
	if j-i == 1 {
		return
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(s.data[s.items[i][0]:s.items[j-1][1]], &doc); err != nil {
		return
	}
	items, ok := sequenceItems(&doc, j-i)
	if !ok {
		return
	}
	for k, n := range items {
		shiftLines(n, s.itemLines[i]-1)
		s.chunk[k] = n
	}
}

// single parses item i alone, with the line numbers it has in the whole file (see parseAlone). An item that
// refers to the header's anchors is parsed after the header only when no item defines anchors of its own.
func (s *segmented) single(i int) (*yaml.Node, bool) {
	r := s.items[i]
	return parseAlone(s.header, s.data[r[0]:r[1]], s.itemLines[i], !s.itemsDefineAnchors())
}

// parseAlone parses one item's text, whose first line is line of the whole file, on its own, with the line numbers
// it has in the whole file. An item that does not parse alone (it refers to the header's anchors) is parsed after
// header when headerAnchors says no item before it can have defined an anchor that shadows the header's. ok is
// false when it does not parse either way (an alias to another item's anchor, a syntax error).
func parseAlone(header, text []byte, line int, headerAnchors bool) (*yaml.Node, bool) {
	var doc yaml.Node
	if err := yaml.Unmarshal(text, &doc); err == nil {
		items, ok := sequenceItems(&doc, 1)
		if !ok {
			return nil, false
		}
		shiftLines(items[0], line-1)
		return items[0], true
	}
	if !headerAnchors || len(header) == 0 {
		return nil, false
	}
	composed := make([]byte, 0, len(header)+len("evalcases:\n")+len(text))
	composed = append(append(append(composed, header...), "evalcases:\n"...), text...)
	doc = yaml.Node{}
	if err := yaml.Unmarshal(composed, &doc); err != nil || doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, false
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode || len(root.Content) < 2 || root.Content[len(root.Content)-2].Value != casesKey {
		return nil, false
	}
	seq := root.Content[len(root.Content)-1]
	if seq.Kind != yaml.SequenceNode || len(seq.Content) != 1 {
		return nil, false
	}
	n := seq.Content[0]
	shiftLines(n, line-(bytes.Count(header, []byte("\n"))+2))
	return n, true
}

// itemsDefineAnchors reports whether any item may define an anchor ('&' anywhere in the items: conservative).
func (s *segmented) itemsDefineAnchors() bool {
	if s.anchors == 0 {
		s.anchors = 1
		if bytes.IndexByte(s.data[s.items[0][0]:], '&') >= 0 {
			s.anchors = 2
		}
	}
	return s.anchors == 2
}

// sequenceItems returns the items of a document that is a sequence of exactly n items.
func sequenceItems(doc *yaml.Node, n int) ([]*yaml.Node, bool) {
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.SequenceNode ||
		len(doc.Content[0].Content) != n {
		return nil, false
	}
	return doc.Content[0].Content, true
}

// shiftLines adds delta to the line of n and every node below it (not to the nodes its aliases refer to: those
// inside it are below it, those in the header keep their lines).
func shiftLines(n *yaml.Node, delta int) {
	if n == nil {
		return
	}
	n.Line += delta
	for _, c := range n.Content {
		shiftLines(c, delta)
	}
}

// fast reads item i straight into values held by a (see yamltree.ReadItem).
func (s *segmented) fast(a *yamltree.Arena, i int) (*yamltree.Value, int, bool) {
	r := s.items[i]
	return yamltree.ReadItem(a, s.src, r[0], r[1], s.itemLines[i], s.indent)
}
