package architecture

import (
	"bufio"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const root = "../.."

// mapEntry matches a folder at the start of a line of the package map, as "internal/outcome/".
var mapEntry = regexp.MustCompile(`^([a-z0-9][a-z0-9_./-]*/)\s`)

// mapLines returns the lines of ARCHITECTURE.md's package map (its first code block under "## Packages").
func mapLines(t *testing.T) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(root, "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	var lines []string
	section, block := false, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			section = line == "## Packages"
		case section && strings.HasPrefix(line, "```"):
			if block {
				return lines
			}
			block = true
		case section && block:
			lines = append(lines, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	t.Fatal("ARCHITECTURE.md has no package map (a code block under ## Packages)")
	return nil
}

// packageMap returns the folders the package map lists.
func packageMap(t *testing.T) []string {
	t.Helper()
	var dirs []string
	for _, line := range mapLines(t) {
		if m := mapEntry.FindStringSubmatch(line); m != nil {
			dirs = append(dirs, strings.TrimSuffix(m[1], "/"))
		}
	}
	return dirs
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

// topDirs returns the folders directly under top (a folder of the tree), sorted, as "top/name"; not testdata.
func topDirs(t *testing.T, top string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(root, top))
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") && e.Name() != "testdata" {
			dirs = append(dirs, top+"/"+e.Name())
		}
	}
	return dirs
}

// packageGroups are the folders under internal/ that group packages by the process they run in (ARCHITECTURE.md):
// each has its own line in the map, holds no Go file itself, and each folder directly under it has a line.
var packageGroups = []string{"internal/manager", "internal/pod", "internal/cli"}

// packageFamilies are packages under internal/ split by concern into packages below them (ARCHITECTURE.md): the eval
// file's model, whose YAML tree and whose AgentV 4.42 reader are packages of their own, and the judging engine,
// whose AgentV 4.42 graders are one. Unlike a group's folder, a family's is a package itself; as in a group, each
// folder directly under it has its own line in the map.
var packageFamilies = []string{"internal/evalfile", "internal/evaluate"}

// mapDiff compares the map's lines under top ("internal", "cmd", a group) with the folders directly under it:
// missing are folders without a line, extra are lines naming no such folder (a nested folder's line counts as
// extra unless its parent is one of groups, where it is compared: each folder has exactly one line of its own).
func mapDiff(listed, dirs []string, top string, groups []string) (missing, extra []string) {
	var under []string
	for _, dir := range listed {
		if !strings.HasPrefix(dir, top+"/") {
			continue
		}
		if parent := path.Dir(dir); parent != top && slices.Contains(groups, parent) {
			continue // a group's package, compared under its group
		}
		under = append(under, dir)
	}
	for _, dir := range dirs {
		if !slices.Contains(under, dir) {
			missing = append(missing, dir)
		}
	}
	for _, dir := range under {
		if !slices.Contains(dirs, dir) {
			extra = append(extra, dir)
		}
	}
	return missing, extra
}

// TestMapDiff: the comparison of TestPackageMapListsEveryFolder finds a folder without a line and a line without a
// folder, and nothing when both agree.
func TestMapDiff(t *testing.T) {
	tests := []struct {
		name           string
		listed, dirs   []string
		missing, extra []string
	}{
		{name: "equal", listed: []string{"internal/a", "internal/b", "cmd/x"}, dirs: []string{"internal/a", "internal/b"}},
		{name: "a folder without a line", listed: []string{"internal/a"}, dirs: []string{"internal/a", "internal/bundle"},
			missing: []string{"internal/bundle"}},
		{name: "a line without a folder", listed: []string{"internal/a", "internal/gone"}, dirs: []string{"internal/a"},
			extra: []string{"internal/gone"}},
		{name: "a nested line", listed: []string{"internal/a", "internal/a/b"}, dirs: []string{"internal/a"},
			extra: []string{"internal/a/b"}},
		{name: "a group's package is compared under its group", listed: []string{"internal/a", "internal/g", "internal/g/b"},
			dirs: []string{"internal/a", "internal/g"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			missing, extra := mapDiff(tc.listed, tc.dirs, "internal", []string{"internal/g"})
			if diff := cmp.Diff(tc.missing, missing); diff != "" {
				t.Errorf("missing (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.extra, extra); diff != "" {
				t.Errorf("extra (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPackageMapListsEveryFolder: the map's lines under internal/ and cmd/ (and under a group or a family) are
// exactly the folders directly under them, in both directions: a folder added without its line fails, and so does
// a line whose folder is gone.
func TestPackageMapListsEveryFolder(t *testing.T) {
	listed := packageMap(t)
	nested := slices.Concat(packageGroups, packageFamilies)
	for _, top := range slices.Concat([]string{"internal", "cmd"}, nested) {
		missing, extra := mapDiff(listed, topDirs(t, top), top, nested)
		for _, dir := range missing {
			t.Errorf("%s/ has no line in ARCHITECTURE.md's package map", dir)
		}
		for _, dir := range extra {
			t.Errorf("ARCHITECTURE.md's package map lists %s/, which is not a folder directly under %s/", dir, top)
		}
	}
}

// TestGroupsHoldNoGoFiles: a group folder (internal/manager, internal/pod, internal/cli) only groups packages.
func TestGroupsHoldNoGoFiles(t *testing.T) {
	pkgs := goPackages(t, "internal")
	for _, g := range packageGroups {
		if files := pkgs[g]; len(files) > 0 {
			t.Errorf("%s/ is a group of packages, but holds Go files itself: %v", g, files)
		}
	}
}

// TestInternalPackagesHaveDocs: every package under internal/ says what it holds.
func TestInternalPackagesHaveDocs(t *testing.T) {
	for pkg, files := range goPackages(t, "internal") {
		documented := false
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.PackageClauseOnly|parser.ParseComments)
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
