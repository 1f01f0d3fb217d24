package suite42

import (
	"bytes"
	"fmt"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile/yamltree"
)

// A 4.42 suite's tests are a list written inline, a path, or both: tests: PATH names a YAML file (a list of
// tests), a JSONL file (a test a line) or a directory whose subdirectories each hold a case.yaml (its name is the
// test's id unless it sets one), resolved against the eval file's directory; an inline entry "file://PATH" (PATH
// may be a glob) stands for the tests of the files it names. AgentV reads them as it meets them, and so does
// expandTests: the tests come out in that order, one list.

// fileProtocol marks a test entry, or a prompt, that names a file.
const fileProtocol = "file://"

// testItem is one test of a suite before it is read: its value and where it came from.
type testItem struct {
	v *yamltree.Value
	// node is its YAML node (nil for a JSONL line).
	node *yaml.Node
	// file is the file it came from ("" for the eval file itself); line is its first line there.
	file string
	line int
	// inline is its index in the eval file's tests sequence; -1 for a test of another file.
	inline int
	// dirID is the id a directory's case.yaml takes from its directory's name when it sets none ("" otherwise).
	dirID string
}

// expandTests reads the suite's tests (tv, whose node is tn, under key) into sp.items, reading the files it names.
func (sp *suiteParser) expandTests(tv *yamltree.Value, tn *yaml.Node, key string) {
	p := sp.p
	line := keyLine(sp.rootNode, key, tv)
	for tn != nil && tn.Kind == yaml.AliasNode {
		tn = tn.Alias
	}
	switch {
	case tv.IsNull():
		p.AddAt(key, line, "is required: a list of tests or the path of a file or directory of tests (AgentV 4.42 "+
			"refuses a suite without)")
		return
	case tv.Kind == yamltree.KindString:
		sp.testsAt(tv.Str, key, line)
		return
	case tv.Kind != yamltree.KindArray:
		p.AddAt(key, line, "must be a list of tests or the path of a file or directory of tests, got %s", tv.Kind)
		return
	}
	for i, item := range tv.Vals {
		ipath := key + "[" + strconv.Itoa(i) + "]"
		switch {
		case item.Kind == yamltree.KindString && strings.HasPrefix(item.Str, fileProtocol):
			sp.fileEntry(item, ipath)
		case item.Kind == yamltree.KindString:
			p.Add(ipath, item, "a test written as a string must be a file reference (file://PATH); AgentV 4.42 skips it")
		case item.Kind != yamltree.KindObject:
			p.Add(ipath, item, "a test must be a mapping, got %s (AgentV 4.42 skips it)", item.Kind)
		default:
			var n *yaml.Node
			if tn != nil && tn.Kind == yaml.SequenceNode && i < len(tn.Content) {
				n = tn.Content[i]
			}
			sp.items = append(sp.items, testItem{v: item, node: n, line: item.Line, inline: i})
		}
	}
}

// testsAt reads tests: ref, a file or a directory relative to the eval file's directory.
func (sp *suiteParser) testsAt(ref, key string, line int) {
	p := sp.p
	if sp.files.fsys == nil {
		p.AddAt(key, line, "%q is a path: reading its tests needs the suite's files (its eval bundle)", headOf(ref))
		return
	}
	target, err := sp.files.join(sp.files.dir, ref)
	if err != nil {
		p.AddAt(key, line, "%v", err)
		return
	}
	if sp.files.isDir(target) {
		sp.testsDir(target, key, line)
		return
	}
	sp.testsFile(target, key, line)
}

// fileEntry reads an inline entry file://PATH: one file, or the files a glob matches.
func (sp *suiteParser) fileEntry(item *yamltree.Value, ipath string) {
	p := sp.p
	ref := strings.TrimPrefix(item.Str, fileProtocol)
	if sp.files.fsys == nil {
		p.Add(ipath, item, "%q names a file: reading its tests needs the suite's files (its eval bundle)", headOf(item.Str))
		return
	}
	target, err := sp.files.join(sp.files.dir, ref)
	if err != nil {
		p.Add(ipath, item, "%v", err)
		return
	}
	if !isGlob(ref) {
		sp.testsFile(target, ipath, item.Line)
		return
	}
	matches, err := sp.files.glob(target)
	if err != nil {
		p.Add(ipath, item, "%v", err)
		return
	}
	if len(matches) == 0 {
		sp.warn(ipath, item, "the glob %q matches no file: AgentV 4.42 reads no test from it", headOf(ref))
	}
	for _, m := range matches {
		sp.testsFile(m, ipath, item.Line)
	}
}

// testsFile reads the tests of the YAML or JSONL file at fpath (named at path, line of the eval file).
func (sp *suiteParser) testsFile(fpath, at string, line int) {
	p := sp.p
	ext := strings.ToLower(path.Ext(fpath))
	if ext != ".yaml" && ext != ".yml" && ext != ".jsonl" {
		p.AddAt(at, line, "%s: a tests file must be .yaml, .yml or .jsonl (AgentV 4.42 refuses %q)", fpath, ext)
		return
	}
	data, err := sp.files.readFile(fpath)
	if err != nil {
		p.AddAt(at, line, "%v", err)
		return
	}
	if len(bytes.TrimSpace(data)) == 0 {
		sp.warnAt(at, line, "%s is empty: AgentV 4.42 reads no test from it", fpath)
		return
	}
	if ext == ".jsonl" {
		sp.testsJSONL(fpath, data)
		return
	}
	sp.testsYAML(fpath, data, at, line)
}

// withFile runs fn with problems attributed to file.
func (sp *suiteParser) withFile(file string, fn func()) {
	saved := sp.p.InFile
	sp.p.InFile = file
	defer func() { sp.p.InFile = saved }()
	before := len(sp.tb.Problems)
	fn()
	for i := before; i < len(sp.tb.Problems); i++ {
		if sp.tb.Problems[i].File == "" {
			sp.tb.Problems[i].File = file
		}
	}
}

// parseOther parses another file of the suite as one YAML document.
func (sp *suiteParser) parseOther(fpath string, data []byte) (*yaml.Node, bool) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		pr := yamltree.SyntaxProblem(err)
		pr.File = fpath
		sp.p.Problems = append(sp.p.Problems, pr)
		return nil, false
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		sp.p.AddAt("", 0, "%s holds no YAML value", fpath)
		return nil, false
	}
	sp.tb.TextBytes += int64(len(data))
	return &doc, true
}

// testsYAML reads a YAML file that is a list of tests.
func (sp *suiteParser) testsYAML(fpath string, data []byte, at string, line int) {
	doc, ok := sp.parseOther(fpath, data)
	if !ok {
		return
	}
	seq := doc.Content[0]
	for seq.Kind == yaml.AliasNode && seq.Alias != nil {
		seq = seq.Alias
	}
	if seq.Kind != yaml.SequenceNode {
		sp.p.AddAt(at, line, "%s must be a YAML list of tests (AgentV 4.42 refuses it)", fpath)
		return
	}
	sp.withFile(fpath, func() {
		for _, n := range seq.Content {
			k := len(sp.items)
			keyPath := yamltree.KeyPath(nil, sp.s.TestsKey)
			v := sp.tb.BuildNode(n, k, &keyPath, 1)
			if sp.tb.TooLarge {
				return
			}
			ipath := fmt.Sprintf("%s[%d]", sp.s.TestsKey, k)
			if v.Kind != yamltree.KindObject {
				sp.p.Add(ipath, v, "a test must be a mapping, got %s (AgentV 4.42 refuses the file)", v.Kind)
				continue
			}
			refuseEnv(sp.p, v, func() string { return ipath })
			sp.items = append(sp.items, testItem{v: v, node: n, file: fpath, line: v.Line, inline: -1})
		}
	})
}

// testsJSONL reads a JSONL file: a test a line, blank lines skipped.
func (sp *suiteParser) testsJSONL(fpath string, data []byte) {
	sp.withFile(fpath, func() {
		for i, raw := range strings.Split(string(data), "\n") {
			text := strings.TrimFunc(raw, isJSSpace)
			if text == "" {
				continue
			}
			lineNo := i + 1
			k := len(sp.items)
			ipath := fmt.Sprintf("%s[%d]", sp.s.TestsKey, k)
			v, err := yamltree.DecodeJSON([]byte(text))
			if err != nil {
				sp.p.AddAt(ipath, lineNo, "not a JSON value: %v (AgentV 4.42 refuses the file)", err)
				continue
			}
			if v.Kind != yamltree.KindObject {
				sp.p.AddAt(ipath, lineNo, "a test must be a JSON object, got %s (AgentV 4.42 refuses the file)", v.Kind)
				continue
			}
			if !sp.checkJSON(v, lineNo, func() string { return ipath }) {
				continue
			}
			sp.tb.TextBytes += int64(len(text))
			refuseEnv(sp.p, v, func() string { return ipath })
			sp.items = append(sp.items, testItem{v: v, file: fpath, line: lineNo, inline: -1})
		}
	})
}

// finite reports whether f is neither infinite nor NaN.
func finite(f float64) bool { return !math.IsInf(f, 0) && !math.IsNaN(f) }

// checkJSON sets every value of a JSONL line to its line and refuses what a YAML test could not hold: a key twice
// (JSON.parse keeps the last), a number that is not finite.
func (sp *suiteParser) checkJSON(v *yamltree.Value, line int, pathOf func() string) bool {
	v.Line = line
	ok := true
	switch v.Kind {
	case yamltree.KindNumber:
		if !finite(v.Float) {
			sp.p.AddAt(pathOf(), line, "%s is not a finite number", v.Num)
			return false
		}
	case yamltree.KindObject:
		for i, k := range v.Keys {
			if j := slices.Index(v.Keys[:i], k); j >= 0 {
				sp.p.AddAt(yamltree.JoinPath(pathOf(), k), line, "key %q is set twice", k)
				ok = false
			}
			ok = sp.checkJSON(v.Vals[i], line, func() string { return yamltree.JoinPath(pathOf(), k) }) && ok
		}
	case yamltree.KindArray:
		for i, item := range v.Vals {
			ok = sp.checkJSON(item, line, func() string { return pathOf() + "[" + strconv.Itoa(i) + "]" }) && ok
		}
	}
	return ok
}

// testsDir reads a directory of tests: each subdirectory, in name order, holds case.yaml (or case.yml), one test.
func (sp *suiteParser) testsDir(dir, at string, line int) {
	names, err := sp.files.subdirs(dir)
	if err != nil {
		sp.p.AddAt(at, line, "%v", err)
		return
	}
	for _, name := range names {
		sub := path.Join(dir, name)
		file := ""
		for _, f := range []string{"case.yaml", "case.yml"} {
			if sp.files.isFile(path.Join(sub, f)) {
				file = path.Join(sub, f)
				break
			}
		}
		if file == "" {
			sp.warnAt(at, line, "%s has no case.yaml: AgentV 4.42 skips it", sub)
			continue
		}
		data, err := sp.files.readFile(file)
		if err != nil {
			sp.p.AddAt(at, line, "%v", err)
			continue
		}
		doc, ok := sp.parseOther(file, data)
		if !ok {
			continue
		}
		k := len(sp.items)
		ipath := fmt.Sprintf("%s[%d]", sp.s.TestsKey, k)
		sp.withFile(file, func() {
			keyPath := yamltree.KeyPath(nil, sp.s.TestsKey)
			v := sp.tb.BuildNode(doc.Content[0], k, &keyPath, 1)
			if sp.tb.TooLarge {
				return
			}
			if v.Kind != yamltree.KindObject {
				sp.p.Add(ipath, v, "a case file must be a mapping, got %s (AgentV 4.42 refuses it)", v.Kind)
				return
			}
			refuseEnv(sp.p, v, func() string { return ipath })
			it := testItem{v: v, node: doc.Content[0], file: file, line: v.Line, inline: -1}
			if v.Get("id").IsNull() {
				it.dirID = name
			}
			if v.Get("workspace").IsNull() && sp.files.isDir(path.Join(sub, "workspace")) {
				sp.p.Add(ipath, v, "not supported: %s has a workspace directory, which AgentV 4.42 makes the test's "+
					"workspace template; the operator does not set up workspaces", sub)
			}
			sp.items = append(sp.items, it)
		})
	}
}
