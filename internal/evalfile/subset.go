package evalfile

import (
	"bytes"
	"errors"
	"fmt"

	yaml "go.yaml.in/yaml/v3"
)

// casesKey is the eval file's top-level key of its cases.
const casesKey = "evalcases"

// Subset returns the eval file data with only the cases (evalcases items, in file order, counted from 0) that keep
// accepts; everything else in the file is kept as it is, so a runner given the subset reads the same settings. A
// shard's or a resumed run's runner gets such a file at {EVAL_FILE}.
//
// When the file can be cut into items (see segment) and no item defines an anchor, the subset is the file's own
// text: the header, then the kept items' lines, byte for byte. Otherwise the whole document is parsed, the items
// filtered, and the document encoded again; aliases inside kept items are replaced by copies of what they refer
// to, so no kept case depends on one that was dropped. It is an error when no case is kept or the file has no
// evalcases sequence.
func Subset(data []byte, keep func(i int) bool) ([]byte, error) {
	if s := segment(data); s != nil && !s.itemsDefineAnchors() {
		out := make([]byte, 0, len(data))
		out = append(out, data[:s.items[0][0]]...)
		kept := 0
		for i, r := range s.items {
			if !keep(i) {
				continue
			}
			item := data[r[0]:r[1]]
			out = append(out, item...)
			if len(item) > 0 && item[len(item)-1] != '\n' {
				out = append(out, '\n')
			}
			kept++
		}
		if kept == 0 {
			return nil, errors.New("no case is selected")
		}
		return out, nil
	}
	return subsetDocument(data, keep)
}

// subsetDocument is Subset through the whole document's node tree.
func subsetDocument(data []byte, keep func(i int) bool) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("the eval file does not parse: %w", err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("the eval file is not a mapping")
	}
	root := doc.Content[0]
	var seq *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == casesKey {
			seq = root.Content[i+1]
		}
	}
	for seq != nil && seq.Kind == yaml.AliasNode {
		seq = seq.Alias
	}
	if seq == nil || seq.Kind != yaml.SequenceNode {
		return nil, errors.New("the eval file has no evalcases sequence")
	}
	var kept []*yaml.Node
	for i, item := range seq.Content {
		if keep(i) {
			kept = append(kept, resolveAliases(item))
		}
	}
	if len(kept) == 0 {
		return nil, errors.New("no case is selected")
	}
	// The filtered sequence replaces the original in place (an aliased evalcases included).
	seq.Content = kept
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, fmt.Errorf("encoding the subset: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("encoding the subset: %w", err)
	}
	return buf.Bytes(), nil
}

// resolveAliases returns n with every alias below it replaced by a copy of its target, and no anchors, so that
// it stands alone in any document.
func resolveAliases(n *yaml.Node) *yaml.Node {
	return copyResolved(n, 0)
}

// maxAliasDepth bounds alias expansion (the parser already refused alias bombs; this only guards recursion).
const maxAliasDepth = 64

func copyResolved(n *yaml.Node, depth int) *yaml.Node {
	if n == nil {
		return nil
	}
	for n.Kind == yaml.AliasNode && n.Alias != nil && depth < maxAliasDepth {
		n = n.Alias
		depth++
	}
	c := *n
	c.Anchor = ""
	if len(n.Content) > 0 {
		c.Content = make([]*yaml.Node, len(n.Content))
		for i, child := range n.Content {
			c.Content[i] = copyResolved(child, depth)
		}
	}
	return &c
}
