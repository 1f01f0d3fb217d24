package launcher

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

func TestShellQuote(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "''"},
		{"plain", "'plain'"},
		{"it's", `'it'\''s'`},
		{"a b", "'a b'"},
		{"$(id)", "'$(id)'"},
	}
	for _, tc := range tests {
		if got := ShellQuote(tc.in); got != tc.want {
			t.Errorf("ShellQuote(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestRender(t *testing.T) {
	tests := []struct {
		name    string
		tmpl    string
		values  map[string]string
		want    string
		wantErr string
	}{
		{
			name:   "batched",
			tmpl:   "runner --eval {EVAL_FILE} --output {OUTPUT_FILE}",
			values: map[string]string{"EVAL_FILE": "/evalrun-eval/eval.yaml", "OUTPUT_FILE": "/evalrun/out/results.jsonl"},
			want:   "runner --eval '/evalrun-eval/eval.yaml' --output '/evalrun/out/results.jsonl'",
		},
		{
			name:   "repeated placeholder and other braces kept",
			tmpl:   `x {EVAL_ID} {EVAL_ID} {lower} {} {A-B} ${OUTPUT_FILE} awk '{print}'`,
			values: map[string]string{"EVAL_ID": "c1", "OUTPUT_FILE": "/o"},
			want:   `x 'c1' 'c1' {lower} {} {A-B} ${OUTPUT_FILE} awk '{print}'`,
		},
		{
			name:   "quote in value",
			tmpl:   "r {PROMPT}",
			values: map[string]string{"PROMPT": "it's"},
			want:   `r 'it'\''s'`,
		},
		{
			name:    "unknown placeholder",
			tmpl:    "r {NOPE} {OUTPUT_FILE}",
			values:  map[string]string{"OUTPUT_FILE": "/o"},
			wantErr: "unknown placeholders {NOPE}",
		},
		{
			name:    "placeholder not available in this mode",
			tmpl:    "r {EVAL_ID} {OUTPUT_FILE}",
			values:  map[string]string{"EVAL_FILE": "/e", "OUTPUT_FILE": "/o"},
			wantErr: "uses {EVAL_ID}, which this mode does not provide (available: {EVAL_FILE}, {OUTPUT_FILE})",
		},
		{
			name:    "NUL byte",
			tmpl:    "r {PROMPT}",
			values:  map[string]string{"PROMPT": "a\x00b"},
			wantErr: "NUL byte",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Render(tc.tmpl, tc.values)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Render error = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Render (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRenderInjection runs rendered templates through the real /bin/sh: each hostile value must arrive as exactly
// one argument, byte for byte, and nothing in it may run.
func TestRenderInjection(t *testing.T) {
	if _, err := os.Stat(DefaultShell); err != nil {
		t.Skip("no /bin/sh")
	}
	dir := t.TempDir()
	pwned := filepath.Join(dir, "pwned")
	hostile := []string{
		"it's a 'quoted' value",
		"$(touch " + pwned + ")",
		"`touch " + pwned + "`",
		"a b\tc  d",
		"line1\nline2\n; touch " + pwned,
		`"; touch ` + pwned + `; echo "`,
		`'; touch ` + pwned + `; echo '`,
		"$HOME ${HOME} $((1+1)) \\ \\n",
		"* ? [a-z] ~ # & | > < ;",
		"ünïcødé ✓",
		"",
	}
	for _, v := range hostile {
		script, err := Render(`printf '%s\0' {PROMPT} {EVAL_ID}`, map[string]string{"PROMPT": v, "EVAL_ID": v})
		if err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(DefaultShell, "-c", script).Output()
		if err != nil {
			t.Fatalf("value %q: %v", v, err)
		}
		want := v + "\x00" + v + "\x00"
		if diff := cmp.Diff(want, string(out)); diff != "" {
			t.Errorf("value %q did not arrive as one argument (-want +got):\n%s", v, diff)
		}
		if _, err := os.Stat(pwned); err == nil {
			t.Fatalf("value %q ran a command", v)
		}
	}
}

// quotingValues gives every placeholder a value.
var quotingValues = map[string]string{
	PlaceholderEvalFile: "/e", PlaceholderOutputFile: "/o", PlaceholderEvalID: "c1",
	PlaceholderPrompt: "p", PlaceholderPromptFile: "/pf", PlaceholderAttempt: "1",
}

// quotingCases put placeholders in the shell contexts Render accepts and refuses. api/v1alpha1's
// TestCommandTemplateQuoting sends the same templates to a real kube-apiserver, and TestAdmissionRuleAgreesWithRender
// checks the CRD's rule against Render here. rendererOnly cases need nesting or here-documents, which the rule (a
// regular expression) cannot follow: admission lets them through and Render refuses them.
var quotingCases = []struct {
	name         string
	tmpl         string
	want         string // the rendered script when accepted
	wantErr      string // where Render found the placeholder when refused
	rendererOnly bool
}{
	{name: "plain word", tmpl: "r {PROMPT}", want: "r 'p'"},
	{name: "part of a word", tmpl: "r --prompt={PROMPT} x{EVAL_ID}y", want: "r --prompt='p' x'c1'y"},
	{
		name: "shell parameter syntax is left to the shell, in any quotes",
		tmpl: `r ${OUTPUT_FILE} "${OUTPUT_FILE}" '${OUTPUT_FILE}' \${PROMPT} $${PROMPT}`,
		want: `r ${OUTPUT_FILE} "${OUTPUT_FILE}" '${OUTPUT_FILE}' \${PROMPT} $${PROMPT}`,
	},
	{
		name: "quoted braces that are not placeholders",
		tmpl: `awk '{print}' '{"a":1}' "{lower}" {PROMPT}`,
		want: `awk '{print}' '{"a":1}' "{lower}" 'p'`,
	},
	{name: "after closed quotes", tmpl: `r 'it'"'"'s' "a b" {PROMPT}`, want: `r 'it'"'"'s' "a b" 'p'`},
	{
		name: "after an escaped backslash or quote",
		tmpl: `r \\{PROMPT} \'{EVAL_ID} \"{ATTEMPT}`,
		want: `r \\'p' \''c1' \"'1'`,
	},
	{
		name: "after closed substitutions",
		tmpl: "r $(date) `date` \"$(date)\" $((1+2)) ${X:-d} $$ {PROMPT}",
		want: "r $(date) `date` \"$(date)\" $((1+2)) ${X:-d} $$ 'p'",
	},
	{name: "in a subshell, on a continued line", tmpl: "( cd /tmp && r \\\n  {PROMPT} )", want: "( cd /tmp && r \\\n  'p' )"},
	{
		name: "a quote in a comment is not a quote; # inside a word is not a comment",
		tmpl: "r {OUTPUT_FILE} # it's {EVAL_ID}\nr a#'b' {PROMPT}",
		want: "r '/o' # it's 'c1'\nr a#'b' 'p'",
	},
	{name: "double quotes", tmpl: `r "{PROMPT}"`, wantErr: "{PROMPT} inside double quotes (byte 3)"},
	{name: "double quotes in an option", tmpl: `r --prompt="{PROMPT}"`, wantErr: "inside double quotes"},
	{name: "double quotes after text", tmpl: `r "$HOME/{EVAL_ID}"`, wantErr: "{EVAL_ID} inside double quotes"},
	{name: "double quotes after a closed quote", tmpl: `r 'a'"{PROMPT}"`, wantErr: "inside double quotes"},
	{name: "double quotes after a closed substitution", tmpl: `r $(date) "{PROMPT}"`, wantErr: "inside double quotes"},
	{name: "escaped inside double quotes", tmpl: `r "\{PROMPT}"`, wantErr: "inside double quotes"},
	{name: "single quotes", tmpl: `r '{EVAL_ID}'`, wantErr: "{EVAL_ID} inside single quotes"},
	{
		name:    "single quotes refuse a placeholder but not ${VAR}",
		tmpl:    `r '${OUTPUT_FILE}' '{OUTPUT_FILE}'`,
		wantErr: "{OUTPUT_FILE} inside single quotes (byte 20)",
	},
	{name: "single quotes after # inside a word", tmpl: `r x#'{PROMPT}'`, wantErr: "inside single quotes"},
	{name: "single quotes after a comment", tmpl: "r # it's a comment\nr '{PROMPT}'", wantErr: "inside single quotes"},
	{name: "backslash", tmpl: `r \{PROMPT}`, wantErr: "{PROMPT} after a backslash"},
	{name: "backquotes", tmpl: "r `cat {PROMPT_FILE}`", wantErr: "{PROMPT_FILE} inside `...`"},
	{name: "backquotes in double quotes", tmpl: "r \"`echo {EVAL_ID}`\"", wantErr: "inside `...`"},
	{name: "command substitution", tmpl: `r $(cat {PROMPT_FILE})`, wantErr: "{PROMPT_FILE} inside $(...)"},
	{name: "command substitution in double quotes", tmpl: `r "$(cat {PROMPT_FILE})"`, wantErr: "inside $(...)"},
	{name: "parameter expansion", tmpl: `r ${X:-{PROMPT}}`, wantErr: "{PROMPT} inside ${...}"},
	{name: "arithmetic expansion", tmpl: `r $(( {ATTEMPT} + 1 ))`, wantErr: "{ATTEMPT} inside $((...))"},
	{name: "bash arithmetic command", tmpl: `(( {ATTEMPT} > 1 )) && r`, wantErr: "{ATTEMPT} inside ((...))"},
	{name: "bash $'...' quotes", tmpl: `r $'{PROMPT}'`, wantErr: "{PROMPT} inside $'...'"},
	{name: `bash $'...' with \' (dash ends it earlier)`, tmpl: `r $'\'' {PROMPT}`, wantErr: `{PROMPT} (byte 8) after an escaped quote \' inside $'...'`},
	{
		name: "double quotes after a substitution holding quotes", tmpl: `r $(echo "a") "{PROMPT}"`,
		wantErr: "inside double quotes", rendererOnly: true,
	},
	{
		name: "here-document body", tmpl: "cat <<EOF\n{PROMPT}\nEOF",
		wantErr: "{PROMPT} (byte 10) after a here-document (<<)", rendererOnly: true,
	},
	{
		name: "after case inside $(...)", tmpl: "r $(case x in a) echo;; esac) {PROMPT}",
		wantErr: "after a case statement inside $(...)", rendererOnly: true,
	},
	{
		name: "after quotes inside a double-quoted ${...}", tmpl: `r "${X:-'a'}" {PROMPT}`,
		wantErr: "after a single quote inside a double-quoted ${...}", rendererOnly: true,
	},
	{name: "after bash $[...]", tmpl: `r $[1+1] {PROMPT}`, wantErr: "after $[...]", rendererOnly: true},
	{name: "after bash ${ cmd; }", tmpl: `r ${ echo; } {PROMPT}`, wantErr: "after ${ ...; }", rendererOnly: true},
}

func TestRenderQuotingContexts(t *testing.T) {
	for _, tc := range quotingCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Render(tc.tmpl, quotingValues)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Render(%q) = %q, %v; want an error containing %q", tc.tmpl, got, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Render(%q): %v", tc.tmpl, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Render(%q) (-want +got):\n%s", tc.tmpl, diff)
			}
		})
	}
}

func TestRenderQuotingErrorMessage(t *testing.T) {
	_, err := Render(`r "{PROMPT}"`, quotingValues)
	want := `command template has {PROMPT} inside double quotes (byte 3): placeholders must not be quoted or inside ` +
		"`...`" + `, $(...) or ${...}: their values are already shell-quoted; write {PROMPT}, not "{PROMPT}" ` +
		`(inside quotes or a substitution, read the prompt from "$PROMPT_FILE")`
	if err == nil {
		t.Fatal("Render accepted a double-quoted placeholder")
	}
	if diff := cmp.Diff(want, err.Error()); diff != "" {
		t.Errorf("error (-want +got):\n%s", diff)
	}
}

// A comment ends at a newline, so a placeholder may stay in one only while its value has none.
func TestRenderPlaceholderInComment(t *testing.T) {
	tmpl := "r {OUTPUT_FILE} # was {PROMPT}"
	got, err := Render(tmpl, map[string]string{PlaceholderOutputFile: "/o", PlaceholderPrompt: "one line; $(id)"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(`r '/o' # was 'one line; $(id)'`, got); diff != "" {
		t.Errorf("Render (-want +got):\n%s", diff)
	}
	_, err = Render(tmpl, map[string]string{PlaceholderOutputFile: "/o", PlaceholderPrompt: "x\nid"})
	if want := "{PROMPT} in a comment (byte 22) and its value holds a newline"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Render error = %v, want it to contain %q", err, want)
	}
	// Inside a substitution, a comment is no way around the rule.
	if _, err := Render("r $(: # {PROMPT}\n)", quotingValues); err == nil || !strings.Contains(err.Error(), "inside $(...)") {
		t.Errorf("Render error = %v, want a placeholder inside $(...)", err)
	}
}

// admissionRule returns the regular expression of the CRD's CEL rule that rejects misplaced placeholders
// (!self.matches(r'...') on both commandTemplate fields). CEL's matches is Go's regexp, so the CRD's rule can be
// tried here without an apiserver.
func admissionRule(t testing.TB) *regexp.Regexp {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "config", "crd", "bases", "evals.evalrun.io_evalruns.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var crd any
	if err := yaml.Unmarshal(data, &crd); err != nil {
		t.Fatal(err)
	}
	var rules []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				if k != "x-kubernetes-validations" {
					walk(e)
					continue
				}
				for _, r := range e.([]any) {
					if r := r.(map[string]any); strings.Contains(r["message"].(string), "already shell-quoted") {
						rules = append(rules, r["rule"].(string))
					}
				}
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(crd)
	if len(rules) != 2 || rules[0] != rules[1] {
		t.Fatalf("want one quoting rule on both commandTemplate fields, got %q", rules)
	}
	pattern, okPrefix := strings.CutPrefix(rules[0], "!self.matches(r'")
	pattern, okSuffix := strings.CutSuffix(pattern, "')")
	if !okPrefix || !okSuffix {
		t.Fatalf("the quoting rule is not !self.matches(r'...'): %q", rules[0])
	}
	rx, err := regexp.Compile(pattern)
	if err != nil {
		t.Fatal(err)
	}
	return rx
}

// TestAdmissionRuleAgreesWithRender: the CRD rejects what Render refuses, except where only Render can follow the
// nesting; it never rejects what Render accepts (FuzzAdmissionRuleNeverStricter searches for that).
func TestAdmissionRuleAgreesWithRender(t *testing.T) {
	rx := admissionRule(t)
	for _, tc := range quotingCases {
		rejected := rx.MatchString(tc.tmpl)
		if want := tc.wantErr != "" && !tc.rendererOnly; rejected != want {
			t.Errorf("%s: the admission rule rejects %q: %v, want %v", tc.name, tc.tmpl, rejected, want)
		}
	}
}
