package options

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestWithJudgeLimits(t *testing.T) {
	q := resource.MustParse
	defaults := defaultJudgeLimits(nil)
	for _, tc := range []struct {
		name     string
		in, want corev1.ResourceRequirements
	}{
		{
			name: "no limits: every default",
			in:   corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: q("10m")}},
			want: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: q("10m")},
				Limits: corev1.ResourceList{corev1.ResourceCPU: q("1"), corev1.ResourceMemory: q("1Gi")}},
		},
		{
			name: "judging.resources' own limit wins, even above the default",
			in:   corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: q("4Gi")}},
			want: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: q("1"), corev1.ResourceMemory: q("4Gi")}},
		},
		{
			name: "a request above the default: the limit is the request (never below it)",
			in:   corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: q("3")}},
			want: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: q("3")},
				Limits: corev1.ResourceList{corev1.ResourceCPU: q("3"), corev1.ResourceMemory: q("1Gi")}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, defaults.Apply(tc.in)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestParseJudgeLimits(t *testing.T) {
	for _, bad := range [][3]string{{"0", "1Gi", "1Gi"}, {"1", "lots", "1Gi"}, {"1", "1Gi", "-1"}} {
		if _, err := ParseJudgeLimits(bad[0], bad[1], bad[2]); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	got, err := ParseJudgeLimits("500m", "256Mi", "2Gi")
	if err != nil || len(got) != 3 {
		t.Fatalf("%v %v", got, err)
	}
	got, err = ParseJudgeLimits("500m", "256Mi", "")
	if _, set := got[corev1.ResourceEphemeralStorage]; set {
		t.Error("an empty ephemeral-storage limit was set")
	}
	if err != nil {
		t.Fatal(err)
	}
	if c := got[corev1.ResourceCPU]; c.MilliValue() != 500 {
		t.Errorf("cpu %s", c.String())
	}
}
