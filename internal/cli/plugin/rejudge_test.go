package plugin

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
)

// TestRejudgeRun: the re-judge takes the source's spec but its suspend, resume and baseline, judges the source's
// records (rejudge.from), and takes the judging given instead of the source's; with a baseline given, it is
// compared with that run within the source's baseline bounds (the defaults when the source has none).
func TestRejudgeRun(t *testing.T) {
	src := testutil.MakeEvalRun("nightly", "team-a").Shards(4, 2).Trials(3, "0.6").Obj()
	src.Spec.Judging = &evalsv1alpha1.Judging{PassThreshold: "0.8"}
	src.Spec.SuccessPolicy = &evalsv1alpha1.SuccessPolicy{MinPassRate: "0.9"}
	src.Spec.Suspend = ptr.To(true)
	src.Spec.Resume = &evalsv1alpha1.Resume{From: "older"}
	src.Spec.Baseline = &evalsv1alpha1.Baseline{RunName: ptr.To("older"), MaxNewFailures: ptr.To[int32](2), MaxScoreDrop: ptr.To("0.05"),
		Test: ptr.To(evalsv1alpha1.BaselineTestPaired), Alpha: ptr.To("0.01"), MinEffect: ptr.To("0.1")}
	src.Spec.QueueName = "batch"
	noBaseline := src.DeepCopy()
	noBaseline.Spec.Baseline = nil
	stricter := &evalsv1alpha1.Judging{PassThreshold: "0.95"}
	tests := map[string]struct {
		src          *evalsv1alpha1.EvalRun
		spec         RejudgeSpec
		wantName     string
		wantGen      string
		want         *evalsv1alpha1.Judging
		wantBaseline *evalsv1alpha1.Baseline
	}{
		"named, the source's judging":   {src: src, spec: RejudgeSpec{Name: "nightly-again"}, wantName: "nightly-again", want: src.Spec.Judging},
		"generated name, other judging": {src: src, spec: RejudgeSpec{Judging: stricter}, wantGen: "nightly-rejudge-", want: stricter},
		"a baseline, the source's bounds": {src: src, spec: RejudgeSpec{Judging: stricter, Baseline: "older-again"},
			wantGen: "nightly-rejudge-", want: stricter,
			wantBaseline: &evalsv1alpha1.Baseline{RunName: ptr.To("older-again"), MaxNewFailures: ptr.To[int32](2), MaxScoreDrop: ptr.To("0.05"),
				Test: ptr.To(evalsv1alpha1.BaselineTestPaired), Alpha: ptr.To("0.01"), MinEffect: ptr.To("0.1")}},
		"a baseline, the source had none": {src: noBaseline, spec: RejudgeSpec{Baseline: "older-again"}, wantGen: "nightly-rejudge-",
			want: src.Spec.Judging, wantBaseline: &evalsv1alpha1.Baseline{RunName: ptr.To("older-again")}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := RejudgeRun(tc.src, tc.spec)
			if got.Namespace != "team-a" || got.Name != tc.wantName || got.GenerateName != tc.wantGen {
				t.Errorf("metadata %s/%s (generateName %q)", got.Namespace, got.Name, got.GenerateName)
			}
			want := tc.src.Spec.DeepCopy()
			// Not its trials either: the manager takes them from the source (admission refuses a re-judge's own count).
			want.Suspend, want.Resume, want.Baseline, want.Trials = nil, nil, tc.wantBaseline, nil
			want.Judging = tc.want
			want.Rejudge = &evalsv1alpha1.Rejudge{From: "nightly"}
			if diff := cmp.Diff(*want, got.Spec); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
		})
	}
	if got := rejudgePrefix(strings.Repeat("a", 60)); len(got)+5 > 63 || !strings.HasSuffix(got, "-rejudge-") {
		t.Errorf("rejudgePrefix of a long name is %q", got)
	}
}

// TestRejudgeCommand creates a re-judge through the API server, with a --judging file, and one with --baseline; a
// --judging file that is not a spec.judging object, or a --baseline that does not exist, is refused before anything
// is created.
func TestRejudgeCommand(t *testing.T) {
	ns := newNamespace(t)
	storedRun(t, ns, "screening", screeningLines(nil, nil, nil), 1, nil)
	dir := t.TempDir()
	judging := filepath.Join(dir, "judging.yaml")
	if err := os.WriteFile(judging, []byte("passThreshold: \"0.9\"\nevaluators:\n  - name: exact\n    type: equals\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err := kubectlEvalrun(t, ns, "rejudge", "screening", "--judging", judging, "--name", "screening-again")
	if err != nil {
		t.Fatal(err)
	}
	if out != "evalrun.evals.evalrun.io/screening-again created\n" {
		t.Errorf("output %q", out)
	}
	c, _ := apiServer(t)
	got := &evalsv1alpha1.EvalRun{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "screening-again"}, got); err != nil {
		t.Fatal(err)
	}
	want := &evalsv1alpha1.Judging{PassThreshold: "0.9", Evaluators: []runtime.RawExtension{{Raw: []byte(`{"name":"exact","type":"equals"}`)}}}
	// The API server applied spec.judging's defaults.
	want.CodeJudgeTimeoutSeconds, want.CodeJudgeWorkers = got.Spec.Judging.CodeJudgeTimeoutSeconds, got.Spec.Judging.CodeJudgeWorkers
	if diff := cmp.Diff(want, got.Spec.Judging); diff != "" {
		t.Errorf("spec.judging (-want +got):\n%s", diff)
	}
	if got.Spec.Rejudge == nil || got.Spec.Rejudge.From != "screening" {
		t.Errorf("spec.rejudge %+v", got.Spec.Rejudge)
	}

	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("passThreshold: \"0.9\"\nthreshold: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = kubectlEvalrun(t, ns, "rejudge", "screening", "--judging", bad, "--name", "screening-bad")
	if err == nil || !strings.Contains(err.Error(), "is not a spec.judging object") {
		t.Errorf("a --judging file with an unknown field: %v", err)
	}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "screening-bad"}, &evalsv1alpha1.EvalRun{}); err == nil {
		t.Error("a re-judge was created from a bad --judging file")
	}
	if _, _, err := kubectlEvalrun(t, ns, "rejudge", "nowhere"); err == nil || !strings.Contains(err.Error(), "reading EvalRun") {
		t.Errorf("a re-judge of a run that does not exist: %v", err)
	}

	// --baseline names the run to compare with; one that does not exist is refused before anything is created.
	if _, _, err := kubectlEvalrun(t, ns, "rejudge", "screening", "--name", "screening-compared", "--baseline", "screening-again"); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "screening-compared"}, got); err != nil {
		t.Fatal(err)
	}
	if b := got.Spec.Baseline; b == nil || ptr.Deref(b.RunName, "") != "screening-again" {
		t.Errorf("spec.baseline %+v, want runName screening-again", got.Spec.Baseline)
	}
	_, _, err = kubectlEvalrun(t, ns, "rejudge", "screening", "--name", "screening-orphan", "--baseline", "nowhere")
	if err == nil || !strings.Contains(err.Error(), "--baseline: reading EvalRun") {
		t.Errorf("a re-judge compared with a run that does not exist: %v", err)
	}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "screening-orphan"}, &evalsv1alpha1.EvalRun{}); err == nil {
		t.Error("a re-judge was created with a --baseline that does not exist")
	}
}
