package yamltree

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
	// MaxNodes bounds the number of values built by expanding aliases.
	MaxNodes = 1 << 20
	// MaxDepth bounds nesting.
	MaxDepth = 256
)

// MaxExpansionBytes bounds what alias expansion (aliases, and merge keys through them) may add to a document: the
// bytes of compact JSON the values built through aliases take, which is what they cost the reader in memory (each
// case keeps its JSON), and ExpansionValueBytes more for each of those values. Aliases may add at most this much to
// any one item, and at most this much, or the text's own size when that is larger, to the whole document. It is
// evalfile.MaxWholeBytes, the largest text the manager holds whole (evalfile.MaxExpansionBytes names this bound;
// docs/design/large-eval-files.md#alias-expansion documents it).
const MaxExpansionBytes = 16 << 20

// ExpansionValueBytes is what each value built through an alias counts toward MaxExpansionBytes besides its JSON:
// a value costs the reader about that much once parsed (its tree value, and the segment or field it becomes),
// so that a bomb of many tiny values is bounded as one of a few large ones.
const ExpansionValueBytes = 128

// StrTag is the tag of a YAML string scalar.
const StrTag = "!!str"

// Kind is the JSON type of a tree value.
type Kind int

// The kinds of values, as JSON has them.
const (
	KindNull Kind = iota
	KindBool
	KindNumber
	KindString
	KindObject
	KindArray
)

// String names the kind as a problem does: "a string", "an object".
func (k Kind) String() string {
	switch k {
	case KindNull:
		return "null"
	case KindBool:
		return "a boolean"
	case KindNumber:
		return "a number"
	case KindString:
		return "a string"
	case KindObject:
		return "an object"
	case KindArray:
		return "an array"
	}
	return "unknown"
}

// Value is one JSON value read from the YAML document, with its position. Objects keep their keys in document
// order, which is why an eval file is not decoded through Go maps.
type Value struct {
	Kind Kind
	// Bool is a boolean's value.
	Bool bool
	// Num is the JSON text of a number, Float its value.
	Num   string
	Float float64
	// Str is a string's value.
	Str string
	// Keys and Vals hold an object's members in order; Vals alone holds an array's items.
	Keys []string
	Vals []*Value
	// Line is the 1-based line of the value in its text.
	Line int
}

// Get returns the member named key of an object, or nil.
func (v *Value) Get(key string) *Value {
	if v == nil || v.Kind != KindObject {
		return nil
	}
	for i, k := range v.Keys {
		if k == key {
			return v.Vals[i]
		}
	}
	return nil
}

// Has reports whether an object has the member key (a present null counts).
func (v *Value) Has(key string) bool {
	if v == nil || v.Kind != KindObject {
		return false
	}
	for _, k := range v.Keys {
		if k == key {
			return true
		}
	}
	return false
}

// IsNull reports whether v is absent or null.
func (v *Value) IsNull() bool { return v == nil || v.Kind == KindNull }

// Raw returns the compact JSON encoding of v, object keys in document order.
func (v *Value) Raw() json.RawMessage {
	if v == nil {
		return nil
	}
	scratch := rawScratch.Get().(*[]byte)
	b := v.AppendJSON((*scratch)[:0])
	out := make(json.RawMessage, len(b))
	copy(out, b)
	*scratch = b
	rawScratch.Put(scratch)
	return out
}

// RawMember is Raw for an object, with where the value of its member key is in the encoding (start == end when
// it has none; the first, when several).
func (v *Value) RawMember(key string) (raw json.RawMessage, start, end int) {
	scratch := rawScratch.Get().(*[]byte)
	b := append((*scratch)[:0], '{')
	found := false
	for i, k := range v.Keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonenc.AppendString(b, k)
		b = append(b, ':')
		s := len(b)
		b = v.Vals[i].AppendJSON(b)
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

// AppendJSON appends the compact JSON encoding of v, as encoding/json would write it.
func (v *Value) AppendJSON(b []byte) []byte {
	switch v.Kind {
	case KindNull:
		b = append(b, "null"...)
	case KindBool:
		b = strconv.AppendBool(b, v.Bool)
	case KindNumber:
		b = append(b, v.Num...)
	case KindString:
		b = jsonenc.AppendString(b, v.Str)
	case KindObject:
		b = append(b, '{')
		for i, k := range v.Keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonenc.AppendString(b, k)
			b = append(b, ':')
			b = v.Vals[i].AppendJSON(b)
		}
		b = append(b, '}')
	case KindArray:
		b = append(b, '[')
		for i, item := range v.Vals {
			if i > 0 {
				b = append(b, ',')
			}
			b = item.AppendJSON(b)
		}
		b = append(b, ']')
	}
	return b
}

// Path is the path of the value being built: a chain of keys and indexes up to the document root. It is
// formatted only when a problem is reported, so building a large document does not format a path per value.
type Path struct {
	parent *Path
	key    string
	// index is the item index in a sequence; -1 for a mapping key.
	index int
}

// String formats the path as Problem.Path does: keys joined by '.', indexes as [i].
func (p *Path) String() string {
	if p == nil {
		return ""
	}
	parent := p.parent.String()
	if p.index >= 0 {
		return parent + "[" + strconv.Itoa(p.index) + "]"
	}
	return JoinPath(parent, p.key)
}

// KeyPath and IndexPath extend a path; the result is only valid while the call that made it runs.
func KeyPath(parent *Path, key string) Path {
	return Path{parent: parent, key: key, index: -1}
}

// IndexPath extends a path with an item's index (see KeyPath).
func IndexPath(parent *Path, i int) Path { return Path{parent: parent, index: i} }

// Builder turns a YAML node graph into values, resolving aliases and merge keys and collecting problems.
type Builder struct {
	// nodes counts the values built through aliases (bounded by MaxNodes); Values counts every value built.
	nodes  int
	Values int
	// Problems are the problems found, in order (file-level: CaseIndex -1).
	Problems []Problem
	// expanding guards against an alias that refers to a node containing itself.
	expanding map[*yaml.Node]bool
	// TooLarge says the document grew past a bound (MaxNodes, MaxExpansionBytes): nothing more is built, and
	// Problems says why.
	TooLarge bool
	// expanded counts the bytes of JSON built through aliases (see MaxExpansionBytes); caseStart is its count when
	// the item being built began (BuildNode), TextBytes the size of the text read (0: not known).
	expanded, caseStart, TextBytes int64
	// outer is the alias of the text being expanded (the outermost one), for the problem that names it.
	outer *yaml.Node
	// Deferred, when set, is a sequence node whose items Build leaves to the caller: Build returns an array of
	// len(Deferred.Content) nil items for it, and the caller builds each item with BuildItem.
	Deferred *yaml.Node
	// itemsKey is the top-level key of the items (an eval file's cases), which are bounded one by one.
	itemsKey string
}

// NewBuilder returns a builder for a document of textBytes bytes of text (0 when not known yet: a reader of a
// stream sets TextBytes as it reads) whose items, bounded one by one, are the top-level key itemsKey's (an eval
// file's cases: evalcases, a 4.42 suite's tests).
func NewBuilder(textBytes int64, itemsKey string) *Builder {
	return &Builder{expanding: map[*yaml.Node]bool{}, caseStart: -1, TextBytes: textBytes, itemsKey: itemsKey}
}

func (b *Builder) problem(path *Path, line int, format string, args ...any) {
	b.Problems = append(b.Problems, Problem{CaseIndex: -1, Path: path.String(), Line: line, Message: fmt.Sprintf(format, args...)})
}

// Build converts n. It returns a null value (never nil) for a node it cannot convert, after recording why.
func (b *Builder) Build(n *yaml.Node, path *Path, depth int) *Value {
	if b.TooLarge {
		return &Value{Kind: KindNull, Line: n.Line}
	}
	// Values reached through an alias are what an alias bomb multiplies; every other value is one of the text's,
	// which the file's size already bounds (a 100,000-case file has millions).
	b.Values++
	if len(b.expanding) > 0 {
		b.nodes++
	}
	if b.nodes > MaxNodes {
		b.TooLarge = true
		b.problem(path, n.Line, "the document expands to more than %d values (check for alias loops or alias bombs)", MaxNodes)
		return &Value{Kind: KindNull, Line: n.Line}
	}
	if depth > MaxDepth {
		b.problem(path, n.Line, "nesting is deeper than %d levels", MaxDepth)
		return &Value{Kind: KindNull, Line: n.Line}
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return &Value{Kind: KindNull, Line: n.Line}
		}
		return b.Build(n.Content[0], path, depth)
	case yaml.AliasNode:
		if n.Alias == nil {
			b.problem(path, n.Line, "alias *%s refers to no anchor", n.Value)
			return &Value{Kind: KindNull, Line: n.Line}
		}
		if b.expanding[n.Alias] {
			b.problem(path, n.Line, "alias *%s refers to a value that contains it", n.Value)
			return &Value{Kind: KindNull, Line: n.Line}
		}
		if len(b.expanding) == 0 {
			b.outer = n
		}
		b.expanding[n.Alias] = true
		v := b.Build(n.Alias, path, depth+1)
		delete(b.expanding, n.Alias)
		return v
	case yaml.ScalarNode:
		v := b.scalar(n, path)
		if len(b.expanding) > 0 {
			b.charge(ExpansionValueBytes+scalarJSONLen(v), path)
		}
		return v
	case yaml.SequenceNode:
		if n == b.Deferred {
			return &Value{Kind: KindArray, Line: n.Line, Vals: make([]*Value, len(n.Content))}
		}
		if len(b.expanding) > 0 && !b.charge(ExpansionValueBytes+int64(max(2, 1+len(n.Content))), path) {
			return &Value{Kind: KindNull, Line: n.Line}
		}
		v := &Value{Kind: KindArray, Line: n.Line, Vals: make([]*Value, 0, len(n.Content))}
		cases := path != nil && path.parent == nil && path.index < 0 && path.key == b.itemsKey && b.caseStart < 0
		for i, item := range n.Content {
			if cases {
				// The cases of a file read whole count as they do read one at a time (BuildNode).
				v.Vals = append(v.Vals, b.BuildNode(item, i, path, depth))
				continue
			}
			ip := IndexPath(path, i)
			v.Vals = append(v.Vals, b.Build(item, &ip, depth+1))
		}
		return v
	case yaml.MappingNode:
		return b.mapping(n, path, depth)
	}
	b.problem(path, n.Line, "unsupported YAML node")
	return &Value{Kind: KindNull, Line: n.Line}
}

// charge adds n bytes built through an alias to the expansion; false (and the tree too large, with the problem
// that names the alias and the bound) when that passes MaxExpansionBytes.
func (b *Builder) charge(n int64, path *Path) bool {
	b.expanded += n
	inCase, inFile := b.caseStart >= 0 && b.expanded-b.caseStart > MaxExpansionBytes, b.expanded > max(MaxExpansionBytes, b.TextBytes)
	if !inCase && !inFile {
		return true
	}
	b.TooLarge = true
	line, name := 0, ""
	if b.outer != nil {
		line, name = b.outer.Line, b.outer.Value
	}
	where, limit := "the file", max(MaxExpansionBytes, b.TextBytes)
	if !inFile {
		where, limit = "its case", int64(MaxExpansionBytes)
	}
	b.problem(path, line, "alias *%s expands %s by more than %s: what aliases build counts as its JSON and %d "+
		"bytes a value, at most %s in any one case and %s (or the file's own size, when larger) in the whole file "+
		"(an alias bomb?)", name, where, SizeText(int(limit)), ExpansionValueBytes, SizeText(MaxExpansionBytes), SizeText(MaxExpansionBytes))
	return false
}

// scalarJSONLen is the length of v's compact JSON encoding (appendJSON) for a scalar.
func scalarJSONLen(v *Value) int64 {
	switch v.Kind {
	case KindBool:
		if v.Bool {
			return 4
		}
		return 5
	case KindNumber:
		return int64(len(v.Num))
	case KindString:
		return int64(jsonenc.StringLen(v.Str))
	}
	return 4
}

// BuildApart builds the document n as Build does, for a reader that builds it while an item is being built (a 4.42
// test's assertion template): what its aliases expand counts toward the whole text's bound, not the item's.
func (b *Builder) BuildApart(n *yaml.Node) *Value {
	saved := b.caseStart
	b.caseStart = -1
	v := b.Build(n, nil, 0)
	b.caseStart = saved
	return v
}

// BuildItem converts item i of the deferred sequence, found at path with the given depth, exactly as Build would
// have as part of the sequence.
func (b *Builder) BuildItem(i int, path *Path, depth int) *Value {
	return b.BuildNode(b.Deferred.Content[i], i, path, depth)
}

// BuildNode is BuildItem for item i's node n, given by the caller (evalfile.Scan, which holds one item at a time).
func (b *Builder) BuildNode(n *yaml.Node, i int, path *Path, depth int) *Value {
	ip := IndexPath(path, i)
	b.caseStart = b.expanded
	v := b.Build(n, &ip, depth+1)
	b.caseStart = -1
	return v
}

// JoinPath is path with key appended, as Problem.Path spells it (keys joined by '.').
func JoinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// smallMapping is the number of members up to which a mapping without merge keys finds duplicate keys by a scan
// of the keys so far rather than through maps.
const smallMapping = 16

func (b *Builder) mapping(n *yaml.Node, path *Path, depth int) *Value {
	members := len(n.Content) / 2
	v := &Value{Kind: KindObject, Line: n.Line}
	if len(b.expanding) > 0 {
		// The braces and separators, and each key quoted with its colon (the values charge themselves).
		cost := ExpansionValueBytes + int64(max(2, 1+members))
		for i := 0; i < len(n.Content); i += 2 {
			cost += int64(jsonenc.StringLen(n.Content[i].Value)) + 1
		}
		if !b.charge(cost, path) {
			return &Value{Kind: KindNull, Line: n.Line}
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
		v.Keys = make([]string, 0, members)
		v.Vals = make([]*Value, 0, members)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, val := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode {
				b.problem(path, k.Line, "mapping keys must be scalars")
				continue
			}
			key := k.Value
			childPath := KeyPath(path, key)
			if first := slices.Index(v.Keys, key); first >= 0 {
				b.problem(&childPath, k.Line, "key %q is defined twice (first at line %d)", key, v.Vals[first].Line)
				continue
			}
			v.Keys = append(v.Keys, key)
			v.Vals = append(v.Vals, b.Build(val, &childPath, depth+1))
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
		childPath := KeyPath(path, key)
		if first, dup := seen[key]; dup {
			b.problem(&childPath, k.Line, "key %q is defined twice (first at line %d)", key, v.Vals[first].Line)
			continue
		}
		seen[key] = len(v.Keys)
		v.Keys = append(v.Keys, key)
		v.Vals = append(v.Vals, b.Build(val, &childPath, depth+1))
	}
	return v
}

// merge applies a YAML merge key (<<: *anchor or <<: [*a, *b]): members of the merged mappings are added unless
// the mapping sets them itself or an earlier merged mapping did.
func (b *Builder) merge(v *Value, src *yaml.Node, explicit map[string]bool, seen map[string]int, path *Path, depth int) {
	sources := []*yaml.Node{src}
	if src.Kind == yaml.SequenceNode {
		sources = src.Content
	}
	mergePath := KeyPath(path, "<<")
	for _, s := range sources {
		m := b.Build(s, &mergePath, depth+1)
		if m.Kind != KindObject {
			b.problem(&mergePath, s.Line, "a merge key (<<) must refer to a mapping, got %s", m.Kind)
			continue
		}
		for i, key := range m.Keys {
			if explicit[key] {
				continue
			}
			if _, dup := seen[key]; dup {
				continue
			}
			seen[key] = len(v.Keys)
			v.Keys = append(v.Keys, key)
			v.Vals = append(v.Vals, m.Vals[i])
		}
	}
}

func (b *Builder) scalar(n *yaml.Node, path *Path) *Value {
	v, problem := scalarValue(n)
	if problem != "" {
		b.problem(path, n.Line, "%s", problem)
	}
	return v
}

// scalarValue converts a scalar node; problem says why it is null instead when it cannot be converted.
func scalarValue(n *yaml.Node) (v *Value, problem string) {
	v = &Value{Line: n.Line}
	switch n.ShortTag() {
	case "!!null":
		v.Kind = KindNull
	case "!!bool":
		var x bool
		if err := n.Decode(&x); err != nil {
			v.Kind = KindNull
			return v, fmt.Sprintf("invalid boolean %q", n.Value)
		}
		v.Kind, v.Bool = KindBool, x
	case "!!int", "!!float":
		var x any
		if err := n.Decode(&x); err != nil {
			v.Kind = KindNull
			return v, fmt.Sprintf("invalid number %q", n.Value)
		}
		var f float64
		switch t := x.(type) {
		case int:
			f = float64(t)
			v.Num = strconv.FormatInt(int64(t), 10)
		case int64:
			f = float64(t)
			v.Num = strconv.FormatInt(t, 10)
		case uint64:
			f = float64(t)
			v.Num = strconv.FormatUint(t, 10)
		case float64:
			f = t
		default:
			v.Kind = KindNull
			return v, fmt.Sprintf("invalid number %q", n.Value)
		}
		if math.IsInf(f, 0) || math.IsNaN(f) {
			v.Kind = KindNull
			return v, fmt.Sprintf("%q is not a finite number and cannot be represented in JSON", n.Value)
		}
		if v.Num == "" {
			enc, _ := json.Marshal(f)
			v.Num = string(enc)
		}
		v.Kind, v.Float = KindNumber, f
	default:
		// !!str, !!timestamp, !!binary and custom tags keep their literal text.
		v.Kind, v.Str = KindString, n.Value
	}
	return v, ""
}
