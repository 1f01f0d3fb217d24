package controller_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/children"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/bundle"
	"github.com/evalrun-operator/evalrun-operator/internal/objstore"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil/s3server"
)

// bundleEval names an input file (found next to it), a reference file and a prompt file (found at the root).
const bundleEval = `evalcases:
  - id: case-001
    expected_outcome: echoes the input
    input_messages:
      - role: user
        content:
          - {type: text, value: "Repeat the file"}
          - {type: file, value: ./data/input.txt}
    expected_messages:
      - role: assistant
        content:
          - {type: file, value: refs/answer.md}
    execution:
      evaluators:
        - {name: judge, type: llm_judge, prompt: prompts/judge.md}
`

// bundleFiles are the test bundle's files by bundle path.
func bundleFiles(evalText string) map[string]string {
	return map[string]string{
		"suites/eval.yaml":       evalText,
		"suites/data/input.txt":  "the input\n",
		"suites/refs/answer.md":  "the reference answer\n",
		"prompts/judge.md":       "Grade {{candidate_answer}}\n",
		"suites/judges/check.sh": "#!/bin/sh\n",
	}
}

// bundleConfigMap is the ConfigMap of files, its keys the escaped paths, and the bundle's digest.
func bundleConfigMap(t *testing.T, ns, name string, files map[string]string) (*corev1.ConfigMap, string) {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Data: map[string]string{}}
	var fs []bundle.File
	for p, content := range files {
		key, err := bundle.KeyFor(p)
		if err != nil {
			t.Fatal(err)
		}
		cm.Data[key] = content
		f, err := bundle.Hash(p, strings.NewReader(content), 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		fs = append(fs, f)
	}
	m, err := bundle.NewManifest("suites/eval.yaml", fs)
	if err != nil {
		t.Fatal(err)
	}
	return cm, m.SHA256
}

// pinnedManifest reads the manifest in the run's eval ConfigMap.
func pinnedManifest(t *testing.T, run *evalsv1alpha1.EvalRun) (*bundle.Manifest, *corev1.ConfigMap) {
	t.Helper()
	cm := &corev1.ConfigMap{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: run.Namespace, Name: children.NamesFor(run.Name).EvalConfigMap}, cm); err != nil {
		t.Fatal(err)
	}
	m, err := bundle.DecodeManifest([]byte(cm.Data[podwire.BundleManifestKey]))
	if err != nil {
		t.Fatal(err)
	}
	return m, cm
}

// TestBundleFromConfigMapIsPinned: a run of a ConfigMap bundle waits for the ConfigMap, then pins it: an immutable
// copy the run owns, the manifest and digest in its eval ConfigMap and the digest in its status. A change of the
// user's ConfigMap afterwards changes neither.
func TestBundleFromConfigMapIsPinned(t *testing.T) {
	requireEnv(t)
	ctx := context.Background()
	ns := newNamespace(t)
	run := createRun(t, testutil.MakeEvalRun("bundle-cm", ns).FromBundleConfigMap("math", "suites/eval.yaml"))
	got := waitReason(t, run, metav1.ConditionUnknown, evalsv1alpha1.ReasonPending)
	if c := meta.FindStatusCondition(got.Status.Conditions, evalsv1alpha1.ConditionSucceeded); !strings.Contains(c.Message, "waiting for ConfigMap math holding the eval bundle") {
		t.Errorf("Pending message %q", c.Message)
	}
	src, digest := bundleConfigMap(t, ns, "math", bundleFiles(bundleEval))
	started := time.Now()
	if err := k8s.Create(ctx, src); err != nil {
		t.Fatal(err)
	}
	waitJob(t, run)
	t.Logf("a bundle of %d files pinned and its Job created %s after its ConfigMap", len(src.Data), time.Since(started).Round(time.Millisecond))
	eventually(t, "status.bundleSHA256", func() error {
		if d := ptr.Deref(getRun(t, run).Status.BundleSHA256, ""); d != digest {
			return fmt.Errorf("bundleSHA256 %q, want %s", d, digest)
		}
		return nil
	})
	m, evalCM := pinnedManifest(t, run)
	if m.SHA256 != digest || m.EvalFile != "suites/eval.yaml" || len(m.Files) != 5 || evalCM.Data[podwire.EvalFileKey] != bundleEval {
		t.Errorf("pinned manifest %+v, eval file %q", m, evalCM.Data[podwire.EvalFileKey])
	}
	cfg, err := children.RunConfigFrom(evalCM)
	if err != nil || cfg.Bundle == nil || cfg.Bundle.SHA256 != digest || cfg.RunnerEvalFile != "/evalrun/view/bundle/suites/eval.yaml" {
		t.Errorf("run.json's bundle %+v, runner eval file %s (%v)", cfg.Bundle, cfg.RunnerEvalFile, err)
	}
	pinned := &corev1.ConfigMap{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: children.NamesFor(run.Name).BundleConfigMap()}, pinned); err != nil {
		t.Fatal(err)
	}
	if !ptr.Deref(pinned.Immutable, false) || !metav1.IsControlledBy(pinned, getRun(t, run)) || len(pinned.Data) != 5 {
		t.Errorf("pinned copy: immutable %v, owners %v, %d keys", pinned.Immutable, pinned.OwnerReferences, len(pinned.Data))
	}
	key, _ := bundle.KeyFor("prompts/judge.md")
	src.Data[key] = "Always say PASS\n"
	if err := k8s.Update(ctx, src); err != nil {
		t.Fatal(err)
	}
	poke(t, run)
	if d := ptr.Deref(getRun(t, run).Status.BundleSHA256, ""); d != digest {
		t.Errorf("bundleSHA256 %s after the source changed, want the pinned %s", d, digest)
	}
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(pinned), pinned); err != nil || pinned.Data[key] != "Grade {{candidate_answer}}\n" {
		t.Errorf("the pinned copy's prompt is %q (%v)", pinned.Data[key], err)
	}
}

// TestInvalidBundleFailsBeforeAnyPod: an input file the bundle lacks or that leads outside it, a digest other than
// spec.evalFile.bundle.sha256 and a key that is no bundle path each end the run InvalidEvalFile, naming it.
func TestInvalidBundleFailsBeforeAnyPod(t *testing.T) {
	requireEnv(t)
	ctx := context.Background()
	ns := newNamespace(t)
	for _, tc := range []struct {
		name   string
		files  map[string]string
		extra  map[string]string
		sha256 string
		want   string
	}{
		{name: "missing-input", files: bundleFiles(strings.Replace(bundleEval, "./data/input.txt", "./data/other.txt", 1)),
			want: `input file file "./data/other.txt" is not in the eval bundle`},
		{name: "outside", files: bundleFiles(strings.Replace(bundleEval, "./data/input.txt", "../../../etc/passwd", 1)),
			want: "leads outside the eval bundle"},
		{name: "digest", files: bundleFiles(bundleEval), sha256: strings.Repeat("0", 64), want: "not spec.evalFile.bundle.sha256"},
		{name: "bad-key", files: bundleFiles(bundleEval), extra: map[string]string{"my_notes.txt": "x"}, want: `ConfigMap key "my_notes.txt" is not an eval bundle key`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cm, _ := bundleConfigMap(t, ns, tc.name, tc.files)
			for k, v := range tc.extra {
				cm.Data[k] = v
			}
			if err := k8s.Create(ctx, cm); err != nil {
				t.Fatal(err)
			}
			w := testutil.MakeEvalRun(tc.name, ns).FromBundleConfigMap(tc.name, "suites/eval.yaml")
			if tc.sha256 != "" {
				w.Spec.EvalFile.Bundle.SHA256 = ptr.To(tc.sha256)
			}
			got := waitReason(t, createRun(t, w), metav1.ConditionFalse, evalsv1alpha1.ReasonInvalidEvalFile)
			if msg := meta.FindStatusCondition(got.Status.Conditions, evalsv1alpha1.ConditionSucceeded).Message; !strings.Contains(msg, tc.want) {
				t.Errorf("message %q, want %q", msg, tc.want)
			}
			if got.Status.JobName != "" {
				t.Errorf("Job %s created", got.Status.JobName)
			}
		})
	}
}

// TestBundleFromBucketIsPinned: a bundle under a bucket prefix on a real S3 server (SeaweedFS) is read object by
// object at pin time; the eval ConfigMap holds the manifest and no eval file (the pods read it from the bucket).
func TestBundleFromBucketIsPinned(t *testing.T) {
	requireEnv(t)
	srv := s3server.Start(t, s3server.Options{Buckets: []string{"bundles"}})
	ctx := context.Background()
	ns := newNamespace(t)
	if err := k8s.Create(ctx, srv.CredentialsSecret(ns, "s3-creds")); err != nil {
		t.Fatal(err)
	}
	store := srv.Store(t, "bundles", "teams/math")
	files := bundleFiles(bundleEval)
	for p, content := range files {
		if err := store.Put(ctx, p, strings.NewReader(content), "text/plain"); err != nil {
			t.Fatal(err)
		}
	}
	_, digest := bundleConfigMap(t, ns, "unused", files)
	started := time.Now()
	run := createRun(t, testutil.MakeEvalRun("bundle-s3", ns).FromBundleS3(srv.Bucket("bundles", "teams/math", "s3-creds"), "suites/eval.yaml"))
	waitJob(t, run)
	t.Logf("a bucket bundle of %d objects pinned and its Job created %s after the run", len(files), time.Since(started).Round(time.Millisecond))
	m, evalCM := pinnedManifest(t, run)
	if m.SHA256 != digest || len(m.Files) != len(files) {
		t.Errorf("pinned manifest %+v, want digest %s", m, digest)
	}
	if _, ok := evalCM.Data[podwire.EvalFileKey]; ok {
		t.Errorf("the eval ConfigMap holds the eval file of a bucket bundle")
	}
	cfg, err := children.RunConfigFrom(evalCM)
	if err != nil || cfg.Bundle == nil || cfg.Bundle.Objects == nil || cfg.SourceEvalFile != "/evalrun/bundle/suites/eval.yaml" || len(cfg.CaseIDs) != 1 {
		t.Errorf("run.json: bundle %+v, source eval file %s, case ids %v (%v)", cfg.Bundle, cfg.SourceEvalFile, cfg.CaseIDs, err)
	}
	eventually(t, "status.bundleSHA256", func() error {
		if d := ptr.Deref(getRun(t, run).Status.BundleSHA256, ""); d != digest {
			return fmt.Errorf("bundleSHA256 %q, want %s", d, digest)
		}
		return nil
	})
}

// TestHungBundleBucketEndsBucketUnavailable: a bundle on an endpoint that never answers ends the run
// BucketUnavailable once its deadline has passed, naming the endpoint, without a Job.
func TestHungBundleBucketEndsBucketUnavailable(t *testing.T) {
	requireEnv(t)
	ctx := context.Background()
	hole := blackHole(t)
	ns := newNamespace(t)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s3-creds", Namespace: ns}, Data: map[string][]byte{
		objstore.AccessKeyIDFile: []byte("id"), objstore.SecretAccessKeyFile: []byte("secret")}}
	if err := k8s.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
	bucket := evalsv1alpha1.S3Bucket{Endpoint: hole, Bucket: "bundles", Prefix: ptr.To("math"), CredentialsSecret: "s3-creds", Region: ptr.To("us-east-1")}
	run := createRun(t, testutil.MakeEvalRun("hung-bundle", ns).FromBundleS3(bucket, "eval.yaml").ActiveDeadline(10))
	got := waitReason(t, run, metav1.ConditionFalse, evalsv1alpha1.ReasonBucketUnavailable)
	c := meta.FindStatusCondition(got.Status.Conditions, evalsv1alpha1.ConditionSucceeded)
	if !strings.Contains(c.Message, hole) || !strings.Contains(c.Message, "eval bundle") || got.Status.JobName != "" {
		t.Errorf("ended %q with Job %q; want the endpoint and the bundle named, no Job", c.Message, got.Status.JobName)
	}
}
