package kueue

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/assess"
)

// workload builds a Kueue Workload as the API server returns it (unstructured JSON), with the given conditions
// (type, status, reason, message), admission ClusterQueue and eviction counts.
func workload(clusterQueue string, evictions []int64, conds ...[4]string) *unstructured.Unstructured {
	status := map[string]any{}
	var cs []any
	for _, c := range conds {
		cs = append(cs, map[string]any{"type": c[0], "status": c[1], "reason": c[2], "message": c[3],
			"lastTransitionTime": "2026-01-01T00:00:00Z"})
	}
	if cs != nil {
		status["conditions"] = cs
	}
	if clusterQueue != "" {
		status["admission"] = map[string]any{"clusterQueue": clusterQueue}
	}
	var ev []any
	for i, n := range evictions {
		ev = append(ev, map[string]any{"reason": []string{"Preempted", "Deactivated"}[i%2], "underlyingCause": "", "count": n})
	}
	if ev != nil {
		status["schedulingStats"] = map[string]any{"evictions": ev}
	}
	wl := NewWorkload()
	wl.SetName("job-run-evalrun-1a2b3")
	wl.SetNamespace("ns")
	wl.Object["status"] = status
	return wl
}

func TestQueueView(t *testing.T) {
	const wlName = "job-run-evalrun-1a2b3"
	waitingMsg := "couldn't assign flavors to pod set main: insufficient quota for pods in flavor default, previously considered podsets requests (0) + current podset request (1) > maximum capacity (1)"
	tests := []struct {
		name string
		wl   *unstructured.Unstructured
		want *evalsv1alpha1.QueueStatus
	}{
		{name: "no Workload (Kueue absent or not yet)", want: &evalsv1alpha1.QueueStatus{Name: "q"}},
		{
			name: "new Workload, no condition yet",
			wl:   workload("", nil),
			want: &evalsv1alpha1.QueueStatus{Name: "q", Workload: wlName, Admission: evalsv1alpha1.QueueWaiting},
		},
		{
			name: "waiting for quota: Kueue's reason and message",
			wl:   workload("", nil, [4]string{"QuotaReserved", "False", "Pending", waitingMsg}),
			want: &evalsv1alpha1.QueueStatus{Name: "q", Workload: wlName, Admission: evalsv1alpha1.QueueWaiting,
				Reason: "Pending", Message: waitingMsg},
		},
		{
			name: "quota reserved, admission checks pending",
			wl:   workload("cq", nil, [4]string{"QuotaReserved", "True", "QuotaReserved", "Quota reserved in ClusterQueue cq"}),
			want: &evalsv1alpha1.QueueStatus{Name: "q", Workload: wlName, Admission: evalsv1alpha1.QueueQuotaReserved, ClusterQueue: "cq"},
		},
		{
			name: "admitted",
			wl: workload("cq", nil, [4]string{"QuotaReserved", "True", "QuotaReserved", ""},
				[4]string{"Admitted", "True", "Admitted", "The workload is admitted"}),
			want: &evalsv1alpha1.QueueStatus{Name: "q", Workload: wlName, Admission: evalsv1alpha1.QueueAdmitted, ClusterQueue: "cq"},
		},
		{
			name: "preempted: evicted, waiting again, evictions counted",
			wl: workload("", []int64{1}, [4]string{"QuotaReserved", "False", "Preempted", "Preempted to accommodate a workload"},
				[4]string{"Admitted", "False", "NoReservation", ""},
				[4]string{"Evicted", "True", "Preempted", "Preempted to accommodate a workload (UID: 1) due to prioritization in the ClusterQueue"}),
			want: &evalsv1alpha1.QueueStatus{Name: "q", Workload: wlName, Admission: evalsv1alpha1.QueueEvicted,
				Reason: "Preempted", Message: "Preempted to accommodate a workload (UID: 1) due to prioritization in the ClusterQueue", Evictions: 1},
		},
		{
			name: "admitted again after two evictions",
			wl: workload("cq", []int64{1, 1}, [4]string{"QuotaReserved", "True", "QuotaReserved", ""},
				[4]string{"Admitted", "True", "Admitted", ""}, [4]string{"Evicted", "False", "QuotaReserved", ""}),
			want: &evalsv1alpha1.QueueStatus{Name: "q", Workload: wlName, Admission: evalsv1alpha1.QueueAdmitted, ClusterQueue: "cq", Evictions: 2},
		},
		{
			name: "finished",
			wl: workload("cq", nil, [4]string{"QuotaReserved", "True", "QuotaReserved", ""}, [4]string{"Admitted", "True", "Admitted", ""},
				[4]string{"Finished", "True", "Succeeded", "Job finished successfully"}),
			want: &evalsv1alpha1.QueueStatus{Name: "q", Workload: wlName, Admission: evalsv1alpha1.QueueFinished, ClusterQueue: "cq"},
		},
		{
			name: "Kueue's words cut to the CRD's bounds",
			wl:   workload("", nil, [4]string{"QuotaReserved", "False", strings.Repeat("R", 300), strings.Repeat("m", 3000)}),
			want: &evalsv1alpha1.QueueStatus{Name: "q", Workload: wlName, Admission: evalsv1alpha1.QueueWaiting,
				Reason: strings.Repeat("R", assess.MaxQueueReason-len("…")) + "…", Message: strings.Repeat("m", assess.MaxQueueMessage-len("…")) + "…"},
		},
		{
			name: "malformed status: ignored entries, no panic",
			wl: func() *unstructured.Unstructured {
				wl := NewWorkload()
				wl.SetName(wlName)
				wl.Object["status"] = map[string]any{"conditions": []any{"x", int64(3), map[string]any{"status": "True"}},
					"schedulingStats": map[string]any{"evictions": []any{"x", map[string]any{"count": "2"}, map[string]any{"count": int64(-4)}}},
					"admission":       "cq"}
				return wl
			}(),
			want: &evalsv1alpha1.QueueStatus{Name: "q", Workload: wlName, Admission: evalsv1alpha1.QueueWaiting},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, QueueView("q", tc.wl)); diff != "" {
				t.Errorf("QueueView (-want +got):\n%s", diff)
			}
		})
	}
}

func TestKueueWaitMessage(t *testing.T) {
	tests := []struct {
		name string
		q    *evalsv1alpha1.QueueStatus
		want string
	}{
		{name: "Kueue not read", want: "waiting for Kueue to admit the Job in queue q"},
		{name: "no Workload yet", q: &evalsv1alpha1.QueueStatus{Name: "q"}, want: "waiting for Kueue to admit the Job in queue q"},
		{
			name: "waiting for quota",
			q:    &evalsv1alpha1.QueueStatus{Name: "q", Admission: evalsv1alpha1.QueueWaiting, Reason: "Pending", Message: "insufficient quota"},
			want: "waiting for Kueue to admit the Job in queue q (Pending: insufficient quota)",
		},
		{
			name: "reason only",
			q:    &evalsv1alpha1.QueueStatus{Name: "q", Admission: evalsv1alpha1.QueueWaiting, Reason: "Inadmissible"},
			want: "waiting for Kueue to admit the Job in queue q (Inadmissible)",
		},
		{
			name: "preempted",
			q:    &evalsv1alpha1.QueueStatus{Name: "q", Admission: evalsv1alpha1.QueueEvicted, Reason: "Preempted", Message: "Preempted to accommodate a workload"},
			want: "Kueue evicted the Job; waiting for Kueue to admit the Job in queue q again (Preempted: Preempted to accommodate a workload)",
		},
		{
			name: "admitted, the Job not resumed yet",
			q:    &evalsv1alpha1.QueueStatus{Name: "q", Admission: evalsv1alpha1.QueueAdmitted, ClusterQueue: "cq"},
			want: "Kueue admitted the Job in ClusterQueue cq; waiting for it to resume",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := assess.KueueWaitMessage("q", tc.q); got != tc.want {
				t.Errorf("assess.KueueWaitMessage = %q, want %q", got, tc.want)
			}
		})
	}
}
