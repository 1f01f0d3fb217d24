package check

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A runner's output whose answer, ids and lines carry terminal escapes and bidi overrides shows them escaped in
// `collector check`'s table: the answer column, the line errors' excerpts, the unexpected ids and the verdict line.
func TestTableEscapesRunnerBytes(t *testing.T) {
	const esc = "\x1b[2J\x1b[32mPASS\r\u202eSSAP\u202c\u009b"
	output := `{"id":"case-001","text":"\u001b[2J\u001b[32mPASS\r\u202eSSAP\u202c\u009b"}` + "\n" +
		`{"id":"\u001b[2J\u001b[32mPASS\r\u202eSSAP\u202c\u009b","text":"x"}` + "\n" +
		esc + "\n"
	path := filepath.Join(t.TempDir(), "out.jsonl")
	if err := os.WriteFile(path, []byte(output), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stdout, stderr := runMain(t, "--mode", "batch", "--eval", fixture("screening.yaml"), "--output", path, "--format", "table")
	for name, text := range map[string]string{"stdout": stdout, "stderr": stderr} {
		if strings.ContainsAny(text, "\x1b\r\u202e\u202c\u009b") {
			t.Errorf("%s carries raw control characters:\n%q", name, text)
		}
	}
	// The answer, the line error's excerpt and the unexpected id each show escaped.
	if n := strings.Count(stdout, `\x1b[2J\x1b[32mPASS\r\u202eSSAP\u202c\u009b`); n < 3 {
		t.Errorf("the runner's bytes show escaped %d times, want the answer, the excerpt and the unexpected id:\n%s", n, stdout)
	}
}
