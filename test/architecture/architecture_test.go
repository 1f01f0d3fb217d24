package architecture

import (
	"bufio"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const root = "../.."

// mapEntry matches a folder at the start of a line of the package map, as "internal/outcome/".
var mapEntry = regexp.MustCompile(`^([a-z0-9][a-z0-9_./-]*/)\s`)

// packageMap returns the folders ARCHITECTURE.md's package map lists (its first code block under "## Packages").
func packageMap(t *testing.T) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(root, "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	var dirs []string
	section, block := false, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			section = line == "## Packages"
		case section && strings.HasPrefix(line, "```"):
			if block {
				return dirs
			}
			block = true
		case section && block:
			if m := mapEntry.FindStringSubmatch(line); m != nil {
				dirs = append(dirs, strings.TrimSuffix(m[1], "/"))
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	t.Fatal("ARCHITECTURE.md has no package map (a code block under ## Packages)")
	return nil
}

// goPackages returns the folders under the given top folders that hold Go files.
func goPackages(t *testing.T, tops ...string) map[string][]string {
	t.Helper()
	pkgs := map[string][]string{}
	for _, top := range tops {
		err := filepath.WalkDir(filepath.Join(root, top), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			if !d.IsDir() && strings.HasSuffix(path, ".go") {
				rel, err := filepath.Rel(root, filepath.Dir(path))
				if err != nil {
					return err
				}
				pkgs[filepath.ToSlash(rel)] = append(pkgs[filepath.ToSlash(rel)], path)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return pkgs
}

// TestPackageMapMatchesTree: a package added without its line in the map, or a line left for a package that is
// gone, fails.
func TestPackageMapMatchesTree(t *testing.T) {
	listed := packageMap(t)
	for _, dir := range listed {
		if st, err := os.Stat(filepath.Join(root, dir)); err != nil || !st.IsDir() {
			t.Errorf("ARCHITECTURE.md lists %s/, which is not a folder of the tree", dir)
		}
	}
	covered := func(pkg string) bool {
		return slices.ContainsFunc(listed, func(dir string) bool {
			// internal/ packages each have their own line; elsewhere a folder's line covers what is under it.
			if strings.HasPrefix(pkg, "internal/") && !strings.HasPrefix(pkg, "internal/testutil/") {
				return pkg == dir
			}
			return pkg == dir || strings.HasPrefix(pkg, dir+"/")
		})
	}
	for pkg := range goPackages(t, "internal", "cmd", "test", "api", "hack") {
		if !covered(pkg) {
			t.Errorf("package %s/ is not in ARCHITECTURE.md's package map", pkg)
		}
	}
}

// TestInternalPackagesHaveDocs: every package under internal/ says what it holds.
func TestInternalPackagesHaveDocs(t *testing.T) {
	for pkg, files := range goPackages(t, "internal") {
		documented := false
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.PackageClauseOnly|parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			documented = documented || (f.Doc != nil && strings.HasPrefix(f.Doc.Text(), "Package "+f.Name.Name+" "))
		}
		if !documented {
			t.Errorf("package %s has no package doc comment (// Package <name> ...)", pkg)
		}
	}
}
