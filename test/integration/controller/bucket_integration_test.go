package controller_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/objstore"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
)

// blackHole is an endpoint that accepts TCP connections and never answers (held open until the test ends).
func blackHole(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return "http://" + ln.Addr().String()
}

// TestHungBucketDelaysOnlyTheRunsNamingIt: more runs than the controller has workers name an eval file on an
// endpoint that accepts TCP and never answers. Ordinary runs in another namespace still get their Job at once,
// and each hung run ends BucketUnavailable, naming the endpoint, once its deadline (counted from its creation)
// has passed.
func TestHungBucketDelaysOnlyTheRunsNamingIt(t *testing.T) {
	requireEnv(t)
	ctx := context.Background()
	hole := blackHole(t)
	hungNS, fineNS := newNamespace(t), newNamespace(t)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s3-creds", Namespace: hungNS}, Data: map[string][]byte{
		objstore.AccessKeyIDFile: []byte("id"), objstore.SecretAccessKeyFile: []byte("secret")}}
	if err := k8s.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
	const deadline = 15
	hung := make([]*evalsv1alpha1.EvalRun, 6) // the controller has 4 workers
	for i := range hung {
		w := testutil.MakeEvalRun(fmt.Sprintf("hung-%d", i), hungNS).ActiveDeadline(deadline)
		w.Spec.EvalFile = evalsv1alpha1.EvalFileSource{S3: &evalsv1alpha1.S3Object{
			S3Bucket: evalsv1alpha1.S3Bucket{Endpoint: hole, Bucket: "evals", CredentialsSecret: "s3-creds", Region: ptr.To("us-east-1")},
			Key:      "suite.yaml", SHA256: strings.Repeat("ab", 32)}}
		hung[i] = createRun(t, w)
	}
	// The hung runs' flights are in the air, each holding a connection to the black hole, before the others come.
	time.Sleep(2 * time.Second)
	// The flights gauge shows them (other tests' flights may add to it).
	if n := metricValue("evalrun_bucket_reconciles_in_flight"); n < float64(len(hung)) {
		t.Errorf("evalrun_bucket_reconciles_in_flight = %v with %d runs hung on a bucket, want at least %d", n, len(hung), len(hung))
	}
	started := time.Now()
	for i := range 3 {
		run := createRun(t, testutil.MakeEvalRun(fmt.Sprintf("fine-%d", i), fineNS))
		waitJob(t, run)
	}
	t.Logf("3 ordinary runs got their Job %s after they were created, with 6 runs hung on a bucket", time.Since(started).Round(time.Millisecond))
	// They did not wait for the hung runs: none of those has ended yet (they hold no worker).
	for _, run := range hung {
		if c := meta.FindStatusCondition(getRun(t, run).Status.Conditions, evalsv1alpha1.ConditionSucceeded); c != nil && c.Status != metav1.ConditionUnknown {
			t.Fatalf("run %s ended (%s) before the ordinary runs got their Job: they waited for it", run.Name, c.Reason)
		}
	}

	for _, run := range hung {
		eventually(t, "run "+run.Name+" ended BucketUnavailable", func() error {
			cur := getRun(t, run)
			c := meta.FindStatusCondition(cur.Status.Conditions, evalsv1alpha1.ConditionSucceeded)
			if c == nil || c.Status != metav1.ConditionFalse {
				if time.Since(run.CreationTimestamp.Time) < deadline*time.Second {
					return fmt.Errorf("not ended yet: %+v", c)
				}
				return fmt.Errorf("not ended %s after its creation: %+v", time.Since(run.CreationTimestamp.Time).Round(time.Second), c)
			}
			if c.Reason != evalsv1alpha1.ReasonBucketUnavailable || !strings.Contains(c.Message, hole) {
				t.Fatalf("run %s ended %s: %q; want BucketUnavailable naming %s", run.Name, c.Reason, c.Message, hole)
			}
			return nil
		})
		if cur := getRun(t, run); cur.Status.JobName != "" {
			t.Fatalf("run %s has a Job %s", run.Name, cur.Status.JobName)
		}
	}
	for _, run := range hung {
		c := meta.FindStatusCondition(getRun(t, run).Status.Conditions, evalsv1alpha1.ConditionSucceeded)
		if late := c.LastTransitionTime.Sub(run.CreationTimestamp.Time); late < deadline*time.Second {
			t.Fatalf("run %s ended %s after its creation, before its %ds deadline", run.Name, late, deadline)
		}
	}
}
