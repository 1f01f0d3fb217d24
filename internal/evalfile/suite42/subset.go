package suite42

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/evalfile/yamltree"
)

// Subset is evalfile.Subset for a 4.42 suite (doc, its text data, its tests under key): the suite with only the
// tests keep accepts, counted as Parse counts them (a file's or directory's tests where its path or file:// entry
// stands). Everything but the tests is kept as written; the kept tests are written inline under the same key, each
// as it was written (a test of another file included, a directory's case with its id), so the subset needs none of
// the tests' files (its include templates and input files are read as before). Aliases are replaced by copies, as
// in agentv-eval-v2's whole-document subset.
func (reader) Subset(data []byte, doc *yaml.Node, key string, keep func(i int) bool, o evalfile.ReaderOptions) ([]byte, error) {
	tb := yamltree.NewBuilder(int64(len(data)), key)
	root := tb.Build(doc, nil, 0)
	if tb.TooLarge {
		return nil, &evalfile.ValidationError{Problems: tb.Problems}
	}
	sp := newSuiteParser(tb, o, root, doc.Content[0])
	sp.s.TestsKey = key
	sp.expandTests(root.Get(key), member(sp.rootNode, key), key)
	if problems := append(tb.Problems, sp.p.Problems...); len(problems) > 0 {
		return nil, &evalfile.ValidationError{Problems: problems}
	}
	r := yamltree.NewResolver(max(evalfile.MaxExpansionBytes, tb.TextBytes))
	seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	for i, it := range sp.items {
		if !keep(i) {
			continue
		}
		var n *yaml.Node
		if it.node != nil {
			c, err := r.Resolve(it.node)
			if err != nil {
				return nil, err
			}
			n = c
		} else {
			n = nodeOf(it.v)
		}
		if it.dirID != "" {
			n = withID(n, it.dirID)
		}
		seq.Content = append(seq.Content, n)
	}
	if len(seq.Content) == 0 {
		return nil, errors.New("no case is selected")
	}
	rootNode := doc.Content[0]
	for i := 0; i+1 < len(rootNode.Content); i += 2 {
		if rootNode.Content[i].Value == key {
			rootNode.Content[i+1] = seq
			break
		}
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("encoding the subset: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("encoding the subset: %w", err)
	}
	return buf.Bytes(), nil
}

// withID returns the mapping n with id set to id (a directory's case that sets none; a null id is replaced).
func withID(n *yaml.Node, id string) *yaml.Node {
	c := *n
	c.Content = nil
	idNode := &yaml.Node{Kind: yaml.ScalarNode, Tag: yamltree.StrTag, Value: id, Style: yaml.DoubleQuotedStyle}
	set := false
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Value == "id" {
			v, set = idNode, true
		}
		c.Content = append(c.Content, k, v)
	}
	if !set {
		c.Content = append([]*yaml.Node{{Kind: yaml.ScalarNode, Tag: yamltree.StrTag, Value: "id"}, idNode}, c.Content...)
	}
	return &c
}

// nodeOf writes a value (a JSONL test) as YAML nodes of the same JSON.
func nodeOf(v *yamltree.Value) *yaml.Node {
	switch v.Kind {
	case yamltree.KindNull:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}
	case yamltree.KindBool:
		s := "false"
		if v.Bool {
			s = "true"
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: s}
	case yamltree.KindNumber:
		tag := "!!int"
		if strings.ContainsAny(v.Num, ".eE") {
			tag = "!!float"
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: v.Num}
	case yamltree.KindString:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: yamltree.StrTag, Value: v.Str}
	case yamltree.KindObject:
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		for i, k := range v.Keys {
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: yamltree.StrTag, Value: k}, nodeOf(v.Vals[i]))
		}
		return n
	}
	n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	for _, item := range v.Vals {
		n.Content = append(n.Content, nodeOf(item))
	}
	return n
}
