package evalfile

import (
	"bytes"

	yaml "go.yaml.in/yaml/v3"
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
// Most items are not parsed by the YAML library at all: fastItem reads items written in plain YAML straight into
// values, on several goroutines (items.go), and the File keeps such a case as the place of its text. Only the items
// fastItem declines are parsed as above, in chunks of items.

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
	if bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) {
		return nil
	}
	s := &segmented{data: data, indent: -1}
	if lines := bytes.Count(data, []byte("\n")); lines > 1024 {
		// At most one item a line: no growing of the item lists as a large file is cut.
		s.items, s.itemLines = make([][2]int, 0, lines/2), make([]int, 0, lines/2)
	}
	line, off := 0, 0
	inCases, rootSeen := false, false
	for off < len(data) {
		end := bytes.IndexByte(data[off:], '\n')
		next := len(data)
		if end >= 0 {
			next = off + end + 1
		}
		text := bytes.TrimRight(data[off:next], "\r\n")
		line++
		content := bytes.TrimLeft(text, " ")
		indent := len(text) - len(content)
		blank := len(content) == 0 || content[0] == '#'
		switch {
		case bytes.HasPrefix(text, []byte("---")) || bytes.HasPrefix(text, []byte("...")) || bytes.HasPrefix(text, []byte("%")):
			return nil // several documents, or directives
		case bytes.IndexByte(text, '\t') >= 0 && !blank:
			return nil // tabs: leave the subtleties to the YAML parser
		case !inCases && !blank && !rootSeen:
			if indent != 0 {
				return nil // the root is indented: leave it to the YAML parser
			}
			rootSeen = true
			fallthrough
		case !inCases:
			if indent == 0 && !blank && isEvalcasesKey(content) {
				inCases, s.header, s.keyLine = true, data[:off], line
			}
		case blank:
		case s.indent < 0:
			if !isItemStart(content) {
				return nil // a flow sequence, or not a sequence
			}
			s.indent = indent
			s.items = append(s.items, [2]int{off, 0})
			s.itemLines = append(s.itemLines, line)
		case indent == s.indent && isItemStart(content):
			s.items[len(s.items)-1][1] = off
			s.items = append(s.items, [2]int{off, 0})
			s.itemLines = append(s.itemLines, line)
		case indent <= s.indent:
			return nil // another top-level key after evalcases, or a line outside the items
		}
		off = next
	}
	if !inCases || len(s.items) == 0 {
		return nil
	}
	s.items[len(s.items)-1][1] = len(data)
	if headerHasEvalcases(s.header) {
		return nil
	}
	return s
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
	doc = &yaml.Node{}
	if len(bytes.TrimSpace(s.header)) > 0 {
		if err := yaml.Unmarshal(s.header, doc); err != nil {
			return nil, nil, false
		}
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		doc = &yaml.Node{Kind: yaml.DocumentNode, Line: s.keyLine, Column: 1,
			Content: []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map", Line: s.keyLine, Column: 1}}}
	}
	root := doc.Content[0]
	if doc.Kind != yaml.DocumentNode || root.Kind != yaml.MappingNode || root.Style&yaml.FlowStyle != 0 {
		return nil, nil, false
	}
	key := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: casesKey, Line: s.keyLine, Column: 1}
	cases = &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Line: s.itemLines[0], Column: s.indent + 1,
		Content: make([]*yaml.Node, len(s.items))}
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

// single parses item i alone, with the line numbers it has in the whole file. An item that refers to the header's
// anchors is parsed after the header, unless some item defines anchors of its own (which could shadow the
// header's). ok is false when it does not parse that way (an alias to another item's anchor, a syntax error).
func (s *segmented) single(i int) (*yaml.Node, bool) {
	r := s.items[i]
	text := s.data[r[0]:r[1]]
	var doc yaml.Node
	if err := yaml.Unmarshal(text, &doc); err == nil {
		items, ok := sequenceItems(&doc, 1)
		if !ok {
			return nil, false
		}
		shiftLines(items[0], s.itemLines[i]-1)
		return items[0], true
	}
	if s.itemsDefineAnchors() || len(s.header) == 0 {
		return nil, false
	}
	composed := make([]byte, 0, len(s.header)+len("evalcases:\n")+len(text))
	composed = append(append(append(composed, s.header...), "evalcases:\n"...), text...)
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
	shiftLines(n, s.itemLines[i]-(bytes.Count(s.header, []byte("\n"))+2))
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

// fast reads item i straight into values held by a (see fastItem).
func (s *segmented) fast(a *fastArena, i int) (*value, int, bool) {
	r := s.items[i]
	return fastItem(a, s.src, r[0], r[1], s.itemLines[i], s.indent)
}
