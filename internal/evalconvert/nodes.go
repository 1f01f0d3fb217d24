package evalconvert

import (
	"slices"

	yaml "go.yaml.in/yaml/v3"
)

// YAML node helpers. The converter reads the v2 document as YAML nodes (so that every key keeps its line, and
// content keeps its written style and comments) and writes the suite as nodes.

// expand returns a deep copy of n with every alias replaced by a copy of what it names and every merge key (<<)
// replaced by the keys it merges, so that renaming or moving one part of the tree never changes another that
// shared it. The v2 reader has bounded what aliases may add (evalfile.MaxExpansionBytes) before this runs.
func expand(n *yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	if n.Kind == yaml.AliasNode {
		c := expand(n.Alias)
		c.Line, c.Column = n.Line, n.Column
		return c
	}
	c := *n
	c.Anchor = ""
	c.Content = nil
	if n.Kind != yaml.MappingNode {
		for _, child := range n.Content {
			c.Content = append(c.Content, expand(child))
		}
		return &c
	}
	var merged []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.Tag == "!!merge" {
			merged = append(merged, mergeSources(v)...)
			continue
		}
		c.Content = append(c.Content, expand(k), expand(v))
	}
	// Merged keys come after the mapping's own and never replace them; of two merged mappings the first wins.
	for _, src := range merged {
		for i := 0; i+1 < len(src.Content); i += 2 {
			if lookup(&c, src.Content[i].Value) == nil {
				c.Content = append(c.Content, src.Content[i], src.Content[i+1])
			}
		}
	}
	return &c
}

// mergeSources are the expanded mappings a merge key's value names: one mapping, or a list of them.
func mergeSources(v *yaml.Node) []*yaml.Node {
	for v.Kind == yaml.AliasNode {
		v = v.Alias
	}
	switch v.Kind {
	case yaml.MappingNode:
		return []*yaml.Node{expand(v)}
	case yaml.SequenceNode:
		var out []*yaml.Node
		for _, item := range v.Content {
			out = append(out, mergeSources(item)...)
		}
		return out
	}
	return nil
}

// lookup returns the value of key in mapping n, or nil.
func lookup(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// keyNode returns the key node of key in mapping n, or nil.
func keyNode(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i]
		}
	}
	return nil
}

// isNull reports whether n is absent or null, as the v2 reader treats it.
func isNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null")
}

// isString reports whether n is a string scalar.
func isString(n *yaml.Node) bool {
	return n != nil && n.Kind == yaml.ScalarNode && n.Tag == "!!str"
}

// str is a string scalar.
func str(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
}

// boolean is a boolean scalar.
func boolean(b bool) *yaml.Node {
	v := "false"
	if b {
		v = "true"
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: v}
}

// seq is a sequence of items.
func seq(items ...*yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: items}
}

// mapping builds a mapping node.
type mapping struct {
	n *yaml.Node
}

func newMapping() *mapping {
	return &mapping{n: &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}}
}

// set adds key: v, carrying the comments of from (the v2 key node it stands for, nil for none).
func (m *mapping) set(key string, v *yaml.Node, from *yaml.Node) {
	k := str(key)
	if from != nil {
		k.HeadComment, k.LineComment, k.FootComment = from.HeadComment, from.LineComment, from.FootComment
	}
	m.n.Content = append(m.n.Content, k, v)
}

// has reports whether the mapping has key.
func (m *mapping) has(key string) bool { return lookup(m.n, key) != nil }

// empty reports whether the mapping has no keys.
func (m *mapping) empty() bool { return len(m.n.Content) == 0 }

// pairs calls fn for each key and value of mapping n, in order.
func pairs(n *yaml.Node, fn func(k, v *yaml.Node)) {
	if n == nil || n.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		fn(n.Content[i], n.Content[i+1])
	}
}

// Keys written in more than one place.
const (
	keyName   = "name"
	keyType   = "type"
	keyWeight = "weight"
)

// without returns the keys of mapping n not in known.
func without(n *yaml.Node, known ...string) []*yaml.Node {
	var out []*yaml.Node
	pairs(n, func(k, _ *yaml.Node) {
		if !slices.Contains(known, k.Value) {
			out = append(out, k)
		}
	})
	return out
}
