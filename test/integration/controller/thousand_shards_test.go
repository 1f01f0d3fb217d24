package controller_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/assess"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/children"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/options"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/outcome"
	"github.com/evalrun-operator/evalrun-operator/internal/pod/collector"
	"github.com/evalrun-operator/evalrun-operator/internal/pod/install"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
)

// thousandShards is the largest spec.sharding.shards the API allows.
const thousandShards = 1000

// shardCollector does what each shard's pod does with its runner's output (collectShard), for many shards of one
// run: the pinned run configuration is read once and the collector's client made once.
type shardCollector struct {
	run    *evalsv1alpha1.EvalRun
	cfg    podwire.RunConfig
	source string
	sa     client.Client
}

func newShardCollector(t *testing.T, run *evalsv1alpha1.EvalRun) *shardCollector {
	t.Helper()
	pinned := &corev1.ConfigMap{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: run.Namespace, Name: children.NamesFor(run.Name).EvalConfigMap}, pinned); err != nil {
		t.Fatal(err)
	}
	cfg, err := children.RunConfigFrom(pinned)
	if err != nil {
		t.Fatal(err)
	}
	source := filepath.Join(t.TempDir(), "eval.yaml")
	if err := os.WriteFile(source, []byte(pinned.Data[podwire.EvalFileKey]), 0o644); err != nil {
		t.Fatal(err)
	}
	return &shardCollector{run: run, cfg: cfg, source: source, sa: collectorClient(t, run)}
}

// collect judges output as shard index's collector and records the shard's collection.
func (s *shardCollector) collect(ctx context.Context, dir string, index int, podName, output string) error {
	cfg := s.cfg
	cfg.SourceEvalFile, cfg.EvalFile = s.source, filepath.Join(dir, "shard", "eval.yaml")
	if err := cfg.LoadShard(strconv.Itoa(index)); err != nil {
		return err
	}
	if err := install.WriteShardEvalFile(ctx, &cfg, ""); err != nil {
		return err
	}
	out := podwire.Output{Root: filepath.Join(dir, "out")}
	if err := os.MkdirAll(out.Root, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(out.BatchOutput(), []byte(output), 0o644); err != nil {
		return err
	}
	g, err := collector.Gather(ctx, collector.GatherInput{Config: &cfg, Output: out, EndCause: outcome.EndEnded, PodName: podName, Now: time.Now()})
	if err != nil {
		return err
	}
	if err := collector.WriteResultConfigMaps(ctx, s.sa, s.run.Namespace, cfg.ResultConfigMaps, g.Output.Chunks); err != nil {
		return err
	}
	return collector.WriteShardSection(ctx, s.sa, s.run.Namespace, cfg.ShardConfigMap(), g.Output.Section)
}

// TestThousandShards runs one case in each of 1,000 shards, as the Job controller and 1,000 collectors would: the
// shards start and finish one after another over several status intervals (20 at a time, like a parallelism of
// 20), the last one leaves its case out. It reports the manager's writes, its EvalRun status writes above all,
// and checks that shard completions are merged in batches: at most one status write per
// options.DefaultProgressStatusInterval while shards run, plus the few transitions and the end.
func TestThousandShards(t *testing.T) {
	requireEnv(t)
	ctx := context.Background()
	ns := newNamespace(t)
	run := createRun(t, testutil.MakeEvalRun("thousand", ns).Inline(testutil.DecisionEval(thousandShards)).Shards(thousandShards, 20))
	job := waitJob(t, run)
	if n := ptr.Deref(job.Spec.Completions, 0); n != thousandShards {
		t.Fatalf("Job completions %d, want %d", n, thousandShards)
	}
	sc := newShardCollector(t, run)
	start := time.Now()
	updateJobStatus(t, job, func(s *batchv1.JobStatus) { s.StartTime = ptr.To(metav1.Now()) })

	// Shards run in waves of 20, each shard's pod created, collected and ended; the Job's completed indexes are
	// updated after each wave.
	const wave = 20
	var completed []string
	for lo := 0; lo < thousandShards; lo += wave {
		var wg sync.WaitGroup
		errs := make(chan error, wave)
		for i := lo; i < min(lo+wave, thousandShards); i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs <- finishShard(ctx, t, sc, job, i)
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		for i := lo; i < min(lo+wave, thousandShards); i++ {
			completed = append(completed, strconv.Itoa(i))
		}
		updateJobStatus(t, job, func(s *batchv1.JobStatus) { s.CompletedIndexes = strings.Join(completed, ",") })
	}
	finished := time.Since(start)
	got := waitReason(t, run, metav1.ConditionFalse, evalsv1alpha1.ReasonMissingResults)
	ended := time.Since(start)

	counts := writes.in(ns)
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	t.Logf("%d shards finished in %s; the run ended after %s", thousandShards, finished.Round(time.Millisecond), ended.Round(time.Millisecond))
	for _, k := range keys {
		t.Logf("  %-28s %6d", k, counts[k])
	}
	statusWrites := counts["apply EvalRun/status"]
	t.Logf("EvalRun status writes in total: %d (%.3f per shard)", statusWrites, float64(statusWrites)/thousandShards)

	if s := got.Status.Sharding; s == nil || s.Shards != thousandShards || s.Succeeded != thousandShards-1 || s.Failed != 1 ||
		s.OmittedShards != thousandShards-evalsv1alpha1.MaxStatusShards {
		t.Errorf("sharding %+v", got.Status.Sharding)
	}
	if sum := got.Status.Summary; sum == nil || sum.Total != thousandShards || sum.Passed != thousandShards-1 || sum.Missing != 1 {
		t.Errorf("merged summary %+v", got.Status.Summary)
	}
	// While shards run, at most one write per interval; then the transitions (Pending, Running), the merged
	// results and the end, and a margin for writes the cache's lag repeats.
	limit := int(ended/options.DefaultProgressStatusInterval) + 10
	if statusWrites > limit {
		t.Errorf("%d EvalRun status writes over %s, want at most %d (one per %s while shards run)", statusWrites,
			ended.Round(time.Second), limit, options.DefaultProgressStatusInterval)
	}
	expectReleasedPods(t, job)
}

// expectReleasedPods: every succeeded shard's pod from assess.KeptShardPods on was released (evicted, under its
// UID, once the Job counted its index), the pods of the first KeptShardPods shards and of the failed last shard
// are left.
func expectReleasedPods(t *testing.T, job *batchv1.Job) {
	t.Helper()
	var left map[int]bool
	eventually(t, "the succeeded shards' pods past the kept ones are released", func() error {
		var pods corev1.PodList
		if err := k8s.List(context.Background(), &pods, client.InNamespace(job.Namespace), client.MatchingLabels{batchv1.JobNameLabel: job.Name}); err != nil {
			return err
		}
		left = map[int]bool{}
		for _, p := range pods.Items {
			i, err := strconv.Atoi(p.Annotations[podwire.AnnotationJobCompletionIndex])
			if err != nil {
				return fmt.Errorf("pod %s has no completion index", p.Name)
			}
			if p.DeletionTimestamp == nil {
				left[i] = true
			}
		}
		if n := len(left); n != assess.KeptShardPods+1 {
			return fmt.Errorf("%d pods left, want %d (the first %d shards' and the failed one's)", n, assess.KeptShardPods+1, assess.KeptShardPods)
		}
		return nil
	})
	for i := range assess.KeptShardPods {
		if !left[i] {
			t.Errorf("shard %d's pod was released; the first %d shards keep theirs", i, assess.KeptShardPods)
		}
	}
	if !left[thousandShards-1] {
		t.Errorf("the failed shard %d's pod was released", thousandShards-1)
	}
}

// finishShard creates shard i's pod, collects its output (one case; the last shard's is left out) and ends its
// runner.
func finishShard(ctx context.Context, t *testing.T, sc *shardCollector, job *batchv1.Job, i int) error {
	pod := shardPod(job, i)
	if err := k8s.Create(ctx, pod); err != nil {
		return fmt.Errorf("creating pod of shard %d: %w", i, err)
	}
	pod.Status.Phase = corev1.PodRunning
	if err := k8s.Status().Update(ctx, pod); err != nil {
		return fmt.Errorf("starting pod of shard %d: %w", i, err)
	}
	output := testutil.DecisionLine(i, "CLEAR")
	if i == thousandShards-1 {
		output = ""
	}
	if err := sc.collect(ctx, t.TempDir(), i, pod.Name, output); err != nil {
		return fmt.Errorf("collecting shard %d: %w", i, err)
	}
	runnerTerminated(0, "Completed", time.Now())(&pod.Status)
	pod.Status.Phase = corev1.PodSucceeded
	if err := k8s.Status().Update(ctx, pod); err != nil {
		return fmt.Errorf("ending pod of shard %d: %w", i, err)
	}
	return nil
}
