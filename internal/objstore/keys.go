package objstore

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Content types of the objects an EvalRun stores.
const (
	// ContentTypeGzip is the content type of a shard's results (gzip'd JSONL). The object is stored as it is,
	// without a Content-Encoding, so that no HTTP client decompresses it on the way.
	ContentTypeGzip = "application/gzip"
	// ContentTypeJSON is the content type of a shard's summary document.
	ContentTypeJSON = "application/json"
)

// Names of a shard's objects under its RunRef.ShardPrefix.
const (
	// ResultsObject is the shard's results, gzip'd JSONL.
	ResultsObject = "results.jsonl.gz"
	// SummaryObject is the shard's summary document (JSON).
	SummaryObject = "summary.json"
	// RecordsObject is the shard's kept records (gzip'd JSONL, internal/records).
	RecordsObject = "records.jsonl.gz"
)

// maxKeyBytes is S3's limit on a key's length (UTF-8 bytes), store prefix included.
const maxKeyBytes = 1024

// RunRef names one EvalRun: its namespace, name and UID. Its keys are relative to the store's prefix and never
// start with a slash or hold an empty segment, whatever valid Kubernetes names they are built from; the UID keeps a
// run apart from an earlier run of the same name.
type RunRef struct {
	// Namespace is the EvalRun's namespace (a DNS-1123 label).
	Namespace string
	// Name is the EvalRun's name (a DNS-1123 subdomain).
	Name string
	// UID is the EvalRun's metadata.uid.
	UID string
}

// Validate reports whether r's parts are a valid namespace, name and UID; only then are its keys built.
func (r RunRef) Validate() error {
	switch {
	case !isDNSLabel(r.Namespace):
		return fmt.Errorf("objstore: run namespace %q is not a DNS-1123 label", r.Namespace)
	case !isDNSSubdomain(r.Name):
		return fmt.Errorf("objstore: run name %q is not a DNS-1123 subdomain", r.Name)
	case !isUID(r.UID):
		return fmt.Errorf("objstore: run UID %q: want 1 to 128 letters, digits and hyphens", r.UID)
	}
	return nil
}

// Prefix is the key prefix of everything the run stores, "<namespace>/<name>/<uid>/", for List and DeletePrefix.
func (r RunRef) Prefix() (string, error) {
	if err := r.Validate(); err != nil {
		return "", err
	}
	return r.Namespace + "/" + r.Name + "/" + r.UID + "/", nil
}

// ShardPrefix is the key prefix of shard index's objects, "<namespace>/<name>/<uid>/shards/<index>/".
func (r RunRef) ShardPrefix(index int) (string, error) {
	p, err := r.Prefix()
	if err != nil {
		return "", err
	}
	if index < 0 {
		return "", fmt.Errorf("objstore: shard index %d is negative", index)
	}
	return p + "shards/" + strconv.Itoa(index) + "/", nil
}

// ShardResultsKey is the key of shard index's results, "<namespace>/<name>/<uid>/shards/<index>/results.jsonl.gz".
func (r RunRef) ShardResultsKey(index int) (string, error) {
	p, err := r.ShardPrefix(index)
	if err != nil {
		return "", err
	}
	return p + ResultsObject, nil
}

// ShardRecordsKey is the key of shard index's kept records,
// "<namespace>/<name>/<uid>/shards/<index>/records.jsonl.gz".
func (r RunRef) ShardRecordsKey(index int) (string, error) {
	p, err := r.ShardPrefix(index)
	if err != nil {
		return "", err
	}
	return p + RecordsObject, nil
}

// ShardSummaryKey is the key of shard index's summary, "<namespace>/<name>/<uid>/shards/<index>/summary.json".
func (r RunRef) ShardSummaryKey(index int) (string, error) {
	p, err := r.ShardPrefix(index)
	if err != nil {
		return "", err
	}
	return p + SummaryObject, nil
}

// CarriedResultsKey is the key of the results a resumed run carries from the earlier run,
// "<namespace>/<name>/<uid>/carried/results.jsonl.gz": the manager copies them there, so the run stands alone
// when the earlier run and its objects are deleted.
func (r RunRef) CarriedResultsKey() (string, error) {
	p, err := r.Prefix()
	if err != nil {
		return "", err
	}
	return p + "carried/" + ResultsObject, nil
}

// cleanPrefix returns the store prefix as it is put before keys: "" or the segments joined by "/" with a trailing
// "/". Slashes at the ends of p are dropped; anything else that checkSegments refuses is an error.
func cleanPrefix(p string) (string, error) {
	p = strings.Trim(p, "/")
	if p == "" {
		return "", nil
	}
	if len(p) > maxPrefixBytes {
		return "", configErrorf("prefix is %d bytes, over %d", len(p), maxPrefixBytes)
	}
	if err := checkSegments(p); err != nil {
		return "", configErrorf("prefix %q %s", p, err)
	}
	return p + "/", nil
}

// checkKey checks a key relative to the store prefix: not empty, no slash at either end, no empty, "." or ".."
// segment, valid UTF-8 without control characters or backslashes.
func checkKey(key string) error {
	if key == "" {
		return fmt.Errorf("objstore: empty key")
	}
	if strings.HasPrefix(key, "/") || strings.HasSuffix(key, "/") {
		return fmt.Errorf("objstore: key %q starts or ends with a slash", key)
	}
	if err := checkSegments(key); err != nil {
		return fmt.Errorf("objstore: key %q %s", key, err)
	}
	return nil
}

// checkListPrefix checks a List or DeletePrefix prefix: "" or a key that may end with a slash.
func checkListPrefix(prefix string) error {
	if prefix == "" {
		return nil
	}
	if err := checkKey(strings.TrimSuffix(prefix, "/")); err != nil {
		return fmt.Errorf("objstore: list prefix %q: %w", prefix, err)
	}
	return nil
}

// checkSegments returns a description of what makes the slash-separated p unusable in a key, or nil.
func checkSegments(p string) error {
	if !utf8.ValidString(p) {
		return fmt.Errorf("is not valid UTF-8")
	}
	for _, c := range p {
		if c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0) || c == '\\' {
			return fmt.Errorf("has a control character or a backslash")
		}
	}
	for _, seg := range strings.Split(p, "/") {
		switch seg {
		case "":
			return fmt.Errorf("has an empty segment (a double slash)")
		case ".", "..":
			return fmt.Errorf("has a %q segment", seg)
		}
	}
	return nil
}

func isDNSLabel(s string) bool {
	if s == "" || len(s) > 63 || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isLowerAlnum(s[i]) && s[i] != '-' {
			return false
		}
	}
	return true
}

func isDNSSubdomain(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if !isDNSLabel(label) {
			return false
		}
	}
	return true
}

func isUID(s string) bool { return isToken(s, 128) }
