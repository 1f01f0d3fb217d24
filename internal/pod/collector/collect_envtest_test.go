package collector

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/statusapply"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"golang.org/x/sys/unix"
)

var (
	envOnce   sync.Once
	testEnv   *envtest.Environment
	envClient client.WithWatch
	envErr    error
)

// apiClient starts one envtest API server for the package (stopped in TestMain) and returns a client for it.
func apiClient(t *testing.T) client.WithWatch {
	t.Helper()
	envOnce.Do(func() {
		env, cfg, err := testutil.StartEnv()
		if err != nil {
			envErr = err
			return
		}
		testEnv = env
		s, err := Scheme()
		if err != nil {
			envErr = err
			return
		}
		envClient, envErr = client.NewWithWatch(cfg, client.Options{Scheme: s})
	})
	if envErr != nil {
		testutil.EnvUnavailable(t, envErr)
	}
	return envClient
}

func stopEnv() {
	if testEnv != nil {
		_ = testEnv.Stop()
	}
}

var nsCounter atomic.Int32

// run is one EvalRun in its own namespace with its result ConfigMaps and a work volume.
type run struct {
	*fixture
	c    client.Client
	ns   string
	name string
	uid  string
	// calls counts the clock's reads: each one is a minute later, so a collector that reads the clock again on
	// a re-run writes a different collectedAt.
	calls atomic.Int64
}

func (r *run) now() time.Time {
	return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(r.calls.Add(1)) * time.Minute)
}

func newRun(t *testing.T, c client.Client, resultConfigMaps int) *run {
	t.Helper()
	ctx := context.Background()
	ns := fmt.Sprintf("collect-%d", nsCounter.Add(1))
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	er := testutil.MakeEvalRun("run", ns).Obj()
	if err := c.Create(ctx, er); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t)
	f.Config.Namespace, f.Config.UID = ns, string(er.UID)
	f.Config.ResultsDeadlineSeconds = 30
	for i := range resultConfigMaps {
		name := fmt.Sprintf("run-results-%d", i)
		if err := c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}); err != nil {
			t.Fatal(err)
		}
		f.Config.ResultConfigMaps = append(f.Config.ResultConfigMaps, name)
	}
	return &run{fixture: f, c: c, ns: ns, name: "run", uid: string(er.UID)}
}

// applyManagerStatus writes manager-owned fields the way the manager does: server-side apply as evalrun-manager.
func (r *run) applyManagerStatus(t *testing.T) {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": evalsv1alpha1.GroupVersion.String(), "kind": "EvalRun",
		"metadata": map[string]any{"name": r.name, "namespace": r.ns},
		"status": map[string]any{
			"jobName": "run",
			"conditions": []any{map[string]any{
				"type": evalsv1alpha1.ConditionSucceeded, "status": "Unknown", "reason": evalsv1alpha1.ReasonRunning,
				"message": "the runner is running", "lastTransitionTime": "2026-01-01T00:00:00Z",
			}},
		},
	}}
	if err := r.c.Status().Apply(context.Background(), client.ApplyConfigurationFromUnstructured(u),
		client.FieldOwner(statusapply.FieldManagerManager), client.ForceOwnership); err != nil {
		t.Fatal(err)
	}
}

// collect runs Collect as the collector container and plays the launcher: it holds the runner-end FIFO's write
// end, writes its report as the frame that ends the stream and releases it, as the runner container's end does. With stopEarly, the termination signal comes while
// the runner has not ended.
func (r *run) collect(t *testing.T, c client.Client, stopEarly bool) error {
	t.Helper()
	for _, marker := range []string{r.Pod.Collected(), r.Pod.RunnerStarted(), r.Pod.RunnerEnded(), r.Pod.SnapshotReady(), r.Pod.LauncherReport()} {
		_ = os.Remove(marker)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		errc <- Collect(ctx, Options{
			Config: r.Config, Pod: r.Pod, Client: c, Namespace: r.ns, Name: r.name, UID: r.uid, PodName: "run-abcde",
			TerminationLog: filepath.Join(r.Dir, "termination-log"), Log: io.Discard,
			Backoff: Backoff{Initial: 10 * time.Millisecond, Max: 50 * time.Millisecond}, Now: r.now,
		})
	}()
	if stopEarly {
		cancel()
	} else {
		fd, err := podwire.HoldRunnerEnd(context.Background(), r.Pod.RunnerEnd(), 30*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		report := mustJSON(t, podwire.LauncherReport{Batching: r.Config.Batching, Invocations: 1, Runner: &podwire.Outcome{ExitCode: new(int32)}})
		if err := podwire.WriteRunnerEnd(fd, podwire.EncodeFrame(podwire.FrameEnd, report), 30*time.Second); err != nil {
			t.Fatal(err)
		}
		_ = unix.Close(fd)
		// The collector is a regular container: it returns by itself once it has noted the collection, so that
		// the pod can finish; nothing stops it.
	}
	select {
	case err := <-errc:
		if _, serr := os.Stat(r.Pod.Collected()); serr != nil {
			t.Errorf("Collect returned without noting the collection: %v", serr)
		}
		return err
	case <-time.After(90 * time.Second):
		t.Fatal("Collect did not return")
	}
	return nil
}

func (r *run) get(t *testing.T) *evalsv1alpha1.EvalRun {
	t.Helper()
	var er evalsv1alpha1.EvalRun
	if err := r.c.Get(context.Background(), client.ObjectKey{Namespace: r.ns, Name: r.name}, &er); err != nil {
		t.Fatal(err)
	}
	return &er
}

func (r *run) configMap(t *testing.T, name string) *corev1.ConfigMap {
	t.Helper()
	var cm corev1.ConfigMap
	if err := r.c.Get(context.Background(), client.ObjectKey{Namespace: r.ns, Name: name}, &cm); err != nil {
		t.Fatal(err)
	}
	return &cm
}

const fourRecords = `{"id":"alpha","text":"A"}` + "\n" + `{"id":"beta","text":"B"}` + "\n" + `{"id":"gamma","text":"C"}` + "\n" + `{"id":"delta","text":"D"}` + "\n"

func TestCollectMergesWithManagerAndIsIdempotent(t *testing.T) {
	c := apiClient(t)
	r := newRun(t, c, 2)
	r.applyManagerStatus(t)
	r.write(t, r.Pod.Output().BatchOutput(), fourRecords)
	r.finishedRunner(t, 0)

	if err := r.collect(t, c, false); err != nil {
		t.Fatalf("Collect: %v", err)
	}
	er := r.get(t)
	st := er.Status
	if st.JobName != "run" || meta.FindStatusCondition(st.Conditions, evalsv1alpha1.ConditionSucceeded) == nil {
		t.Errorf("the manager's fields were lost: jobName %q, conditions %+v", st.JobName, st.Conditions)
	}
	trunc := meta.FindStatusCondition(st.Conditions, evalsv1alpha1.ConditionResultsTruncated)
	if trunc == nil || trunc.Status != metav1.ConditionFalse {
		t.Errorf("ResultsTruncated condition %+v, want False", trunc)
	}
	if st.Summary == nil || st.Summary.Total != 4 || len(st.Cases) != 4 || st.Collection == nil || st.Collection.Outcome != evalsv1alpha1.OutcomeCompleted {
		t.Fatalf("collector status not written: summary %+v, cases %d, collection %+v", st.Summary, len(st.Cases), st.Collection)
	}
	if diff := cmp.Diff(&evalsv1alpha1.ResultsReference{ConfigMaps: []string{"run-results-0"}, Key: podwire.ResultsKey, Format: podwire.ResultsFormat, TotalCases: 4}, st.Results); diff != "" {
		t.Errorf("results reference (-want +got):\n%s", diff)
	}
	if len(r.configMap(t, "run-results-0").BinaryData[podwire.ResultsKey]) == 0 {
		t.Errorf("result ConfigMap 0 holds no results")
	}
	// Field ownership: the collector owns its fields, the manager keeps its own.
	owners := map[string]bool{}
	for _, mf := range er.ManagedFields {
		if mf.Subresource == "status" {
			owners[mf.Manager] = true
		}
	}
	if !owners[statusapply.FieldManagerCollector] || !owners[statusapply.FieldManagerManager] {
		t.Errorf("status managers %v, want both evalrun-manager and evalrun-collector", owners)
	}
	term, err := os.ReadFile(filepath.Join(r.Dir, "termination-log"))
	if err != nil || len(term) >= 4096 || !strings.Contains(string(term), `"outcome":"Completed"`) || !strings.Contains(string(term), `"persisted":true`) {
		t.Errorf("termination message %q (%v)", term, err)
	}

	// A restarted collector writes the same objects: nothing changes, not even resource versions.
	cm0 := r.configMap(t, "run-results-0")
	if err := r.collect(t, c, false); err != nil {
		t.Fatalf("second Collect: %v", err)
	}
	again := r.get(t)
	if diff := cmp.Diff(er.Status, again.Status); diff != "" {
		t.Errorf("status changed on re-run (-first +second):\n%s", diff)
	}
	if again.ResourceVersion != er.ResourceVersion || r.configMap(t, "run-results-0").ResourceVersion != cm0.ResourceVersion {
		t.Errorf("a re-run wrote again: EvalRun %s -> %s", er.ResourceVersion, again.ResourceVersion)
	}
}

func TestCollectBudgetAndOverflow(t *testing.T) {
	c := apiClient(t)
	r := newRun(t, c, 3)
	// 4,000 cases of which every fourth is missing; a small budget forces truncation.
	// Answers are pseudo-random letters so the gzip'd results need more than one ConfigMap.
	var ids []string
	var out strings.Builder
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range 4000 {
		id := fmt.Sprintf("case-%04d", i)
		ids = append(ids, id)
		if i%4 != 3 {
			answer := make([]byte, 800)
			for k := range answer {
				answer[k] = byte('a' + rng.IntN(26))
			}
			fmt.Fprintf(&out, `{"id":%q,"text":"%s"}`+"\n", id, answer)
		}
	}
	var eval strings.Builder
	eval.WriteString("evalcases:\n")
	for i, id := range ids {
		fmt.Fprintf(&eval, "  - id: %s\n    input_messages: [{role: user, content: q%d}]\n    execution: {evaluators: [{name: lat, type: latency, threshold: %d}]}\n", id, i, 1000)
	}
	r.write(t, r.Config.EvalFile, eval.String())
	r.Config.CaseIDs = ids
	r.Config.StatusBudgetBytes = 64 << 10
	r.write(t, r.Pod.Output().BatchOutput(), out.String())
	r.finishedRunner(t, 0)

	if err := r.collect(t, c, false); err != nil {
		t.Fatalf("Collect: %v", err)
	}
	st := r.get(t).Status
	trunc := meta.FindStatusCondition(st.Conditions, evalsv1alpha1.ConditionResultsTruncated)
	if trunc == nil || trunc.Status != metav1.ConditionTrue || trunc.Reason != evalsv1alpha1.ReasonStatusBudgetExceeded {
		t.Errorf("ResultsTruncated %+v, want True/StatusBudgetExceeded", trunc)
	}
	ref := st.Results
	if len(ref.ConfigMaps) < 2 {
		t.Errorf("results use %d ConfigMaps, want the overflow into at least 2", len(ref.ConfigMaps))
	}
	if int(ref.TotalCases) != 4000 {
		t.Errorf("result ConfigMaps hold %d cases, want all 4000", ref.TotalCases)
	}
	if got := len(st.Cases) + int(ref.OmittedCases); got != 3000 {
		t.Errorf("status cases %d + omitted %d = %d, want the 3000 judged cases", len(st.Cases), ref.OmittedCases, got)
	}
	if got := len(st.MissingIDs) + int(ref.OmittedMissingIDs); got != 1000 || st.Summary.Missing != 1000 {
		t.Errorf("missing ids %d + omitted %d, summary %d; want 1000", len(st.MissingIDs), ref.OmittedMissingIDs, st.Summary.Missing)
	}
	section := struct {
		evalsv1alpha1.EvalRunStatus
	}{st}
	section.Conditions, section.JobName = nil, ""
	if n := len(mustJSON(t, section)); n > 64<<10+1024 {
		t.Errorf("status results section is %d bytes, over the 64 KiB budget", n)
	}
	// The ConfigMaps named in the reference are exactly the non-empty ones.
	for i := range 3 {
		name := fmt.Sprintf("run-results-%d", i)
		has := len(r.configMap(t, name).BinaryData[podwire.ResultsKey]) > 0
		listed := false
		for _, n := range ref.ConfigMaps {
			listed = listed || n == name
		}
		if has != listed {
			t.Errorf("ConfigMap %s holds data %v but listed %v", name, has, listed)
		}
	}
}

func TestCollectRetriesAPIErrors(t *testing.T) {
	c := apiClient(t)
	r := newRun(t, c, 1)
	r.write(t, r.Pod.Output().BatchOutput(), fourRecords)
	r.finishedRunner(t, 0)
	var applyFailures, patchFailures atomic.Int32
	unavailable := apierrors.NewServiceUnavailable("injected")
	faulty := interceptor.NewClient(envClient, interceptor.Funcs{
		Patch: func(ctx context.Context, cl client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if patchFailures.Add(1) <= 2 {
				return unavailable
			}
			return cl.Patch(ctx, obj, patch, opts...)
		},
		SubResourceApply: func(ctx context.Context, cl client.Client, sub string, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
			if applyFailures.Add(1) <= 3 {
				return apierrors.NewTooManyRequests("injected", 0)
			}
			return cl.SubResource(sub).Apply(ctx, obj, opts...)
		},
	})
	if err := r.collect(t, faulty, false); err != nil {
		t.Fatalf("Collect through injected errors: %v", err)
	}
	if applyFailures.Load() != 4 || patchFailures.Load() != 3 {
		t.Errorf("apply calls %d, patch calls %d; want 4 and 3 (failures retried, then one success)", applyFailures.Load(), patchFailures.Load())
	}
	if st := r.get(t).Status; st.Summary == nil || st.Summary.Total != 4 {
		t.Errorf("status not written after retries: %+v", st.Summary)
	}

	// Permanent errors and the deadline end the retries, and the acknowledgement says why.
	r.Config.ResultsDeadlineSeconds = 1
	broken := interceptor.NewClient(envClient, interceptor.Funcs{
		Patch: func(context.Context, client.WithWatch, client.Object, client.Patch, ...client.PatchOption) error {
			return unavailable
		},
	})
	err := r.collect(t, broken, false)
	term, _ := os.ReadFile(filepath.Join(r.Dir, "termination-log"))
	if err == nil || !strings.Contains(err.Error(), "gave up after") || !strings.Contains(string(term), `"persisted":false`) {
		t.Errorf("Collect against a broken API: %v, termination message %s; want not persisted with the reason", err, term)
	}
	notFound := interceptor.NewClient(envClient, interceptor.Funcs{
		SubResourceApply: func(context.Context, client.Client, string, runtime.ApplyConfiguration, ...client.SubResourceApplyOption) error {
			return apierrors.NewNotFound(schema.GroupResource{Group: "evals.evalrun.io", Resource: "evalruns"}, "run")
		},
	})
	start := time.Now()
	err = r.collect(t, notFound, false)
	if err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("Collect of a deleted EvalRun: %v", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("a permanent error was retried until the deadline")
	}
}

func TestCollectTerminatedBeforeRunnerEnded(t *testing.T) {
	c := apiClient(t)
	r := newRun(t, c, 1)
	r.write(t, r.Pod.Output().BatchOutput(), `{"id":"alpha","text":"A"}`+"\n"+`{"id":"be`)
	if err := r.collect(t, c, true); err != nil {
		t.Fatalf("Collect: %v", err)
	}
	st := r.get(t).Status
	if st.Collection == nil || st.Collection.RunnerFinished || st.Collection.Outcome != evalsv1alpha1.OutcomeRunnerFailed {
		t.Fatalf("collection %+v, want runnerFinished=false and RunnerFailed", st.Collection)
	}
	if st.Summary.Total != 4 || st.Summary.Missing != 3 || st.Summary.ParseErrors != 1 {
		t.Errorf("summary %+v, want 4 cases with 3 missing and the cut line as a parse error", st.Summary)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestCollectNothingToRun: the collector of a pod with no case to run (a trial of a resumed run whose shard's cases
// are all carried) waits for no runner (nobody holds the runner-end FIFO), releases the judge containers with a
// snapshot that is not final, and records an empty Completed collection in its shard ConfigMap, its result
// ConfigMaps emptied, its termination message saying it persisted; then it notes the collection done.
func TestCollectNothingToRun(t *testing.T) {
	c := apiClient(t)
	r := newRun(t, c, 1)
	shard := "run-shard-3"
	if err := c.Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: shard, Namespace: r.ns}}); err != nil {
		t.Fatal(err)
	}
	r.Config.ShardConfigMaps, r.Config.PodIndex = []string{"run-shard-0", "run-shard-1", "run-shard-2", shard}, 3
	r.Config.NothingToRun, r.Config.CaseIDs = true, []string{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		errc <- Collect(ctx, Options{Config: r.Config, Pod: r.Pod, Client: c, Namespace: r.ns, Name: r.name, UID: r.uid, PodName: "run-3-abcde",
			TerminationLog: filepath.Join(r.Dir, "termination-log"), Log: io.Discard, Backoff: Backoff{Initial: 10 * time.Millisecond}, Now: r.now})
	}()
	if err := podwire.WaitForFile(context.Background(), r.Pod.Collected(), 30*time.Second); err != nil {
		t.Fatalf("the collector did not finish: %v", err)
	}
	cancel()
	if err := <-errc; err != nil {
		t.Fatalf("Collect: %v", err)
	}
	var marker podwire.SnapshotMarker
	if err := podwire.ReadJSON(r.Pod.SnapshotReady(), &marker); err != nil || marker.Final || marker.Reason != nothingToRunMessage {
		t.Errorf("snapshot marker %+v (%v): want one that is not final, saying why", marker, err)
	}
	var s struct {
		Summary    evalsv1alpha1.RunSummary       `json:"summary"`
		Collection evalsv1alpha1.CollectionStatus `json:"collection"`
	}
	if err := json.Unmarshal([]byte(r.configMap(t, shard).Data[podwire.ShardSectionKey]), &s); err != nil {
		t.Fatal(err)
	}
	if s.Collection.Outcome != evalsv1alpha1.OutcomeCompleted || !s.Collection.RunnerFinished || s.Collection.Message != nothingToRunMessage ||
		s.Collection.PodName != "run-3-abcde" || s.Summary.Total != 0 {
		t.Errorf("shard section: collection %+v, summary %+v", s.Collection, s.Summary)
	}
	if data := r.configMap(t, "run-results-0").BinaryData; len(data) != 0 {
		t.Errorf("the pod's result ConfigMap holds %d keys, want none", len(data))
	}
	var term podwire.TerminationMessage
	if err := podwire.ReadJSON(filepath.Join(r.Dir, "termination-log"), &term); err != nil || !term.Persisted ||
		term.Outcome != string(evalsv1alpha1.OutcomeCompleted) || term.Total != 0 {
		t.Errorf("termination message %+v (%v)", term, err)
	}
}
