package children

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNamesFor(t *testing.T) {
	long := strings.Repeat("a", 238) + "-" + strings.Repeat("b", 14) // 253 characters, the longest name
	x := func(n int) string { return strings.Repeat("x", n) }
	cases := []struct {
		name string
		run  string
		want ChildNames
	}{
		{
			name: "short: every name carries the operator's marker",
			run:  "screening",
			want: ChildNames{EvalConfigMap: "screening-evalrun-eval", ServiceAccount: "screening-evalrun-collector", Role: "screening-evalrun-collector",
				RoleBinding: "screening-evalrun-collector", Job: "screening-evalrun", NetworkPolicy: "screening-evalrun", RunLabel: "screening", run: "screening"},
		},
		{
			name: "55 characters keeps the Job name",
			run:  x(55),
			want: ChildNames{EvalConfigMap: x(55) + "-evalrun-eval", ServiceAccount: x(55) + "-evalrun-collector",
				Role: x(55) + "-evalrun-collector", RoleBinding: x(55) + "-evalrun-collector",
				Job: x(55) + "-evalrun", NetworkPolicy: x(55) + "-evalrun", RunLabel: x(55), run: x(55)},
		},
		{
			name: "64 characters cuts the Job name and label",
			run:  x(64),
			want: ChildNames{EvalConfigMap: x(64) + "-evalrun-eval", ServiceAccount: x(64) + "-evalrun-collector",
				Role: x(64) + "-evalrun-collector", RoleBinding: x(64) + "-evalrun-collector",
				Job: x(46) + "-" + hash8(x(64)) + "-evalrun", NetworkPolicy: x(64) + "-evalrun", RunLabel: x(54) + "-" + hash8(x(64)),
				run: x(64)},
		},
		{
			name: "253 characters cuts every name, trimming separators before the hash",
			run:  long,
			want: ChildNames{
				EvalConfigMap:  strings.Repeat("a", 231) + "-" + hash8(long) + "-evalrun-eval",
				ServiceAccount: strings.Repeat("a", 226) + "-" + hash8(long) + "-evalrun-collector",
				Role:           strings.Repeat("a", 226) + "-" + hash8(long) + "-evalrun-collector",
				RoleBinding:    strings.Repeat("a", 226) + "-" + hash8(long) + "-evalrun-collector",
				Job:            strings.Repeat("a", 46) + "-" + hash8(long) + "-evalrun",
				NetworkPolicy:  strings.Repeat("a", 236) + "-" + hash8(long) + "-evalrun",
				RunLabel:       strings.Repeat("a", 54) + "-" + hash8(long),
				run:            long,
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := NamesFor(tc.run)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(ChildNames{})); diff != "" {
				t.Errorf("NamesFor(%q) mismatch (-want +got):\n%s", tc.run, diff)
			}
			for _, n := range []string{got.EvalConfigMap, got.ServiceAccount, got.ResultConfigMap(63)} {
				if len(n) > maxObjectName {
					t.Errorf("name %q is %d characters, over %d", n, len(n), maxObjectName)
				}
			}
			if len(got.Job) > maxJobName || len(got.RunLabel) > maxLabelValue {
				t.Errorf("Job %q or label %q over 63 characters", got.Job, got.RunLabel)
			}
		})
	}
}

func TestNamesForDistinguishesRunsSharingAPrefix(t *testing.T) {
	a, b := strings.Repeat("r", 70)+"-one", strings.Repeat("r", 70)+"-two"
	if NamesFor(a).Job == NamesFor(b).Job {
		t.Errorf("runs %q and %q got the same Job name %q", a, b, NamesFor(a).Job)
	}
}

func TestResultConfigMapNames(t *testing.T) {
	got := NamesFor("run").ResultConfigMaps(3)
	want := []string{"run-evalrun-results-0", "run-evalrun-results-1", "run-evalrun-results-2"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ResultConfigMaps mismatch (-want +got):\n%s", diff)
	}
}

func TestResultConfigMapCount(t *testing.T) {
	cases := []struct{ cases, want int }{
		{0, 1}, {1, 1}, {2000, 1}, {2001, 2}, {50000, 25}, {128000, 64}, {1000000, 64},
	}
	for _, tc := range cases {
		if got := ResultConfigMapCount(tc.cases); got != tc.want {
			t.Errorf("ResultConfigMapCount(%d) = %d, want %d", tc.cases, got, tc.want)
		}
	}
}
