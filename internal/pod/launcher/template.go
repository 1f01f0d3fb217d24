package launcher

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
// placeholder values (except the prompt) as environment variables too. Text in braces that is not an upper-case
// name is kept as it is.
//
// ShellQuote protects a value only where the shell reads a plain, unquoted word, so a placeholder anywhere else
// is an error: inside single or double quotes (inside "..." the quotes ShellQuote adds are literal and $(...) in
// the value runs), after a backslash, inside `...`, $(...), ${...}, $((...)), ((...)) or $'...', or after a
// construct whose end this scanner cannot find with certainty (a here-document, a case statement inside $(...),
// and a few others; see scanner). A placeholder in a comment is allowed, but not with a value holding a newline,
// which would end the comment. A known placeholder without a value in this mode, an unknown placeholder, or a
// value holding a NUL byte (which no process argument can carry) is an error too.
//
// The CRD rejects the common misplacements at admission with a regular expression that mirrors this scanner
// where a regular expression can (it cannot follow nesting); this function is the authority.
func Render(tmpl string, values map[string]string) (string, error) {
	uses, err := scanTemplate(tmpl)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.Grow(len(tmpl))
	var unknown, unavailable []string
	last := 0
	for _, u := range uses {
		b.WriteString(tmpl[last:u.start])
		last = u.end
		v, ok := values[u.name]
		switch {
		case ok:
			if strings.IndexByte(v, 0) >= 0 {
				return "", fmt.Errorf("value of {%s} contains a NUL byte, which cannot be passed to a command", u.name)
			}
			if u.inComment && strings.IndexByte(v, '\n') >= 0 {
				return "", fmt.Errorf("command template has {%s} in a comment (byte %d) and its value holds a newline, "+
					"which would end the comment: move the placeholder out of the comment", u.name, u.start)
			}
			b.WriteString(ShellQuote(v))
		case knownPlaceholders[u.name]:
			unavailable = append(unavailable, "{"+u.name+"}")
		default:
			unknown = append(unknown, "{"+u.name+"}")
		}
	}
	b.WriteString(tmpl[last:])
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

// placeholderUse is one placeholder of a template, tmpl[start:end] == "{name}".
type placeholderUse struct {
	start, end int
	name       string
	inComment  bool
}

// placeholderAt returns the name of the placeholder starting at s[i], or "". '{' preceded by '$' starts shell
// parameter syntax, not a placeholder.
func placeholderAt(s string, i int) string {
	if i >= len(s) || s[i] != '{' || (i > 0 && s[i-1] == '$') {
		return ""
	}
	end := placeholderEnd(s, i)
	if end < 0 {
		return ""
	}
	return s[i+1 : end]
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

// frameKind is a shell construct the scanner is inside.
type frameKind uint8

const (
	frameSubshell     frameKind = iota // ( ... ): plain shell code still
	frameCommand                       // $( ... )
	frameDouble                        // " ... "
	frameParam                         // ${ ... }
	frameArith                         // $(( ... ))
	frameArithCommand                  // (( ... )), arithmetic in bash
)

var frameWhere = [...]string{
	frameCommand:      "inside $(...)",
	frameDouble:       "inside double quotes",
	frameParam:        "inside ${...}",
	frameArith:        "inside $((...))",
	frameArithCommand: "inside ((...))",
}

type frame struct {
	kind   frameKind
	parens int // open '(' inside an arithmetic frame
}

// scanner follows the shell's quoting through a template, as POSIX sh, dash and bash read it, to tell where each
// placeholder stands. It errs towards refusing: where shells disagree or where finding the end of a construct
// would need a real parser (here-documents, case inside $(...), bash's $'...' with \', quotes inside $((...)) or
// a double-quoted ${...}), it stops following and refuses every later placeholder ("blind").
type scanner struct {
	s         string
	i         int
	stack     []frame
	wordStart bool // the next character starts a word, so '#' starts a comment
	uses      []placeholderUse
	blindAt   int // placeholders from here on are refused
	blindWhy  string
	heredoc   bool // a << was seen; its body starts at the next newline
}

// misplacedError is a placeholder where its shell-quoted value would not be one plain word.
type misplacedError struct {
	name, where string
	at          int
	blind       bool
}

func (e *misplacedError) Error() string {
	// launch exports every value but the prompt, which can be large, as an environment variable.
	env := fmt.Sprintf("use the environment variable \"$%s\"", e.name)
	if e.name == PlaceholderPrompt {
		env = "read the prompt from \"$PROMPT_FILE\""
	}
	if e.blind {
		return fmt.Sprintf("command template has {%s} (byte %d) after %s, where the renderer cannot follow the shell's "+
			"quoting: move the placeholder before it, or %s", e.name, e.at, e.where, env)
	}
	return fmt.Sprintf("command template has {%s} %s (byte %d): placeholders must not be quoted or inside `...`, "+
		"$(...) or ${...}: their values are already shell-quoted; write {%s}, not \"{%s}\" "+
		"(inside quotes or a substitution, %s)", e.name, e.where, e.at, e.name, e.name, env)
}

// scanTemplate returns the template's placeholders, or an error for the first one that is not in plain word
// context.
func scanTemplate(s string) ([]placeholderUse, error) {
	sc := &scanner{s: s, wordStart: true, blindAt: len(s)}
	for sc.i < len(s) && sc.i < sc.blindAt {
		if err := sc.step(); err != nil {
			return nil, err
		}
	}
	for k := sc.blindAt; k < len(s); k++ {
		if name := placeholderAt(s, k); name != "" {
			return nil, &misplacedError{name: name, where: sc.blindWhy, at: k, blind: true}
		}
	}
	return sc.uses, nil
}

func (sc *scanner) blind(at int, why string) {
	if at < sc.blindAt {
		sc.blindAt, sc.blindWhy = at, why
	}
}

func (sc *scanner) top() *frame {
	if len(sc.stack) == 0 {
		return nil
	}
	return &sc.stack[len(sc.stack)-1]
}

func (sc *scanner) push(k frameKind) { sc.stack = append(sc.stack, frame{kind: k}) }

func (sc *scanner) pop() frameKind {
	k := sc.stack[len(sc.stack)-1].kind
	sc.stack = sc.stack[:len(sc.stack)-1]
	return k
}

// where describes the innermost construct that makes the current position other than plain shell code, or "".
func (sc *scanner) where() string {
	for k := len(sc.stack) - 1; k >= 0; k-- {
		if f := sc.stack[k].kind; f != frameSubshell {
			return frameWhere[f]
		}
	}
	return ""
}

// withinCommand reports whether a $(...) is open.
func (sc *scanner) withinCommand() bool {
	for _, f := range sc.stack {
		if f.kind == frameCommand {
			return true
		}
	}
	return false
}

// paramQuoted reports whether the innermost ${...} is itself inside double quotes, where shells disagree on what
// quotes inside it mean.
func (sc *scanner) paramQuoted() bool {
	for k := len(sc.stack) - 2; k >= 0; k-- {
		switch sc.stack[k].kind {
		case frameDouble:
			return true
		case frameParam, frameArith:
		default:
			return false
		}
	}
	return false
}

func (sc *scanner) misplaced(at int, where string) error {
	return &misplacedError{name: placeholderAt(sc.s, at), where: where, at: at}
}

// step consumes one character or construct.
func (sc *scanner) step() error {
	if name := placeholderAt(sc.s, sc.i); name != "" {
		if w := sc.where(); w != "" {
			return sc.misplaced(sc.i, w)
		}
		end := sc.i + len(name) + 2
		sc.uses = append(sc.uses, placeholderUse{start: sc.i, end: end, name: name})
		sc.i, sc.wordStart = end, false
		return nil
	}
	f := sc.top()
	switch {
	case f == nil || f.kind == frameSubshell || f.kind == frameCommand:
		return sc.code()
	case f.kind == frameDouble:
		return sc.double()
	case f.kind == frameParam:
		return sc.param()
	default:
		return sc.arith(f)
	}
}

func (sc *scanner) peek(k int) byte {
	if sc.i+k < len(sc.s) {
		return sc.s[sc.i+k]
	}
	return 0
}

// newline notes a newline at i: after a <<, the here-document body starts there, and this scanner does not
// follow bodies.
func (sc *scanner) newline(i int) {
	if sc.heredoc {
		sc.blind(i, "a here-document (<<)")
	}
}

// code handles a character of plain shell code: the top level, ( ... ) or $( ... ).
func (sc *scanner) code() error {
	s, i := sc.s, sc.i
	switch c := s[i]; c {
	case '\\':
		return sc.escape("after a backslash", true)
	case '\'':
		sc.wordStart = false
		return sc.skipSingle("inside single quotes")
	case '"':
		sc.push(frameDouble)
		sc.i++
		sc.wordStart = false
	case '`':
		sc.wordStart = false
		return sc.skipBackquoted()
	case '$':
		return sc.dollar(true)
	case '#':
		if sc.wordStart {
			return sc.skipComment()
		}
		sc.i++
	case '(':
		if sc.peek(1) == '(' {
			sc.push(frameArithCommand)
			sc.i += 2
		} else {
			sc.push(frameSubshell)
			sc.i++
		}
		sc.wordStart = true
	case ')':
		sc.i++
		sc.wordStart = true
		if f := sc.top(); f != nil && sc.pop() == frameCommand {
			// The end of $(...) is the end of a word part, not an operator.
			sc.wordStart = false
		}
	case '<':
		if sc.peek(1) == '<' {
			sc.heredoc = true
			sc.i++
		}
		sc.i++
		sc.wordStart = true
	case '\n':
		sc.newline(i)
		sc.i++
		sc.wordStart = true
	case ' ', '\t', ';', '&', '|', '>':
		sc.i++
		sc.wordStart = true
	default:
		// case ... esac inside $(...) has ')' that do not close it; finding its end needs a parser.
		if c == 'c' && sc.wordStart && sc.withinCommand() && strings.HasPrefix(s[i:], "case") &&
			(i+4 == len(s) || s[i+4] == ' ' || s[i+4] == '\t' || s[i+4] == '\n') {
			sc.blind(i, "a case statement inside $(...)")
		}
		sc.i++
		sc.wordStart = false
	}
	return nil
}

// double handles a character inside double quotes.
func (sc *scanner) double() error {
	switch sc.s[sc.i] {
	case '"':
		sc.pop()
		sc.i++
		sc.wordStart = false
	case '\\':
		return sc.escape("", false)
	case '`':
		return sc.skipBackquoted()
	case '$':
		return sc.dollar(false)
	case '\n':
		sc.newline(sc.i)
		sc.i++
	default:
		sc.i++
	}
	return nil
}

// param handles a character inside ${...}.
func (sc *scanner) param() error {
	i := sc.i
	switch sc.s[i] {
	case '}':
		sc.pop()
		sc.i++
		sc.wordStart = false
	case '{':
		// Shells differ on whether braces nest inside ${...}.
		sc.blind(i, "a { inside ${...}")
		sc.i++
	case '\\':
		return sc.escape("", false)
	case '\'':
		if sc.paramQuoted() {
			sc.blind(i, "a single quote inside a double-quoted ${...}")
			sc.i++
			return nil
		}
		return sc.skipSingle("inside ${...}")
	case '"':
		if sc.paramQuoted() {
			sc.blind(i, "a double quote inside a double-quoted ${...}")
			sc.i++
			return nil
		}
		sc.push(frameDouble)
		sc.i++
	case '`':
		return sc.skipBackquoted()
	case '$':
		if sc.peek(1) == '\'' {
			sc.blind(i, "$'...' inside ${...}")
			sc.i++
			return nil
		}
		return sc.dollar(false)
	case '\n':
		sc.newline(i)
		sc.i++
	default:
		sc.i++
	}
	return nil
}

// arith handles a character inside $((...)) or ((...)).
func (sc *scanner) arith(f *frame) error {
	i := sc.i
	switch sc.s[i] {
	case '(':
		f.parens++
		sc.i++
	case ')':
		switch {
		case f.parens > 0:
			f.parens--
			sc.i++
		case sc.peek(1) == ')':
			sc.i += 2
			// (( )) is a command, $(( )) a word part.
			sc.wordStart = sc.pop() == frameArithCommand
		default:
			// $((a) b) is a command substitution to bash once arithmetic fails to parse; do not guess.
			sc.blind(i, "a ) that does not end $((...)) or ((...))")
			sc.i++
		}
	case '\'', '"', '#':
		sc.blind(i, "a quote or # inside $((...)) or ((...))")
		sc.i++
	case '\\':
		return sc.escape("", false)
	case '`':
		return sc.skipBackquoted()
	case '$':
		return sc.dollar(false)
	case '\n':
		sc.newline(i)
		sc.i++
	default:
		sc.i++
	}
	return nil
}

// escape handles a backslash: it quotes the next character (a backslash-newline joins lines). plainWhere
// describes a placeholder right after it when the backslash is in plain code.
func (sc *scanner) escape(plainWhere string, code bool) error {
	i := sc.i
	if i+1 >= len(sc.s) {
		sc.i++
		return nil
	}
	if placeholderAt(sc.s, i+1) != "" {
		w := sc.where()
		if w == "" {
			w = plainWhere
		}
		return sc.misplaced(i+1, w)
	}
	if sc.s[i+1] == '\n' {
		// A line continuation: the word goes on as if the two characters were not there.
		sc.newline(i + 1)
		sc.i += 2
		return nil
	}
	sc.i += 2
	if code {
		sc.wordStart = false
	}
	return nil
}

// dollar handles '$'. code is whether it is in plain shell code, where $'...' is bash's quoting.
func (sc *scanner) dollar(code bool) error {
	i := sc.i
	switch sc.peek(1) {
	case '(':
		if sc.peek(2) == '(' {
			sc.push(frameArith)
			sc.i += 3
			return nil
		}
		sc.push(frameCommand)
		sc.i += 2
		sc.wordStart = true
		return nil
	case '{':
		if c := sc.peek(2); c == ' ' || c == '\t' || c == '\n' || c == '|' {
			// bash 5.3's ${ cmd; } and ${| cmd; } hold commands, which end at a '}' a comment may hide.
			sc.blind(i, "${ ...; } (a command substitution of bash)")
		}
		sc.push(frameParam)
		sc.i += 2
		return nil
	case '[':
		// bash's old $[...] arithmetic, read like double quotes.
		sc.blind(i, "$[...] (arithmetic of bash)")
		sc.i++
		return nil
	case '$':
		sc.i += 2
	case '\'':
		if code {
			sc.wordStart = false
			return sc.skipDollarSingle()
		}
		sc.i++
	default:
		sc.i++
	}
	if code {
		sc.wordStart = false
	}
	return nil
}

// skipSingle skips '...' starting at sc.i.
func (sc *scanner) skipSingle(where string) error {
	start := sc.i + 1
	end := strings.IndexByte(sc.s[start:], '\'')
	if end < 0 {
		end = len(sc.s)
	} else {
		end += start
	}
	for k := start; k < end; k++ {
		if placeholderAt(sc.s, k) != "" {
			return sc.misplaced(k, where)
		}
		if sc.s[k] == '\n' {
			sc.newline(k)
		}
	}
	sc.i = end + 1
	return nil
}

// skipDollarSingle skips bash's $'...' starting at sc.i. Inside, a backslash escapes the next character, so \'
// does not end it; dash, which lacks $'...', ends the string there instead, so the scanner stops following.
func (sc *scanner) skipDollarSingle() error {
	return sc.skipEscaped(sc.i+2, '\'', "inside $'...'", `an escaped quote \' inside $'...' (bash and dash end the string at different places)`)
}

// skipBackquoted skips `...` starting at sc.i: it ends at the first backquote not preceded by a backslash.
func (sc *scanner) skipBackquoted() error {
	return sc.skipEscaped(sc.i+1, '`', "inside `...`", "")
}

// skipEscaped skips from k to the first unescaped end byte, refusing placeholders on the way (where names the
// context). An escaped end byte makes the scanner stop following when blindOnEscapedEnd says why.
func (sc *scanner) skipEscaped(k int, end byte, where, blindOnEscapedEnd string) error {
	s := sc.s
	for ; k < len(s) && s[k] != end; k++ {
		if placeholderAt(s, k) != "" {
			return sc.misplaced(k, where)
		}
		if s[k] == '\n' {
			sc.newline(k)
		}
		if s[k] == '\\' && k+1 < len(s) {
			if placeholderAt(s, k+1) != "" {
				return sc.misplaced(k+1, where)
			}
			if s[k+1] == end && blindOnEscapedEnd != "" {
				sc.blind(k, blindOnEscapedEnd)
				sc.i = len(s)
				return nil
			}
			k++
		}
	}
	sc.i = k + 1
	return nil
}

// skipComment skips a comment up to its newline. A placeholder in a top-level comment is allowed: its value stays
// in the comment unless it holds a newline, which Render checks.
func (sc *scanner) skipComment() error {
	end := strings.IndexByte(sc.s[sc.i:], '\n')
	if end < 0 {
		end = len(sc.s)
	} else {
		end += sc.i
	}
	for k := sc.i; k < end; k++ {
		if name := placeholderAt(sc.s, k); name != "" {
			if w := sc.where(); w != "" {
				return sc.misplaced(k, w)
			}
			sc.uses = append(sc.uses, placeholderUse{start: k, end: k + len(name) + 2, name: name, inComment: true})
			k += len(name) + 1
		}
	}
	sc.i = end
	return nil
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
