package evalfile

import (
	"bytes"
	"errors"
	"io"
	"path"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

func TestCheckSuiteName(t *testing.T) {
	for name, refused := range map[string]bool{
		"evals/greeting.eval.ts": true, "a/b.MTS": true, "skills/evals.json": true, "evals/dataset.jsonl": true,
		"evals/dataset.eval.yaml": false, "evals/x.yml": false, "": false, `evals\win.eval.ts`: true,
	} {
		_, err := Parse([]byte("tests: [{id: a, input: q, criteria: c}]"), WithFiles(nil, name))
		if got := err != nil; got != refused {
			t.Errorf("%q: refused = %v (%v), want %v", name, got, err, refused)
		}
		if refused && !strings.Contains(err.Error(), path.Base(strings.ReplaceAll(name, `\`, "/"))) {
			t.Errorf("%q: the error does not name the file: %v", name, err)
		}
	}
}

// A file in a format whose reader the binary does not link is refused saying so, by every reader, and never read
// as another format (agentv-eval-v2's "evalcases is required"); agentv-eval-v2 files still read.
func TestUnlinkedFormat(t *testing.T) {
	saved := otherFormats
	for i := range otherFormats {
		otherFormats[i].reader = nil
	}
	t.Cleanup(func() { otherFormats = saved })
	suite := []byte("tests:\n  - {id: a, input: q, criteria: c}\n")
	want := "the eval file is in the agentv-4.42 format (an AgentV 4.42 suite: it has a top-level tests (or eval_cases) " +
		"key), but this binary does not link that format's reader: it must import " +
		"github.com/evalrun-operator/evalrun-operator/internal/evalfile/suite42"
	check := func(reader string, err error) {
		t.Helper()
		var unlinked *UnlinkedFormatError
		if !errors.As(err, &unlinked) || unlinked.Format != FormatSuite42 || err.Error() != want {
			t.Errorf("%s: %v, want the *UnlinkedFormatError %q", reader, err, want)
		}
	}
	_, err := Parse(suite)
	check("Parse", err)
	_, err = Scan(bytes.NewReader(suite))
	check("Scan", err)
	_, err = Subset(suite, func(int) bool { return true })
	check("Subset", err)
	_, err = WriteView(io.Discard, suite)
	check("WriteView", err)
	if _, err := Parse([]byte("evalcases:\n  - {id: a, input_messages: [{role: user, content: q}]}\n")); err != nil {
		t.Errorf("an agentv-eval-v2 file does not read without the 4.42 reader: %v", err)
	}
}

// nullReader is a FormatReader that reads nothing.
type nullReader struct{}

func (nullReader) Parse([]byte, *yaml.Node, string, ReaderOptions) (*File, error) { return nil, nil }
func (nullReader) Subset([]byte, *yaml.Node, string, func(int) bool, ReaderOptions) ([]byte, error) {
	return nil, nil
}

// RegisterFormat refuses what would make the formats ambiguous: agentv-eval-v2 (read here), a format this package
// does not tell from a document, no reader, a second reader (the 4.42 reader is linked into this package's tests:
// link_test.go).
func TestRegisterFormatRefuses(t *testing.T) {
	reader := nullReader{}
	tests := []struct {
		name   string
		format Format
		reader FormatReader
		want   string
	}{
		{"agentv-eval-v2", FormatV2, reader, "evalfile: RegisterFormat of agentv-eval-v2, a format this package does not tell from a document"},
		{"an unknown format", "agentv-9", reader, "evalfile: RegisterFormat of agentv-9, a format this package does not tell from a document"},
		{"no reader", FormatSuite42, nil, "evalfile: RegisterFormat of agentv-4.42 without a reader"},
		{"a second reader", FormatSuite42, reader, "evalfile: RegisterFormat of agentv-4.42 twice"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if got := recover(); got != tc.want {
					t.Errorf("RegisterFormat panics with %v, want %q", got, tc.want)
				}
			}()
			RegisterFormat(tc.format, tc.reader)
		})
	}
}
