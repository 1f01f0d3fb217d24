package v1alpha1_test

import (
	"strings"
	"testing"

	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
)

// The placeholder-quoting rule of CommandTemplate is one regular expression in one marker line (markers cannot
// span lines). These are its parts, named; TestPlaceholderQuotingRuleIsItsParts checks that the CRD's rule is
// exactly their composition, so the rule is read here and changed here first. It matches a command whose first
// {PLACEHOLDER} stands where the shell would not read its quoted value as one word. In the character classes,
// \x27, \x22 and \x60 are ', " and `.
const (
	// skipped are line continuations and comment lines between words.
	skipped = `(?:\\\n|#[^\n]*\n)*`
	// separator ends a word: a blank, a newline or an operator.
	separator = `[ \t\n;&|<>()]`
	// Closed parts of a word, which leave the shell in plain context after them.
	plainChar  = `[^ \t\n;&|<>()\\\x27\x22\x60$#]`
	escaped    = `\\[^\n]`
	parameter  = `\$[$A-Za-z0-9_@*?!#-]`
	single     = `\$?\x27[^\x27]*\x27`
	backquoted = `\x60(?:[^\x60\\]|\\[\s\S])*\x60`
	cmdSub     = `\$\((?:[^()\x27\x22\\\x60$#]|\\[\s\S]|\$[$A-Za-z0-9_@*?!#-])*\)`
	braced     = `\$\{[^{}\x27\x22\\\x60$]*\}`
	arithmetic = `\$\(\([^()\x27\x22\\\x60$#]*\)\)`
	// dqBody is the inside of a double-quoted string so far.
	dqBody = `(?:[^\x22\\\x60$]|\\[^$]|\$[A-Za-z0-9_@*?!#-]|` + backquoted + `|` + cmdSub + `|` + braced + `|` + arithmetic + `)*`
	double = `\$?\x22` + dqBody + `\$?\x22`
	// wordPart is one closed part of a word, then any # or line continuation inside the word.
	wordPart = `(?:` + plainChar + `|` + escaped + `|` + parameter + `|` + single + `|` + double + `|\$?` + backquoted +
		`|` + cmdSub + `|` + braced + `|` + arithmetic + `)(?:#|\\\n)*`
	// Contexts opened and not closed before the placeholder: the placeholder would stand inside them.
	openSingle     = `\x27(?:[^\x27]*[^\x27$])?`
	openBackquoted = `\x60(?:[^\x60]*[^\x60$])?`
	openCmdSub     = `\$\((?:[^)]*[^)$])?`
	openBraced     = `\$\{(?:[^}]*[^}$])?`
	openArithmetic = `\(\((?:[^)]*[^)$])?`
	openDouble     = `\x22` + dqBody + `(?:\\|\$?` + openBackquoted + `|` + openCmdSub + `|` + openBraced + `)?`
	opened         = `(?:\$?(?:` + openSingle + `|\\|` + openBackquoted + `|` + openDouble + `)|` + openCmdSub + `|` + openBraced +
		`|` + openArithmetic + `)`
	placeholder = `\{[A-Z][A-Z0-9_]*\}`

	// misplacedPlaceholder: words and separators in plain context, then an opened context, then a placeholder.
	misplacedPlaceholder = `^` + skipped + `(?:` + separator + skipped + `|` + wordPart + `)*` + opened + placeholder
)

// TestPlaceholderQuotingRuleIsItsParts checks that both command templates' quoting rule in the CRD is
// `!self.matches(r'<misplacedPlaceholder>')`. What the expression matches is tested against the renderer by
// internal/launcher's TestAdmissionRuleAgreesWithRender, and at admission by TestCommandTemplateQuoting.
func TestPlaceholderQuotingRuleIsItsParts(t *testing.T) {
	want := `!self.matches(r'` + misplacedPlaceholder + `')`
	for _, path := range []string{"spec.target.commandTemplate", "spec.target.healthcheck.commandTemplate"} {
		var found int
		for _, r := range testutil.SchemaAt(t, testutil.CRDSchema(t, evalRunCRD), path).XValidations {
			if strings.HasPrefix(r.Rule, `!self.matches(r'^`) {
				found++
				if r.Rule != want {
					t.Errorf("%s: the quoting rule is not the composition of its parts:\n got %s\nwant %s", path, r.Rule, want)
				}
			}
		}
		if found != 1 {
			t.Errorf("%s has %d quoting rules, want 1", path, found)
		}
	}

}
