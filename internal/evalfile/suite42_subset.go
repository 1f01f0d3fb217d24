package evalfile

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// subsetSuite42 is Subset for a 4.42 suite (doc, its text data, its tests under key): the suite with only the
// tests keep accepts, counted as Parse counts them (a file's or directory's tests where its path or file:// entry
// stands). Everything but the tests is kept as written; the kept tests are written inline under the same key, each
// as it was written (a test of another file included, a directory's case with its id), so the subset needs none of
// the tests' files (its include templates and input files are read as before). Aliases are replaced by copies, as
// in agentv-eval-v2's whole-document subset.
func subsetSuite42(data []byte, doc *yaml.Node, key string, keep func(i int) bool, o parseOptions) ([]byte, error) {
	tb := newTreeBuilder(int64(len(data)))
	tb.casesKey = key
	root := tb.build(doc, nil, 0)
	if tb.tooLarge {
		return nil, &ValidationError{Problems: tb.problems}
	}
	sp := newSuiteParser(tb, o, root, doc.Content[0])
	sp.s.TestsKey = key
	sp.expandTests(root.get(key), member(sp.rootNode, key), key)
	if problems := append(tb.problems, sp.p.problems...); len(problems) > 0 {
		return nil, &ValidationError{Problems: problems}
	}
	r := resolver{limit: max(MaxExpansionBytes, tb.textBytes)}
	seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	for i, it := range sp.items {
		if !keep(i) {
			continue
		}
		var n *yaml.Node
		if it.node != nil {
			c, err := r.resolve(it.node)
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
	idNode := &yaml.Node{Kind: yaml.ScalarNode, Tag: yamlStrTag, Value: id, Style: yaml.DoubleQuotedStyle}
	set := false
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Value == "id" {
			v, set = idNode, true
		}
		c.Content = append(c.Content, k, v)
	}
	if !set {
		c.Content = append([]*yaml.Node{{Kind: yaml.ScalarNode, Tag: yamlStrTag, Value: "id"}, idNode}, c.Content...)
	}
	return &c
}

// nodeOf writes a value (a JSONL test) as YAML nodes of the same JSON.
func nodeOf(v *value) *yaml.Node {
	switch v.kind {
	case kindNull:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}
	case kindBool:
		s := "false"
		if v.b {
			s = "true"
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: s}
	case kindNumber:
		tag := "!!int"
		if strings.ContainsAny(v.num, ".eE") {
			tag = "!!float"
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: v.num}
	case kindString:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: yamlStrTag, Value: v.str}
	case kindObject:
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		for i, k := range v.keys {
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: yamlStrTag, Value: k}, nodeOf(v.vals[i]))
		}
		return n
	}
	n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	for _, item := range v.vals {
		n.Content = append(n.Content, nodeOf(item))
	}
	return n
}
