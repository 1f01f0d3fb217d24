// Package objstore keeps an EvalRun's results and large eval files in an S3-compatible bucket.
//
// A Store is opened from a Config (endpoint, region, bucket, key prefix, path-style addressing and static
// credentials, the latter read by ConfigFromDir from a mounted Secret). It talks to the server with
// aws-sdk-go-v2's S3 client directly and signs every request with SigV4; nothing else is read from the
// environment (no shared config files, no instance metadata).
//
// Keys passed to a Store are relative to Config.Prefix. RunRef builds the deterministic keys of one EvalRun:
//
//	<prefix>/<namespace>/<name>/<uid>/shards/<index>/results.jsonl.gz
//	<prefix>/<namespace>/<name>/<uid>/shards/<index>/summary.json
//
// Every operation retries transient failures (HTTP 5xx, throttling, refused or reset connections) with
// exponential backoff and jitter, and stops when its context ends. Failures are *Error values that name the
// operation and the s3:// location; errors.Is tells ErrNotFound, ErrBucketNotFound, ErrAccessDenied,
// ErrTooLarge and ErrDigestMismatch apart. The secret access key appears in no error, log line or formatted
// Config.
package objstore
