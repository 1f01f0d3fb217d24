package objstore

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// DefaultRegion is the signing region when Config.Region is empty. S3-compatible servers mostly accept any region.
const DefaultRegion = "us-east-1"

// Names of the files a mounted credentials Secret holds (its data keys), read by ConfigFromDir.
const (
	// AccessKeyIDFile holds the access key ID.
	AccessKeyIDFile = "accessKeyID"
	// SecretAccessKeyFile holds the secret access key.
	SecretAccessKeyFile = "secretAccessKey"
)

const (
	// maxPrefixBytes bounds Config.Prefix so that every key RunRef builds stays within S3's 1024-byte limit.
	maxPrefixBytes = 512
	// maxCredentialFileBytes bounds what ConfigFromDir reads from one credentials file.
	maxCredentialFileBytes = 4096
)

// Secret is a credential. It formats as "[redacted]" with every fmt verb and marshals (JSON, YAML, text) the same
// way, so that a Config can be logged or printed whole; Reveal gives the value.
type Secret string

const redacted = "[redacted]"

// String returns "[redacted]".
func (Secret) String() string { return redacted }

// GoString returns "[redacted]" quoted, for %#v.
func (Secret) GoString() string { return `"` + redacted + `"` }

// MarshalText returns "[redacted]"; encoding/json and sigs.k8s.io/yaml use it too.
func (Secret) MarshalText() ([]byte, error) { return []byte(redacted), nil }

// Reveal returns the secret's value, for signing requests.
func (s Secret) Reveal() string { return string(s) }

// Config says where the store is and which credentials sign its requests. Its zero value is not usable: Bucket is
// required, and Validate says what else is wrong.
type Config struct {
	// Endpoint is the S3 API's base URL: http or https, a host and optionally a port, no path, query or user
	// information, e.g. "https://s3.example.com" or "http://seaweedfs.storage.svc:8333". Empty: AWS S3 in Region.
	Endpoint string
	// Region is the region requests are signed for. Empty: DefaultRegion.
	Region string
	// Bucket is the bucket that holds the objects. It must exist; the store does not create it.
	Bucket string
	// Prefix is put before every key, with a "/" between: "" or slash-separated segments, none of them empty,
	// "." or "..", at most 512 bytes, without control characters or backslashes. Slashes at its ends are ignored.
	Prefix string
	// PathStyle puts the bucket in the URL's path (http://host/bucket/key) instead of its host name
	// (http://bucket.host/key). Most S3-compatible servers need it.
	PathStyle bool
	// AccessKeyID and SecretAccessKey are the static credentials that sign requests. Both or neither: with
	// neither, requests are sent unsigned (anonymous access to a public bucket).
	AccessKeyID string
	// SecretAccessKey pairs with AccessKeyID. It never appears in errors or formatted output.
	SecretAccessKey Secret
}

// Validate reports the first problem with c, or nil. Its errors name the offending field and never contain the
// secret access key.
func (c Config) Validate() error {
	if err := validateEndpoint(c.Endpoint); err != nil {
		return err
	}
	if c.Region != "" && !isToken(c.Region, 64) {
		return configErrorf("region %q: want letters, digits and hyphens, e.g. %q", c.Region, DefaultRegion)
	}
	if err := validateBucket(c.Bucket); err != nil {
		return err
	}
	if _, err := cleanPrefix(c.Prefix); err != nil {
		return err
	}
	switch {
	case c.AccessKeyID == "" && c.SecretAccessKey == "":
	case c.AccessKeyID == "":
		return configErrorf("the secret access key is set but the access key ID is empty")
	case c.SecretAccessKey == "":
		return configErrorf("the access key ID is set but the secret access key is empty")
	default:
		if !isCredential(c.AccessKeyID) {
			return configErrorf("the access key ID has a character outside printable ASCII, or whitespace")
		}
		if !isCredential(string(c.SecretAccessKey)) {
			return configErrorf("the secret access key has a character outside printable ASCII, or whitespace")
		}
	}
	return nil
}

// String describes c without its credentials (neither the secret nor the access key ID). Marshalled (JSON), a
// Config shows its access key ID, which names the identity, but not the secret.
func (c Config) String() string {
	ep := c.Endpoint
	if ep == "" {
		ep = "aws"
	} else if u, err := url.Parse(ep); err != nil {
		ep = "(not a URL)" // it may hold a password
	} else if u.User != nil {
		ep = u.Redacted()
	}
	creds := "anonymous"
	if c.AccessKeyID != "" || c.SecretAccessKey != "" {
		creds = "static " + redacted
	}
	return fmt.Sprintf("s3 endpoint=%s region=%s bucket=%s prefix=%q pathStyle=%t credentials=%s",
		ep, c.region(), c.Bucket, c.Prefix, c.PathStyle, creds)
}

// GoString is String, for %#v.
func (c Config) GoString() string { return c.String() }

func (c Config) region() string {
	if c.Region == "" {
		return DefaultRegion
	}
	return c.Region
}

// ConfigFromDir returns base with its credentials read from dir, a mounted Secret with the keys accessKeyID and
// secretAccessKey (AccessKeyIDFile, SecretAccessKeyFile), and validates the result. Whitespace at either end of a
// file (a trailing newline) is dropped. base holds the other settings (from the EvalRun's spec); credentials it
// already has are replaced. Errors name the directory and the file, never what the files hold.
func ConfigFromDir(dir string, base Config) (Config, error) {
	id, err := readCredentialFile(dir, AccessKeyIDFile)
	if err != nil {
		return Config{}, err
	}
	secret, err := readCredentialFile(dir, SecretAccessKeyFile)
	if err != nil {
		return Config{}, err
	}
	base.AccessKeyID = id
	base.SecretAccessKey = Secret(secret)
	if err := base.Validate(); err != nil {
		return Config{}, fmt.Errorf("credentials from %s: %w", dir, err)
	}
	return base, nil
}

func readCredentialFile(dir, name string) (string, error) {
	path := filepath.Join(dir, name)
	f, err := os.Open(path) // follows the Secret volume's ..data symbolic links
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", configErrorf("credentials directory %s has no file %s (the Secret needs the key %s)", dir, name, name)
		}
		return "", configErrorf("credentials file %s: %v", path, errors.Unwrap(err))
	}
	defer func() { _ = f.Close() }()
	// Reading is plain I/O on a small file: its errors carry the path, not the content.
	b, err := io.ReadAll(io.LimitReader(f, maxCredentialFileBytes+1))
	if err != nil {
		return "", configErrorf("credentials file %s: %v", path, errors.Unwrap(err))
	}
	if len(b) > maxCredentialFileBytes {
		return "", configErrorf("credentials file %s is over %d bytes", path, maxCredentialFileBytes)
	}
	v := strings.TrimSpace(string(b))
	if v == "" {
		return "", configErrorf("credentials file %s is empty", path)
	}
	return v, nil
}

func configErrorf(format string, args ...any) error {
	return fmt.Errorf("objstore: config: "+format, args...)
}

func validateEndpoint(endpoint string) error {
	if endpoint == "" {
		return nil
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		// url.Parse's error quotes the URL, which may hold user information.
		return configErrorf("endpoint is not a URL")
	}
	if u.User != nil {
		return configErrorf("endpoint %s carries user information: put credentials in the Secret", u.Redacted())
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return configErrorf("endpoint %q: want an http:// or https:// URL", endpoint)
	case u.Host == "" || u.Hostname() == "":
		return configErrorf("endpoint %q has no host", endpoint)
	case u.Path != "" && u.Path != "/", u.RawQuery != "", u.Fragment != "", u.Opaque != "":
		return configErrorf("endpoint %q: want scheme, host and port only (no path, query or fragment)", endpoint)
	}
	return nil
}

// validateBucket applies S3's bucket naming rules: 3 to 63 lowercase letters, digits, dots and hyphens, starting
// and ending with a letter or digit, no two dots in a row, not shaped like an IPv4 address.
func validateBucket(b string) error {
	if b == "" {
		return configErrorf("bucket is empty")
	}
	bad := len(b) < 3 || len(b) > 63 || !isLowerAlnum(b[0]) || !isLowerAlnum(b[len(b)-1]) || strings.Contains(b, "..")
	dots, digitsOnly := 0, true
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '.':
			dots++
		case isLowerAlnum(c) || c == '-':
			if c < '0' || c > '9' {
				digitsOnly = false
			}
		default:
			bad = true
		}
	}
	if bad || (dots == 3 && digitsOnly) {
		return configErrorf("bucket %q: want 3 to 63 lowercase letters, digits, dots and hyphens, starting and ending with a letter or digit", b)
	}
	return nil
}

func isLowerAlnum(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') }

// isToken: 1 to maxLen letters, digits and hyphens.
func isToken(s string, maxLen int) bool {
	if s == "" || len(s) > maxLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isLowerAlnum(c) && (c < 'A' || c > 'Z') && c != '-' {
			return false
		}
	}
	return true
}

// isCredential: printable ASCII without spaces.
func isCredential(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}
