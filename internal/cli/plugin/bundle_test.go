package plugin

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/evalrun-operator/evalrun-operator/internal/bundle"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil/s3server"
)

const bundleEvalYAML = `evalcases:
  - id: a
    expected_outcome: x
    input_messages:
      - role: user
        content:
          - {type: file, value: ./data/in.txt}
    execution:
      evaluators:
        - {name: j, type: llm_judge, prompt: ../prompts/judge.md}
`

// bundleDir writes a bundle directory (and a .git directory that is left out) and returns it and its files.
func bundleDir(t *testing.T, extra map[string]string) (string, map[string]string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "Math Suite")
	files := map[string]string{"suites/eval.yaml": bundleEvalYAML, "suites/data/in.txt": "input\n", "prompts/judge.md": "Judge it\n", "bin.dat": "\xff\xfe"}
	for p, c := range extra {
		files[p] = c
	}
	files[".git/HEAD"] = "ref" // left out of the bundle
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	delete(files, ".git/HEAD")
	return dir, files
}

// filesOf decodes a bundle ConfigMap back into files by path.
func filesOf(t *testing.T, cm *corev1.ConfigMap) map[string]string {
	t.Helper()
	out := map[string]string{}
	for k, v := range cm.Data {
		p, err := bundle.PathOf(k)
		if err != nil {
			t.Fatal(err)
		}
		out[p] = v
	}
	for k, v := range cm.BinaryData {
		p, err := bundle.PathOf(k)
		if err != nil {
			t.Fatal(err)
		}
		out[p] = string(v)
	}
	return out
}

// TestBundleConfigMap: `kubectl evalrun bundle DIR` prints a ConfigMap whose keys decode to the directory's files
// (binary ones in binaryData), the digest on standard error; --apply creates it and replaces it later.
func TestBundleConfigMap(t *testing.T) {
	dir, files := bundleDir(t, nil)
	ns := newNamespace(t)
	out, errOut, err := kubectlEvalrun(t, ns, "bundle", dir, "--eval-file", "suites/eval.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cm corev1.ConfigMap
	if err := yaml.Unmarshal([]byte(out), &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Name != "math-suite" || cm.Kind != "ConfigMap" {
		t.Errorf("printed %s %q, want the ConfigMap math-suite", cm.Kind, cm.Name)
	}
	if diff := cmp.Diff(files, filesOf(t, &cm)); diff != "" {
		t.Errorf("the ConfigMap's files (-want +got):\n%s", diff)
	}
	scanned, err := bundle.Scan(dir)
	if err != nil {
		t.Fatal(err)
	}
	digest := bundle.Digest(scanned)
	if !strings.Contains(errOut, "4 files") || !strings.Contains(errOut, digest) || cm.Annotations["evals.evalrun.io/bundle-sha256"] != digest {
		t.Errorf("standard error %q, annotations %v: want the digest %s", errOut, cm.Annotations, digest)
	}

	c, _ := apiServer(t)
	for _, change := range []string{"", "Judge it strictly\n"} {
		if change != "" {
			if err := os.WriteFile(filepath.Join(dir, "prompts", "judge.md"), []byte(change), 0o644); err != nil {
				t.Fatal(err)
			}
			files["prompts/judge.md"] = change
		}
		if _, _, err := kubectlEvalrun(t, ns, "bundle", dir, "--eval-file", "suites/eval.yaml", "--name", "math", "--apply"); err != nil {
			t.Fatal(err)
		}
		var got corev1.ConfigMap
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "math"}, &got); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(files, filesOf(t, &got)); diff != "" {
			t.Errorf("the applied ConfigMap's files (-want +got):\n%s", diff)
		}
	}
}

// TestBundleRefusals: a bundle over a ConfigMap's 1 MiB points to the bucket; an input file the directory lacks
// and an eval file that is not there are refused before anything is written.
func TestBundleRefusals(t *testing.T) {
	ns := newNamespace(t)
	big, _ := bundleDir(t, map[string]string{"data/big.txt": strings.Repeat("x", 1<<20)})
	missing, _ := bundleDir(t, map[string]string{"suites/eval.yaml": strings.Replace(bundleEvalYAML, "./data/in.txt", "./data/gone.txt", 1)})
	plain, _ := bundleDir(t, nil)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{big, "--eval-file", "suites/eval.yaml"}, "upload it to a bucket with --s3-endpoint"},
		{[]string{missing, "--eval-file", "suites/eval.yaml"}, `case a: input file: file "./data/gone.txt" is not in the eval bundle`},
		{[]string{plain}, `the eval file "eval.yaml" is not a file of the eval bundle`},
		{[]string{plain, "--eval-file", "suites/eval.yaml", "--apply"}, "--apply needs the ConfigMap's --name"},
	} {
		out, _, err := kubectlEvalrun(t, ns, append([]string{"bundle"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) || out != "" {
			t.Errorf("bundle %v = %v (printed %d bytes), want %q", tc.args[1:], err, len(out), tc.want)
		}
	}
}

// TestBundleUpload: with --s3-endpoint every file goes to <prefix>/<path> of the bucket (a real S3 server), with
// the credentials Secret read from the cluster, and the EvalRun's spec.evalFile is printed with the digest.
func TestBundleUpload(t *testing.T) {
	srv := s3server.Start(t, s3server.Options{Buckets: []string{"evals"}})
	ns := newNamespace(t)
	c, _ := apiServer(t)
	if err := c.Create(t.Context(), srv.CredentialsSecret(ns, "s3-creds")); err != nil {
		t.Fatal(err)
	}
	dir, files := bundleDir(t, nil)
	out, _, err := kubectlEvalrun(t, ns, "bundle", dir, "--eval-file", "suites/eval.yaml", "--s3-endpoint", srv.Endpoint,
		"--s3-bucket", "evals", "--s3-prefix", "bundles/math", "--s3-credentials-secret", "s3-creds")
	if err != nil {
		t.Fatal(err)
	}
	scanned, err := bundle.Scan(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"evalFile: suites/eval.yaml", "prefix: bundles/math", "sha256: " + bundle.Digest(scanned), "credentialsSecret: s3-creds"} {
		if !strings.Contains(out, want) {
			t.Errorf("printed spec lacks %q:\n%s", want, out)
		}
	}
	store := srv.Store(t, "evals", "bundles/math")
	got := map[string]string{}
	for p := range files {
		rc, err := store.Get(t.Context(), p)
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(rc)
		_ = rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		got[p] = string(data)
	}
	if diff := cmp.Diff(files, got); diff != "" {
		t.Errorf("uploaded objects (-want +got):\n%s", diff)
	}
}
