package grade42

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
)

// AgentV 4.42.4's deterministic string graders (graders/assertions.ts): contains, contains-any, contains-all,
// icontains and its -any and -all forms, starts-with, ends-with, regex (with JavaScript's flags), is-json and equals,
// each scoring 1 or 0, passing at 1, with AgentV's assertion texts. They read the answer as it is; starts-with,
// ends-with and equals compare both sides trimmed.

// assertion42Grade judges one deterministic string grader of type t on the answer.
func assertion42Grade(t evalfile.EvaluatorType, cfg *evalfile.AssertionConfig, output string) grade42 {
	value := ""
	if len(cfg.Values) > 0 {
		value = cfg.Values[0]
	}
	var passed bool
	var text string
	switch t {
	case evalfile.TypeContains:
		passed = strings.Contains(output, value)
		text = ternary(passed, `Output contains "`+value+`"`, `Output does not contain "`+value+`"`)
	case evalfile.TypeContainsAny, evalfile.TypeIContainsAny:
		fold := t == evalfile.TypeIContainsAny
		suffix := ternary(fold, " (case-insensitive)", "")
		var matched *string
		for i, v := range cfg.Values {
			if contains42(output, v, fold) {
				matched = &cfg.Values[i]
				break
			}
		}
		passed = matched != nil
		if passed {
			text = `Output contains "` + *matched + `"` + suffix
		} else {
			text = "Output does not contain any of: " + quotedList(cfg.Values) + suffix
		}
	case evalfile.TypeContainsAll, evalfile.TypeIContainsAll:
		fold := t == evalfile.TypeIContainsAll
		var missing []string
		for _, v := range cfg.Values {
			if !contains42(output, v, fold) {
				missing = append(missing, v)
			}
		}
		passed = len(missing) == 0
		switch {
		case passed:
			text = fmt.Sprintf("Output contains all %d expected strings%s", len(cfg.Values), ternary(fold, " (case-insensitive)", ""))
		case fold:
			text = "Output missing (case-insensitive): " + quotedList(missing)
		default:
			text = "Output missing: " + quotedList(missing)
		}
	case evalfile.TypeIContains:
		passed = contains42(output, value, true)
		text = ternary(passed, `Output contains "`+value+`" (case-insensitive)`, `Output does not contain "`+value+`" (case-insensitive)`)
	case evalfile.TypeStartsWith:
		passed = strings.HasPrefix(jsTrim(output), jsTrim(value))
		text = ternary(passed, `Output starts with "`+value+`"`, `Output does not start with "`+value+`"`)
	case evalfile.TypeEndsWith:
		passed = strings.HasSuffix(jsTrim(output), jsTrim(value))
		text = ternary(passed, `Output ends with "`+value+`"`, `Output does not end with "`+value+`"`)
	case evalfile.TypeEquals:
		passed = jsTrim(output) == jsTrim(value)
		text = ternary(passed, `Output equals "`+value+`"`, `Output does not equal "`+value+`"`)
	case evalfile.TypeIsJSON:
		passed = json.Valid([]byte(output))
		text = ternary(passed, "Output is valid JSON", "Output is not valid JSON")
	case evalfile.TypeRegex:
		re, err := jsRegexp(value, cfg.Flags)
		if err != nil {
			return errored42(fmt.Sprintf("the regex /%s/%s cannot be run: %v", value, cfg.Flags, err))
		}
		passed = re.MatchString(output)
		label := ""
		if cfg.Flags != "" {
			label = " (flags: " + cfg.Flags + ")"
		}
		text = ternary(passed, "Output matches pattern /", "Output does not match pattern /") + value + "/" + cfg.Flags + label
	default:
		return errored42(fmt.Sprintf("unknown assertion type %q", t))
	}
	g := grade42{verdict: fail42, assertions: []assertion42{{Text: text, Passed: passed}}, aspects: 1}
	if passed {
		g.score, g.verdict = 1, pass42
	}
	return g
}

func ternary(c bool, a, b string) string {
	if c {
		return a
	}
	return b
}

// contains42 is JavaScript's includes, of both lower-cased when fold.
func contains42(s, sub string, fold bool) bool {
	if fold {
		return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
	}
	return strings.Contains(s, sub)
}

// quotedList is values, each in double quotes, joined by ", ".
func quotedList(values []string) string {
	q := make([]string, len(values))
	for i, v := range values {
		q[i] = `"` + v + `"`
	}
	return strings.Join(q, ", ")
}

// jsTrim is JavaScript's String.prototype.trim: white space and line terminators removed at both ends (the byte
// order mark is white space there).
func jsTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) || r == '\uFEFF' })
}

// jsRegexp compiles a JavaScript regular expression with its flags for Go's RE2: i, m and s map onto RE2's flags;
// g, u, d and v change nothing a test on a fresh expression sees; y anchors it at the start. A pattern RE2 cannot
// run (lookaround, backreferences) or a flag JavaScript does not know is an error.
func jsRegexp(pattern, flags string) (*regexp.Regexp, error) {
	var re2, sticky string
	seen := map[rune]bool{}
	for _, f := range flags {
		if seen[f] {
			return nil, fmt.Errorf("flag %q is given twice", f)
		}
		seen[f] = true
		switch f {
		case 'i', 'm', 's':
			re2 += string(f)
		case 'g', 'u', 'd', 'v':
		case 'y':
			sticky = `\A`
		default:
			return nil, fmt.Errorf("invalid flag %q", f)
		}
	}
	if _, err := regexp.Compile(pattern); err != nil {
		return nil, err
	}
	prefix := ""
	if re2 != "" {
		prefix = "(?" + re2 + ")"
	}
	return regexp.Compile(prefix + sticky + "(?:" + pattern + ")")
}
