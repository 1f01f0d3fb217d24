package objstore

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/aws/smithy-go"
)

// Operations, as Error.Op names them.
const (
	opPut    = "put"
	opGet    = "get"
	opHead   = "head"
	opList   = "list"
	opDelete = "delete"
	opCheck  = "check"
)

// Kinds of failure, matched with errors.Is against the errors a Store returns.
var (
	// ErrNotFound: the object does not exist.
	ErrNotFound = errors.New("not found")
	// ErrBucketNotFound: the bucket does not exist.
	ErrBucketNotFound = errors.New("bucket not found")
	// ErrAccessDenied: the server refused the credentials (unknown access key ID, wrong secret access key) or
	// they lack a permission.
	ErrAccessDenied = errors.New("access denied")
	// ErrTooLarge: the object is larger than the caller allows.
	ErrTooLarge = errors.New("object too large")
	// ErrDigestMismatch: the object's SHA-256 is not the expected one.
	ErrDigestMismatch = errors.New("sha256 mismatch")
)

// Error is a failed Store operation. Its message names the operation and the object's s3:// location and, for an
// answer from the server, its error code and HTTP status; it never holds credentials.
type Error struct {
	// Op is the operation: "put", "get", "head", "list", "delete" or "check".
	Op string
	// Bucket and Key locate the object (Key includes the store prefix; for "list" and "check" it is a prefix).
	Bucket, Key string
	// Code is the server's error code, e.g. "NoSuchKey" or "SignatureDoesNotMatch"; empty without one.
	Code string
	// StatusCode is the HTTP status of the server's answer; 0 when there was none (e.g. connection refused).
	StatusCode int
	// Kind is one of ErrNotFound, ErrBucketNotFound, ErrAccessDenied, ErrTooLarge, ErrDigestMismatch, or nil.
	Kind error
	// Detail says what went wrong, in words.
	Detail string
	// Err is the underlying error (the client library's, a context's, or a reader's or writer's), or nil.
	Err error
}

// Error implements error.
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "objstore: %s s3://%s/%s: ", e.Op, e.Bucket, e.Key)
	switch {
	case e.Detail != "":
		b.WriteString(e.Detail)
	case e.Kind != nil:
		b.WriteString(e.Kind.Error())
	}
	if e.Code != "" || e.StatusCode != 0 {
		b.WriteString(" (")
		if e.Code != "" {
			b.WriteString(e.Code)
			if e.StatusCode != 0 {
				b.WriteString(", ")
			}
		}
		if e.StatusCode != 0 {
			fmt.Fprintf(&b, "HTTP %d", e.StatusCode)
		}
		b.WriteString(")")
	}
	// A server's answer is said in full above; anything else (a network error, a context's end) is appended.
	if e.Err != nil && e.Code == "" && e.StatusCode == 0 {
		if e.Detail != "" || e.Kind != nil {
			b.WriteString(": ")
		}
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the underlying error, so that errors.Is finds context.Canceled and the like.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is e's kind (ErrNotFound and the others).
func (e *Error) Is(target error) bool { return e.Kind != nil && target == e.Kind }

// storeError turns the client library's error for op on key into an *Error.
func (s *Store) storeError(op, key string, err error) *Error {
	e := &Error{Op: op, Bucket: s.bucket, Key: key, Err: err}
	var status interface{ HTTPStatusCode() int }
	if errors.As(err, &status) {
		e.StatusCode = status.HTTPStatusCode()
	}
	var api smithy.APIError
	msg := ""
	if errors.As(err, &api) {
		e.Code = api.ErrorCode()
		msg = api.ErrorMessage()
	}
	switch {
	case e.Code == "NoSuchKey" || (e.StatusCode == http.StatusNotFound && (e.Code == "" || e.Code == "NotFound")):
		e.Kind = ErrNotFound
	case e.Code == "NoSuchBucket":
		e.Kind, e.Detail = ErrBucketNotFound, "the bucket does not exist"
	case e.Code == "InvalidAccessKeyId":
		e.Kind, e.Detail = ErrAccessDenied, "access denied: the server does not know the access key ID (check the credentials Secret)"
	case e.Code == "SignatureDoesNotMatch":
		e.Kind, e.Detail = ErrAccessDenied,
			"access denied: the request signature does not match (check the secret access key in the credentials Secret, and the region)"
	case e.StatusCode == http.StatusForbidden:
		e.Kind, e.Detail = ErrAccessDenied, "access denied: wrong credentials, or they lack the permission for this operation"
	case e.Code != "" || e.StatusCode != 0:
		e.Detail = "the server refused the request"
	}
	if msg != "" && e.Kind != ErrNotFound {
		if e.Detail == "" {
			e.Detail = msg
		} else {
			e.Detail += ": " + msg
		}
	}
	return e
}
