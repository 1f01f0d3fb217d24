package yamltree

import (
	"fmt"

	yaml "go.yaml.in/yaml/v3"
)

// Resolver copies items with every alias below them replaced by a copy of its target, and no anchors, so that
// each stands alone in any document. What the copies add is bounded as the Builder bounds alias expansion
// (MaxExpansionBytes, or the file's size when larger, in all): a reader refuses such a file first, but
// evalfile.Subset reads the pod's download before anything has parsed it there.
type Resolver struct {
	// added counts the bytes of text the copies of aliased nodes take (a scalar's value and two more, two for a
	// collection and one per item); limit bounds it.
	added, limit int64
	// outer is the alias being copied (the outermost one), for the error.
	outer *yaml.Node
}

// NewResolver returns a Resolver whose copies may add at most limit bytes of text.
func NewResolver(limit int64) *Resolver { return &Resolver{limit: limit} }

// Resolve returns item, copied with its aliases resolved.
func (r *Resolver) Resolve(item *yaml.Node) (*yaml.Node, error) {
	c := r.copy(item, 0, false)
	if r.added > r.limit {
		return nil, fmt.Errorf("line %d: alias *%s expands the file by more than %s (aliases may add at most %s, "+
			"or the file's own size when larger; an alias bomb?)", r.outer.Line, r.outer.Value, SizeText(int(r.limit)), SizeText(MaxExpansionBytes))
	}
	return c, nil
}

// maxAliasDepth bounds the aliases followed from one node (an alias to a node that contains it would not end).
const maxAliasDepth = 64

// copy copies n; aliased says n is reached through an alias. It stops copying once the bound is passed.
func (r *Resolver) copy(n *yaml.Node, depth int, aliased bool) *yaml.Node {
	if n == nil || r.added > r.limit {
		return nil
	}
	if n.Kind == yaml.AliasNode && !aliased {
		r.outer = n
	}
	for n.Kind == yaml.AliasNode && n.Alias != nil && depth < maxAliasDepth {
		n = n.Alias
		depth++
		aliased = true
	}
	if aliased {
		r.added += int64(len(n.Value)) + 2 + int64(len(n.Content))
	}
	c := *n
	c.Anchor = ""
	if len(n.Content) > 0 {
		c.Content = make([]*yaml.Node, len(n.Content))
		for i, child := range n.Content {
			c.Content[i] = r.copy(child, depth, aliased)
		}
	}
	return &c
}
