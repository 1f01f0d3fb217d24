package evalfile

import (
	"bytes"
	"errors"
	"fmt"

	yaml "go.yaml.in/yaml/v3"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile/yamltree"
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
//
// An AgentV 4.42 suite's subset (internal/evalfile/suite42's) keeps its tests as Parse counts them, written inline;
// a suite whose tests are in other files needs them, given with WithFiles. The other options are ignored.
func Subset(data []byte, keep func(i int) bool, opts ...ParseOption) ([]byte, error) {
	if s := segment(data); s != nil && !s.itemsDefineAnchors() && !mayBeSuite42(s.header) {
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
	return subsetDocument(data, keep, newParseOptions(opts))
}

// subsetDocument is Subset through the whole document's node tree.
func subsetDocument(data []byte, keep func(i int) bool, o parseOptions) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("the eval file does not parse: %w", err)
	}
	if key, ok := isSuite42(&doc); ok {
		r, err := readerOf(FormatSuite42)
		if err != nil {
			return nil, err
		}
		return r.Subset(data, &doc, key, keep, o.reader())
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
	r := yamltree.NewResolver(max(MaxExpansionBytes, int64(len(data))))
	for i, item := range seq.Content {
		if keep(i) {
			c, err := r.Resolve(item)
			if err != nil {
				return nil, err
			}
			kept = append(kept, c)
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
