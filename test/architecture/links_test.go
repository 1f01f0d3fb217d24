package architecture

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// pendingPages are pages that other pages already link to while they are written on another branch. A link to one
// that does not exist yet is not an error; once the page exists it is checked like any other (then remove its
// entry).
var pendingPages = map[string]bool{}

var (
	// inlineLink matches a markdown inline link or image: [text](target) or [text](target "title").
	inlineLink = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	// codeSpan matches an inline code span, whose text is never a link.
	codeSpan = regexp.MustCompile("`[^`]*`")
	// headingLine matches an ATX heading.
	headingLine = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	// linkText keeps the text of a link inside a heading.
	linkText = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

// mdLink is one relative link of a markdown file.
type mdLink struct {
	line   int
	target string
}

// readMarkdown returns the relative links (outside fenced code blocks and code spans) and the heading anchors of
// the markdown file at path.
func readMarkdown(path string) (links []mdLink, anchors []string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer func() { _ = f.Close() }()
	seen := map[string]int{}
	fence := ""
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			continue
		}
		if m := headingLine.FindStringSubmatch(line); m != nil {
			slug := anchorOf(m[1])
			if k := seen[slug]; k > 0 {
				anchors = append(anchors, fmt.Sprintf("%s-%d", slug, k))
			} else {
				anchors = append(anchors, slug)
			}
			seen[slug]++
		}
		for _, m := range inlineLink.FindAllStringSubmatch(codeSpan.ReplaceAllString(line, ""), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			links = append(links, mdLink{line: n, target: target})
		}
	}
	return links, anchors, sc.Err()
}

// anchorOf is the anchor GitHub gives a heading: its text (link and code markup removed) lower-cased, letters,
// digits, '_' and '-' kept, spaces turned into '-', everything else dropped.
func anchorOf(heading string) string {
	text := linkText.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// brokenLinks returns a message for every relative link of the markdown files (paths relative to dir) whose file
// does not exist, or whose anchor names no heading of the markdown file it points to. pending names files
// (relative to dir) that may not exist yet.
func brokenLinks(dir string, files []string, pending map[string]bool) ([]string, error) {
	var broken []string
	anchorsOf := map[string][]string{}
	anchors := func(file string) ([]string, error) {
		if a, ok := anchorsOf[file]; ok {
			return a, nil
		}
		_, a, err := readMarkdown(filepath.Join(dir, file))
		anchorsOf[file] = a
		return a, err
	}
	for _, file := range files {
		links, _, err := readMarkdown(filepath.Join(dir, file))
		if err != nil {
			return nil, err
		}
		for _, l := range links {
			pathPart, anchor, _ := strings.Cut(l.target, "#")
			target := file
			if pathPart != "" {
				target = filepath.ToSlash(filepath.Join(filepath.Dir(file), pathPart))
			}
			where := fmt.Sprintf("%s:%d: %s", file, l.line, l.target)
			if _, err := os.Stat(filepath.Join(dir, target)); err != nil {
				if !pending[target] {
					broken = append(broken, where+": "+target+" does not exist")
				}
				continue
			}
			if anchor == "" || !strings.HasSuffix(target, ".md") {
				continue
			}
			a, err := anchors(target)
			if err != nil {
				return nil, err
			}
			if !slices.Contains(a, anchor) {
				broken = append(broken, fmt.Sprintf("%s: %s has no heading with anchor #%s", where, target, anchor))
			}
		}
	}
	return broken, nil
}

// docFiles returns README.md, ARCHITECTURE.md and every markdown file under docs/, relative to root.
func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md", "ARCHITECTURE.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestDocLinksResolve: every relative link of the README, ARCHITECTURE.md and docs/ names a file of the tree, and
// every anchor a heading of the page it points to.
func TestDocLinksResolve(t *testing.T) {
	files := docFiles(t)
	if len(files) < 4 {
		t.Fatalf("found only %v", files)
	}
	broken, err := brokenLinks(root, files, pendingPages)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range broken {
		t.Error(b)
	}
}

// TestBrokenLinks: the checker finds a missing file, a missing anchor in another page and in the same page, and
// accepts good links, links in code, external links and a pending page.
func TestBrokenLinks(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("docs/b.md", "# B page\n## The manager's flags\n## LLM judges: `llm_judge` and rubrics\n## Twice\n## Twice\n")
	tests := []struct {
		name string
		text string
		want []string
	}{
		{name: "good links", text: "[b](docs/b.md), [f](docs/b.md#the-managers-flags), [l](docs/b.md#llm-judges-llm_judge-and-rubrics), " +
			"[t](docs/b.md#twice-1), [dir](docs), [self](#top)\n# Top\n"},
		{name: "links that are not checked", text: "`[x](nowhere.md)` [w](https://example.com/x.md) [pending](docs/p.md)\n" +
			"```\n[y](nowhere.md)\n```\n"},
		{name: "a missing file", text: "see [c](docs/c.md)\n",
			want: []string{"a.md:1: docs/c.md: docs/c.md does not exist"}},
		{name: "a missing anchor", text: "\n[f](docs/b.md#flags)\n",
			want: []string{"a.md:2: docs/b.md#flags: docs/b.md has no heading with anchor #flags"}},
		{name: "a missing anchor in the same page", text: "# A\n[x](#b)\n",
			want: []string{"a.md:2: #b: a.md has no heading with anchor #b"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			write("a.md", tc.text)
			got, err := brokenLinks(dir, []string{"a.md"}, map[string]bool{"docs/p.md": true})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
