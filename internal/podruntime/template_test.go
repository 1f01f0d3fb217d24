package podruntime

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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
