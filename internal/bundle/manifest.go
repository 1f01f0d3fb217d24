package bundle

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Bounds of a bundle. MaxFiles keeps its manifest (about 150 bytes a file) well within the pinned eval ConfigMap
// next to the eval file; MaxBytes is the most a bundle's files may hold together (a bucket's: a ConfigMap's are
// bounded by the API server's 1 MiB), the most the manager reads to pin it.
const (
	MaxFiles          = 1000
	MaxBytes    int64 = 512 << 20
	MaxPathLen        = 1024
	maxSegmentL       = 255
)

// File is one file of a bundle as pinned: its slash-separated path under the root, its size and the hex sha256 of
// its content.
type File struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// Manifest is a pinned bundle: the eval file's path and every file, in path order. Its Digest names the content
// (paths, sizes and sha256s); the eval file's path is not part of it.
type Manifest struct {
	// EvalFile is the eval file's path inside the bundle (one of Files).
	EvalFile string `json:"evalFile"`
	// SHA256 is the bundle's digest (Digest of Files), written by NewManifest and checked by Validate.
	SHA256 string `json:"sha256"`
	// Files are the bundle's files, sorted by path, each path once.
	Files []File `json:"files"`
}

// NewManifest sorts files, checks them (Validate) and returns the manifest of the bundle they make with its digest.
func NewManifest(evalFile string, files []File) (*Manifest, error) {
	fs := slices.Clone(files)
	slices.SortFunc(fs, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	m := &Manifest{EvalFile: evalFile, Files: fs, SHA256: Digest(fs)}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return m, nil
}

// Digest is the bundle digest of files sorted by path: the hex sha256 of one line per file, "<sha256> <size>
// <path>\n". Two bundles with the same paths and contents have the same digest, however they were stored.
func Digest(files []File) string {
	h := sha256.New()
	var b []byte
	for _, f := range files {
		b = append(b[:0], f.SHA256...)
		b = append(b, ' ')
		b = strconv.AppendInt(b, f.Size, 10)
		b = append(b, ' ')
		b = append(b, f.Path...)
		b = append(b, '\n')
		_, _ = h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Validate checks the manifest: at most MaxFiles files, MaxBytes in all, each path valid (CheckPath) and listed
// once in order, each digest 64 lower-case hex digits, the eval file among them and the digest right.
func (m *Manifest) Validate() error {
	if len(m.Files) == 0 {
		return errors.New("the eval bundle has no files")
	}
	if len(m.Files) > MaxFiles {
		return fmt.Errorf("the eval bundle has %d files, more than %d", len(m.Files), MaxFiles)
	}
	var total int64
	paths := make(map[string]bool, len(m.Files))
	for _, f := range m.Files {
		paths[f.Path] = true
	}
	for i, f := range m.Files {
		if err := CheckPath(f.Path); err != nil {
			return err
		}
		if i > 0 && m.Files[i-1].Path >= f.Path {
			return fmt.Errorf("the eval bundle's files are not in path order, or %s is listed twice", f.Path)
		}
		for dir := path.Dir(f.Path); dir != "."; dir = path.Dir(dir) {
			if paths[dir] {
				return fmt.Errorf("the eval bundle has both a file %s and a file %s under it", dir, f.Path)
			}
		}
		if !isHexDigest(f.SHA256) {
			return fmt.Errorf("file %s of the eval bundle: sha256 %q is not 64 lower-case hex digits", f.Path, f.SHA256)
		}
		if f.Size < 0 {
			return fmt.Errorf("file %s of the eval bundle: negative size", f.Path)
		}
		total += f.Size
	}
	if total > MaxBytes {
		return fmt.Errorf("the eval bundle holds %d bytes, more than %d", total, MaxBytes)
	}
	if _, ok := m.Lookup(m.EvalFile); !ok {
		return fmt.Errorf("the eval file %q is not a file of the eval bundle", m.EvalFile)
	}
	if d := Digest(m.Files); d != m.SHA256 {
		return fmt.Errorf("the eval bundle's digest is %s, not the manifest's %s", d, m.SHA256)
	}
	return nil
}

// Bytes is the size of the bundle's files together.
func (m *Manifest) Bytes() int64 {
	var n int64
	for _, f := range m.Files {
		n += f.Size
	}
	return n
}

// Lookup returns the file at bundle path p.
func (m *Manifest) Lookup(p string) (File, bool) {
	i, ok := slices.BinarySearchFunc(m.Files, p, func(f File, p string) int { return strings.Compare(f.Path, p) })
	if !ok {
		return File{}, false
	}
	return m.Files[i], true
}

// Resolve is Dir.Resolve over the manifest instead of a directory: the first candidate (Dir.Candidates, the same
// search from the eval file's directory up to the root) that is a file of the bundle, or a *NotFoundError.
func (m *Manifest) Resolve(ref string) (File, error) {
	cands, err := (Dir{EvalFile: m.EvalFile}).Candidates(ref)
	if err != nil {
		return File{}, err
	}
	for _, p := range cands {
		if f, ok := m.Lookup(p); ok {
			return f, nil
		}
	}
	return File{}, &NotFoundError{Ref: ref, Searched: cands}
}

// Encode returns the manifest as JSON (the pinned eval ConfigMap's ManifestKey).
func (m *Manifest) Encode() ([]byte, error) {
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(m); err != nil {
		return nil, fmt.Errorf("encoding the eval bundle's manifest: %w", err)
	}
	return buf.Bytes(), nil
}

// DecodeManifest reads a manifest that Encode wrote and validates it.
func DecodeManifest(data []byte) (*Manifest, error) {
	var m Manifest
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	if err := d.Decode(&m); err != nil {
		return nil, fmt.Errorf("reading the eval bundle's manifest: %w", err)
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return &m, nil
}

// CheckPath checks that p may be a bundle path: a relative, clean, slash-separated path of valid UTF-8 of at most
// MaxPathLen bytes, each segment at most 255 bytes, without ".", "..", empty segments, backslashes or control
// characters (a reference writes "\" for "/", so a name holding one could never be named).
func CheckPath(p string) error {
	bad := func(why string) error { return fmt.Errorf("%q is not a bundle path: %s", p, why) }
	switch {
	case p == "":
		return bad("empty")
	case len(p) > MaxPathLen:
		return bad(fmt.Sprintf("longer than %d bytes", MaxPathLen))
	case !utf8.ValidString(p):
		return bad("not valid UTF-8")
	case strings.HasPrefix(p, "/"):
		return bad("absolute")
	case strings.ContainsRune(p, '\\'):
		return bad("it holds a backslash")
	case strings.IndexFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0:
		return bad("it holds a control character")
	case path.Clean(p) != p:
		return bad("not clean (empty, \".\" or \"..\" segments, a trailing slash)")
	}
	for seg := range strings.SplitSeq(p, "/") {
		if seg == ".." || seg == "." {
			return bad("it leaves its directory")
		}
		if len(seg) > maxSegmentL {
			return bad(fmt.Sprintf("a segment is longer than %d bytes", maxSegmentL))
		}
	}
	return nil
}

// Hash returns the File of content read from r, at bundle path p, reading at most limit bytes (more is an error
// wrapping ErrTooLarge).
func Hash(p string, r io.Reader, limit int64) (File, error) {
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(r, limit+1))
	if err != nil {
		return File{}, fmt.Errorf("reading %s of the eval bundle: %w", p, err)
	}
	if n > limit {
		return File{}, fmt.Errorf("%s of the eval bundle: %w (%d bytes)", p, ErrTooLarge, limit)
	}
	return File{Path: p, Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// ErrMismatch marks content that is not the pinned file's: another size or sha256.
var ErrMismatch = errors.New("the file is not the pinned one")

// Verify checks that data is the pinned file f.
func (f File) Verify(data []byte) error {
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); int64(len(data)) != f.Size || got != f.SHA256 {
		return fmt.Errorf("%s of the eval bundle: %w (pinned %d bytes, sha256 %s; found %d bytes, sha256 %s)",
			f.Path, ErrMismatch, f.Size, f.SHA256, len(data), got)
	}
	return nil
}

func isHexDigest(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := range len(s) {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
