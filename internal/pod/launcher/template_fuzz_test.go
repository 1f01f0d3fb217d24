package launcher

import (
	"bytes"
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// FuzzRenderNoInjection checks the escaping property that makes templates safe: whatever a placeholder's value
// holds (quotes, $(), backticks, newlines, globs, option-like text), the shell receives it as exactly one
// argument, byte for byte, and runs nothing else.
func FuzzRenderNoInjection(f *testing.F) {
	for _, seed := range []string{
		"", "plain", "two words", "it's", `"double"`, "$(touch /tmp/pwned)", "`id`", "a\nb", "'; rm -rf / #",
		`\'`, "*", "-n", "${HOME}", "{EVAL_ID}", "'''", "tab\there", "\xff\xfe invalid utf-8",
	} {
		f.Add(seed)
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		f.Skip("no sh on this machine")
	}
	f.Fuzz(func(t *testing.T, value string) {
		if strings.IndexByte(value, 0) >= 0 {
			if _, err := Render("x {EVAL_ID}", map[string]string{PlaceholderEvalID: value}); err == nil {
				t.Fatalf("Render accepted a value with a NUL byte")
			}
			return
		}
		cmd, err := Render("printf '%s|%s' {EVAL_ID} {OUTPUT_FILE}", map[string]string{
			PlaceholderEvalID: value, PlaceholderOutputFile: value,
		})
		if err != nil {
			t.Fatalf("Render(%q) = %v", value, err)
		}
		out, err := exec.Command(sh, "-c", cmd).Output()
		if err != nil {
			t.Fatalf("sh -c %q: %v", cmd, err)
		}
		if want := value + "|" + value; string(out) != want {
			t.Fatalf("the shell received %q, want %q (command %q)", out, want, cmd)
		}
	})
}

// quotingPieces build templates that open and close every quoting context the renderer follows. Wherever a
// command could start, a piece starts printf, so a placeholder never names the command; the other pieces can name
// no program that changes anything (and the shells run with an empty PATH). No piece ends with '$', so none
// forms $$, the shell's process id, which would differ between runs.
var quotingPieces = []string{
	"{EVAL_ID}", "{OUTPUT_FILE}", " ", "x", "'", `"`, `\`, "`", `$"`, "(printf '%s\\0' ", ")", "{x", "}", "#",
	"\nprintf '%s\\0' ", "; printf '%s\\0' ", "${OUTPUT_FILE}", "$(printf '%s\\0' ", "${", "$((", "((", "))",
	"<<x", "$'", `\'`, "$#", "*", "=", "$[", "case x in x) printf '%s\\0' ", " ;; esac; printf '%s\\0' ",
}

func quotingTemplate(shape []byte) string {
	var b strings.Builder
	b.WriteString("printf '%s\\0' ")
	for _, c := range shape[:min(len(shape), 48)] {
		b.WriteString(quotingPieces[int(c)%len(quotingPieces)])
	}
	return b.String()
}

// FuzzRenderQuotingContexts checks that wherever Render accepts a placeholder, among quotes, escapes,
// substitutions, comments and here-documents, the shell takes its value as literal text inside one argument:
// running the script with hostile values prints exactly what running it with plain sentinel values prints, with
// each sentinel replaced by its value byte for byte, and exits the same way. Templates where Render refuses a
// placeholder are skipped; TestRenderQuotingContexts pins which those are.
func FuzzRenderQuotingContexts(f *testing.F) {
	for _, seed := range []struct{ shape, v1, v2 string }{
		{"\x00\x02\x01", "it's", `"; touch pwned; "`},     // {EVAL_ID} {OUTPUT_FILE}
		{"\x05\x00\x05", "$(touch pwned)", "x"},           // "{EVAL_ID}"
		{"\x04\x00\x04\x02\x01", "'; touch pwned; '", ""}, // '{EVAL_ID}' {OUTPUT_FILE}
		{"\x06\x00", `\`, "a\nb"},                         // \{EVAL_ID}
		{"\x02\x0d\x04\x02\x0e\x00", "a\nb", "c"},         // # ' newline {EVAL_ID}
		{"\x02\x0d\x00", "a\nb; touch pwned", "c"},        // # {EVAL_ID}
		{"\x11\x02\x00", "`touch pwned`", "c"},            // $(printf ... {EVAL_ID}
		{"\x16\x0e\x00\x0e\x03", "x", "y"},                // <<x newline {EVAL_ID} newline x
		{"\x17\x18\x04\x02\x00", "x'y", "z"},              // $'\'' {EVAL_ID}
		{"\x13\x00\x15", "1+1", "z"},                      // $(( {EVAL_ID} ))
	} {
		f.Add([]byte(seed.shape), seed.v1, seed.v2)
	}
	var shells []string
	for _, name := range []string{"sh", "bash"} {
		if p, err := exec.LookPath(name); err == nil {
			shells = append(shells, p)
		}
	}
	if len(shells) == 0 {
		f.Skip("no sh on this machine")
	}
	const s1, s2 = "ZQ1Z", "ZQ2Z" // no piece holds upper case, so the sentinels appear only where placed
	f.Fuzz(func(t *testing.T, shape []byte, v1, v2 string) {
		tmpl := quotingTemplate(shape)
		script, err := Render(tmpl, map[string]string{PlaceholderEvalID: v1, PlaceholderOutputFile: v2})
		if err != nil {
			return
		}
		ref, err := Render(tmpl, map[string]string{PlaceholderEvalID: s1, PlaceholderOutputFile: s2})
		if err != nil {
			t.Fatalf("Render(%q) accepts the values but not the sentinels: %v", tmpl, err)
		}
		dir := t.TempDir()
		for _, sh := range shells {
			want, wantCode := runScript(t, sh, dir, ref)
			got, gotCode := runScript(t, sh, dir, script)
			want = strings.NewReplacer(s1, v1, s2, v2).Replace(want)
			if got != want || gotCode != wantCode {
				t.Fatalf("%s -c %q\nprinted %q and exited %d;\nwith the sentinels it printed %q and exited %d (template %q)",
					sh, script, got, gotCode, want, wantCode, tmpl)
			}
		}
	})
}

func runScript(t *testing.T, sh, dir, script string) (string, int) {
	cmd := exec.Command(sh, "-c", script)
	cmd.Dir, cmd.Env = dir, []string{"PATH=/nonexistent"}
	var out bytes.Buffer
	cmd.Stdout = &out
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return out.String(), 0
	case errors.As(err, &exit):
		return out.String(), exit.ExitCode()
	default:
		t.Fatalf("%s: %v", sh, err)
		return "", 0
	}
}

// FuzzAdmissionRuleNeverStricter checks that the CRD's admission rule rejects no template whose placeholders
// Render accepts, so admission never blocks a command the runner would run.
func FuzzAdmissionRuleNeverStricter(f *testing.F) {
	for _, tc := range quotingCases {
		f.Add([]byte(tc.tmpl))
	}
	f.Add([]byte{0, 2, 4, 0, 4})
	rx := admissionRule(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, tmpl := range []string{string(b), quotingTemplate(b)} {
			if !rx.MatchString(tmpl) {
				continue
			}
			if _, err := scanTemplate(tmpl); err == nil {
				t.Fatalf("the admission rule rejects %q, whose placeholders Render accepts", tmpl)
			}
		}
	})
}
