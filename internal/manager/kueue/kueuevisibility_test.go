package kueue

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/assess"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/options"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
)

// pendingSummary is Kueue's PendingWorkloadsSummary as its visibility API serves it (positions from 0).
const pendingSummary = `{"kind":"PendingWorkloadsSummary","apiVersion":"visibility.kueue.x-k8s.io/v1beta2","metadata":{},
"items":[{"metadata":{"name":"job-first"},"priority":0,"localQueueName":"lq","positionInClusterQueue":0,"positionInLocalQueue":0},
{"metadata":{"name":"job-second"},"priority":0,"localQueueName":"lq","positionInClusterQueue":1,"positionInLocalQueue":1}]}`

// TestKueueVisibilityPosition: a waiting Workload's position is Kueue's positionInLocalQueue plus one; a Workload
// not listed, an API that is not served (no mapping: no request at all) or fails has none, and a failed API is
// looked for again only after kueueRecheck.
func TestKueueVisibilityPosition(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	servedMapper := func() meta.RESTMapper {
		m := meta.NewDefaultRESTMapper(nil)
		m.Add(visibilityLocalQueue, meta.RESTScopeNamespace)
		return m
	}
	cases := []struct {
		name     string
		mapper   meta.RESTMapper
		body     string
		err      error
		workload string
		want     *int32
		wantGets int
	}{
		{name: "first in line", mapper: servedMapper(), body: pendingSummary, workload: "job-first", want: ptr.To[int32](1), wantGets: 1},
		{name: "second", mapper: servedMapper(), body: pendingSummary, workload: "job-second", want: ptr.To[int32](2), wantGets: 1},
		{name: "not listed", mapper: servedMapper(), body: pendingSummary, workload: "job-admitted", wantGets: 1},
		{name: "no Workload yet", mapper: servedMapper(), body: pendingSummary},
		{name: "not served", mapper: meta.NewDefaultRESTMapper([]schema.GroupVersion{}), body: pendingSummary, workload: "job-first"},
		{name: "served but failing", mapper: servedMapper(), err: errors.New("the server is currently unable to handle the request"),
			workload: "job-first", wantGets: 1},
		{name: "not JSON", mapper: servedMapper(), body: "<html>", workload: "job-first", wantGets: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var gets []string
			v := &Visibility{mapper: tc.mapper, get: func(_ context.Context, path string) ([]byte, error) {
				gets = append(gets, path)
				return []byte(tc.body), tc.err
			}}
			got := v.Position(context.Background(), "team-a", "lq", tc.workload, now)
			if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
				t.Errorf("position %v, want %v", ptr.Deref(got, 0), ptr.Deref(tc.want, 0))
			}
			if len(gets) != tc.wantGets {
				t.Fatalf("%d GETs %v, want %d", len(gets), gets, tc.wantGets)
			}
			if len(gets) > 0 && gets[0] != "/apis/visibility.kueue.x-k8s.io/v1beta2/namespaces/team-a/localqueues/lq/pendingworkloads" {
				t.Errorf("GET %s", gets[0])
			}
			if tc.err != nil {
				// A failed API is not asked again before kueueRecheck.
				v.Position(context.Background(), "team-a", "lq", tc.workload, now.Add(kueueRecheck/2))
				if len(gets) != 1 {
					t.Errorf("asked again %d times within kueueRecheck", len(gets)-1)
				}
			}
		})
	}
}

// TestQueuedRunWithPositionLooksAgain: a run waiting with a position says it and is looked at again after
// assess.QueuePositionRecheck (the workloads ahead are admitted without its own objects changing); without a position
// (no visibility API) it waits for its Workload's events as before.
func TestQueuedRunWithPositionLooksAgain(t *testing.T) {
	run := testutil.UnitRun(func(r *evalsv1alpha1.EvalRun) { r.Spec.QueueName = "lq" })
	for _, pos := range []*int32{nil, ptr.To[int32](2)} {
		q := &evalsv1alpha1.QueueStatus{Name: "lq", Admission: evalsv1alpha1.QueueWaiting, Reason: "Pending", Position: pos}
		got := assess.Classify(assess.Observation{Run: run, Job: kueueHeldJob(), Queue: q, Now: time.Now()}, options.Options{})
		want := assess.Assessment{State: assess.StateQueued, Reason: evalsv1alpha1.ReasonQueued,
			Message: "waiting for Kueue to admit the Job in queue lq (Pending)"}
		if pos != nil {
			want.Message += "; position 2 in the queue"
			want.RecheckAfter = assess.PositionRecheck(2)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("position %v (-want +got):\n%s", ptr.Deref(pos, 0), diff)
		}
	}
}

// TestOneReadServesTheQueue: the runs waiting in one LocalQueue share one read of its pending workloads for
// assess.QueuePositionRecheck, concurrent lookups included; another queue, or the same one after the interval, is read
// again; a read that failed is not kept.
func TestOneReadServesTheQueue(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(visibilityLocalQueue, meta.RESTScopeNamespace)
	var items []string
	for i := range 1000 {
		items = append(items, fmt.Sprintf(`{"metadata":{"name":"wl-%d"},"positionInLocalQueue":%d}`, i, i))
	}
	body := []byte(`{"items":[` + strings.Join(items, ",") + `]}`)
	var gets atomic.Int32
	fail := atomic.Bool{}
	v := &Visibility{mapper: mapper, get: func(_ context.Context, _ string) ([]byte, error) {
		gets.Add(1)
		time.Sleep(10 * time.Millisecond) // the runs asking meanwhile wait for this read
		if fail.Load() {
			return nil, errors.New("unavailable")
		}
		return body, nil
	}}
	var wg sync.WaitGroup
	for i := range 1000 {
		wg.Go(func() {
			got := v.Position(context.Background(), "team-a", "lq", fmt.Sprintf("wl-%d", i), now)
			if got == nil || *got != int32(i+1) {
				t.Errorf("wl-%d: position %v, want %d", i, ptr.Deref(got, 0), i+1)
			}
		})
	}
	wg.Wait()
	if n := gets.Load(); n != 1 {
		t.Fatalf("1,000 runs of one queue made %d GETs, want 1", n)
	}
	v.Position(context.Background(), "team-a", "lq", "wl-5", now.Add(assess.QueuePositionRecheck-time.Second))
	v.Position(context.Background(), "team-b", "lq", "wl-5", now)
	if n := gets.Load(); n != 2 {
		t.Errorf("%d GETs after another queue's lookup, want 2 (the first queue's read still serves)", n)
	}
	v.Position(context.Background(), "team-a", "lq", "wl-5", now.Add(assess.QueuePositionRecheck))
	if n := gets.Load(); n != 3 {
		t.Errorf("%d GETs after the interval, want 3", n)
	}
	fail.Store(true)
	if got := v.Position(context.Background(), "team-a", "lq", "wl-5", now.Add(2*assess.QueuePositionRecheck)); got != nil {
		t.Errorf("a failed read gave position %d", *got)
	}
	fail.Store(false)
	later := now.Add(2*assess.QueuePositionRecheck + kueueRecheck)
	if got := v.Position(context.Background(), "team-a", "lq", "wl-5", later); got == nil || *got != 6 {
		t.Errorf("after a failed read and kueueRecheck: position %v, want 6", ptr.Deref(got, 0))
	}
}

// kueueHeldJob is a run's Job that Kueue holds suspended.
func kueueHeldJob() *batchv1.Job {
	return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "screen", Namespace: "team-a"},
		Spec: batchv1.JobSpec{Suspend: ptr.To(true), ActiveDeadlineSeconds: ptr.To[int64](600)}}
}
