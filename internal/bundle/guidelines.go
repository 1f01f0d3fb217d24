package bundle

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ConfigPath is where AgentV reads its project settings, in the eval file's directory or one of its parents up to
// the repository root: in a bundle, up to the bundle's root.
const ConfigPath = ".agentv/config.yaml"

// configSchema is the $schema an AgentV config must declare (AgentV ignores any other, and so do we).
const configSchema = "agentv-config-v2"

// maxConfigBytes bounds the AgentV config a bundle may hold.
const maxConfigBytes = 64 << 10

// GuidelinePatterns returns the guideline_patterns of the nearest AgentV config (ConfigPath, searched from the
// eval file's directory up to the root, or up to ConfigRoot when set, as AgentV's loadConfig does): glob patterns (MatchGlob) naming the input
// files AgentV treats as guidelines, which its judges never see. None (nil) when the bundle has no config, or the
// config declares no patterns. A config AgentV would skip (another $schema, patterns that are not a list of
// strings) is skipped here too; one that cannot be read or parsed is an error.
func (d Dir) GuidelinePatterns() ([]string, error) {
	if d.Root == "" {
		return nil, nil
	}
	if d.ConfigRoot != "" {
		// The same search, from the eval file's directory up to ConfigRoot.
		if rel, err := filepath.Rel(d.ConfigRoot, filepath.Join(d.Root, filepath.FromSlash(d.EvalFile))); err == nil && filepath.IsLocal(rel) {
			return Dir{Root: d.ConfigRoot, EvalFile: filepath.ToSlash(rel)}.GuidelinePatterns()
		}
	}
	cands, err := d.Candidates(ConfigPath)
	if err != nil {
		return nil, nil //nolint:nilerr // an eval file at the root's parent level has no config to read
	}
	for _, p := range cands {
		data, _, err := d.ReadFile("/"+p, maxConfigBytes)
		var nf *NotFoundError
		if errors.As(err, &nf) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading AgentV's config: %w", err)
		}
		var cfg struct {
			Schema   any `yaml:"$schema"`
			Patterns any `yaml:"guideline_patterns"`
		}
		if err := yaml.Unmarshal(data, &cfg); err != nil {
			return nil, fmt.Errorf("%s of the eval bundle: %w", p, err)
		}
		if cfg.Schema != configSchema {
			continue
		}
		if cfg.Patterns == nil {
			return nil, nil
		}
		list, ok := cfg.Patterns.([]any)
		if !ok {
			continue
		}
		patterns := make([]string, 0, len(list))
		for _, item := range list {
			s, ok := item.(string)
			if !ok {
				patterns = nil
				break
			}
			patterns = append(patterns, s)
		}
		if patterns == nil && len(list) > 0 {
			continue
		}
		return patterns, nil
	}
	return nil, nil
}

// MatchAnyGlob reports whether name (slash-separated, backslashes counted as slashes) matches one of patterns.
func MatchAnyGlob(patterns []string, name string) bool {
	name = strings.ReplaceAll(name, `\`, "/")
	for _, p := range patterns {
		if MatchGlob(p, name) {
			return true
		}
	}
	return false
}

// MatchGlob reports whether the slash-separated name matches pattern, as micromatch (AgentV's matcher) reads the
// patterns its configs use: "**" is any number of whole path segments (none included), "*" any run of characters
// within a segment, "?" one character within a segment, anything else itself. A segment starting with "." is only
// matched by a pattern segment that starts with "." too (micromatch's default for dot files).
func MatchGlob(pattern, name string) bool {
	return matchSegments(strings.Split(pattern, "/"), strings.Split(path.Clean(name), "/"))
}

func matchSegments(pat, segs []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for i := 0; i <= len(segs); i++ {
				if i > 0 && strings.HasPrefix(segs[i-1], ".") {
					return false
				}
				if matchSegments(pat[1:], segs[i:]) {
					return true
				}
			}
			return false
		}
		if len(segs) == 0 {
			return false
		}
		if strings.HasPrefix(segs[0], ".") && !strings.HasPrefix(pat[0], ".") {
			return false
		}
		if ok, err := path.Match(pat[0], segs[0]); err != nil || !ok {
			return false
		}
		pat, segs = pat[1:], segs[1:]
	}
	return len(segs) == 0
}
