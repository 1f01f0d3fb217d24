package objstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// GetVerified streams the object at key into w while hashing it, and fails unless it is at most maxBytes (> 0)
// long and its SHA-256 is wantSHA256 (64 hex digits, either case). An object the server says is too long is refused
// before any of it is read (ErrTooLarge); one that turns out longer is cut off after maxBytes+1 bytes. A digest
// mismatch (ErrDigestMismatch) names the key and both digests. On any error w may hold part or all of the
// object, so callers write to a temporary file and use it only on success; GetVerifiedFile does that.
func (s *Store) GetVerified(ctx context.Context, key, wantSHA256 string, maxBytes int64, w io.Writer) error {
	want, err := parseSHA256(wantSHA256)
	if err != nil {
		return err
	}
	if maxBytes <= 0 {
		return fmt.Errorf("objstore: GetVerified of %q: maxBytes %d is not positive", key, maxBytes)
	}
	o, err := s.open(ctx, key)
	if err != nil {
		return err
	}
	defer func() { _ = o.Close() }()
	if o.size > maxBytes {
		return &Error{Op: opGet, Bucket: s.bucket, Key: o.key, Kind: ErrTooLarge,
			Detail: fmt.Sprintf("object too large: %d bytes, over the limit of %d", o.size, maxBytes)}
	}
	h := sha256.New()
	sink := &trackingWriter{w: w}
	n, err := io.Copy(io.MultiWriter(sink, h), io.LimitReader(o, maxBytes+1))
	if err != nil {
		if sink.err != nil {
			return &Error{Op: opGet, Bucket: s.bucket, Key: o.key, Detail: "writing the object out", Err: sink.err}
		}
		return err // the objectReader's *Error
	}
	if n > maxBytes {
		return &Error{Op: opGet, Bucket: s.bucket, Key: o.key, Kind: ErrTooLarge,
			Detail: fmt.Sprintf("object too large: over the limit of %d bytes", maxBytes)}
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return &Error{Op: opGet, Bucket: s.bucket, Key: o.key, Kind: ErrDigestMismatch,
			Detail: fmt.Sprintf("sha256 mismatch: want %s, got %s (%d bytes)", want, got, n)}
	}
	return nil
}

// GetVerifiedFile is GetVerified into the file path: it writes a temporary file next to it, syncs it, and renames
// it to path with mode perm only when the object verified; on error path is left as it was.
func (s *Store) GetVerifiedFile(ctx context.Context, key, wantSHA256 string, maxBytes int64, path string, perm fs.FileMode) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("objstore: download of %s: %w", s.URI(key), err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(tmp)
		}
	}()
	if err = s.GetVerified(ctx, key, wantSHA256, maxBytes, f); err != nil {
		return err
	}
	if err = f.Chmod(perm); err != nil {
		return fmt.Errorf("objstore: download of %s: %w", s.URI(key), err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("objstore: download of %s: %w", s.URI(key), err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("objstore: download of %s: %w", s.URI(key), err)
	}
	if err = os.Rename(tmp, path); err != nil {
		return fmt.Errorf("objstore: download of %s: %w", s.URI(key), err)
	}
	return nil
}

// parseSHA256 returns want as 64 lowercase hex digits.
func parseSHA256(want string) (string, error) {
	w := strings.ToLower(want)
	if len(w) != 2*sha256.Size {
		return "", fmt.Errorf("objstore: expected sha256 %q: want 64 hex digits", want)
	}
	if _, err := hex.DecodeString(w); err != nil {
		return "", fmt.Errorf("objstore: expected sha256 %q: want 64 hex digits", want)
	}
	return w, nil
}

// trackingWriter remembers the error of the writer it wraps, to tell a failed write from a failed read.
type trackingWriter struct {
	w   io.Writer
	err error
}

func (t *trackingWriter) Write(p []byte) (int, error) {
	n, err := t.w.Write(p)
	if err != nil {
		t.err = err
	}
	return n, err
}
