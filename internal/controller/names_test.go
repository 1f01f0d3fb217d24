package controller

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNamesFor(t *testing.T) {
	long := strings.Repeat("a", 238) + "-" + strings.Repeat("b", 14) // 253 characters, the longest name
	cases := []struct {
		name string
		run  string
		want ChildNames
	}{
		{
			name: "short",
			run:  "screening",
			want: ChildNames{EvalConfigMap: "screening-eval", ServiceAccount: "screening-collector", Role: "screening-collector",
				RoleBinding: "screening-collector", Job: "screening", RunLabel: "screening", run: "screening"},
		},
		{
			name: "exactly 63 characters keeps the Job name",
			run:  strings.Repeat("x", 63),
			want: ChildNames{EvalConfigMap: strings.Repeat("x", 63) + "-eval", ServiceAccount: strings.Repeat("x", 63) + "-collector",
				Role: strings.Repeat("x", 63) + "-collector", RoleBinding: strings.Repeat("x", 63) + "-collector",
				Job: strings.Repeat("x", 63), RunLabel: strings.Repeat("x", 63), run: strings.Repeat("x", 63)},
		},
		{
			name: "64 characters cuts the Job name and label",
			run:  strings.Repeat("x", 64),
			want: ChildNames{EvalConfigMap: strings.Repeat("x", 64) + "-eval", ServiceAccount: strings.Repeat("x", 64) + "-collector",
				Role: strings.Repeat("x", 64) + "-collector", RoleBinding: strings.Repeat("x", 64) + "-collector",
				Job: strings.Repeat("x", 54) + "-" + hash8(strings.Repeat("x", 64)), RunLabel: strings.Repeat("x", 54) + "-" + hash8(strings.Repeat("x", 64)),
				run: strings.Repeat("x", 64)},
		},
		{
			name: "253 characters cuts every name, trimming separators before the hash",
			run:  long,
			want: ChildNames{
				EvalConfigMap:  strings.Repeat("a", 238) + "-" + hash8(long) + "-eval",
				ServiceAccount: strings.Repeat("a", 234) + "-" + hash8(long) + "-collector",
				Role:           strings.Repeat("a", 234) + "-" + hash8(long) + "-collector",
				RoleBinding:    strings.Repeat("a", 234) + "-" + hash8(long) + "-collector",
				Job:            strings.Repeat("a", 54) + "-" + hash8(long),
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
	want := []string{"run-results-0", "run-results-1", "run-results-2"}
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
