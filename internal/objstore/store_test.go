package objstore_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/evalrun-operator/evalrun-operator/internal/objstore"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil/s3server"
)

// testBucket is created on the shared server.
const testBucket = "evalrun-test"

// shared is one weed server for the tests that do not stop theirs; TestMain stops it.
var shared struct {
	once sync.Once
	srv  *s3server.Server
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.srv != nil {
		shared.srv.Stop()
	}
	os.Exit(code)
}

func sharedServer(t *testing.T) *s3server.Server {
	t.Helper()
	s3server.Require(t)
	shared.once.Do(func() {
		shared.srv, shared.err = s3server.Launch(context.Background(), s3server.Options{Buckets: []string{testBucket}})
		if shared.err == nil {
			t.Logf("weed server ready in %v at %s", shared.srv.Started.Round(time.Millisecond), shared.srv.Endpoint)
		}
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.srv
}

// fastRetry keeps failing tests short: 3 attempts, 20 ms then 40 ms backoff (with jitter).
var fastRetry = objstore.WithRetry(3, 20*time.Millisecond, 200*time.Millisecond)

// openStore opens a store on srv under a prefix of its own for t.
func openStore(t *testing.T, srv *s3server.Server, opts ...objstore.Option) *objstore.Store {
	t.Helper()
	st, err := objstore.Open(config(srv, t), append([]objstore.Option{objstore.WithPartSize(objstore.MinPartSize)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
	return st
}

func config(srv *s3server.Server, t *testing.T) objstore.Config {
	return objstore.Config{
		Endpoint: srv.Endpoint, Region: s3server.Region, Bucket: testBucket, PathStyle: true,
		Prefix:      "tests/" + strings.ReplaceAll(t.Name(), "/", "-") + fmt.Sprintf("-%d", rand.Uint32()),
		AccessKeyID: srv.AccessKeyID, SecretAccessKey: objstore.Secret(srv.SecretAccessKey),
	}
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(uint64(n), 42))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func sha(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func ctxT(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// onlyReader hides every method but Read (no Seek, no WriterTo), as a pipe would.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

func TestPutGetRoundTrip(t *testing.T) {
	st := openStore(t, sharedServer(t))
	ctx := ctxT(t, 2*time.Minute)
	for _, tc := range []struct {
		name string
		size int
	}{
		{"empty", 0},
		{"small", 1234},
		{"one-part", objstore.MinPartSize},        // exactly one full part: a multipart upload of one part
		{"multipart", 2*objstore.MinPartSize + 7}, // three parts, the last one short
		{"multi-MiB", 13 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := randomBytes(tc.size)
			key := "objects/" + tc.name + ".bin"
			if err := st.Put(ctx, key, onlyReader{bytes.NewReader(data)}, objstore.ContentTypeGzip); err != nil {
				t.Fatal(err)
			}
			rc, err := st.Get(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(rc)
			if err != nil {
				t.Fatal(err)
			}
			if err := rc.Close(); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, data) {
				t.Fatalf("got %d bytes (sha256 %s), want %d (%s)", len(got), sha(got), len(data), sha(data))
			}
			info, err := st.Stat(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			if info.Key != key || info.Size != int64(tc.size) || info.ContentType != objstore.ContentTypeGzip || info.ETag == "" {
				t.Errorf("Stat = %+v, want key %s, size %d, content type %s and an ETag", info, key, tc.size, objstore.ContentTypeGzip)
			}
		})
	}
	t.Run("overwrite", func(t *testing.T) {
		for _, v := range []string{"first", "second"} {
			if err := st.Put(ctx, "objects/overwritten", strings.NewReader(v), objstore.ContentTypeJSON); err != nil {
				t.Fatal(err)
			}
		}
		var buf bytes.Buffer
		if err := st.GetVerified(ctx, "objects/overwritten", sha([]byte("second")), 100, &buf); err != nil || buf.String() != "second" {
			t.Fatalf("GetVerified = %q, %v; want the second version", buf.String(), err)
		}
	})
}

func TestPutSourceError(t *testing.T) {
	st := openStore(t, sharedServer(t))
	ctx := ctxT(t, time.Minute)
	boom := errors.New("boom")
	for _, n := range []int64{10, objstore.MinPartSize + 10} { // single request, and a multipart upload that is aborted
		err := st.Put(ctx, "broken", io.MultiReader(bytes.NewReader(randomBytes(int(n))), iotestErrReader{boom}), "")
		if !errors.Is(err, boom) {
			t.Fatalf("Put of a source failing after %d bytes = %v, want it to wrap the source's error", n, err)
		}
		if ok, err := st.Exists(ctx, "broken"); err != nil || ok {
			t.Fatalf("after the failed Put, Exists = %v, %v; want false", ok, err)
		}
	}
}

type iotestErrReader struct{ err error }

func (r iotestErrReader) Read([]byte) (int, error) { return 0, r.err }

func TestGetVerified(t *testing.T) {
	st := openStore(t, sharedServer(t))
	ctx := ctxT(t, time.Minute)
	data := randomBytes(3<<20 + 5)
	const key = "evalfiles/eval.yaml"
	if err := st.Put(ctx, key, bytes.NewReader(data), "application/yaml"); err != nil {
		t.Fatal(err)
	}
	t.Run("good", func(t *testing.T) {
		var buf bytes.Buffer
		if err := st.GetVerified(ctx, key, strings.ToUpper(sha(data)), int64(len(data)), &buf); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), data) {
			t.Fatal("content differs")
		}
	})
	t.Run("wrong digest", func(t *testing.T) {
		wrong := sha([]byte("something else"))
		err := st.GetVerified(ctx, key, wrong, 1<<30, io.Discard)
		if !errors.Is(err, objstore.ErrDigestMismatch) {
			t.Fatalf("err = %v, want ErrDigestMismatch", err)
		}
		for _, want := range []string{st.URI(key), wrong, sha(data)} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not name %s", err, want)
			}
		}
	})
	t.Run("too large", func(t *testing.T) {
		var buf bytes.Buffer
		err := st.GetVerified(ctx, key, sha(data), int64(len(data))-1, &buf)
		if !errors.Is(err, objstore.ErrTooLarge) || !strings.Contains(err.Error(), st.URI(key)) {
			t.Fatalf("err = %v, want ErrTooLarge naming the key", err)
		}
		if buf.Len() != 0 {
			t.Errorf("%d bytes were written out before the size was refused", buf.Len())
		}
	})
	t.Run("bad arguments", func(t *testing.T) {
		if err := st.GetVerified(ctx, key, "abc", 10, io.Discard); err == nil || !strings.Contains(err.Error(), "64 hex digits") {
			t.Errorf("short digest: err = %v", err)
		}
		if err := st.GetVerified(ctx, key, strings.Repeat("g", 64), 10, io.Discard); err == nil {
			t.Error("non-hex digest accepted")
		}
		if err := st.GetVerified(ctx, key, sha(data), 0, io.Discard); err == nil {
			t.Error("maxBytes 0 accepted")
		}
	})
	t.Run("writer fails", func(t *testing.T) {
		boom := errors.New("disk full")
		err := st.GetVerified(ctx, key, sha(data), 1<<30, failingWriter{boom})
		if !errors.Is(err, boom) || !strings.Contains(err.Error(), "writing the object out") {
			t.Fatalf("err = %v, want the writer's error", err)
		}
	})
	t.Run("file", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "eval.yaml")
		if err := st.GetVerifiedFile(ctx, key, sha([]byte("nope")), 1<<30, path, 0o644); !errors.Is(err, objstore.ErrDigestMismatch) {
			t.Fatalf("err = %v, want ErrDigestMismatch", err)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Fatalf("a failed download left %v", ents)
		}
		if err := st.GetVerifiedFile(ctx, key, sha(data), 1<<30, path, 0o640); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("downloaded file: %d bytes, %v", len(got), err)
		}
		if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
			t.Errorf("mode %v, want 0640", fi.Mode().Perm())
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 1 {
			t.Errorf("directory holds %v, want the file only", ents)
		}
	})
}

type failingWriter struct{ err error }

func (w failingWriter) Write([]byte) (int, error) { return 0, w.err }

func TestNotFound(t *testing.T) {
	srv := sharedServer(t)
	st := openStore(t, srv)
	ctx := ctxT(t, time.Minute)
	if _, err := st.Get(ctx, "missing"); !errors.Is(err, objstore.ErrNotFound) || !strings.Contains(err.Error(), st.URI("missing")) {
		t.Errorf("Get: err = %v, want ErrNotFound naming the key", err)
	}
	if err := st.GetVerified(ctx, "missing", sha(nil), 10, io.Discard); !errors.Is(err, objstore.ErrNotFound) {
		t.Errorf("GetVerified: err = %v, want ErrNotFound", err)
	}
	if _, err := st.Stat(ctx, "missing"); !errors.Is(err, objstore.ErrNotFound) {
		t.Errorf("Stat: err = %v, want ErrNotFound", err)
	}
	if ok, err := st.Exists(ctx, "missing"); ok || err != nil {
		t.Errorf("Exists = %v, %v; want false, nil", ok, err)
	}
	if err := st.Delete(ctx, "missing"); err != nil {
		t.Errorf("Delete of a missing object: %v", err)
	}

	cfg := config(srv, t)
	cfg.Bucket = "no-such-bucket"
	nb, err := objstore.Open(cfg, fastRetry)
	if err != nil {
		t.Fatal(err)
	}
	if err := nb.Check(ctx); !errors.Is(err, objstore.ErrBucketNotFound) || errors.Is(err, objstore.ErrNotFound) {
		t.Errorf("Check on a missing bucket: err = %v, want ErrBucketNotFound only", err)
	}
	if err := nb.Put(ctx, "k", strings.NewReader("x"), ""); !errors.Is(err, objstore.ErrBucketNotFound) {
		t.Errorf("Put into a missing bucket: err = %v, want ErrBucketNotFound", err)
	}
}

func TestListAndDelete(t *testing.T) {
	st := openStore(t, sharedServer(t))
	ctx := ctxT(t, time.Minute)
	run := objstore.RunRef{Namespace: "team-a", Name: "nightly.v2", UID: "6b8f0c1e-3f0a-4d5e-9c1b-2a7e5d4c3b21"}
	other := objstore.RunRef{Namespace: "team-a", Name: "nightly.v2", UID: "00000000-0000-0000-0000-000000000001"}
	var want []string
	for i := range 3 {
		for _, r := range []objstore.RunRef{run, other} {
			res, err := r.ShardResultsKey(i)
			if err != nil {
				t.Fatal(err)
			}
			sum, err := r.ShardSummaryKey(i)
			if err != nil {
				t.Fatal(err)
			}
			if err := st.Put(ctx, res, bytes.NewReader(randomBytes(100+i)), objstore.ContentTypeGzip); err != nil {
				t.Fatal(err)
			}
			if err := st.Put(ctx, sum, strings.NewReader(`{"shard":`+fmt.Sprint(i)+`}`), objstore.ContentTypeJSON); err != nil {
				t.Fatal(err)
			}
			if r == run {
				want = append(want, res, sum)
			}
		}
	}
	prefix, err := run.Prefix()
	if err != nil {
		t.Fatal(err)
	}
	got, err := st.List(ctx, prefix)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, o := range got {
		keys = append(keys, o.Key)
		if o.Size <= 0 || o.ETag == "" || o.LastModified.IsZero() {
			t.Errorf("listed %+v: want a size, an ETag and a time", o)
		}
	}
	if strings.Join(keys, "\n") != strings.Join(want, "\n") {
		t.Fatalf("List(%q) =\n%s\nwant\n%s", prefix, strings.Join(keys, "\n"), strings.Join(want, "\n"))
	}
	if all, err := st.List(ctx, ""); err != nil || len(all) != 12 {
		t.Fatalf("List of the whole store: %d objects, %v; want 12", len(all), err)
	}

	if err := st.Delete(ctx, want[0]); err != nil {
		t.Fatal(err)
	}
	if ok, err := st.Exists(ctx, want[0]); ok || err != nil {
		t.Fatalf("after Delete, Exists = %v, %v", ok, err)
	}
	n, err := st.DeletePrefix(ctx, prefix)
	if err != nil || n != len(want)-1 {
		t.Fatalf("DeletePrefix = %d, %v; want %d", n, err, len(want)-1)
	}
	if left, err := st.List(ctx, prefix); err != nil || len(left) != 0 {
		t.Fatalf("after DeletePrefix, List = %v, %v", left, err)
	}
	if left, err := st.List(ctx, ""); err != nil || len(left) != 6 {
		t.Fatalf("the other run's objects: %d, %v; want 6 untouched", len(left), err)
	}
	if _, err := st.DeletePrefix(ctx, ""); err == nil {
		t.Error("DeletePrefix with an empty prefix did not refuse")
	}
	if _, err := st.List(ctx, "a//b"); err == nil {
		t.Error("List accepted a prefix with a double slash")
	}
}

func TestWrongCredentials(t *testing.T) {
	srv := sharedServer(t)
	ctx := ctxT(t, time.Minute)
	for _, tc := range []struct {
		name, id, secret, code string
	}{
		{"wrong secret", srv.AccessKeyID, "not-the-secret-0123456789", "SignatureDoesNotMatch"},
		{"unknown key ID", "AKIDUNKNOWN", "not-the-secret-0123456789", "InvalidAccessKeyId"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config(srv, t)
			cfg.AccessKeyID, cfg.SecretAccessKey = tc.id, objstore.Secret(tc.secret)
			st, err := objstore.Open(cfg, fastRetry)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			errs := map[string]error{"check": st.Check(ctx), "put": st.Put(ctx, "k", strings.NewReader("x"), "")}
			_, errs["get"] = st.Get(ctx, "k")
			for op, err := range errs {
				if !errors.Is(err, objstore.ErrAccessDenied) {
					t.Errorf("%s: err = %v, want ErrAccessDenied", op, err)
					continue
				}
				msg := err.Error()
				if !strings.Contains(msg, tc.code) || !strings.Contains(msg, "credentials Secret") {
					t.Errorf("%s: error %q does not say %s and point at the credentials", op, msg, tc.code)
				}
				if strings.Contains(msg, tc.secret) {
					t.Errorf("%s: error %q holds the secret", op, msg)
				}
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("refused credentials took %v: they must not be retried", d)
			}
		})
	}
}

func TestConcurrentPuts(t *testing.T) {
	st := openStore(t, sharedServer(t))
	ctx := ctxT(t, 3*time.Minute)
	const n = 8
	objs := make([][]byte, n)
	for i := range objs {
		objs[i] = randomBytes(objstore.MinPartSize + (i+1)*100_000) // two parts each
	}
	var g errgroup.Group
	for i := range objs {
		g.Go(func() error {
			return st.Put(ctx, fmt.Sprintf("concurrent/%d", i), onlyReader{bytes.NewReader(objs[i])}, "")
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	for i := range objs {
		g.Go(func() error {
			return st.GetVerified(ctx, fmt.Sprintf("concurrent/%d", i), sha(objs[i]), int64(len(objs[i])), io.Discard)
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	if got, err := st.List(ctx, "concurrent/"); err != nil || len(got) != n {
		t.Fatalf("List = %d objects, %v; want %d", len(got), err, n)
	}
}

// TestServerStopped kills the server while an object is being read and then tries each operation: every one must
// fail within its context with an error, not hang. A paused server (SIGSTOP: connections open, no answers) must
// not hold an operation past its context either.
func TestServerStopped(t *testing.T) {
	s3server.Require(t)
	srv := s3server.Start(t, s3server.Options{Buckets: []string{testBucket}})
	t.Logf("weed server ready in %v", srv.Started.Round(time.Millisecond))
	st := openStore(t, srv, fastRetry)
	ctx := ctxT(t, time.Minute)
	data := randomBytes(24 << 20)
	if err := st.Put(ctx, "big", bytes.NewReader(data), ""); err != nil {
		t.Fatal(err)
	}

	t.Run("paused", func(t *testing.T) {
		if err := srv.Pause(); err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := srv.Resume(); err != nil {
				t.Fatal(err)
			}
		}()
		for name, op := range map[string]func(context.Context) error{
			"put": func(ctx context.Context) error { return st.Put(ctx, "k", strings.NewReader("x"), "") },
			"get": func(ctx context.Context) error { _, err := st.Get(ctx, "big"); return err },
		} {
			opCtx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
			start := time.Now()
			err := op(opCtx)
			cancel()
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("%s on a paused server returned after %v", name, d)
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("%s on a paused server: err = %v, want context.DeadlineExceeded", name, err)
			}
		}
	})

	rc, err := st.Get(ctx, "big")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rc.Close() }()
	if _, err := io.ReadFull(rc, make([]byte, 1<<20)); err != nil {
		t.Fatal(err)
	}
	srv.Kill()
	start := time.Now()
	_, err = io.Copy(io.Discard, rc)
	var se *objstore.Error
	if !errors.As(err, &se) || se.Op != "get" {
		t.Fatalf("reading on after the server died: err = %v, want an *objstore.Error of get", err)
	}
	t.Logf("read after kill: %v (after %v)", err, time.Since(start).Round(time.Millisecond))
	for name, op := range map[string]func() error{
		"put":   func() error { return st.Put(ctx, "k", strings.NewReader("x"), "") },
		"get":   func() error { _, err := st.Get(ctx, "big"); return err },
		"list":  func() error { _, err := st.List(ctx, ""); return err },
		"check": func() error { return st.Check(ctx) },
	} {
		start := time.Now()
		err := op()
		if err == nil || !strings.Contains(err.Error(), "connection refused") {
			t.Errorf("%s after the server died: err = %v, want connection refused", name, err)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("%s after the server died took %v", name, d)
		}
	}
	// The default retries (about 25 s in all) stop when the context ends.
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	st2 := openStore2(t, srv)
	start = time.Now()
	err = st2.Put(short, "k", strings.NewReader("x"), "")
	if d := time.Since(start); !errors.Is(err, context.DeadlineExceeded) || d > 2*time.Second {
		t.Errorf("Put with the default retries and a 300 ms context: %v after %v, want context.DeadlineExceeded at once", err, d)
	}
}

// openStore2 opens a store with the default (long) retries without checking the server.
func openStore2(t *testing.T, srv *s3server.Server) *objstore.Store {
	st, err := objstore.Open(config(srv, t))
	if err != nil {
		t.Fatal(err)
	}
	return st
}
