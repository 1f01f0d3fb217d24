package evalfile

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"

	yaml "go.yaml.in/yaml/v3"

	"github.com/evalrun-operator/evalrun-operator/internal/jsonenc"
)

// Limits on the tree built from the YAML document. They bound the work an eval file can cause (alias expansion
// in particular) and are far above what real eval files need.
const (
	// maxTreeNodes bounds the number of values built by expanding aliases.
	maxTreeNodes = 1 << 20
	// maxTreeDepth bounds nesting.
	maxTreeDepth = 256
)

// MaxExpansionBytes bounds what alias expansion (aliases, and merge keys through them) may add to an eval file:
// the bytes of compact JSON the values built through aliases take, which is what they cost the reader in memory
// (each case keeps its JSON), and expansionValueBytes more for each of those values. It is MaxWholeBytes, the
// largest text the manager holds whole: aliases may add at most this much to any one case, and at most this much,
// or the file's own size when that is larger (a file the manager reads one case at a time), to the whole file.
// docs/design/large-eval-files.md#alias-expansion documents it; an alias bomb ends InvalidEvalFile naming it.
const MaxExpansionBytes = MaxWholeBytes

// expansionValueBytes is what each value built through an alias counts toward MaxExpansionBytes besides its JSON:
// a value costs the reader about that much once parsed (its tree value, and the segment or field it becomes),
// so that a bomb of many tiny values is bounded as one of a few large ones.
const expansionValueBytes = 128

// kind is the JSON type of a tree value.
type kind int

const (
	kindNull kind = iota
	kindBool
	kindNumber
	kindString
	kindObject
	kindArray
)

func (k kind) String() string {
	switch k {
	case kindNull:
		return "null"
	case kindBool:
		return "a boolean"
	case kindNumber:
		return "a number"
	case kindString:
		return "a string"
	case kindObject:
		return "an object"
	case kindArray:
		return "an array"
	}
	return "unknown"
}

// value is one JSON value read from the YAML document, with its position. Objects keep their keys in document
// order, which is why the eval file is not decoded through Go maps.
type value struct {
	kind kind
	b    bool
	// num is the JSON text of a number, f its value.
	num string
	f   float64
	str string
	// keys and vals hold an object's members in order; vals alone holds an array's items.
	keys []string
	vals []*value
	line int
}

// get returns the member named key of an object, or nil.
func (v *value) get(key string) *value {
	if v == nil || v.kind != kindObject {
		return nil
	}
	for i, k := range v.keys {
		if k == key {
			return v.vals[i]
		}
	}
	return nil
}

// has reports whether an object has the member key (a present null counts).
func (v *value) has(key string) bool {
	if v == nil || v.kind != kindObject {
		return false
	}
	for _, k := range v.keys {
		if k == key {
			return true
		}
	}
	return false
}

// isNull reports whether v is absent or null.
func (v *value) isNull() bool { return v == nil || v.kind == kindNull }

// raw returns the compact JSON encoding of v, object keys in document order.
func (v *value) raw() json.RawMessage {
	if v == nil {
		return nil
	}
	scratch := rawScratch.Get().(*[]byte)
	b := v.appendJSON((*scratch)[:0])
	out := make(json.RawMessage, len(b))
	copy(out, b)
	*scratch = b
	rawScratch.Put(scratch)
	return out
}

// rawMember is raw for an object, with where the value of its member key is in the encoding (start == end when
// it has none; the first, when several).
func (v *value) rawMember(key string) (raw json.RawMessage, start, end int) {
	scratch := rawScratch.Get().(*[]byte)
	b := append((*scratch)[:0], '{')
	found := false
	for i, k := range v.keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonenc.AppendString(b, k)
		b = append(b, ':')
		s := len(b)
		b = v.vals[i].appendJSON(b)
		if k == key && !found {
			start, end, found = s, len(b), true
		}
	}
	b = append(b, '}')
	raw = make(json.RawMessage, len(b))
	copy(raw, b)
	*scratch = b
	rawScratch.Put(scratch)
	return raw, start, end
}

// rawScratch holds buffers raw encodes into before it copies the result out at its exact size.
var rawScratch = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// appendJSON appends the compact JSON encoding of v, as encoding/json would write it.
func (v *value) appendJSON(b []byte) []byte {
	switch v.kind {
	case kindNull:
		b = append(b, "null"...)
	case kindBool:
		b = strconv.AppendBool(b, v.b)
	case kindNumber:
		b = append(b, v.num...)
	case kindString:
		b = jsonenc.AppendString(b, v.str)
	case kindObject:
		b = append(b, '{')
		for i, k := range v.keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonenc.AppendString(b, k)
			b = append(b, ':')
			b = v.vals[i].appendJSON(b)
		}
		b = append(b, '}')
	case kindArray:
		b = append(b, '[')
		for i, item := range v.vals {
			if i > 0 {
				b = append(b, ',')
			}
			b = item.appendJSON(b)
		}
		b = append(b, ']')
	}
	return b
}

// treePath is the path of the value being built: a chain of keys and indexes up to the document root. It is
// formatted only when a problem is reported, so building a large document does not format a path per value.
type treePath struct {
	parent *treePath
	key    string
	// index is the item index in a sequence; -1 for a mapping key.
	index int
}

// String formats the path as Problem.Path does: keys joined by '.', indexes as [i].
func (p *treePath) String() string {
	if p == nil {
		return ""
	}
	parent := p.parent.String()
	if p.index >= 0 {
		return parent + "[" + strconv.Itoa(p.index) + "]"
	}
	return joinPath(parent, p.key)
}

// keyPath and indexPath extend a path; the result is only valid while the call that made it runs.
func keyPath(parent *treePath, key string) treePath {
	return treePath{parent: parent, key: key, index: -1}
}
func indexPath(parent *treePath, i int) treePath { return treePath{parent: parent, index: i} }

// treeBuilder turns a YAML node graph into values, resolving aliases and merge keys and collecting problems.
type treeBuilder struct {
	// nodes counts the values built through aliases (bounded by maxTreeNodes); values counts every value built.
	nodes    int
	values   int
	problems []Problem
	// expanding guards against an alias that refers to a node containing itself.
	expanding map[*yaml.Node]bool
	tooLarge  bool
	// expanded counts the bytes of JSON built through aliases (see MaxExpansionBytes); caseStart is its count when
	// the case being built began (buildNode), textBytes the size of the text read (0: not known).
	expanded, caseStart, textBytes int64
	// outer is the alias of the text being expanded (the outermost one), for the problem that names it.
	outer *yaml.Node
	// deferred, when set, is a sequence node whose items build leaves to the caller: build returns an array of
	// len(deferred.Content) nil items for it, and the caller builds each item with buildItem.
	deferred *yaml.Node
	// casesKey is the top-level key of the cases, whose items are bounded one by one (casesKey when "": a 4.42
	// suite's are under tests).
	casesKey string
}

// newTreeBuilder returns a builder for a document of textBytes bytes of text (0 when not known yet: Scan sets it
// as it reads).
func newTreeBuilder(textBytes int64) *treeBuilder {
	return &treeBuilder{expanding: map[*yaml.Node]bool{}, caseStart: -1, textBytes: textBytes}
}

func (b *treeBuilder) problem(path *treePath, line int, format string, args ...any) {
	b.problems = append(b.problems, Problem{CaseIndex: -1, Path: path.String(), Line: line, Message: fmt.Sprintf(format, args...)})
}

// build converts n. It returns a null value (never nil) for a node it cannot convert, after recording why.
func (b *treeBuilder) build(n *yaml.Node, path *treePath, depth int) *value {
	if b.tooLarge {
		return &value{kind: kindNull, line: n.Line}
	}
	// Values reached through an alias are what an alias bomb multiplies; every other value is one of the text's,
	// which the file's size already bounds (a 100,000-case file has millions).
	b.values++
	if len(b.expanding) > 0 {
		b.nodes++
	}
	if b.nodes > maxTreeNodes {
		b.tooLarge = true
		b.problem(path, n.Line, "the document expands to more than %d values (check for alias loops or alias bombs)", maxTreeNodes)
		return &value{kind: kindNull, line: n.Line}
	}
	if depth > maxTreeDepth {
		b.problem(path, n.Line, "nesting is deeper than %d levels", maxTreeDepth)
		return &value{kind: kindNull, line: n.Line}
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return &value{kind: kindNull, line: n.Line}
		}
		return b.build(n.Content[0], path, depth)
	case yaml.AliasNode:
		if n.Alias == nil {
			b.problem(path, n.Line, "alias *%s refers to no anchor", n.Value)
			return &value{kind: kindNull, line: n.Line}
		}
		if b.expanding[n.Alias] {
			b.problem(path, n.Line, "alias *%s refers to a value that contains it", n.Value)
			return &value{kind: kindNull, line: n.Line}
		}
		if len(b.expanding) == 0 {
			b.outer = n
		}
		b.expanding[n.Alias] = true
		v := b.build(n.Alias, path, depth+1)
		delete(b.expanding, n.Alias)
		return v
	case yaml.ScalarNode:
		v := b.scalar(n, path)
		if len(b.expanding) > 0 {
			b.charge(expansionValueBytes+scalarJSONLen(v), path)
		}
		return v
	case yaml.SequenceNode:
		if n == b.deferred {
			return &value{kind: kindArray, line: n.Line, vals: make([]*value, len(n.Content))}
		}
		if len(b.expanding) > 0 && !b.charge(expansionValueBytes+int64(max(2, 1+len(n.Content))), path) {
			return &value{kind: kindNull, line: n.Line}
		}
		v := &value{kind: kindArray, line: n.Line, vals: make([]*value, 0, len(n.Content))}
		cases := path != nil && path.parent == nil && path.index < 0 && path.key == b.itemsKey() && b.caseStart < 0
		for i, item := range n.Content {
			if cases {
				// The cases of a file read whole count as they do read one at a time (buildNode).
				v.vals = append(v.vals, b.buildNode(item, i, path, depth))
				continue
			}
			ip := indexPath(path, i)
			v.vals = append(v.vals, b.build(item, &ip, depth+1))
		}
		return v
	case yaml.MappingNode:
		return b.mapping(n, path, depth)
	}
	b.problem(path, n.Line, "unsupported YAML node")
	return &value{kind: kindNull, line: n.Line}
}

// itemsKey is the top-level key of the cases.
func (b *treeBuilder) itemsKey() string {
	if b.casesKey != "" {
		return b.casesKey
	}
	return casesKey
}

// charge adds n bytes built through an alias to the expansion; false (and the tree too large, with the problem
// that names the alias and the bound) when that passes MaxExpansionBytes.
func (b *treeBuilder) charge(n int64, path *treePath) bool {
	b.expanded += n
	inCase, inFile := b.caseStart >= 0 && b.expanded-b.caseStart > MaxExpansionBytes, b.expanded > max(MaxExpansionBytes, b.textBytes)
	if !inCase && !inFile {
		return true
	}
	b.tooLarge = true
	line, name := 0, ""
	if b.outer != nil {
		line, name = b.outer.Line, b.outer.Value
	}
	where, limit := "the file", max(MaxExpansionBytes, b.textBytes)
	if !inFile {
		where, limit = "its case", int64(MaxExpansionBytes)
	}
	b.problem(path, line, "alias *%s expands %s by more than %s: what aliases build counts as its JSON and %d "+
		"bytes a value, at most %s in any one case and %s (or the file's own size, when larger) in the whole file "+
		"(an alias bomb?)", name, where, sizeText(int(limit)), expansionValueBytes, sizeText(MaxExpansionBytes), sizeText(MaxExpansionBytes))
	return false
}

// scalarJSONLen is the length of v's compact JSON encoding (appendJSON) for a scalar.
func scalarJSONLen(v *value) int64 {
	switch v.kind {
	case kindBool:
		if v.b {
			return 4
		}
		return 5
	case kindNumber:
		return int64(len(v.num))
	case kindString:
		return int64(jsonenc.StringLen(v.str))
	}
	return 4
}

// buildItem converts item i of the deferred sequence, found at path with the given depth, exactly as build would
// have as part of the sequence.
func (b *treeBuilder) buildItem(i int, path *treePath, depth int) *value {
	return b.buildNode(b.deferred.Content[i], i, path, depth)
}

// buildNode is buildItem for item i's node n, given by the caller (Scan, which holds one item at a time).
func (b *treeBuilder) buildNode(n *yaml.Node, i int, path *treePath, depth int) *value {
	ip := indexPath(path, i)
	b.caseStart = b.expanded
	v := b.build(n, &ip, depth+1)
	b.caseStart = -1
	return v
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// smallMapping is the number of members up to which a mapping without merge keys finds duplicate keys by a scan
// of the keys so far rather than through maps.
const smallMapping = 16

func (b *treeBuilder) mapping(n *yaml.Node, path *treePath, depth int) *value {
	members := len(n.Content) / 2
	v := &value{kind: kindObject, line: n.Line}
	if len(b.expanding) > 0 {
		// The braces and separators, and each key quoted with its colon (the values charge themselves).
		cost := expansionValueBytes + int64(max(2, 1+members))
		for i := 0; i < len(n.Content); i += 2 {
			cost += int64(jsonenc.StringLen(n.Content[i].Value)) + 1
		}
		if !b.charge(cost, path) {
			return &value{kind: kindNull, line: n.Line}
		}
	}
	merges := false
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i]; k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			merges = true
			break
		}
	}
	if !merges && members <= smallMapping {
		v.keys = make([]string, 0, members)
		v.vals = make([]*value, 0, members)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, val := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode {
				b.problem(path, k.Line, "mapping keys must be scalars")
				continue
			}
			key := k.Value
			childPath := keyPath(path, key)
			if first := slices.Index(v.keys, key); first >= 0 {
				b.problem(&childPath, k.Line, "key %q is defined twice (first at line %d)", key, v.vals[first].line)
				continue
			}
			v.keys = append(v.keys, key)
			v.vals = append(v.vals, b.build(val, &childPath, depth+1))
		}
		return v
	}
	seen := make(map[string]int, members)
	explicit := make(map[string]bool, members)
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i]; k.Kind == yaml.ScalarNode && k.ShortTag() != "!!merge" {
			explicit[k.Value] = true
		}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			b.merge(v, val, explicit, seen, path, depth)
			continue
		}
		if k.Kind != yaml.ScalarNode {
			b.problem(path, k.Line, "mapping keys must be scalars")
			continue
		}
		key := k.Value
		childPath := keyPath(path, key)
		if first, dup := seen[key]; dup {
			b.problem(&childPath, k.Line, "key %q is defined twice (first at line %d)", key, v.vals[first].line)
			continue
		}
		seen[key] = len(v.keys)
		v.keys = append(v.keys, key)
		v.vals = append(v.vals, b.build(val, &childPath, depth+1))
	}
	return v
}

// merge applies a YAML merge key (<<: *anchor or <<: [*a, *b]): members of the merged mappings are added unless
// the mapping sets them itself or an earlier merged mapping did.
func (b *treeBuilder) merge(v *value, src *yaml.Node, explicit map[string]bool, seen map[string]int, path *treePath, depth int) {
	sources := []*yaml.Node{src}
	if src.Kind == yaml.SequenceNode {
		sources = src.Content
	}
	mergePath := keyPath(path, "<<")
	for _, s := range sources {
		m := b.build(s, &mergePath, depth+1)
		if m.kind != kindObject {
			b.problem(&mergePath, s.Line, "a merge key (<<) must refer to a mapping, got %s", m.kind)
			continue
		}
		for i, key := range m.keys {
			if explicit[key] {
				continue
			}
			if _, dup := seen[key]; dup {
				continue
			}
			seen[key] = len(v.keys)
			v.keys = append(v.keys, key)
			v.vals = append(v.vals, m.vals[i])
		}
	}
}

func (b *treeBuilder) scalar(n *yaml.Node, path *treePath) *value {
	v, problem := scalarValue(n)
	if problem != "" {
		b.problem(path, n.Line, "%s", problem)
	}
	return v
}

// scalarValue converts a scalar node; problem says why it is null instead when it cannot be converted.
func scalarValue(n *yaml.Node) (v *value, problem string) {
	v = &value{line: n.Line}
	switch n.ShortTag() {
	case "!!null":
		v.kind = kindNull
	case "!!bool":
		var x bool
		if err := n.Decode(&x); err != nil {
			v.kind = kindNull
			return v, fmt.Sprintf("invalid boolean %q", n.Value)
		}
		v.kind, v.b = kindBool, x
	case "!!int", "!!float":
		var x any
		if err := n.Decode(&x); err != nil {
			v.kind = kindNull
			return v, fmt.Sprintf("invalid number %q", n.Value)
		}
		var f float64
		switch t := x.(type) {
		case int:
			f = float64(t)
			v.num = strconv.FormatInt(int64(t), 10)
		case int64:
			f = float64(t)
			v.num = strconv.FormatInt(t, 10)
		case uint64:
			f = float64(t)
			v.num = strconv.FormatUint(t, 10)
		case float64:
			f = t
		default:
			v.kind = kindNull
			return v, fmt.Sprintf("invalid number %q", n.Value)
		}
		if math.IsInf(f, 0) || math.IsNaN(f) {
			v.kind = kindNull
			return v, fmt.Sprintf("%q is not a finite number and cannot be represented in JSON", n.Value)
		}
		if v.num == "" {
			enc, _ := json.Marshal(f)
			v.num = string(enc)
		}
		v.kind, v.f = kindNumber, f
	default:
		// !!str, !!timestamp, !!binary and custom tags keep their literal text.
		v.kind, v.str = kindString, n.Value
	}
	return v, ""
}
