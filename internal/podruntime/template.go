package podruntime

import (
	"fmt"
	"sort"
	"strings"
)

// Placeholders of command templates.
const (
	PlaceholderEvalFile   = "EVAL_FILE"
	PlaceholderOutputFile = "OUTPUT_FILE"
	PlaceholderEvalID     = "EVAL_ID"
	PlaceholderPrompt     = "PROMPT"
	PlaceholderPromptFile = "PROMPT_FILE"
	PlaceholderAttempt    = "ATTEMPT"
)

// knownPlaceholders are every placeholder a template may use in some mode.
var knownPlaceholders = map[string]bool{
	PlaceholderEvalFile: true, PlaceholderOutputFile: true, PlaceholderEvalID: true,
	PlaceholderPrompt: true, PlaceholderPromptFile: true, PlaceholderAttempt: true,
}

// ShellQuote returns s as one POSIX shell word: wrapped in single quotes, each single quote inside written as a
// closing quote, an escaped quote and an opening quote. Nothing inside single quotes is special to the shell, so
// the value cannot expand or inject commands.
func ShellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Render replaces every {NAME} placeholder of tmpl with the shell-quoted value of values[NAME]. A placeholder
// preceded by '$' (as in ${OUTPUT_FILE}) is shell parameter syntax and is left to the shell; launch exports the
// placeholder values as environment variables too. Text in braces that is not an upper-case name is kept as it
// is. A known placeholder without a value in this mode, an unknown placeholder, or a value holding a NUL byte
// (which no process argument can carry) is an error.
func Render(tmpl string, values map[string]string) (string, error) {
	var b strings.Builder
	b.Grow(len(tmpl))
	var unknown, unavailable []string
	for i := 0; i < len(tmpl); {
		c := tmpl[i]
		if c != '{' {
			b.WriteByte(c)
			i++
			continue
		}
		end := placeholderEnd(tmpl, i)
		if end < 0 || (i > 0 && tmpl[i-1] == '$') {
			b.WriteByte(c)
			i++
			continue
		}
		name := tmpl[i+1 : end]
		v, ok := values[name]
		switch {
		case ok:
			if strings.IndexByte(v, 0) >= 0 {
				return "", fmt.Errorf("value of {%s} contains a NUL byte, which cannot be passed to a command", name)
			}
			b.WriteString(ShellQuote(v))
		case knownPlaceholders[name]:
			unavailable = append(unavailable, "{"+name+"}")
		default:
			unknown = append(unknown, "{"+name+"}")
		}
		i = end + 1
	}
	if len(unknown) > 0 {
		return "", fmt.Errorf("command template has unknown placeholders %s; "+
			"allowed: {EVAL_FILE}, {OUTPUT_FILE}, {EVAL_ID}, {PROMPT}, {PROMPT_FILE}, {ATTEMPT}", strings.Join(dedupe(unknown), ", "))
	}
	if len(unavailable) > 0 {
		return "", fmt.Errorf("command template uses %s, which this mode does not provide (available: %s)",
			strings.Join(dedupe(unavailable), ", "), availableList(values))
	}
	return b.String(), nil
}

// placeholderEnd returns the index of the '}' closing a {NAME} placeholder that starts at i, where NAME matches
// [A-Z][A-Z0-9_]*, or -1.
func placeholderEnd(s string, i int) int {
	j := i + 1
	if j >= len(s) || s[j] < 'A' || s[j] > 'Z' {
		return -1
	}
	for j++; j < len(s); j++ {
		c := s[j]
		switch {
		case c == '}':
			return j
		case (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_':
		default:
			return -1
		}
	}
	return -1
}

func dedupe(s []string) []string {
	seen := make(map[string]bool, len(s))
	out := s[:0]
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

func availableList(values map[string]string) string {
	names := make([]string, 0, len(values))
	for k := range values {
		names = append(names, "{"+k+"}")
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
