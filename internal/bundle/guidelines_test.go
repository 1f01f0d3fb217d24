package bundle

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMatchGlob(t *testing.T) {
	for _, tc := range []struct {
		pattern, name string
		want          bool
	}{
		{"**/*.instructions.md", "python.instructions.md", true},
		{"**/*.instructions.md", "basic/evals/python.instructions.md", true},
		{"**/*.instructions.md", "basic/evals/python.md", false},
		{"**/*.instructions.md", ".github/python.instructions.md", false}, // dot directories need a dot pattern
		{"**/*.instructions.md", ".python.instructions.md", false},
		{".github/**/*.md", ".github/a/b.md", true},
		{"docs/*.md", "docs/a.md", true},
		{"docs/*.md", "docs/sub/a.md", false}, // "*" stays within a segment
		{"docs/?.md", "docs/a.md", true},
		{"docs/?.md", "docs/ab.md", false},
		{"**", "a/b/c", true},
		{"a/**/c", "a/c", true}, // "**" is also no segment at all
		{"a/**/c", "a/x/y/c", true},
		{"a/**/c", "a/x/y/d", false},
		{"./docs/a.md", "docs/a.md", false}, // patterns are not cleaned
		{"docs/a.md", "docs/./a.md", true},  // names are
		{"[", "[", false},                   // a malformed pattern matches nothing
	} {
		if got := MatchGlob(tc.pattern, tc.name); got != tc.want {
			t.Errorf("MatchGlob(%q, %q) = %v, want %v", tc.pattern, tc.name, got, tc.want)
		}
	}
	if !MatchAnyGlob([]string{"x/*.md", "**/*.instructions.md"}, `evals\python.instructions.md`) {
		t.Error(`MatchAnyGlob with a backslash-separated name: false, want true`)
	}
	if MatchAnyGlob(nil, "a.md") {
		t.Error("MatchAnyGlob without patterns: true, want false")
	}
}

func TestGuidelinePatterns(t *testing.T) {
	const eval = "suites/math/eval.yaml"
	for _, tc := range []struct {
		name    string
		files   map[string]string
		want    []string
		wantErr bool
	}{
		{name: "no config", files: map[string]string{}},
		{name: "at the root", files: map[string]string{ConfigPath: "$schema: agentv-config-v2\nguideline_patterns: ['**/*.instructions.md']\n"},
			want: []string{"**/*.instructions.md"}},
		{name: "the nearest wins", files: map[string]string{
			ConfigPath:                   "$schema: agentv-config-v2\nguideline_patterns: [root]\n",
			"suites/" + ConfigPath:       "$schema: agentv-config-v2\nguideline_patterns: [suites]\n",
			"suites/other/" + ConfigPath: "$schema: agentv-config-v2\nguideline_patterns: [other]\n",
		}, want: []string{"suites"}},
		{name: "another schema is skipped", files: map[string]string{
			ConfigPath:             "$schema: agentv-config-v2\nguideline_patterns: [root]\n",
			"suites/" + ConfigPath: "$schema: something-else\nguideline_patterns: [suites]\n",
		}, want: []string{"root"}},
		{name: "patterns that are not strings are skipped", files: map[string]string{
			ConfigPath:             "$schema: agentv-config-v2\nguideline_patterns: [root]\n",
			"suites/" + ConfigPath: "$schema: agentv-config-v2\nguideline_patterns: [1, {a: b}]\n",
		}, want: []string{"root"}},
		{name: "no patterns stops the search", files: map[string]string{
			ConfigPath:             "$schema: agentv-config-v2\nguideline_patterns: [root]\n",
			"suites/" + ConfigPath: "$schema: agentv-config-v2\n",
		}},
		{name: "not YAML", files: map[string]string{ConfigPath: "$schema: [\n"}, wantErr: true},
		{name: "too large", files: map[string]string{ConfigPath: "# " + string(make([]byte, maxConfigBytes))}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			write(t, root, map[string]string{eval: ""})
			write(t, root, tc.files)
			got, err := Dir{Root: root, EvalFile: eval}.GuidelinePatterns()
			if (err != nil) != tc.wantErr {
				t.Fatalf("GuidelinePatterns() error = %v, want an error: %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("GuidelinePatterns() (-want +got):\n%s", diff)
			}
		})
	}
	if got, err := (Dir{}).GuidelinePatterns(); got != nil || err != nil {
		t.Errorf("GuidelinePatterns() without a bundle = %v, %v; want none", got, err)
	}
}
