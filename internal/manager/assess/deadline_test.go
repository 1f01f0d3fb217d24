package assess

import (
	"testing"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/children"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/options"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/utils/ptr"
)

// TestDefaultDeadline: a run without spec.activeDeadlineSeconds gets the manager's default on its Job, and
// status.activeDeadline says which one applied.
func TestDefaultDeadline(t *testing.T) {
	cases := []struct {
		name string
		spec *int64
		opts options.Options
		want evalsv1alpha1.ActiveDeadline
	}{
		{name: "unset: 24 hours", want: evalsv1alpha1.ActiveDeadline{Seconds: 86400, Source: evalsv1alpha1.DeadlineFromManagerDefault}},
		{name: "unset: the flag", opts: options.Options{DefaultActiveDeadlineSeconds: 30},
			want: evalsv1alpha1.ActiveDeadline{Seconds: 30, Source: evalsv1alpha1.DeadlineFromManagerDefault}},
		{name: "the spec wins", spec: ptr.To[int64](3600), opts: options.Options{DefaultActiveDeadlineSeconds: 30},
			want: evalsv1alpha1.ActiveDeadline{Seconds: 3600, Source: evalsv1alpha1.DeadlineFromSpec}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			run := testutil.UnitRun(func(r *evalsv1alpha1.EvalRun) { r.Spec.ActiveDeadlineSeconds = tc.spec })
			job := children.BuildJob(run, children.BuildRunConfig(run, testutil.CaseIDs(2), nil, children.JudgeLoad{}, tc.opts), tc.opts)
			if got := ptr.Deref(job.Spec.ActiveDeadlineSeconds, 0); got != tc.want.Seconds {
				t.Errorf("Job activeDeadlineSeconds = %d, want %d", got, tc.want.Seconds)
			}
			if diff := cmp.Diff(&tc.want, JobDeadline(run, job)); diff != "" {
				t.Errorf("status.activeDeadline (-want +got):\n%s", diff)
			}
			// Recorded in status once the Job exists.
			desired := DesiredManagerStatus(run, Assessment{State: StateRunning, Reason: evalsv1alpha1.ReasonRunning},
				StatusFacts{JobName: job.Name, ActiveDeadline: JobDeadline(run, job)}, t0)
			if diff := cmp.Diff(&tc.want, desired.ActiveDeadline); diff != "" {
				t.Errorf("desired status.activeDeadline (-want +got):\n%s", diff)
			}
		})
	}
	if JobDeadline(testutil.UnitRun(), &batchv1.Job{}) != nil {
		t.Error("a Job without a deadline (made before the default existed) reports one")
	}
	for _, bad := range []int64{-1, options.MaxActiveDeadlineSeconds + 1} {
		if err := (options.Options{DefaultActiveDeadlineSeconds: bad}).Validate(); err == nil {
			t.Errorf("--default-active-deadline-seconds=%d accepted", bad)
		}
	}
}
