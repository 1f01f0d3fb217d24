package evaluate

import "github.com/evalrun-operator/evalrun-operator/internal/bundle"

// A case's bundle files as the judges of both formats read them: agentv-eval-v2's prompt inputs here
// (promptinputs.go), AgentV 4.42's in internal/evaluate/grade42, with the same bounds and the same paths.

// CaseFiles reads the bundle files that one case's judge inputs name, at most MaxCaseFileBytes in all (a file
// named many times counts each time).
type CaseFiles struct{ files caseFiles }

// NewCaseFiles reads the files of bundle b.
func NewCaseFiles(b bundle.Dir) *CaseFiles {
	return &CaseFiles{caseFiles{b: b, left: MaxCaseFileBytes}}
}

// Read reads the file ref names (ReadBundleFile) within what is left of the case's bound: its text and bundle path.
func (f *CaseFiles) Read(ref string) (text, bundlePath string, err error) { return f.files.read(ref) }

// ResolvedPath is the absolute path of bundle path p, as AgentV reports a resolved file.
func (f *CaseFiles) ResolvedPath(p string) string { return resolvedPath(f.files.b, p) }

// ReadBundleFile reads the file ref names from bundle b (at most MaxBundleFileBytes; CRLF line ends made LF, as
// AgentV reads them): its text and bundle path. Without a bundle it is an error that says so.
func ReadBundleFile(b bundle.Dir, ref string) (text, bundlePath string, err error) {
	return readBundleFile(b, ref)
}

// DisplayPath is a file reference as AgentV shows it: without leading separators.
func DisplayPath(ref string) string { return displayPath(ref) }

// JoinTrimmed joins the parts that are not blank, each trimmed, with sep (AgentV's plain question).
func JoinTrimmed(parts []string, sep string) string { return joinTrimmed(parts, sep) }
