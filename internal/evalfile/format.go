package evalfile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// Format is an eval file's format.
type Format string

// Formats.
const (
	// FormatV2 is agentv-eval-v2 (AgentV v2.0.1): evalcases, input_messages, execution.evaluators.
	FormatV2 Format = "agentv-eval-v2"
	// FormatSuite42 is an AgentV 4.42 suite: tests, input, expected_output, criteria, assertions.
	FormatSuite42 Format = "agentv-4.42"
)

// Suite is what a 4.42 suite carries besides its cases and assertions.
type Suite struct {
	// TestsKey is the key its tests are under: tests, or the deprecated eval_cases.
	TestsKey string
	// Name, Category, Version, Author, License, Tags and RequiresAgentV (requires.agentv) are its metadata fields.
	Name, Category, Version, Author, License, RequiresAgentV string
	Tags                                                     []string
	// Threshold is execution.threshold: the least mean score of a passing suite (0 to 1); nil when not set.
	Threshold *float64
	// FailOnError is execution.fail_on_error: AgentV stops starting tests after an execution error; nil when not set.
	FailOnError *bool
	// Metadata is what every test's metadata inherits (metadata, with governance), as a JSON object; nil when none.
	Metadata json.RawMessage
}

// isSuite42 reports whether a parsed document is a 4.42 suite, and under which key its tests are: tests, else the
// deprecated eval_cases (AgentV reads tests first).
func isSuite42(doc *yaml.Node) (string, bool) {
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return "", false
	}
	root := doc.Content[0]
	key := ""
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		switch {
		case k.Value == "$schema" && v.Kind == yaml.ScalarNode && v.Value == SchemaV2:
			return "", false
		case k.Value == "tests":
			key = k.Value
		case k.Value == "eval_cases" && key == "":
			key = k.Value
		}
	}
	return key, key != ""
}

// suiteHeaderLine matches a top-level line whose key is a 4.42 suite's tests key (plain or quoted), so that such a
// file is never cut into evalcases items.
var suiteHeaderLine = regexp.MustCompile(`^(tests|eval_cases|"tests"|'tests'|"eval_cases"|'eval_cases')[ \t]*:`)

// mayBeSuite42 reports whether a header (the text before evalcases) may make the document a 4.42 suite.
func mayBeSuite42(header []byte) bool {
	for l := range bytes.SplitSeq(header, []byte("\n")) {
		if suiteHeaderLine.Match(l) {
			return true
		}
	}
	return false
}

// WithFiles gives Parse (and Subset, Scan, WriteView) the eval file's name and the files of its bundle: fsys is
// rooted at the bundle's root and name is the eval file's slash-separated path in it ("evals/suite.eval.yaml").
// fsys may be nil: then only the name is known, which refuses suites AgentV writes as code (.eval.ts) or as
// evals.json, and a 4.42 suite that names other files is invalid, with a problem that says it needs them.
// agentv-eval-v2 files are read as before; only their name is checked.
func WithFiles(fsys fs.FS, name string) ParseOption {
	return func(o *parseOptions) { o.files, o.name = fsys, name }
}

// checkSuiteName refuses eval files by name that AgentV reads as something other than a YAML suite, and says why.
func checkSuiteName(name string) string {
	base := strings.ToLower(path.Base(strings.ReplaceAll(name, `\`, "/")))
	switch {
	case name == "":
		return ""
	case strings.HasSuffix(base, ".ts"), strings.HasSuffix(base, ".mts"):
		return fmt.Sprintf("%q is a TypeScript suite (.eval.ts): AgentV runs it as code to build its tests, which "+
			"the operator never does; write the suite in YAML", name)
	case strings.HasSuffix(base, ".json"):
		return fmt.Sprintf("%q is an Agent Skills evals.json suite: the operator reads YAML suites only; write it "+
			"as a YAML suite whose tests are its evals", name)
	case strings.HasSuffix(base, ".jsonl"):
		return fmt.Sprintf("%q is a JSONL suite: the operator reads YAML suites; write a YAML suite with "+
			"tests: ./%s", name, path.Base(name))
	}
	return ""
}

// A FormatReader reads the eval files of one format other than agentv-eval-v2, which this package reads itself.
// The format's package registers it in its init (RegisterFormat), as image/png registers its decoder with image: a
// binary reads a format only when it links that package, which its main imports for this side effect. Parse, Scan
// and Subset still tell the format from the document, and give an *UnlinkedFormatError for a format whose reader
// the binary does not link. test/architecture (TestImportRules) holds every binary that links this package to
// linking every format's reader.
//
// It is an interface, not a struct of funcs, so that the linker keeps of a reader only the methods the binary can
// call: the launcher, which never cuts a file (Subset), links neither a reader's Subset nor YAML's encoder.
type FormatReader interface {
	// Parse reads and validates doc, the document data holds, whose cases are the items of its top-level key key,
	// into a File (NewFile), or returns the *ValidationError of its problems.
	Parse(data []byte, doc *yaml.Node, key string, o ReaderOptions) (*File, error)
	// Subset is Subset of such a document: its text with only the cases keep accepts.
	Subset(data []byte, doc *yaml.Node, key string, keep func(i int) bool, o ReaderOptions) ([]byte, error)
}

// ReaderOptions are what a format's reader reads of Parse's (and Subset's) options.
type ReaderOptions struct {
	// DefaultEvaluators are WithDefaultEvaluators' (Parser.DefaultEvaluators reads them).
	DefaultEvaluators []map[string]any
	// Files and Name are WithFiles': the files of the eval file's bundle (nil when not given) and its path in it.
	Files fs.FS
	Name  string
}

// reader returns the options a format's reader reads.
func (o parseOptions) reader() ReaderOptions {
	return ReaderOptions{DefaultEvaluators: o.defaultEvaluators, Files: o.files, Name: o.name}
}

// otherFormats are the formats this package tells from a document but does not read itself: for each, the package
// that reads it, how a document shows it (for an *UnlinkedFormatError) and its reader once registered.
var otherFormats = [...]struct {
	format    Format
	pkg, told string
	reader    FormatReader
}{
	{format: FormatSuite42, pkg: "github.com/evalrun-operator/evalrun-operator/internal/evalfile/suite42",
		told: "an AgentV 4.42 suite: it has a top-level tests (or eval_cases) key"},
}

// RegisterFormat registers the reader of format f. A format's package calls it once, in its init (it is not safe
// to call while eval files are read); it panics for a format this package does not tell from the document, for
// agentv-eval-v2 (read here), for a nil reader, and for a second registration.
func RegisterFormat(f Format, r FormatReader) {
	for i := range otherFormats {
		switch o := &otherFormats[i]; {
		case o.format != f:
		case r == nil:
			panic("evalfile: RegisterFormat of " + string(f) + " without a reader")
		case o.reader != nil:
			panic("evalfile: RegisterFormat of " + string(f) + " twice")
		default:
			o.reader = r
			return
		}
	}
	panic("evalfile: RegisterFormat of " + string(f) + ", a format this package does not tell from a document")
}

// readerOf returns the registered reader of format f, one of otherFormats, or the *UnlinkedFormatError that says
// the binary does not link it.
func readerOf(f Format) (FormatReader, error) {
	for _, o := range otherFormats {
		if o.format == f && o.reader != nil {
			return o.reader, nil
		}
	}
	return nil, &UnlinkedFormatError{Format: f}
}

// UnlinkedFormatError is the error of an eval file in a format whose reader the binary does not link (see
// FormatReader). The file may well be valid: the binary was built without the reader, which is its builder's
// mistake, so this is not a *ValidationError.
type UnlinkedFormatError struct {
	// Format is the file's format, told from the document.
	Format Format
}

// Error names the format, how the document showed it, and the package the binary must import.
func (e *UnlinkedFormatError) Error() string {
	for _, o := range otherFormats {
		if o.format == e.Format {
			return "the eval file is in the " + string(o.format) + " format (" + o.told + "), but this binary does " +
				"not link that format's reader: it must import " + o.pkg
		}
	}
	return "the eval file is in the " + string(e.Format) + " format, whose reader this binary does not link"
}
