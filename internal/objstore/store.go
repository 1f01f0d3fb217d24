package objstore

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// Defaults of the Options.
const (
	// DefaultMaxAttempts is how many times one request is tried before its error is returned.
	DefaultMaxAttempts = 8
	// DefaultBaseDelay is the backoff before the first retry; it doubles with each further one, with jitter.
	DefaultBaseDelay = 200 * time.Millisecond
	// DefaultMaxBackoff caps one backoff. With the defaults a request is given up after about 25 s at most.
	DefaultMaxBackoff = 10 * time.Second
	// DefaultPartSize is the size of an upload's parts, and what Put holds in memory at once. With S3's limit of
	// 10,000 parts, it bounds an object at about 78 GiB.
	DefaultPartSize = 8 << 20
	// MinPartSize is S3's smallest part size (except for the last part).
	MinPartSize = 5 << 20
)

const (
	maxParts = 10000
	// abortTimeout bounds the clean-up of a failed multipart upload, which runs even when the caller's context ended.
	abortTimeout = 30 * time.Second
)

// Option changes how Open sets up a Store.
type Option func(*options)

type options struct {
	maxAttempts int
	baseDelay   time.Duration
	maxBackoff  time.Duration
	partSize    int64
	httpClient  s3.HTTPClient
}

// WithRetry sets how many times a request is tried (at least 1) and its backoff: baseDelay before the first retry,
// doubling up to maxBackoff, each with full jitter. Zero values keep the defaults.
func WithRetry(maxAttempts int, baseDelay, maxBackoff time.Duration) Option {
	return func(o *options) {
		if maxAttempts > 0 {
			o.maxAttempts = maxAttempts
		}
		if baseDelay > 0 {
			o.baseDelay = baseDelay
		}
		if maxBackoff > 0 {
			o.maxBackoff = maxBackoff
		}
	}
}

// WithPartSize sets the part size of uploads (at least MinPartSize; smaller values are raised to it).
func WithPartSize(n int64) Option {
	return func(o *options) { o.partSize = max(n, MinPartSize) }
}

// WithHTTPClient sets the HTTP client (e.g. one that trusts a private CA). The default is the client library's:
// proxies from the environment, 30 s connect timeout, no overall timeout (the contexts bound requests).
func WithHTTPClient(c s3.HTTPClient) Option {
	return func(o *options) { o.httpClient = c }
}

// Store is one bucket (and key prefix) of an S3-compatible server. It is safe for concurrent use.
type Store struct {
	client   *s3.Client
	bucket   string
	prefix   string // "" or ends with "/"
	partSize int64
	// maxResumes bounds how often one Get's body is fetched again in a row without progress.
	maxResumes int
}

// Open returns a Store for cfg after validating it. It does no I/O: Check tells whether the server, the bucket and
// the credentials work.
func Open(cfg Config, opts ...Option) (*Store, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	o := options{maxAttempts: DefaultMaxAttempts, baseDelay: DefaultBaseDelay, maxBackoff: DefaultMaxBackoff, partSize: DefaultPartSize}
	for _, opt := range opts {
		opt(&o)
	}
	prefix, err := cleanPrefix(cfg.Prefix)
	if err != nil {
		return nil, err
	}
	so := s3.Options{
		Region:       cfg.region(),
		UsePathStyle: cfg.PathStyle,
		HTTPClient:   o.httpClient,
		Retryer: retry.NewStandard(func(r *retry.StandardOptions) {
			r.MaxAttempts = o.maxAttempts
			r.BaseDelay = o.baseDelay
			r.MaxBackoff = o.maxBackoff
			// No client-side retry quota: the attempts and the context bound the retries.
			r.RateLimiter = ratelimit.None
		}),
		// Checksums only where the API requires them: many S3-compatible servers reject the newer default
		// (trailing CRC32 on every upload). Uploads are still checked end to end: each carries its Content-MD5
		// (and over plain HTTP, SigV4 signs its SHA-256).
		RequestChecksumCalculation:  aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation:  aws.ResponseChecksumValidationWhenRequired,
		DisableS3ExpressSessionAuth: aws.Bool(true),
	}
	if cfg.Endpoint != "" {
		so.BaseEndpoint = aws.String(strings.TrimSuffix(cfg.Endpoint, "/"))
	}
	if cfg.AccessKeyID != "" {
		so.Credentials = credentials.NewStaticCredentialsProvider(cfg.AccessKeyID, cfg.SecretAccessKey.Reveal(), "")
	} else {
		so.Credentials = aws.AnonymousCredentials{}
	}
	return &Store{client: s3.New(so), bucket: cfg.Bucket, prefix: prefix, partSize: o.partSize, maxResumes: o.maxAttempts}, nil
}

// URI is key's location, "s3://<bucket>/<prefix>/<key>", for messages and status.
func (s *Store) URI(key string) string { return "s3://" + s.bucket + "/" + s.prefix + key }

// KeyOf is the key of an s3:// URI that URI gave for this store, and whether the URI is this store's.
func (s *Store) KeyOf(uri string) (string, bool) {
	key, ok := strings.CutPrefix(uri, "s3://"+s.bucket+"/"+s.prefix)
	return key, ok && key != ""
}

// ObjectInfo describes a stored object.
type ObjectInfo struct {
	// Key is relative to the store's prefix.
	Key string
	// Size is in bytes.
	Size int64
	// ETag is the server's entity tag, without quotes.
	ETag string
	// LastModified is when the object was written.
	LastModified time.Time
	// ContentType is the object's content type; Stat fills it, List does not.
	ContentType string
}

// Check lists at most one key under the store's prefix: it tells whether the endpoint answers, the bucket exists
// and the credentials may list it, with an error that says which of these failed.
func (s *Store) Check(ctx context.Context) error {
	_, err := s.client.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(s.bucket), Prefix: aws.String(s.prefix), MaxKeys: aws.Int32(1)})
	if err != nil {
		return s.storeError(opCheck, s.prefix, err)
	}
	return nil
}

// Put stores what r yields under key, replacing any object there. It holds at most one part (DefaultPartSize, see
// WithPartSize) in memory: content that fits in one part is sent in one request, larger content as a multipart
// upload, which is aborted if anything fails. Each request carries its body's MD5, which the server checks, and is
// retried on its own; r is read once. The object appears only when Put succeeds.
func (s *Store) Put(ctx context.Context, key string, r io.Reader, contentType string) error {
	full, err := s.fullKey(opPut, key)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	eof, err := s.readPart(&buf, r)
	if err != nil {
		return &Error{Op: opPut, Bucket: s.bucket, Key: full, Detail: "reading the content", Err: err}
	}
	if eof {
		in := &s3.PutObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(full), Body: bytes.NewReader(buf.Bytes()),
			ContentLength: aws.Int64(int64(buf.Len())), ContentMD5: contentMD5(buf.Bytes())}
		if contentType != "" {
			in.ContentType = aws.String(contentType)
		}
		if _, err := s.client.PutObject(ctx, in); err != nil {
			return s.storeError(opPut, full, err)
		}
		return nil
	}
	return s.putMultipart(ctx, full, r, contentType, &buf)
}

// contentMD5 is the Content-MD5 header of body, which the server checks the upload against.
func contentMD5(body []byte) *string {
	sum := md5.Sum(body)
	return aws.String(base64.StdEncoding.EncodeToString(sum[:]))
}

// readPart reads up to one part from r into buf (reset first); eof says r has nothing more.
func (s *Store) readPart(buf *bytes.Buffer, r io.Reader) (eof bool, err error) {
	buf.Reset()
	_, err = io.CopyN(buf, r, s.partSize)
	if errors.Is(err, io.EOF) {
		return true, nil
	}
	return false, err
}

// putMultipart uploads part (the first, full part, already read) and the rest of r as a multipart upload.
func (s *Store) putMultipart(ctx context.Context, full string, r io.Reader, contentType string, part *bytes.Buffer) error {
	in := &s3.CreateMultipartUploadInput{Bucket: aws.String(s.bucket), Key: aws.String(full)}
	if contentType != "" {
		in.ContentType = aws.String(contentType)
	}
	created, err := s.client.CreateMultipartUpload(ctx, in)
	if err != nil {
		return s.storeError(opPut, full, err)
	}
	uploadID := created.UploadId
	abort := func(err error) error {
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abortTimeout)
		defer cancel()
		_, _ = s.client.AbortMultipartUpload(actx, &s3.AbortMultipartUploadInput{Bucket: aws.String(s.bucket), Key: aws.String(full), UploadId: uploadID})
		return err
	}
	var parts []types.CompletedPart
	for n := int32(1); ; n++ {
		if n > maxParts {
			return abort(&Error{Op: opPut, Bucket: s.bucket, Key: full, Kind: ErrTooLarge,
				Detail: fmt.Sprintf("the content is over %d parts of %d bytes (raise the part size)", maxParts, s.partSize)})
		}
		out, err := s.client.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(s.bucket), Key: aws.String(full), UploadId: uploadID,
			PartNumber: aws.Int32(n), Body: bytes.NewReader(part.Bytes()), ContentLength: aws.Int64(int64(part.Len())),
			ContentMD5: contentMD5(part.Bytes())})
		if err != nil {
			return abort(s.storeError(opPut, full, err))
		}
		parts = append(parts, types.CompletedPart{ETag: out.ETag, PartNumber: aws.Int32(n)})
		// A short last part goes out in the next round, which then reads nothing.
		if _, err := s.readPart(part, r); err != nil {
			return abort(&Error{Op: opPut, Bucket: s.bucket, Key: full, Detail: "reading the content", Err: err})
		}
		if part.Len() == 0 {
			break
		}
	}
	_, err = s.client.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(s.bucket), Key: aws.String(full),
		UploadId: uploadID, MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}})
	if err != nil {
		return abort(s.storeError(opPut, full, err))
	}
	return nil
}

// Get opens the object at key for reading. The caller closes it. Should the connection fail while the body is
// read, the rest is fetched again from where it stopped (a ranged request that holds only while the object's ETag
// is unchanged), so a long download survives a transient failure; reads end with an *Error when that does not
// work out or ctx ends. A missing object is ErrNotFound.
func (s *Store) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	return s.open(ctx, key)
}

func (s *Store) open(ctx context.Context, key string) (*objectReader, error) {
	full, err := s.fullKey(opGet, key)
	if err != nil {
		return nil, err
	}
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(full)})
	if err != nil {
		return nil, s.storeError(opGet, full, err)
	}
	size := int64(-1)
	if out.ContentLength != nil {
		size = *out.ContentLength
	}
	return &objectReader{s: s, ctx: ctx, key: full, body: out.Body, etag: aws.ToString(out.ETag), size: size}, nil
}

// objectReader reads an object's body, fetching the rest again after a failure mid-way.
type objectReader struct {
	s    *Store
	ctx  context.Context
	key  string // full key
	body io.ReadCloser
	etag string
	size int64 // -1: unknown
	off  int64
	// failures counts the body's failed reads since the last progress.
	failures int
	closed   bool
}

func (o *objectReader) Read(p []byte) (int, error) {
	if o.closed {
		return 0, &Error{Op: opGet, Bucket: o.s.bucket, Key: o.key, Detail: "read after Close"}
	}
	for {
		if o.body == nil {
			if err := o.resume(); err != nil {
				return 0, err
			}
		}
		n, err := o.body.Read(p)
		o.off += int64(n)
		if n > 0 {
			o.failures = 0
		}
		if err == nil {
			return n, nil
		}
		if errors.Is(err, io.EOF) {
			if o.size < 0 || o.off >= o.size {
				return n, io.EOF
			}
			err = io.ErrUnexpectedEOF
		}
		_ = o.body.Close()
		o.body = nil
		if cerr := o.ctx.Err(); cerr != nil {
			return n, &Error{Op: opGet, Bucket: o.s.bucket, Key: o.key, Detail: "reading the object", Err: cerr}
		}
		o.failures++
		if o.etag == "" || o.size < 0 || o.failures > o.s.maxResumes {
			return n, &Error{Op: opGet, Bucket: o.s.bucket, Key: o.key, Detail: fmt.Sprintf("reading the object at byte %d", o.off), Err: err}
		}
		if n > 0 {
			return n, nil // the next Read resumes
		}
	}
}

// resume fetches the object again from o.off, provided it is still the same object (its ETag).
func (o *objectReader) resume() error {
	out, err := o.s.client.GetObject(o.ctx, &s3.GetObjectInput{Bucket: aws.String(o.s.bucket), Key: aws.String(o.key),
		Range: aws.String(fmt.Sprintf("bytes=%d-", o.off)), IfMatch: aws.String(o.etag)})
	if err != nil {
		e := o.s.storeError(opGet, o.key, err)
		if e.StatusCode == 412 {
			e.Detail = fmt.Sprintf("the object changed while it was read (at byte %d)", o.off)
		} else if e.Detail == "" {
			e.Detail = fmt.Sprintf("resuming at byte %d", o.off)
		} else {
			e.Detail = fmt.Sprintf("resuming at byte %d: %s", o.off, e.Detail)
		}
		return e
	}
	o.body = out.Body
	return nil
}

func (o *objectReader) Close() error {
	o.closed = true
	if o.body == nil {
		return nil
	}
	err := o.body.Close()
	o.body = nil
	return err
}

// Stat returns what the server says of the object at key; ErrNotFound when there is none.
func (s *Store) Stat(ctx context.Context, key string) (ObjectInfo, error) {
	full, err := s.fullKey(opHead, key)
	if err != nil {
		return ObjectInfo{}, err
	}
	out, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(full)})
	if err != nil {
		return ObjectInfo{}, s.storeError(opHead, full, err)
	}
	return ObjectInfo{Key: key, Size: aws.ToInt64(out.ContentLength), ETag: strings.Trim(aws.ToString(out.ETag), `"`),
		LastModified: aws.ToTime(out.LastModified), ContentType: aws.ToString(out.ContentType)}, nil
}

// Exists reports whether there is an object at key. (On AWS, without the s3:ListBucket permission a missing object
// is ErrAccessDenied, not false.)
func (s *Store) Exists(ctx context.Context, key string) (bool, error) {
	_, err := s.Stat(ctx, key)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// List returns the objects whose keys start with prefix ("" or a key, which may end with "/"), in key order,
// keys relative to the store's prefix. It pages through the server's listing.
func (s *Store) List(ctx context.Context, prefix string) ([]ObjectInfo, error) {
	if err := checkListPrefix(prefix); err != nil {
		return nil, err
	}
	var objs []ObjectInfo
	p := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{Bucket: aws.String(s.bucket), Prefix: aws.String(s.prefix + prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, s.storeError(opList, s.prefix+prefix, err)
		}
		for _, o := range page.Contents {
			objs = append(objs, ObjectInfo{Key: strings.TrimPrefix(aws.ToString(o.Key), s.prefix), Size: aws.ToInt64(o.Size),
				ETag: strings.Trim(aws.ToString(o.ETag), `"`), LastModified: aws.ToTime(o.LastModified)})
		}
	}
	return objs, nil
}

// Delete removes the object at key. A missing object is no error.
func (s *Store) Delete(ctx context.Context, key string) error {
	full, err := s.fullKey(opDelete, key)
	if err != nil {
		return err
	}
	if _, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(full)}); err != nil {
		if e := s.storeError(opDelete, full, err); !errors.Is(e, ErrNotFound) {
			return e
		}
	}
	return nil
}

// DeletePrefix removes every object whose key starts with prefix (not empty: e.g. a RunRef's Prefix) and returns
// how many it removed, also on error.
func (s *Store) DeletePrefix(ctx context.Context, prefix string) (int, error) {
	if prefix == "" {
		return 0, fmt.Errorf("objstore: DeletePrefix needs a prefix")
	}
	objs, err := s.List(ctx, prefix)
	if err != nil {
		return 0, err
	}
	for i, o := range objs {
		if err := s.Delete(ctx, o.Key); err != nil {
			return i, err
		}
	}
	return len(objs), nil
}

// fullKey checks key and puts the store's prefix before it.
func (s *Store) fullKey(op, key string) (string, error) {
	if err := checkKey(key); err != nil {
		return "", &Error{Op: op, Bucket: s.bucket, Key: s.prefix, Detail: "bad key", Err: err}
	}
	full := s.prefix + key
	if len(full) > maxKeyBytes {
		return "", &Error{Op: op, Bucket: s.bucket, Key: s.prefix, Detail: fmt.Sprintf("key is %d bytes with the prefix, over %d", len(full), maxKeyBytes)}
	}
	return full, nil
}
