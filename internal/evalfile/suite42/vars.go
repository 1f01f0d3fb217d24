package suite42

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/evalfile/yamltree"
	"github.com/evalrun-operator/evalrun-operator/internal/jsonenc"
)

// AgentV 4.42 rewrites a suite's strings twice. First every string of the suite and of every file it reads is
// interpolated from the environment of the process that loads it: ${{ NAME }} becomes the variable's value. The
// operator never does that (the manager's and the collector's environment hold credentials), so such a string is
// refused, naming where it is. Then each test's vars fill {{ name }} placeholders (dotted paths into objects) in its
// criteria, input, input_files and expected_output and in the suite-level input and input_files it takes: a string
// that is one placeholder becomes the variable's value (any JSON), a placeholder inside text becomes its text
// (JSON for what is not a string), and a placeholder naming no variable stays as written.

// jsSpace is JavaScript's \s, which AgentV's patterns use.
const jsSpace = `[\t\n\v\f\r \x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}\x{feff}]`

var (
	envPattern           = regexp.MustCompile(`\$\{\{` + jsSpace + `*([A-Za-z_][A-Za-z0-9_]*)` + jsSpace + `*\}\}`)
	templatePattern      = regexp.MustCompile(`\{\{` + jsSpace + `*([A-Za-z_][A-Za-z0-9_.]*)` + jsSpace + `*\}\}`)
	wholeTemplatePattern = regexp.MustCompile(`^\{\{` + jsSpace + `*([A-Za-z_][A-Za-z0-9_.]*)` + jsSpace + `*\}\}$`)
)

// isJSSpace reports whether r is white space to JavaScript's trim (and its \s).
func isJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff:
		return true
	}
	return r >= 0x2000 && r <= 0x200a
}

// refuseEnv reports every string of v (keys are not interpolated) that AgentV would interpolate from the
// environment; path is v's path, formatted only for a problem.
func refuseEnv(p *evalfile.Parser, v *yamltree.Value, path func() string) {
	switch v.Kind {
	case yamltree.KindString:
		if m := envPattern.FindStringSubmatch(v.Str); m != nil {
			p.Add(path(), v, "${{ %s }} is an environment variable, which AgentV 4.42 reads from the environment of the "+
				"process that loads the suite: the operator never reads its own environment into a suite; write the value", m[1])
		}
	case yamltree.KindObject:
		for i, k := range v.Keys {
			refuseEnv(p, v.Vals[i], func() string { return yamltree.JoinPath(path(), k) })
		}
	case yamltree.KindArray:
		for i, item := range v.Vals {
			refuseEnv(p, item, func() string { return path() + "[" + strconv.Itoa(i) + "]" })
		}
	}
}

// templater fills a test's vars into values, counting what the copies add (bounded as alias expansion is).
type templater struct {
	vars *yamltree.Value
	// added counts the bytes the substitutions add; over is set once they pass MaxExpansionBytes.
	added int64
	over  bool
}

// fill returns v with its strings' placeholders filled, sharing every part that has none.
func (t *templater) fill(v *yamltree.Value) *yamltree.Value {
	if t == nil || v == nil || t.over {
		return v
	}
	switch v.Kind {
	case yamltree.KindString:
		return t.fillString(v)
	case yamltree.KindObject, yamltree.KindArray:
		var out *yamltree.Value
		for i, item := range v.Vals {
			f := t.fill(item)
			if f == item {
				continue
			}
			if out == nil {
				out = &yamltree.Value{Kind: v.Kind, Line: v.Line, Keys: v.Keys, Vals: append([]*yamltree.Value(nil), v.Vals...)}
			}
			out.Vals[i] = f
		}
		if out != nil {
			return out
		}
	}
	return v
}

func (t *templater) fillString(v *yamltree.Value) *yamltree.Value {
	if !strings.Contains(v.Str, "{{") {
		return v
	}
	if m := wholeTemplatePattern.FindStringSubmatch(v.Str); m != nil {
		found := lookupVar(t.vars, m[1])
		if found == nil {
			return v
		}
		t.charge(int64(len(found.Raw())))
		return relined(found, v.Line)
	}
	changed := false
	s := templatePattern.ReplaceAllStringFunc(v.Str, func(match string) string {
		expr := templatePattern.FindStringSubmatch(match)[1]
		found := lookupVar(t.vars, expr)
		if found == nil {
			return match
		}
		changed = true
		text := found.Str
		if found.Kind != yamltree.KindString {
			text = string(jsStringify(nil, found))
		}
		t.charge(int64(len(text)))
		return text
	})
	if !changed {
		return v
	}
	return &yamltree.Value{Kind: yamltree.KindString, Str: s, Line: v.Line}
}

func (t *templater) charge(n int64) {
	if t.added += n + yamltree.ExpansionValueBytes; t.added > evalfile.MaxExpansionBytes {
		t.over = true
	}
}

// lookupVar resolves a dotted expression in vars through objects only, or returns nil.
func lookupVar(vars *yamltree.Value, expr string) *yamltree.Value {
	cur := vars
	for seg := range strings.SplitSeq(expr, ".") {
		if cur == nil || cur.Kind != yamltree.KindObject || !cur.Has(seg) {
			return nil
		}
		cur = cur.Get(seg)
	}
	return cur
}

// relined returns a copy of v whose values all have the given line (a variable's value placed where the
// placeholder was).
func relined(v *yamltree.Value, line int) *yamltree.Value {
	c := *v
	c.Line = line
	if len(v.Vals) > 0 {
		c.Vals = make([]*yamltree.Value, len(v.Vals))
		for i, item := range v.Vals {
			c.Vals[i] = relined(item, line)
		}
	}
	return &c
}

// jsStringify appends JavaScript's JSON.stringify of v: compact, object keys in order, strings escaped as
// JavaScript escapes them (no HTML escaping, U+2028 and U+2029 as they are).
func jsStringify(b []byte, v *yamltree.Value) []byte {
	switch v.Kind {
	case yamltree.KindString:
		return jsonenc.AppendStringJS(b, v.Str)
	case yamltree.KindObject:
		b = append(b, '{')
		for i, k := range v.Keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonenc.AppendStringJS(b, k)
			b = append(b, ':')
			b = jsStringify(b, v.Vals[i])
		}
		return append(b, '}')
	case yamltree.KindArray:
		b = append(b, '[')
		for i, item := range v.Vals {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsStringify(b, item)
		}
		return append(b, ']')
	case yamltree.KindNumber:
		return append(b, jsNumber(v.Float)...)
	}
	return v.AppendJSON(b)
}

// jsNumber is JavaScript's String(f) for a finite number: the shortest digits that read back as f, in decimal
// notation from 1e-6 up to below 1e21, in exponent notation ("1e+21", "1.5e-7") outside.
func jsNumber(f float64) string {
	if f == 0 {
		return "0"
	}
	if a := math.Abs(f); a >= 1e21 || a < 1e-6 {
		s := strconv.FormatFloat(f, 'e', -1, 64)
		mant, exp, _ := strings.Cut(s, "e")
		sign := exp[0]
		exp = strings.TrimLeft(exp[1:], "0")
		return mant + "e" + string(sign) + exp
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// jsSlice is JavaScript's s.slice(0, n): the first n UTF-16 code units of s (a surrogate pair cut in half is
// dropped, which is what such a string shows as).
func jsSlice(s string, n int) string {
	units := 0
	for i, r := range s {
		w := utf16.RuneLen(r)
		if w < 0 {
			w = 1
		}
		if units+w > n {
			return s[:i]
		}
		units += w
	}
	return s
}
