package controller

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
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
			v := &kueueVisibility{mapper: tc.mapper, get: func(_ context.Context, path string) ([]byte, error) {
				gets = append(gets, path)
				return []byte(tc.body), tc.err
			}}
			got := v.position(context.Background(), "team-a", "lq", tc.workload, now)
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
				v.position(context.Background(), "team-a", "lq", tc.workload, now.Add(kueueRecheck/2))
				if len(gets) != 1 {
					t.Errorf("asked again %d times within kueueRecheck", len(gets)-1)
				}
			}
		})
	}
}

// TestQueuedRunWithPositionLooksAgain: a run waiting with a position says it and is looked at again after
// queuePositionRecheck (the workloads ahead are admitted without its own objects changing); without a position
// (no visibility API) it waits for its Workload's events as before.
func TestQueuedRunWithPositionLooksAgain(t *testing.T) {
	run := testRun(func(r *evalsv1alpha1.EvalRun) { r.Spec.QueueName = "lq" })
	for _, pos := range []*int32{nil, ptr.To[int32](2)} {
		q := &evalsv1alpha1.QueueStatus{Name: "lq", Admission: evalsv1alpha1.QueueWaiting, Reason: "Pending", Position: pos}
		got := Classify(Observation{Run: run, Job: makeJob(suspended), Queue: q, Now: time.Now()}, Options{})
		want := Assessment{State: StateQueued, Reason: evalsv1alpha1.ReasonQueued,
			Message: "waiting for Kueue to admit the Job in queue lq (Pending)"}
		if pos != nil {
			want.Message += "; position 2 in the queue"
			want.RecheckAfter = queuePositionRecheck
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("position %v (-want +got):\n%s", ptr.Deref(pos, 0), diff)
		}
	}
}
