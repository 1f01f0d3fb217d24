// Package bundle reads an eval bundle: an eval file together with the files it names (prompt files, input files,
// reference-answer files, code-judge scripts, templates), laid out under one root directory at the relative paths
// the eval file uses. This file holds the two rules every reader of a bundle shares: which values are file
// references (IsFileRef) and where a reference resolves (Dir.Resolve: from the eval file's directory up to the
// bundle's root, as AgentV searches, never outside the root). Pure file-system code: no client-go.
package bundle

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"regexp"
	"strings"
	"syscall"
)

// MaxRefLength bounds a file reference: a longer value is text, never a path.
const MaxRefLength = 1024

// fileExtension matches a value that ends in a file extension: a dot, a letter, then at most 15 letters or digits
// (".md", ".hbs", ".MD", ".jinja2"), so that "1.5" or a sentence's final "." is not one.
var fileExtension = regexp.MustCompile(`\.[A-Za-z][A-Za-z0-9]{0,15}$`)

// IsFileRef reports whether value names a file rather than being text. The rule, one for every field that may hold
// either (an evaluator's prompt, a reference answer, a template): a single line of at most MaxRefLength bytes,
// trimmed of surrounding white space, that
//   - starts with "./", "../" or "/", or
//   - ends in a file extension (".md", ".hbs", ".txt", any case), or
//   - contains a path separator ("/" or "\") and no white space.
//
// So "prompts/judge", "../prompts/judge.hbs", "./judge prompt.md" and "judge.MD" are references, and "Is the answer
// correct and/or complete?" or "Score it 0/1." are text. A reference that does not resolve is an error for the
// caller to report (never sent as text).
func IsFileRef(value string) bool {
	v := strings.TrimSpace(value)
	if v == "" || len(v) > MaxRefLength || strings.ContainsAny(v, "\n\r") {
		return false
	}
	switch {
	case strings.HasPrefix(v, "./"), strings.HasPrefix(v, "../"), strings.HasPrefix(v, "/"):
		return true
	case fileExtension.MatchString(v):
		return true
	default:
		return strings.ContainsAny(v, `/\`) && !strings.ContainsAny(v, " \t")
	}
}

// Dir is a bundle on disk: Root is its directory, EvalFile the eval file's slash-separated path inside it.
type Dir struct {
	Root     string
	EvalFile string
	// ConfigRoot, when set, is a directory above Root (a local eval file's repository root, collector check without
	// --bundle) up to which AgentV's config (ConfigPath) is searched, as AgentV v2.0.1 searches it; references still
	// resolve within Root.
	ConfigRoot string
}

// NotFoundError says that a reference resolves to no regular file of the bundle, and where it was looked for.
type NotFoundError struct {
	// Ref is the reference as the eval file wrote it.
	Ref string
	// Searched are the bundle paths tried, nearest the eval file first.
	Searched []string
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("file %q is not in the eval bundle (looked for %s)", e.Ref, strings.Join(e.Searched, ", "))
}

// ErrOutsideBundle marks a reference that can only resolve outside the bundle's root.
var ErrOutsideBundle = errors.New("the reference leads outside the eval bundle")

// Candidates returns the bundle paths ref may resolve to, in the order they are tried: for a reference starting
// with "/", that path under the root alone; otherwise ref joined to the eval file's directory, then to each parent
// directory up to the root (AgentV's search from the eval file's directory up to the repository root). Paths that
// would leave the root are dropped; none left is ErrOutsideBundle. Backslashes count as separators.
func (d Dir) Candidates(ref string) ([]string, error) {
	r := strings.ReplaceAll(strings.TrimSpace(ref), `\`, "/")
	if r == "" {
		return nil, fmt.Errorf("empty file reference")
	}
	if strings.HasPrefix(r, "/") {
		p := path.Clean(strings.TrimLeft(r, "/"))
		if !inside(p) {
			return nil, fmt.Errorf("%q: %w", ref, ErrOutsideBundle)
		}
		return []string{p}, nil
	}
	var out []string
	for dir := path.Dir(path.Clean(d.EvalFile)); ; dir = path.Dir(dir) {
		if p := path.Join(dir, r); inside(p) {
			out = append(out, p)
		}
		if dir == "." || dir == "/" {
			break
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%q: %w", ref, ErrOutsideBundle)
	}
	return out, nil
}

// inside reports whether the cleaned relative path p stays within the root.
func inside(p string) bool {
	return p != ".." && !strings.HasPrefix(p, "../") && !path.IsAbs(p) && p != "."
}

// Resolve returns the bundle path of the first candidate (Candidates) that is a regular file under the root, or a
// *NotFoundError. Symbolic links are followed only within the root (a ConfigMap volume's ..data links are).
func (d Dir) Resolve(ref string) (string, error) {
	cands, err := d.Candidates(ref)
	if err != nil {
		return "", err
	}
	root, err := os.OpenRoot(d.Root)
	if err != nil {
		return "", fmt.Errorf("opening the eval bundle %s: %w", d.Root, err)
	}
	defer func() { _ = root.Close() }() // read only: nothing to lose on close
	for _, p := range cands {
		fi, err := root.Stat(p)
		if err == nil && fi.Mode().IsRegular() {
			return p, nil
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) && !isOutside(err) {
			return "", fmt.Errorf("looking for %q in the eval bundle: %w", ref, err)
		}
	}
	return "", &NotFoundError{Ref: ref, Searched: cands}
}

// isOutside reports whether err is os.Root refusing a path (a symbolic link out of the root): such a candidate
// counts as absent, it is never read.
func isOutside(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && strings.Contains(pe.Err.Error(), "escapes")
}

// ErrTooLarge marks a bundle file larger than the reader allows.
var ErrTooLarge = errors.New("the file is larger than allowed")

// openRegular opens the bundle path p for reading only if it is a regular file when opened. It opens without
// blocking (O_NONBLOCK: a FIFO put in place of the file Resolve found, between the two, would otherwise hold the
// open until a writer comes) and checks the opened file's own mode, so what is read is what was checked.
func openRegular(root *os.Root, p string) (*os.File, error) {
	f, err := root.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("reading %s of the eval bundle: %w", p, err)
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%w (%s)", ErrNotRegular, fi.Mode().Type())
	}
	if err != nil {
		_ = f.Close() // read only, and not to be read
		return nil, fmt.Errorf("reading %s of the eval bundle: %w", p, err)
	}
	return f, nil
}

// ErrNotRegular marks a bundle path that is not a regular file when it is opened (a FIFO, a device, a directory).
var ErrNotRegular = errors.New("not a regular file")

// ReadFile resolves ref (Resolve) and returns the file's bytes and its bundle path, reading at most limit bytes:
// a larger file is an error wrapping ErrTooLarge, never a silently shortened text. Only a regular file is read
// (openRegular): a FIFO or a device, named or swapped in after Resolve, is an error, never a wait or an endless read.
func (d Dir) ReadFile(ref string, limit int64) ([]byte, string, error) {
	p, err := d.Resolve(ref)
	if err != nil {
		return nil, "", err
	}
	root, err := os.OpenRoot(d.Root)
	if err != nil {
		return nil, "", fmt.Errorf("opening the eval bundle %s: %w", d.Root, err)
	}
	defer func() { _ = root.Close() }() // read only: nothing to lose on close
	f, err := openRegular(root, p)
	if err != nil {
		return nil, "", err
	}
	defer func() { _ = f.Close() }() // read only
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, "", fmt.Errorf("reading %s of the eval bundle: %w", p, err)
	}
	if int64(len(data)) > limit {
		return nil, "", fmt.Errorf("%s of the eval bundle: %w (%d bytes)", p, ErrTooLarge, limit)
	}
	return data, p, nil
}
