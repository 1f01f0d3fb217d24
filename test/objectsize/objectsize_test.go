// Package objectsize measures the EvalRun object at the full status budget, managedFields included, on a real
// kube-apiserver and etcd (envtest): both writers server-side apply their status parts as they do in a cluster.
package objectsize

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/assess"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/collect"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/options"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/pod/collector"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
	"github.com/evalrun-operator/evalrun-operator/internal/statusapply"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// objectLimit is what one object may weigh: etcd's default --max-request-bytes (1.5 MiB), which kube-apiserver's
// writes of a custom resource (stored as JSON) must fit, and the same figure as kube-apiserver's own bound on an
// object it stores.
const objectLimit = 3 << 19

// shape is one way of filling the status budget.
type shape struct {
	name string
	// cases is how many judged cases the run has; caseFor builds case i.
	cases   int
	caseFor func(i int) evalsv1alpha1.CaseResult
	// missing, parseErrors and unexpected fill the status lists (each beyond its API maximum).
	missing, parseErrors, unexpected int
}

// long returns a string of n printable bytes that starts with prefix.
func long(prefix string, n int) string {
	return (prefix + strings.Repeat("x", n))[:n]
}

var shapes = []shape{
	{
		// The most entries per byte: the status list of cases is a map list, so managedFields holds an entry for
		// every case; the smallest case has the largest managedFields per status byte.
		name: "minimal-passing-cases", cases: 20000,
		caseFor: func(i int) evalsv1alpha1.CaseResult {
			return evalsv1alpha1.CaseResult{ID: fmt.Sprintf("c%05d", i), Verdict: evalsv1alpha1.VerdictPass, Score: "1.0000"}
		},
	},
	{
		// A typical judged case: a short answer and two evaluator summaries.
		name: "typical-cases", cases: 20000,
		caseFor: func(i int) evalsv1alpha1.CaseResult {
			v := evalsv1alpha1.VerdictPass
			if i%10 == 0 {
				v = evalsv1alpha1.VerdictFail
			}
			return evalsv1alpha1.CaseResult{ID: fmt.Sprintf("case-%06d", i), Verdict: v, Score: "0.8500", Answer: `{"decision":"CLEAR"}`,
				Evaluators: []evalsv1alpha1.EvaluatorSummary{
					{Name: "decision", Type: "field_accuracy", Verdict: v, Score: "1.0000"},
					{Name: "tools", Type: "tool_trajectory", Verdict: v, Score: "0.7000", Message: "missing call: score_risk"},
				}}
		},
		missing: 5000, parseErrors: 500, unexpected: 500,
	},
	{
		// Every string at its API bound: fewer, larger cases, and full lists of long ids and parse errors.
		name: "largest-cases-and-lists", cases: 2000,
		caseFor: func(i int) evalsv1alpha1.CaseResult {
			evs := make([]evalsv1alpha1.EvaluatorSummary, 16)
			for k := range evs {
				evs[k] = evalsv1alpha1.EvaluatorSummary{Name: long(fmt.Sprintf("ev%d-", k), 128), Type: long("t", 64),
					Verdict: evalsv1alpha1.VerdictFail, Score: "0.1000", Message: long("miss ", 512)}
			}
			return evalsv1alpha1.CaseResult{ID: long(fmt.Sprintf("case-%06d-", i), 256), Verdict: evalsv1alpha1.VerdictError,
				Score: "0.0000", Answer: long("answer ", 512), Error: long("error ", 1024), Evaluators: evs}
		},
		missing: 5000, parseErrors: 500, unexpected: 500,
	},
}

// buildSection runs the collector's results builder over the shape's cases, as the collector does, to the budget.
func buildSection(t testing.TB, s shape, budget int64, collectedAt time.Time) results.Section {
	t.Helper()
	cms := make([]string, podwire.MaxResultConfigMaps)
	for i := range cms {
		cms[i] = fmt.Sprintf("size-evalrun-results-%d", i)
	}
	b := results.NewBuilder(results.Options{BudgetBytes: budget, ConfigMaps: cms})
	sum := evalsv1alpha1.RunSummary{Total: int32(s.cases + s.missing), Missing: int32(s.missing), ParseErrors: int32(s.parseErrors),
		Unexpected: int32(s.unexpected), MeanScore: "0.8500", MedianScore: "1.0000", MinScore: "0.0000", MaxScore: "1.0000",
		PassRate: "0.9000", Histogram: []int32{1, 2, 3, 4, 5}}
	for i := range s.cases {
		c := s.caseFor(i)
		switch c.Verdict {
		case evalsv1alpha1.VerdictPass:
			sum.Passed++
		case evalsv1alpha1.VerdictFail:
			sum.Failed++
		default:
			sum.Errored++
		}
		line, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Add(results.Case{Index: i, Status: c, Line: line}); err != nil {
			t.Fatal(err)
		}
	}
	tail := results.Tail{Summary: sum, MissingCount: s.missing, ParseErrorCount: s.parseErrors, UnexpectedCount: s.unexpected,
		Collection: evalsv1alpha1.CollectionStatus{RunnerFinished: true, OutputSHA256: strings.Repeat("ab", 32),
			Outcome: evalsv1alpha1.OutcomeMissingResults, Message: long("the runner's output misses cases ", 2048),
			CollectedAt: ptr.To(metav1.NewTime(collectedAt)), PodName: long("size-evalrun-", 63),
			Launcher: &evalsv1alpha1.LauncherReport{StderrTail: long("stderr ", 4096)}}}
	for i := range s.missing {
		tail.MissingIDs = append(tail.MissingIDs, long(fmt.Sprintf("missing-%06d-", i), 256))
	}
	for i := range s.parseErrors {
		tail.ParseErrors = append(tail.ParseErrors, evalsv1alpha1.ParseError{Line: int64(i + 1), Excerpt: long("{not json ", 512),
			Message: long("invalid character 'n' looking for beginning of object key string ", 1024)})
	}
	for i := range s.unexpected {
		tail.UnexpectedIDs = append(tail.UnexpectedIDs, long(fmt.Sprintf("unexpected-%06d-", i), 256))
	}
	out, err := b.Finish(tail)
	if err != nil {
		t.Fatal(err)
	}
	return out.Section
}

// TestEvalRunSizeAtFullStatusBudget applies, for each shape, the collector's status section built to the default
// budget (field manager evalrun-collector) and then the manager's terminal status (evalrun-manager), reads the
// object back as JSON and reports its size, managedFields included. It fails if the object would not fit etcd's
// default request limit.
func TestEvalRunSizeAtFullStatusBudget(t *testing.T) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Skip("KUBEBUILDER_ASSETS is not set: run `make test-unit`, or set it to bin/k8s/<version> after `make envtest-assets`")
	}
	_, cfg, c := startEnv(t)
	raw, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range shapes {
		t.Run(s.name, func(t *testing.T) {
			ctx := context.Background()
			ns := fmt.Sprintf("size-%d", i)
			if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
				t.Fatal(err)
			}
			run := testutil.MakeEvalRun("size", ns).Obj()
			if err := c.Create(ctx, run); err != nil {
				t.Fatal(err)
			}
			now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			section := buildSection(t, s, options.MaxStatusBudgetBytes, now)
			sectionJSON, err := json.Marshal(section)
			if err != nil {
				t.Fatal(err)
			}
			if err := collector.ApplyStatus(ctx, c, ns, run.Name, string(run.UID), section); err != nil {
				t.Fatalf("the collector's status apply (%d bytes of section): %v", len(sectionJSON), err)
			}
			applyManagerStatus(t, c, run, now)

			body, obj, managed := readStored(ctx, t, raw, cfg.Host, ns, run.Name)
			statusJSON, err := json.Marshal(obj.Status)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %d status cases (%d omitted), section %d B (budget %d B); object %d B = %.2f MiB: status %d B, managedFields %d B (%d entries); limit %d B, headroom %d B",
				s.name, len(obj.Status.Cases), ptr.Deref(obj.Status.Results, evalsv1alpha1.ResultsReference{}).OmittedCases, len(sectionJSON),
				options.MaxStatusBudgetBytes, len(body), float64(len(body))/(1<<20), len(statusJSON), managed,
				len(obj.Metadata.ManagedFields), objectLimit, objectLimit-len(body))
			// The object grows about linearly with the section: the largest budget this shape would fit.
			t.Logf("%s: %.2f object bytes per section byte; a status budget above about %d KiB would put this shape over the limit",
				s.name, float64(len(body))/float64(len(sectionJSON)), int64(float64(objectLimit)*float64(len(sectionJSON))/float64(len(body)))>>10)
			if len(obj.Status.Cases) == 0 || obj.Status.Summary == nil {
				t.Fatalf("the status holds no cases or summary: the applies did not land")
			}
			if len(body) >= objectLimit {
				t.Errorf("the EvalRun is %d bytes with managedFields, not below the %d-byte object limit", len(body), objectLimit)
			}
		})
	}
}

// startEnv starts kube-apiserver and etcd with the CRD installed, stopped when the test ends.
func startEnv(t testing.TB) (*envtest.Environment, *rest.Config, client.Client) {
	t.Helper()
	env, cfg, err := testutil.StartEnv()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	c, err := client.New(cfg, client.Options{Scheme: testutil.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return env, cfg, c
}

// applyManagerStatus applies the manager's terminal status as the manager does (assess.DesiredManagerStatus and
// statusapply.Manager, field manager evalrun-manager), with the longest messages it carries.
func applyManagerStatus(t testing.TB, c client.Client, run *evalsv1alpha1.EvalRun, now time.Time) {
	t.Helper()
	applyManagerStatusWith(t, c, run, now, nil, nil)
}

// applyManagerStatusWith is applyManagerStatus with the shards' status of a sharded run.
func applyManagerStatusWith(t testing.TB, c client.Client, run *evalsv1alpha1.EvalRun, now time.Time,
	sharding *evalsv1alpha1.ShardingStatus, shards []evalsv1alpha1.ShardStatus) {
	t.Helper()
	var fresh evalsv1alpha1.EvalRun
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(run), &fresh); err != nil {
		t.Fatal(err)
	}
	start := metav1.NewTime(now.Add(-time.Minute))
	a := assess.Assessment{State: assess.StateFailed, Reason: evalsv1alpha1.ReasonMissingResults,
		Message: long("requested cases have no valid record: ", 2048),
		Runner: &evalsv1alpha1.RunnerStatus{ExitCode: ptr.To[int32](0), Reason: "Completed", Message: long("launcher ", 2048), PodName: long("size-evalrun-", 63),
			ImageID: ptr.To(long("registry.example/evals/runner@sha256:", 512))}}
	f := assess.StatusFacts{JobName: "size-evalrun", StartTime: &start, CompletionTime: ptr.To(metav1.NewTime(now)),
		EvalFileSHA256: strings.Repeat("cd", 32), EvalConfigMapName: "size-evalrun-eval", Sharding: sharding, Shards: shards}
	desired := assess.DesiredManagerStatus(&fresh, a, f, now)
	ac := statusapply.EvalRun(fresh.Namespace, fresh.Name, "", statusapply.Manager(&desired))
	if err := c.Status().Apply(context.Background(), ac,
		client.FieldOwner(statusapply.FieldManagerManager), client.ForceOwnership); err != nil {
		t.Fatalf("the manager's status apply: %v", err)
	}
}

// getJSON reads the EvalRun as kubectl get -o json does, managedFields included, and returns the body.
// storedEvalRun is an EvalRun as the API server returns it: its status and its managedFields entries.
type storedEvalRun struct {
	Metadata struct {
		ManagedFields []json.RawMessage `json:"managedFields"`
	} `json:"metadata"`
	Status evalsv1alpha1.EvalRunStatus `json:"status"`
}

// readStored reads EvalRun ns/name as stored, managedFields included: its bytes, its decoding and the bytes of
// its managedFields.
func readStored(ctx context.Context, t *testing.T, hc *http.Client, host, ns, name string) ([]byte, storedEvalRun, int) {
	t.Helper()
	body, err := getJSON(ctx, hc, host, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	var obj storedEvalRun
	if err := json.Unmarshal(body, &obj); err != nil {
		t.Fatal(err)
	}
	managed := 0
	for _, m := range obj.Metadata.ManagedFields {
		managed += len(m)
	}
	return body, obj, managed
}

func getJSON(ctx context.Context, hc *http.Client, host, ns, name string) ([]byte, error) {
	url := fmt.Sprintf("%s/apis/%s/namespaces/%s/evalruns/%s", strings.TrimSuffix(host, "/"), evalsv1alpha1.GroupVersion.String(), ns, name)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s: %s", url, resp.Status, body)
	}
	return body, nil
}

// Longest names the API allows, for the 1,000-shard run: its name (a DNS subdomain), namespace (a DNS label),
// bucket and bucket prefix, and case ids.
var (
	longRunName   = long("r", 253)
	longNamespace = long("size-1000-shards-", 63)
	longBucket    = long("bucket-", 63)
	longPrefix    = long("evals/nightly/", 512)
)

// thousandShardSection merges, as the manager does (results.Merger), the stored results of 1,000 shards with the
// longest names: every shard's bucket object, s.cases judged cases of s.caseFor's shape, missing cases with the
// longest ids (s.missing, spread over the shards), parse errors each naming its shard, within budget.
func thousandShardSection(t testing.TB, s shape, name, uid string, budget int64, collectedAt time.Time) results.Section {
	t.Helper()
	const shards = 1000
	n := s.cases + s.missing
	ids := make([]string, n)
	for i := range ids {
		ids[i] = long(fmt.Sprintf("case-%07d-", i), 256)
	}
	objects := make([]string, shards)
	for i := range objects {
		objects[i] = fmt.Sprintf("s3://%s/%s/%s/%s/%s/shards/%d/results.jsonl.gz", longBucket, longPrefix, longNamespace, name, uid, i)
	}
	m := results.NewMerger(ids, nil, objects, budget)
	// Every shard holds n/shards cases; in each, the missing ones come last.
	missingFrom := func(i int) bool { return i%(n/shards) >= s.cases/shards }
	for i, id := range ids {
		if missingFrom(i) {
			continue
		}
		c := s.caseFor(i)
		c.ID = id
		l := storedLine(c)
		raw, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.AddLine(&l, raw); err != nil {
			t.Fatal(err)
		}
	}
	for k := range shards {
		sec := &results.Section{Summary: &evalsv1alpha1.RunSummary{ParseErrors: 1}, ParseErrors: []evalsv1alpha1.ParseError{{
			Line: 1, Excerpt: long("{not json ", 512), Message: long("invalid character 'n' looking for beginning of object key string ", 1024)}}}
		m.AddCollection(sec, ptr.To(int32(k)), nil)
	}
	sec, err := m.Finish(func(int) string { return long("shard recorded no result for this case: ", 1024) },
		func(i int) (int32, bool) { return int32(i / (n / shards)), true }, metav1.NewTime(collectedAt))
	if err != nil {
		t.Fatal(err)
	}
	return *sec
}

// thousandShardStatuses are 1,000 shard entries at their longest (the failed ones listed first), as the manager
// records them.
func thousandShardStatuses() []evalsv1alpha1.ShardStatus {
	out := make([]evalsv1alpha1.ShardStatus, 1000)
	for i := range out {
		ids := make([]string, evalsv1alpha1.MaxShardMissingIDs)
		for k := range ids {
			ids[k] = long(fmt.Sprintf("case-%07d-", i*100+k), 256)
		}
		out[i] = evalsv1alpha1.ShardStatus{Index: int32(i), Cases: 100, State: "Failed", Reason: evalsv1alpha1.ReasonInfrastructureFailed,
			Message: long("the runner container of pod could not start: ", 512), PodName: long(fmt.Sprintf("%s-%d-", longRunName, i), 253),
			Passed: 80, Failed: 10, Errored: 10, Missing: 10, ParseErrors: 1, MissingIDs: ids,
			ImageID: ptr.To(long("registry.example/evals/runner@sha256:", 512))}
	}
	return out
}

// TestEvalRunSizeAtThousandShards applies, for the two extreme shapes of cases, the merged section of a run of
// 1,000 shards with the longest names and bucket prefix (field manager evalrun-merge) and then the manager's
// terminal status with 1,000 shards at their longest (evalrun-manager), reads the object back and checks that the
// section and the shards' entries together stay within the status budget and the object, managedFields included,
// within the API server's object limit.
func TestEvalRunSizeAtThousandShards(t *testing.T) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Skip("KUBEBUILDER_ASSETS is not set: run `make test-unit`, or set it to bin/k8s/<version> after `make envtest-assets`")
	}
	_, cfg, c := startEnv(t)
	raw, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: longNamespace}}); err != nil {
		t.Fatal(err)
	}
	budget := int64(options.MaxStatusBudgetBytes)
	statuses := thousandShardStatuses()
	for i, s := range []shape{
		{name: "minimal-passing-cases", cases: 20000, missing: 1000, caseFor: shapes[0].caseFor},
		{name: "largest-cases-and-lists", cases: 2000, missing: 1000, caseFor: shapes[2].caseFor},
	} {
		t.Run(s.name, func(t *testing.T) {
			name := longRunName[:len(longRunName)-1] + strconv.Itoa(i)
			run := testutil.MakeEvalRun(name, longNamespace).Shards(1000, 20).Obj()
			run.Spec.Storage = &evalsv1alpha1.ResultsStorage{S3: evalsv1alpha1.S3Bucket{Endpoint: "http://seaweedfs.storage.svc:8333",
				Bucket: longBucket, Prefix: ptr.To(longPrefix), CredentialsSecret: "s3-creds"}}
			if err := c.Create(ctx, run); err != nil {
				t.Fatal(err)
			}
			now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			sectionBudget := collect.MergedSectionBudget(budget, statuses)
			section := thousandShardSection(t, s, name, string(run.UID), sectionBudget, now)
			ac := statusapply.EvalRun(run.Namespace, run.Name, run.UID, statusapply.Collector(&section))
			if err := c.Status().Apply(ctx, ac, client.FieldOwner(statusapply.FieldManagerMerge), client.ForceOwnership); err != nil {
				t.Fatalf("the merged status apply: %v", err)
			}
			sharding := &evalsv1alpha1.ShardingStatus{Shards: 1000, Split: assess.SplitContiguous, Failed: 1000,
				OmittedShards: 1000 - evalsv1alpha1.MaxStatusShards}
			applyManagerStatusWith(t, c, run, now, sharding, statuses[:evalsv1alpha1.MaxStatusShards])

			body, obj, managed := readStored(ctx, t, raw, cfg.Host, run.Namespace, run.Name)
			st := obj.Status
			sectionBytes := jsonLen(t, results.Section{Summary: st.Summary, Cases: st.Cases, MissingIDs: st.MissingIDs,
				MissingIDShards: st.MissingIDShards, ParseErrors: st.ParseErrors, UnexpectedIDs: st.UnexpectedIDs, Results: st.Results,
				Conditions: conditionsOf(st.Conditions, evalsv1alpha1.ConditionResultsTruncated)})
			shardsBytes := jsonLen(t, struct {
				Sharding *evalsv1alpha1.ShardingStatus `json:"sharding"`
				Shards   []evalsv1alpha1.ShardStatus   `json:"shards"`
			}{st.Sharding, st.Shards})
			t.Logf("%s at 1,000 shards: %d status cases (%d omitted), %d missing ids in %d shard runs, %d objects (prefix %d B); "+
				"section %d B + shards %d B = %d B (budget %d B, section budget %d B); object %d B = %.2f MiB (status %d B, managedFields %d B); limit %d B, headroom %d B",
				s.name, len(st.Cases), st.Results.OmittedCases, len(st.MissingIDs), len(st.MissingIDShards), len(st.Results.Objects),
				len(ptr.Deref(st.Results.ObjectsPrefix, "")), sectionBytes, shardsBytes, sectionBytes+shardsBytes, budget, sectionBudget, len(body),
				float64(len(body))/(1<<20), jsonLen(t, st), managed, objectLimit, objectLimit-len(body))
			if len(st.Results.Objects) != 1000 || len(st.Shards) != evalsv1alpha1.MaxStatusShards || len(st.MissingIDs) == 0 || len(st.Cases) == 0 {
				t.Fatalf("the applies did not land: %d objects, %d shards, %d missing ids, %d cases", len(st.Results.Objects), len(st.Shards),
					len(st.MissingIDs), len(st.Cases))
			}
			if got, want := results.ObjectURLs(st.Results)[999], fmt.Sprintf("s3://%s/%s/%s/%s/%s/shards/999/results.jsonl.gz",
				longBucket, longPrefix, longNamespace, name, run.UID); got != want {
				t.Errorf("object 999 reads back as %q, want %q", got, want)
			}
			if int64(sectionBytes+shardsBytes) > budget {
				t.Errorf("the section (%d B) and the shards (%d B) are over the %d-byte status budget", sectionBytes, shardsBytes, budget)
			}
			if len(body) >= objectLimit {
				t.Errorf("the EvalRun is %d bytes with managedFields, not below the %d-byte object limit", len(body), objectLimit)
			}
		})
	}
}

func jsonLen(t testing.TB, v any) int {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return len(data)
}

func conditionsOf(conds []metav1.Condition, types ...string) []metav1.Condition {
	var out []metav1.Condition
	for _, c := range conds {
		if slices.Contains(types, c.Type) {
			out = append(out, c)
		}
	}
	return out
}

// storedLine is a case of a shape as a stored result line, the form the manager merges.
func storedLine(c evalsv1alpha1.CaseResult) results.Line {
	score, _ := strconv.ParseFloat(c.Score, 64)
	r := verdict.CaseResult{ID: c.ID, Score: score, Verdict: verdict.Verdict(c.Verdict), Error: c.Error}
	for _, e := range c.Evaluators {
		es, _ := strconv.ParseFloat(e.Score, 64)
		r.Evaluators = append(r.Evaluators, verdict.EvaluatorResult{Name: e.Name, Type: e.Type, Score: es, Verdict: verdict.Verdict(e.Verdict),
			Reasoning: e.Message})
	}
	return results.Line{CaseResult: r, Answer: c.Answer}
}

// thousandPodTrialsSection merges, as the manager does (results.Merger with trials, two passes), the stored results
// of a run of 500 shards × 2 trials (1,000 pods) with the longest names: each case's first trial passes and its
// second fails at the largest shape (every case is flaky, so status.trials lists 100 ids of 256 bytes), missing
// cases in both trials, every pod's parse error naming its shard and trial.
func thousandPodTrialsSection(t testing.TB, cases, missing int, name, uid string, budget int64, collectedAt time.Time) results.Section {
	t.Helper()
	const shards, trials = 500, 2
	n := cases + missing
	ids := make([]string, n)
	for i := range ids {
		ids[i] = long(fmt.Sprintf("case-%07d-", i), 256)
	}
	objects := make([]string, shards*trials)
	for i := range objects {
		objects[i] = fmt.Sprintf("s3://%s/%s/%s/%s/%s/shards/%d/results.jsonl.gz", longBucket, longPrefix, longNamespace, name, uid, i)
	}
	m := results.NewMerger(ids, nil, objects, budget).WithTrials(results.TrialRule{Count: trials, PassRate: 1, PassRateText: "1"},
		func(int, int) string { return long("shard 499 trial 2 recorded no result for this case: ", 1024) })
	missingFrom := func(i int) bool { return i%(n/shards) >= cases/shards }
	var lines []results.Line
	for pod := range shards * trials {
		shard, trial := podwire.ShardTrial(pod, shards)
		lo, hi := podwire.ShardRange(n, shards, shard)
		for i := lo; i < hi; i++ {
			if missingFrom(i) {
				continue
			}
			c := shapes[2].caseFor(i)
			c.ID, c.Verdict = ids[i], evalsv1alpha1.VerdictFail
			if trial == 1 {
				c = evalsv1alpha1.CaseResult{ID: ids[i], Verdict: evalsv1alpha1.VerdictPass, Score: "1.0000"}
			}
			l := storedLine(c)
			if trial > 1 {
				l.Trial = trial
			}
			lines = append(lines, l)
		}
	}
	for pass, add := range []func(*results.Line, []byte) error{m.AddLine, m.ShowLine} {
		for i := range lines {
			raw, err := json.Marshal(lines[i])
			if err != nil {
				t.Fatal(err)
			}
			if err := add(&lines[i], raw); err != nil {
				t.Fatalf("pass %d: %v", pass+1, err)
			}
		}
	}
	for pod := range shards * trials {
		shard, trial := podwire.ShardTrial(pod, shards)
		sec := &results.Section{Summary: &evalsv1alpha1.RunSummary{ParseErrors: 1}, ParseErrors: []evalsv1alpha1.ParseError{{
			Line: 1, Excerpt: long("{not json ", 512), Message: long("invalid character 'n' looking for beginning of object key string ", 1024)}}}
		m.AddCollection(sec, ptr.To(int32(shard)), ptr.To(int32(trial)))
	}
	sec, err := m.Finish(func(int) string { return "" }, func(i int) (int32, bool) { return int32(i / (n / shards)), true },
		metav1.NewTime(collectedAt))
	if err != nil {
		t.Fatal(err)
	}
	return *sec
}

// TestEvalRunSizeAtThousandPodsWithTrials is TestEvalRunSizeAtThousandShards for a run of 500 shards × 2 trials:
// 1,000 pods' entries (each naming its trial), the merged section with status.trials and its 100 longest flaky
// ids, within the status budget and the object limit.
func TestEvalRunSizeAtThousandPodsWithTrials(t *testing.T) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Skip("KUBEBUILDER_ASSETS is not set: run `make test-unit`, or set it to bin/k8s/<version> after `make envtest-assets`")
	}
	_, cfg, c := startEnv(t)
	raw, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: longNamespace}}); err != nil {
		t.Fatal(err)
	}
	budget := int64(options.MaxStatusBudgetBytes)
	statuses := thousandShardStatuses()
	for i := range statuses {
		shard, trial := podwire.ShardTrial(i, 500)
		statuses[i].Index, statuses[i].Trial = int32(shard), ptr.To(int32(trial))
	}
	name := longRunName[:len(longRunName)-1] + "t"
	run := testutil.MakeEvalRun(name, longNamespace).Shards(500, 20).Trials(2, "1").Obj()
	run.Spec.Storage = &evalsv1alpha1.ResultsStorage{S3: evalsv1alpha1.S3Bucket{Endpoint: "http://seaweedfs.storage.svc:8333",
		Bucket: longBucket, Prefix: ptr.To(longPrefix), CredentialsSecret: "s3-creds"}}
	if err := c.Create(ctx, run); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	sectionBudget := collect.MergedSectionBudget(budget, statuses)
	section := thousandPodTrialsSection(t, 2000, 1000, name, string(run.UID), sectionBudget, now)
	ac := statusapply.EvalRun(run.Namespace, run.Name, run.UID, statusapply.Collector(&section))
	if err := c.Status().Apply(ctx, ac, client.FieldOwner(statusapply.FieldManagerMerge), client.ForceOwnership); err != nil {
		t.Fatalf("the merged status apply: %v", err)
	}
	sharding, listed := assess.ShardingStatus(statuses)
	applyManagerStatusWith(t, c, run, now, sharding, listed)

	body, obj, managed := readStored(ctx, t, raw, cfg.Host, run.Namespace, run.Name)
	st := obj.Status
	sectionBytes := jsonLen(t, results.Section{Summary: st.Summary, Cases: st.Cases, MissingIDs: st.MissingIDs,
		MissingIDShards: st.MissingIDShards, ParseErrors: st.ParseErrors, UnexpectedIDs: st.UnexpectedIDs, Results: st.Results,
		Conditions: conditionsOf(st.Conditions, evalsv1alpha1.ConditionResultsTruncated), Trials: st.Trials})
	shardsBytes := jsonLen(t, struct {
		Sharding *evalsv1alpha1.ShardingStatus `json:"sharding"`
		Shards   []evalsv1alpha1.ShardStatus   `json:"shards"`
	}{st.Sharding, st.Shards})
	t.Logf("500 shards × 2 trials: %d status cases (%d omitted), %d missing ids, %d flaky ids of %d, %d objects; "+
		"section %d B (status.trials %d B) + shards %d B = %d B (budget %d B, section budget %d B); object %d B = %.2f MiB "+
		"(status %d B, managedFields %d B); limit %d B, headroom %d B",
		len(st.Cases), st.Results.OmittedCases, len(st.MissingIDs), len(st.Trials.Flaky), st.Trials.FlakyCases, len(st.Results.Objects),
		sectionBytes, jsonLen(t, st.Trials), shardsBytes, sectionBytes+shardsBytes, budget, sectionBudget, len(body),
		float64(len(body))/(1<<20), jsonLen(t, st), managed, objectLimit, objectLimit-len(body))
	if st.Trials == nil || st.Trials.FlakyCases != 2000 || len(st.Trials.Flaky) != evalsv1alpha1.MaxStatusFlakyIDs ||
		len(st.Results.Objects) != 1000 || len(st.Shards) != evalsv1alpha1.MaxStatusShards || len(st.Cases) == 0 || st.Shards[0].Trial == nil {
		t.Fatalf("the applies did not land: trials %+v, %d objects, %d shards, %d cases", st.Trials, len(st.Results.Objects), len(st.Shards),
			len(st.Cases))
	}
	if s := st.Sharding; s.Shards != 500 || s.Failed != 1000 || s.OmittedShards != 900 {
		t.Errorf("sharding %+v: want 500 shards, 1,000 pods failed, 900 entries left out", s)
	}
	if int64(sectionBytes+shardsBytes) > budget {
		t.Errorf("the section (%d B) and the shards (%d B) are over the %d-byte status budget", sectionBytes, shardsBytes, budget)
	}
	if len(body) >= objectLimit {
		t.Errorf("the EvalRun is %d bytes with managedFields, not below the %d-byte object limit", len(body), objectLimit)
	}
}
