package objstore_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalrun-operator/evalrun-operator/internal/objstore"
)

const testSecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"

func validConfig() objstore.Config {
	return objstore.Config{Endpoint: "http://127.0.0.1:8333", Bucket: "evalrun-results", Prefix: "evals", PathStyle: true,
		AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: testSecret}
}

func TestConfigValidate(t *testing.T) {
	if err := validConfig().Validate(); err != nil {
		t.Fatalf("valid config: %v", err)
	}
	ok := []func(*objstore.Config){
		func(c *objstore.Config) { c.Endpoint = "" },
		func(c *objstore.Config) { c.Endpoint = "https://s3.example.com/" },
		func(c *objstore.Config) { c.Region = "eu-west-3" },
		func(c *objstore.Config) { c.Prefix = "" },
		func(c *objstore.Config) { c.Prefix = "/a/b.c/d-e/" },
		func(c *objstore.Config) { c.Bucket = "a.b-c" },
		func(c *objstore.Config) { c.AccessKeyID, c.SecretAccessKey = "", "" },
	}
	for i, mut := range ok {
		c := validConfig()
		mut(&c)
		if err := c.Validate(); err != nil {
			t.Errorf("ok case %d (%v): %v", i, c, err)
		}
	}
	for _, tc := range []struct {
		mut  func(*objstore.Config)
		want string
	}{
		{func(c *objstore.Config) { c.Endpoint = "ftp://x" }, "http:// or https://"},
		{func(c *objstore.Config) { c.Endpoint = "127.0.0.1:8333" }, "endpoint"},
		{func(c *objstore.Config) { c.Endpoint = "http://" }, "no host"},
		{func(c *objstore.Config) { c.Endpoint = "http://h/path" }, "no path"},
		{func(c *objstore.Config) { c.Endpoint = "http://h?x=1" }, "no path"},
		{func(c *objstore.Config) { c.Endpoint = "http://user:" + testSecret + "@h" }, "endpoint is not a URL"},
		{func(c *objstore.Config) { c.Endpoint = "http://user:" + strings.ReplaceAll(testSecret, "/", "") + "@h" }, "user information"},
		{func(c *objstore.Config) { c.Region = "us east" }, "region"},
		{func(c *objstore.Config) { c.Bucket = "" }, "bucket is empty"},
		{func(c *objstore.Config) { c.Bucket = "ab" }, "bucket"},
		{func(c *objstore.Config) { c.Bucket = "Upper" }, "bucket"},
		{func(c *objstore.Config) { c.Bucket = "a..b" }, "bucket"},
		{func(c *objstore.Config) { c.Bucket = "-ab" }, "bucket"},
		{func(c *objstore.Config) { c.Bucket = "192.168.1.1" }, "bucket"},
		{func(c *objstore.Config) { c.Bucket = strings.Repeat("a", 64) }, "bucket"},
		{func(c *objstore.Config) { c.Prefix = "a//b" }, "empty segment"},
		{func(c *objstore.Config) { c.Prefix = "a/../b" }, `".."`},
		{func(c *objstore.Config) { c.Prefix = "a/./b" }, `"."`},
		{func(c *objstore.Config) { c.Prefix = "a\\b" }, "backslash"},
		{func(c *objstore.Config) { c.Prefix = "a\nb" }, "control"},
		{func(c *objstore.Config) { c.Prefix = "a\xffb" }, "UTF-8"},
		{func(c *objstore.Config) { c.Prefix = strings.Repeat("p", 513) }, "over 512"},
		{func(c *objstore.Config) { c.AccessKeyID = "" }, "access key ID is empty"},
		{func(c *objstore.Config) { c.SecretAccessKey = "" }, "secret access key is empty"},
		{func(c *objstore.Config) { c.SecretAccessKey = objstore.Secret("has space" + testSecret) }, "secret access key has"},
		{func(c *objstore.Config) { c.AccessKeyID = "tab\there" }, "access key ID has"},
	} {
		c := validConfig()
		tc.mut(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: Validate = %v, want an error about %q", c, err, tc.want)
			continue
		}
		if strings.Contains(err.Error(), testSecret) || strings.Contains(err.Error(), strings.ReplaceAll(testSecret, "/", "")) {
			t.Errorf("error %q holds the secret", err)
		}
		if s := c.String(); strings.Contains(s, strings.ReplaceAll(testSecret, "/", "")) || strings.Contains(s, testSecret) {
			t.Errorf("String() = %q holds the secret", s)
		}
		if _, err := objstore.Open(c); err == nil {
			t.Errorf("%v: Open accepted it", c)
		}
	}
}

func TestSecretNeverPrinted(t *testing.T) {
	c := validConfig()
	js, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{
		fmt.Sprint(c), fmt.Sprintf("%v|%+v|%#v|%s|%q", c, c, c, c, c),
		fmt.Sprintf("%v|%+v|%#v|%s|%q|%x", c.SecretAccessKey, c.SecretAccessKey, c.SecretAccessKey, c.SecretAccessKey,
			c.SecretAccessKey, c.SecretAccessKey),
		fmt.Sprintf("%+v", struct{ C objstore.Config }{c}), fmt.Sprintf("%#v", &c),
	} {
		if strings.Contains(out, testSecret) || strings.Contains(out, fmt.Sprintf("%x", testSecret)) || strings.Contains(out, c.AccessKeyID) {
			t.Errorf("credentials printed: %s", out)
		}
	}
	// Marshalled, the access key ID (which names the identity) shows; the secret does not.
	if strings.Contains(string(js), testSecret) || !strings.Contains(string(js), `"SecretAccessKey":"[redacted]"`) {
		t.Errorf("JSON: %s", js)
	}
	if c.SecretAccessKey.Reveal() != testSecret {
		t.Error("Reveal does not return the secret")
	}
}

func TestConfigFromDir(t *testing.T) {
	write := func(t *testing.T, files map[string]string) string {
		dir := t.TempDir()
		for name, v := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(v), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	base := validConfig()
	base.AccessKeyID, base.SecretAccessKey = "", ""

	t.Run("mounted Secret", func(t *testing.T) {
		// A Secret volume: the keys are symbolic links into a timestamped directory through ..data.
		dir := t.TempDir()
		data := filepath.Join(dir, "..2026_11_26_10_00_00.000000001")
		if err := os.Mkdir(data, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, v := range map[string]string{objstore.AccessKeyIDFile: "AKIDEXAMPLE\n", objstore.SecretAccessKeyFile: " " + testSecret + "\r\n"} {
			if err := os.WriteFile(filepath.Join(data, name), []byte(v), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Symlink(filepath.Base(data), filepath.Join(dir, "..data")); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{objstore.AccessKeyIDFile, objstore.SecretAccessKeyFile} {
			if err := os.Symlink(filepath.Join("..data", name), filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
		}
		c, err := objstore.ConfigFromDir(dir, base)
		if err != nil {
			t.Fatal(err)
		}
		if c.AccessKeyID != "AKIDEXAMPLE" || c.SecretAccessKey.Reveal() != testSecret || c.Bucket != base.Bucket || c.Endpoint != base.Endpoint {
			t.Errorf("got %#v with id %q", c, c.AccessKeyID)
		}
	})
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"no secret key", map[string]string{objstore.AccessKeyIDFile: "AKID"}, "has no file secretAccessKey"},
		{"no key ID", map[string]string{objstore.SecretAccessKeyFile: testSecret}, "has no file accessKeyID"},
		{"empty", map[string]string{objstore.AccessKeyIDFile: "AKID", objstore.SecretAccessKeyFile: "\n"}, "is empty"},
		{"too large", map[string]string{objstore.AccessKeyIDFile: "AKID", objstore.SecretAccessKeyFile: strings.Repeat(testSecret, 200)}, "over 4096 bytes"},
		{"inner space", map[string]string{objstore.AccessKeyIDFile: "AKID", objstore.SecretAccessKeyFile: testSecret + " " + testSecret}, "secret access key has"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := objstore.ConfigFromDir(write(t, tc.files), base)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			if strings.Contains(err.Error(), testSecret) {
				t.Errorf("error %q holds the secret", err)
			}
		})
	}
	t.Run("bad base", func(t *testing.T) {
		b := base
		b.Bucket = ""
		_, err := objstore.ConfigFromDir(write(t, map[string]string{objstore.AccessKeyIDFile: "AKID", objstore.SecretAccessKeyFile: testSecret}), b)
		if err == nil || !strings.Contains(err.Error(), "bucket is empty") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("missing dir", func(t *testing.T) {
		_, err := objstore.ConfigFromDir(filepath.Join(t.TempDir(), "nope"), base)
		if err == nil {
			t.Fatal("no error")
		}
	})
}

func TestErrorMessage(t *testing.T) {
	e := &objstore.Error{Op: "get", Bucket: "b", Key: "p/k", Kind: objstore.ErrNotFound, Code: "NoSuchKey", StatusCode: 404}
	if got, want := e.Error(), "objstore: get s3://b/p/k: not found (NoSuchKey, HTTP 404)"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(e, objstore.ErrNotFound) || errors.Is(e, objstore.ErrAccessDenied) {
		t.Error("errors.Is does not follow the kind")
	}
	cause := errors.New("dial tcp 127.0.0.1:1: connect: connection refused")
	e = &objstore.Error{Op: "put", Bucket: "b", Key: "k", Err: cause}
	if got, want := e.Error(), "objstore: put s3://b/k: "+cause.Error(); got != want || !errors.Is(e, cause) {
		t.Errorf("Error() = %q, want %q and to wrap the cause", got, want)
	}
}
