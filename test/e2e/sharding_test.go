//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/assess"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
)

// shardSummary is a shard's status entry, as compared.
func shardSummary(run *evalsv1alpha1.EvalRun) []string {
	var out []string
	for _, s := range run.Status.Shards {
		out = append(out, fmt.Sprintf("%d %s/%s cases=%d passed=%d failed=%d missing=%d %v",
			s.Index, s.State, s.Reason, s.Cases, s.Passed, s.Failed, s.Missing, s.MissingIDs))
	}
	return out
}

// TestShardedRunAndResume runs the sample's 12 cases in 3 shards of 4 (2 pods at a time) on the real cluster. The
// runner of the shard holding case-007 fails on reaching it (after answering case-005 and case-006), and the
// sample runner never answers case-012 (the last shard). Each shard's runner gets only its cases, the other shards'
// results are kept, and the run ends RunnerFailed with one merged picture. A resume of it with NotPassed, in 2
// shards and with a runner that no longer fails, runs only the 4 cases that did not pass and ends with the
// combined picture: 11 results, case-011 failing again and case-012 still missing.
func TestShardedRunAndResume(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "sharded", nil)
	// The runner prints the ids of its eval file, so each shard's log shows what it was given.
	listIDs := `printf 'ids: %s:end\n' "$(grep -o -- '- id: case-[0-9]*' "$EVAL_FILE" | tr '\n' ' ')" >&2; `
	first := sampleRun("first", ns).Inline(sampleEvalFile(t)).Shards(3, 2).
		Command(listIDs + sampleCommand + " --fail-on-case case-007").Obj()
	create(t, first)
	got := waitFinished(t, ns, first.Name, runTimeout)

	expectCondition(t, got, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionFalse, evalsv1alpha1.ReasonRunnerFailed})
	if c := succeeded(got); !strings.HasPrefix(c.Message, "2 of 3 shards failed; shard 1: ") || !strings.Contains(c.Message, "simulated failure at case-007") {
		t.Errorf("Succeeded message %q: want shard 1's failure with the runner's stderr", c.Message)
	}
	expectDiff(t, "summary", counts{Total: 12, Passed: 8, Failed: 1, Errored: 3, Missing: 3}, summaryCounts(got))
	expectDiff(t, "missing ids", []string{"case-007", "case-008", "case-012"}, got.Status.MissingIDs)
	wantVerdicts := map[string]evalsv1alpha1.Verdict{}
	for id, v := range sampleVerdicts {
		if id != "case-007" && id != "case-008" {
			wantVerdicts[id] = v
		}
	}
	expectDiff(t, "verdicts", wantVerdicts, verdicts(got))
	expectDiff(t, "shards", []string{
		"1 Failed/RunnerFailed cases=4 passed=2 failed=0 missing=2 [case-007 case-008]",
		"2 Failed/MissingResults cases=4 passed=2 failed=1 missing=1 [case-012]",
		"0 Succeeded/Completed cases=4 passed=4 failed=0 missing=0 []",
	}, shardSummary(got))
	if s := got.Status.Sharding; s == nil || s.Shards != 3 || s.Split != "Contiguous" || s.Succeeded != 1 || s.Failed != 2 {
		t.Errorf("sharding %+v", got.Status.Sharding)
	}
	if r := got.Status.Results; r == nil || r.TotalCases != 12 {
		t.Errorf("results reference %+v: want every case's result stored", got.Status.Results)
	}
	// Each shard's runner saw exactly its own cases.
	for _, pod := range runPods(t, ns, first.Name) {
		index := pod.Annotations[podwire.AnnotationJobCompletionIndex]
		logs := podLogs(t, ns, pod.Name, podwire.ContainerRunner)
		want := map[string]string{
			"0": "- id: case-001 - id: case-002 - id: case-003 - id: case-004 ",
			"1": "- id: case-005 - id: case-006 - id: case-007 - id: case-008 ",
			"2": "- id: case-009 - id: case-010 - id: case-011 - id: case-012 ",
		}[index]
		if want == "" || !strings.Contains(logs, "ids: "+want+":end") {
			t.Errorf("shard %q's runner log %q does not list exactly its cases %q", index, textbound.Head(logs, 300), want)
		}
	}

	resumeNotPassed(t, ns, first.Name, listIDs, got)
}

// resumeNotPassed resumes the first run of TestShardedRunAndResume with NotPassed, in 2 shards, and checks that it
// ran only the 4 cases that did not pass and ends with the combined picture.
func resumeNotPassed(t *testing.T, ns, firstName, listIDs string, first *evalsv1alpha1.EvalRun) {
	t.Helper()
	got := first
	second := sampleRun("second", ns).Inline(sampleEvalFile(t)).Shards(2, 0).
		Resume(firstName, evalsv1alpha1.ResumeNotPassed).Command(listIDs + sampleCommand).Obj()
	create(t, second)
	got2 := waitFinished(t, ns, second.Name, runTimeout)
	expectCondition(t, got2, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionFalse, evalsv1alpha1.ReasonMissingResults})
	expectDiff(t, "combined summary", counts{Total: 12, Passed: 10, Failed: 1, Errored: 1, Missing: 1}, summaryCounts(got2))
	expectDiff(t, "combined verdicts", sampleVerdicts, verdicts(got2))
	expectDiff(t, "missing ids", []string{"case-012"}, got2.Status.MissingIDs)
	carried := map[string]string{}
	for _, c := range got2.Status.Cases {
		carried[c.ID] = ptr.Deref(c.CarriedFrom, "")
	}
	for id := range sampleVerdicts {
		want := firstName
		if id == "case-007" || id == "case-008" || id == "case-011" {
			want = ""
		}
		if carried[id] != want {
			t.Errorf("case %s carriedFrom %q, want %q", id, carried[id], want)
		}
	}
	if r := got2.Status.Resume; r == nil || r.From != firstName || r.Ran != 4 || r.Carried != 8 {
		t.Errorf("resume status %+v, want 4 run and 8 carried from %s", got2.Status.Resume, firstName)
	}
	if got2.Status.EvalFileSHA256 != got.Status.EvalFileSHA256 {
		t.Errorf("the resumed run's eval file digest %s differs from the first's %s", got2.Status.EvalFileSHA256, got.Status.EvalFileSHA256)
	}
	pods := runPods(t, ns, second.Name)
	if len(pods) != 2 {
		t.Errorf("the resume ran %d pods, want 2", len(pods))
	}
	for _, pod := range pods {
		index := pod.Annotations[podwire.AnnotationJobCompletionIndex]
		logs := podLogs(t, ns, pod.Name, podwire.ContainerRunner)
		want := map[string]string{"0": "- id: case-007 - id: case-008 ", "1": "- id: case-011 - id: case-012 "}[index]
		if want == "" || !strings.Contains(logs, "ids: "+want+":end") {
			t.Errorf("the resume's shard %q ran %q, want exactly %q", index, textbound.Head(logs, 300), want)
		}
	}
}

// TestSucceededShardPodsReleased: a run of KeptShardPods+2 one-case shards (20 pods at a time) ends Completed with
// every case passed. Once a shard past the first KeptShardPods succeeded and the Job counted it, the manager
// deletes its pod (a node keeps every finished pod until then, and the kubelet's work grows with them); the first
// KeptShardPods shards keep theirs, and every shard status.shards lists still shows its pod and image digest.
func TestSucceededShardPodsReleased(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "release", nil)
	shards := assess.KeptShardPods + 2
	run := sampleRun("many", ns).Inline(testutil.DecisionEval(shards)).Shards(int32(shards), 20).
		Resources(corev1.ResourceRequirements{}).Obj()
	create(t, run)
	got := waitFinished(t, ns, run.Name, 2*runTimeout)
	expectCondition(t, got, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionTrue, evalsv1alpha1.ReasonCompleted})
	expectDiff(t, "summary", counts{Total: int32(shards), Passed: int32(shards)}, summaryCounts(got))
	if s := got.Status.Sharding; s == nil || s.Succeeded != int32(shards) || s.OmittedShards != 2 {
		t.Errorf("sharding %+v, want %d succeeded, 2 not listed", got.Status.Sharding, shards)
	}
	for _, st := range got.Status.Shards {
		if int(st.Index) >= assess.KeptShardPods || st.PodName == "" || ptr.Deref(st.ImageID, "") == "" {
			t.Errorf("status.shards lists shard %d (pod %q, image %q): want only shards below %d, each with its pod and image",
				st.Index, st.PodName, ptr.Deref(st.ImageID, ""), assess.KeptShardPods)
		}
	}
	// The decisive reconcile released the last shards' pods: wait for their deletion to land.
	ctx := ctxFor(t, time.Minute)
	var left map[int]bool
	err := wait.PollUntilContextCancel(ctx, time.Second, true, func(context.Context) (bool, error) {
		left = map[int]bool{}
		for _, p := range runPods(t, ns, run.Name) {
			i, err := strconv.Atoi(p.Annotations[podwire.AnnotationJobCompletionIndex])
			if err != nil {
				return false, fmt.Errorf("pod %s has no completion index", p.Name)
			}
			left[i] = true
		}
		return !left[assess.KeptShardPods] && !left[assess.KeptShardPods+1], nil
	})
	if err != nil {
		t.Errorf("pods of shards %d and %d still there after the run ended: %v", assess.KeptShardPods, assess.KeptShardPods+1, err)
	}
	for i := range assess.KeptShardPods {
		if !left[i] {
			t.Errorf("shard %d's pod was deleted; the first %d shards keep theirs", i, assess.KeptShardPods)
		}
	}
}
