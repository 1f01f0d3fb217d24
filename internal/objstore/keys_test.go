package objstore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/evalrun-operator/evalrun-operator/internal/objstore"
)

func TestRunRefKeys(t *testing.T) {
	r := objstore.RunRef{Namespace: "default", Name: "nightly", UID: "6b8f0c1e-3f0a-4d5e-9c1b-2a7e5d4c3b21"}
	for _, tc := range []struct {
		f    func(int) (string, error)
		i    int
		want string
	}{
		{r.ShardResultsKey, 0, "default/nightly/6b8f0c1e-3f0a-4d5e-9c1b-2a7e5d4c3b21/shards/0/results.jsonl.gz"},
		{r.ShardSummaryKey, 12, "default/nightly/6b8f0c1e-3f0a-4d5e-9c1b-2a7e5d4c3b21/shards/12/summary.json"},
		{r.ShardPrefix, 3, "default/nightly/6b8f0c1e-3f0a-4d5e-9c1b-2a7e5d4c3b21/shards/3/"},
	} {
		got, err := tc.f(tc.i)
		if err != nil || got != tc.want {
			t.Errorf("got %q, %v; want %q", got, err, tc.want)
		}
	}
	if p, err := r.Prefix(); err != nil || p != "default/nightly/6b8f0c1e-3f0a-4d5e-9c1b-2a7e5d4c3b21/" {
		t.Errorf("Prefix = %q, %v", p, err)
	}
	if _, err := r.ShardResultsKey(-1); err == nil {
		t.Error("negative shard index accepted")
	}
	for _, bad := range []objstore.RunRef{
		{Namespace: "", Name: "n", UID: "u"},
		{Namespace: "Default", Name: "n", UID: "u"},
		{Namespace: "a/b", Name: "n", UID: "u"},
		{Namespace: strings.Repeat("a", 64), Name: "n", UID: "u"},
		{Namespace: "ns", Name: "", UID: "u"},
		{Namespace: "ns", Name: "..", UID: "u"},
		{Namespace: "ns", Name: "a..b", UID: "u"},
		{Namespace: "ns", Name: ".a", UID: "u"},
		{Namespace: "ns", Name: "a/b", UID: "u"},
		{Namespace: "ns", Name: strings.Repeat("a", 254), UID: "u"},
		{Namespace: "ns", Name: "n", UID: ""},
		{Namespace: "ns", Name: "n", UID: "../x"},
		{Namespace: "ns", Name: "n", UID: "a/b"},
	} {
		if _, err := bad.ShardResultsKey(0); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// TestLongestKeysFit: the longest valid names and UID under the longest prefix still make keys S3 accepts, with
// no double slash; the store refuses keys it cannot send.
func TestLongestKeysFit(t *testing.T) {
	label := strings.Repeat("a", 63)
	name := strings.TrimSuffix(strings.Repeat(label+".", 4), ".")[:253]
	name = strings.TrimRight(name, ".")
	r := objstore.RunRef{Namespace: label, Name: name, UID: strings.Repeat("f", 128)}
	key, err := r.ShardResultsKey(1<<62 - 1)
	if err != nil {
		t.Fatal(err)
	}
	cfg := validConfig()
	cfg.Prefix = "/" + strings.Repeat("p", 511) + "/"
	st, err := objstore.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	uri := st.URI(key)
	full := strings.TrimPrefix(uri, "s3://"+cfg.Bucket+"/")
	if len(full) > 1024 || strings.Contains(full, "//") || strings.HasPrefix(full, "/") {
		t.Fatalf("full key %q (%d bytes) is not a valid S3 key", full, len(full))
	}
	// Keys that are not safe are refused before any request is made (the endpoint is never contacted here).
	ctx := context.Background()
	for _, bad := range []string{"", "/a", "a/", "a//b", "a/../b", "./a", "a\\b", "a\x00b", strings.Repeat("k", 1024)} {
		if err := st.Put(ctx, bad, strings.NewReader("x"), ""); err == nil || !strings.Contains(err.Error(), "objstore: put") {
			t.Errorf("Put(%q) = %v, want a refusal", bad, err)
		}
		if _, err := st.Get(ctx, bad); err == nil {
			t.Errorf("Get(%q) accepted", bad)
		}
	}
}
