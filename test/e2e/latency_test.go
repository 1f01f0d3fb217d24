//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
)

// latencyRuns is how many one-case runs (and as many bare Jobs) TestOneCaseLatency measures.
const latencyRuns = 5

// latencyCommand is the one-case runner of the latency figures: the EvalRun and the bare Job run the same command
// in the same image.
const latencyCommand = `echo '{"id":"one","text":"hi"}' > %s`

// TestOneCaseLatency measures, as a figure and not a timed assertion, how long a one-case run takes from its
// create to a terminal Succeeded condition, against a bare Job running the same runner command in the same image
// from its create to its Complete condition, one at a time and in turn (EvalRun, Job, EvalRun, ...), so both see
// the same node. Median and spread go to the log. It runs before the parallel scenarios so their load does not
// skew it.
func TestOneCaseLatency(t *testing.T) {
	ns := newNamespace(t, "latency", nil)
	eval := "$schema: agentv-eval-v2\nevalcases:\n  - id: one\n    input_messages: [{role: user, content: hi}]\n" +
		"    expected_messages: [{role: assistant, content: hi}]\n"
	var runs, jobs []time.Duration
	for i := range latencyRuns {
		run := sampleRun(fmt.Sprintf("one-%d", i), ns).Inline(eval).Command(fmt.Sprintf(latencyCommand, "{OUTPUT_FILE}")).Obj()
		start := time.Now()
		create(t, run)
		got := waitTerminalFast(t, ns, run.Name)
		runs = append(runs, time.Since(start))
		expectCondition(t, got, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionTrue, evalsv1alpha1.ReasonCompleted})

		job := bareJob(fmt.Sprintf("bare-%d", i), ns)
		start = time.Now()
		if err := k8s.Create(ctxFor(t, nsTimeout), job); err != nil {
			t.Fatal(err)
		}
		waitJobCompleteFast(t, ns, job.Name)
		jobs = append(jobs, time.Since(start))
	}
	rm, jm := median(runs), median(jobs)
	t.Logf("latency: one-case run, create -> terminal Succeeded, %d runs: median %s, min %s, max %s (all: %v)",
		len(runs), rm.Round(10*time.Millisecond), slices.Min(runs).Round(10*time.Millisecond),
		slices.Max(runs).Round(10*time.Millisecond), runs)
	t.Logf("latency: bare Job, same runner, create -> Complete, %d Jobs: median %s, min %s, max %s (all: %v)",
		len(jobs), jm.Round(10*time.Millisecond), slices.Min(jobs).Round(10*time.Millisecond),
		slices.Max(jobs).Round(10*time.Millisecond), jobs)
	t.Logf("latency: EvalRun / bare Job (medians) = %.2fx", float64(rm)/float64(jm))
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// bareJob is a Job running the latency runner in the runner image under Pod Security "restricted", with nothing of
// the operator around it.
func bareJob(name, ns string) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr.To[int32](0),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy:                corev1.RestartPolicyNever,
				AutomountServiceAccountToken: ptr.To(false),
				EnableServiceLinks:           ptr.To(false),
				SecurityContext: &corev1.PodSecurityContext{
					RunAsNonRoot:   ptr.To(true),
					RunAsUser:      ptr.To[int64](65532),
					SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
				},
				Containers: []corev1.Container{{
					Name:            "runner",
					Image:           runnerImage,
					ImagePullPolicy: corev1.PullNever,
					Command:         []string{"sh", "-c", fmt.Sprintf(latencyCommand, "/tmp/results.jsonl")},
					SecurityContext: &corev1.SecurityContext{
						AllowPrivilegeEscalation: ptr.To(false),
						Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
					},
				}},
			}},
		},
	}
}

// waitJobCompleteFast polls every 25 ms for the Job's Complete condition (a Failed one fails the test).
func waitJobCompleteFast(t *testing.T, ns, name string) {
	t.Helper()
	ctx := ctxFor(t, runTimeout)
	job := &batchv1.Job{}
	err := wait.PollUntilContextCancel(ctx, 25*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, job); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		for _, c := range job.Status.Conditions {
			if c.Status != corev1.ConditionTrue {
				continue
			}
			if c.Type == batchv1.JobFailed {
				return false, fmt.Errorf("the bare Job failed: %s", c.Message)
			}
			if c.Type == batchv1.JobComplete {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("Job %s/%s did not complete: %v", ns, name, err)
	}
}

// waitTerminalFast polls every 25 ms (the shared poll interval would blur the figure) for a terminal condition.
func waitTerminalFast(t *testing.T, ns, name string) *evalsv1alpha1.EvalRun {
	t.Helper()
	ctx := ctxFor(t, runTimeout)
	run := &evalsv1alpha1.EvalRun{}
	err := wait.PollUntilContextCancel(ctx, 25*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, run); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		c := succeeded(run)
		return c != nil && c.Status != metav1.ConditionUnknown, nil
	})
	if err != nil {
		t.Fatalf("EvalRun %s/%s did not end: %v%s", ns, name, err, describeConditions(run.Status.Conditions))
	}
	return run
}

// TestOneCaseLatencyCodeJudge measures, as a figure, what running code judges in the judge image costs: one-case
// runs with one code_judge, create -> terminal Succeeded, judged in the manager's judge image (judging.image unset)
// and in the runner's image (judging.image naming it, as every run with code judges did before the judge image),
// in turn on the same node. Both images are on the node already (hack/images.sh), as they are after a run's first
// pull; the judge image is larger than the sample runner's (about 250 MB unpacked against 2 MB), so a node that
// must pull it pays that once.
func TestOneCaseLatencyCodeJudge(t *testing.T) {
	ns := newNamespace(t, "latency-judge", nil)
	eval := "$schema: agentv-eval-v2\nevalcases:\n  - id: one\n    input_messages: [{role: user, content: hi}]\n" +
		"    expected_messages: [{role: assistant, content: hi}]\n" +
		"    execution:\n      evaluators:\n        - {name: ok, type: code_judge, script: \"cat >/dev/null; echo '{\\\"score\\\": 1}'\"}\n"
	var inJudge, inRunner []time.Duration
	for i := range latencyRuns {
		for _, target := range []bool{false, true} {
			run := sampleRun(fmt.Sprintf("one-%d-%t", i, target), ns).Inline(eval).Command(fmt.Sprintf(latencyCommand, "{OUTPUT_FILE}")).Obj()
			if target {
				run.Spec.Judging = &evalsv1alpha1.Judging{Image: runnerImage}
			}
			start := time.Now()
			create(t, run)
			got := waitTerminalFast(t, ns, run.Name)
			took := time.Since(start)
			expectCondition(t, got, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionTrue, evalsv1alpha1.ReasonCompleted})
			expectDiff(t, "verdicts", map[string]evalsv1alpha1.Verdict{"one": evalsv1alpha1.VerdictPass}, verdicts(got))
			if target {
				inRunner = append(inRunner, took)
			} else {
				inJudge = append(inJudge, took)
			}
		}
	}
	jm, rm := median(inJudge), median(inRunner)
	t.Logf("latency: one-case run with a code judge in the judge image, %d runs: median %s, min %s, max %s (all: %v)",
		len(inJudge), jm.Round(10*time.Millisecond), slices.Min(inJudge).Round(10*time.Millisecond),
		slices.Max(inJudge).Round(10*time.Millisecond), inJudge)
	t.Logf("latency: one-case run with a code judge in the runner's image, %d runs: median %s, min %s, max %s (all: %v)",
		len(inRunner), rm.Round(10*time.Millisecond), slices.Min(inRunner).Round(10*time.Millisecond),
		slices.Max(inRunner).Round(10*time.Millisecond), inRunner)
	t.Logf("latency: judge image / runner's image (medians) = %.2fx", float64(jm)/float64(rm))
}
