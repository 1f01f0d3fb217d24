package podruntime

import (
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
