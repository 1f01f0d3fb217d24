package statusapply

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	acv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
)

// filler sets every field of a value, recursively, so that a field a converter forgets shows in the JSON.
type filler struct {
	// zero leaves every scalar at its zero value but still allocates every pointer and gives every list one
	// element: the fields without omitempty must still be sent, and the omitempty ones must not.
	zero bool
	n    int
}

var timeType = reflect.TypeFor[metav1.Time]()

func (f *filler) fill(v reflect.Value) {
	f.n++
	switch {
	case v.Type() == timeType:
		if !f.zero {
			// Whole seconds: the JSON of a metav1.Time has no fraction.
			v.Set(reflect.ValueOf(metav1.NewTime(time.Unix(1_800_000_000+int64(f.n), 0).UTC())))
		}
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			f.fill(v.Field(i))
		}
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		f.fill(v.Elem())
	case reflect.Slice:
		n := 2
		if f.zero {
			n = 1
		}
		v.Set(reflect.MakeSlice(v.Type(), n, n))
		for i := range n {
			f.fill(v.Index(i))
		}
	case reflect.String:
		if !f.zero {
			v.SetString(fmt.Sprintf("s%d", f.n))
		}
	case reflect.Int32, reflect.Int64:
		if !f.zero {
			v.SetInt(int64(f.n))
		}
	case reflect.Bool:
		v.SetBool(!f.zero)
	default:
		panic(fmt.Sprintf("fill: no rule for %s", v.Type()))
	}
}

// filled returns a T with every field set (zero: every scalar zero, see filler).
func filled[T any](zero bool) T {
	var v T
	(&filler{zero: zero}).fill(reflect.ValueOf(&v).Elem())
	return v
}

// conditionsOf returns one condition of each type, with every field set.
func conditionsOf(kinds ...string) []metav1.Condition {
	out := make([]metav1.Condition, len(kinds))
	for i, t := range kinds {
		out[i] = metav1.Condition{Type: t, Status: metav1.ConditionTrue, ObservedGeneration: int64(i + 1),
			LastTransitionTime: metav1.NewTime(time.Unix(1_700_000_000, 0).UTC()), Reason: "Reason" + t, Message: "message of " + t}
	}
	return out
}

// allConditions are conditions of every type either field manager owns, and one neither does.
var allConditions = conditionsOf(evalsv1alpha1.ConditionResultsTruncated, "Foreign", evalsv1alpha1.ConditionPassed,
	evalsv1alpha1.ConditionSucceeded, evalsv1alpha1.ConditionQueued, evalsv1alpha1.ConditionRegressed,
	evalsv1alpha1.ConditionStalled, evalsv1alpha1.ConditionReconciling, evalsv1alpha1.ConditionBudgetExceeded)

// decode returns v's JSON as generic values (what the API server reads).
func decode(t *testing.T, v any) map[string]any {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// keysAndConditionTypes returns the top-level fields of an applied status and its conditions' types, in order.
func keysAndConditionTypes(t *testing.T, status any) ([]string, []string) {
	t.Helper()
	m := decode(t, status)
	var kinds []string
	conds, _ := m["conditions"].([]any)
	for _, c := range conds {
		kinds = append(kinds, c.(map[string]any)["type"].(string))
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys, kinds
}

// Each field manager's apply configuration carries exactly the fields it owns, from a status with every field set.
func TestOwnedFields(t *testing.T) {
	status := filled[evalsv1alpha1.EvalRunStatus](false)
	status.Conditions = allConditions
	section := filled[results.Section](false)
	section.Conditions = allConditions
	schedule := filled[evalsv1alpha1.EvalScheduleStatus](false)
	schedule.Conditions = conditionsOf(evalsv1alpha1.ScheduleConditionReady, evalsv1alpha1.ScheduleConditionStalled)
	tests := []struct {
		name           string
		status         any
		wantKeys       []string
		wantConditions []string
	}{
		{
			name:   "manager",
			status: Manager(&status),
			wantKeys: []string{"activeDeadline", "attempt", "baseline", "bundleSHA256", "completionTime", "conditions", "evalConfigMapName",
				"evalFileSHA256", "evalFileView", "jobName", "judgeImage", "observedGeneration", "previousAttempts", "queue", "resume",
				"runner", "sharding", "shards", "startTime"},
			wantConditions: []string{"Reconciling", "Stalled", "Succeeded", "Queued", "Passed", "Regressed", "BudgetExceeded"},
		},
		{
			name:   "collector",
			status: Collector(&section),
			wantKeys: []string{"cases", "collection", "conditions", "cost", "missingIdShards", "missingIds", "parseErrors", "records", "results",
				"summary", "trials", "unexpectedIds"},
			wantConditions: []string{"ResultsTruncated"},
		},
		{
			name:   "schedule",
			status: Schedule(&schedule),
			wantKeys: []string{"active", "conditions", "cost", "flakiest", "historyDroppedCases", "historyRuns", "lastFinished", "lastScheduleTime", "lastSkippedTime", "lastSuccessfulTime",
				"nextScheduleTime", "observedGeneration"},
			wantConditions: []string{"Ready", "Stalled"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			keys, kinds := keysAndConditionTypes(t, tc.status)
			if diff := cmp.Diff(tc.wantKeys, keys); diff != "" {
				t.Errorf("fields (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantConditions, kinds); diff != "" {
				t.Errorf("condition types (-want +got):\n%s", diff)
			}
		})
	}
	// The manager's fields and the collector's are disjoint, but for conditions (a map list keyed by type).
	managerKeys, _ := keysAndConditionTypes(t, Manager(&status))
	collectorKeys, _ := keysAndConditionTypes(t, Collector(&section))
	for _, k := range managerKeys {
		if k != "conditions" && slices.Contains(collectorKeys, k) {
			t.Errorf("field %s is both the manager's and the collector's", k)
		}
	}
}

// legacyManagerStatus is the manager's status as it was sent before the typed builders, through encoding/json
// into the apply configuration: the oracle of TestTypedEqualsJSONRoundTrip.
type legacyManagerStatus struct {
	ObservedGeneration int64                             `json:"observedGeneration,omitempty"`
	Conditions         []metav1.Condition                `json:"conditions,omitempty"`
	JobName            string                            `json:"jobName,omitempty"`
	StartTime          *metav1.Time                      `json:"startTime,omitempty"`
	CompletionTime     *metav1.Time                      `json:"completionTime,omitempty"`
	EvalFileSHA256     string                            `json:"evalFileSHA256,omitempty"`
	BundleSHA256       *string                           `json:"bundleSHA256,omitempty"`
	EvalConfigMapName  string                            `json:"evalConfigMapName,omitempty"`
	EvalFileView       evalsv1alpha1.EvalFileView        `json:"evalFileView,omitempty"`
	Runner             *evalsv1alpha1.RunnerStatus       `json:"runner,omitempty"`
	JudgeImage         *evalsv1alpha1.JudgeImageStatus   `json:"judgeImage,omitempty"`
	Sharding           *evalsv1alpha1.ShardingStatus     `json:"sharding,omitempty"`
	Shards             []evalsv1alpha1.ShardStatus       `json:"shards,omitempty"`
	Resume             *evalsv1alpha1.ResumeStatus       `json:"resume,omitempty"`
	Baseline           *evalsv1alpha1.BaselineComparison `json:"baseline,omitempty"`
	Attempt            *evalsv1alpha1.Attempt            `json:"attempt,omitempty"`
	PreviousAttempts   []evalsv1alpha1.AttemptRecord     `json:"previousAttempts,omitempty"`
	ActiveDeadline     *evalsv1alpha1.ActiveDeadline     `json:"activeDeadline,omitempty"`
	Queue              *evalsv1alpha1.QueueStatus        `json:"queue,omitempty"`
}

// legacyManager projects s onto the manager's fields as the manager did before (CurrentManagerStatus).
func legacyManager(s *evalsv1alpha1.EvalRunStatus) legacyManagerStatus {
	out := legacyManagerStatus{ObservedGeneration: s.ObservedGeneration, JobName: s.JobName, StartTime: s.StartTime,
		CompletionTime: s.CompletionTime, EvalFileSHA256: s.EvalFileSHA256, BundleSHA256: s.BundleSHA256, EvalConfigMapName: s.EvalConfigMapName,
		Runner: s.Runner, JudgeImage: s.JudgeImage, Sharding: s.Sharding, Shards: s.Shards, Resume: s.Resume, Baseline: s.Baseline,
		Attempt: s.Attempt, PreviousAttempts: s.PreviousAttempts, ActiveDeadline: s.ActiveDeadline, Queue: s.Queue}
	if s.EvalFileView != nil {
		out.EvalFileView = *s.EvalFileView
	}
	for _, c := range owned(s.Conditions, ManagerConditionTypes) {
		out.Conditions = append(out.Conditions, *c)
	}
	return out
}

// jsonRoundTrip is how the apply configurations were built before: v's JSON decoded into AC.
func jsonRoundTrip[AC any](t *testing.T, v any) *AC {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	ac := new(AC)
	if err := json.Unmarshal(raw, ac); err != nil {
		t.Fatal(err)
	}
	return ac
}

// The typed conversion sends what the JSON round trip sent, for statuses with every field set and for statuses
// whose every nested value is present with zero scalars (the fields without omitempty must still be sent).
func TestTypedEqualsJSONRoundTrip(t *testing.T) {
	for _, zero := range []bool{false, true} {
		status := filled[evalsv1alpha1.EvalRunStatus](zero)
		status.Conditions = allConditions
		section := filled[results.Section](zero)
		section.Conditions = conditionsOf(evalsv1alpha1.ConditionResultsTruncated)
		schedule := filled[evalsv1alpha1.EvalScheduleStatus](zero)
		if zero {
			status.Conditions = []metav1.Condition{{Type: evalsv1alpha1.ConditionSucceeded}}
			section.Conditions = []metav1.Condition{{Type: evalsv1alpha1.ConditionResultsTruncated}}
		}
		tests := []struct {
			name     string
			want     any
			got      any
			nonEmpty string
		}{
			{"manager", jsonRoundTrip[acv1alpha1.EvalRunStatusApplyConfiguration](t, legacyManager(&status)), Manager(&status), "shards"},
			{"collector", jsonRoundTrip[acv1alpha1.EvalRunStatusApplyConfiguration](t, section), Collector(&section), "cases"},
			{"schedule", jsonRoundTrip[acv1alpha1.EvalScheduleStatusApplyConfiguration](t, schedule), Schedule(&schedule), "active"},
		}
		for _, tc := range tests {
			t.Run(fmt.Sprintf("%s/zero=%t", tc.name, zero), func(t *testing.T) {
				want, got := decode(t, tc.want), decode(t, tc.got)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("typed apply configuration differs from the JSON round trip (-want +got):\n%s", diff)
				}
				if _, ok := got[tc.nonEmpty]; !ok {
					t.Errorf("the status sends no %s: the test does not exercise the nested values", tc.nonEmpty)
				}
			})
		}
	}
}

// Two statuses the manager would apply alike compare equal through Manager: its view of the current status
// ignores the other managers' fields and conditions, and the order of the conditions.
func TestManagerIgnoresOtherFields(t *testing.T) {
	a := filled[evalsv1alpha1.EvalRunStatus](false)
	a.Conditions = allConditions
	b := *a.DeepCopy()
	b.Summary, b.Cases, b.MissingIDs, b.ParseErrors, b.UnexpectedIDs, b.Results, b.Collection = nil, nil, nil, nil, nil, nil, nil
	b.Trials = nil
	b.MissingIDShards = nil
	b.Conditions = nil
	for _, c := range slices.Backward(a.Conditions) {
		if slices.Contains(ManagerConditionTypes, c.Type) {
			b.Conditions = append(b.Conditions, c)
		}
	}
	if diff := cmp.Diff(Manager(&a), Manager(&b)); diff != "" {
		t.Errorf("Manager differs on what the manager does not own (-a +b):\n%s", diff)
	}
	b.JobName = "other"
	if cmp.Equal(Manager(&a), Manager(&b)) {
		t.Error("Manager is equal for different jobNames")
	}
}

func TestEvalRunSetsTheUIDOnlyWhenGiven(t *testing.T) {
	status := Collector(&results.Section{Summary: &evalsv1alpha1.RunSummary{Total: 1}})
	got := decode(t, EvalRun("ns", "run", "uid-1", status))
	want := map[string]any{
		"apiVersion": "evals.evalrun.io/v1alpha1", "kind": "EvalRun",
		"metadata": map[string]any{"name": "run", "namespace": "ns", "uid": "uid-1"},
		"status": map[string]any{"summary": map[string]any{"total": 1.0, "passed": 0.0, "failed": 0.0, "errored": 0.0,
			"skipped": 0.0, "missing": 0.0, "parseErrors": 0.0, "unexpected": 0.0}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("EvalRun (-want +got):\n%s", diff)
	}
	if _, ok := decode(t, EvalRun("ns", "run", "", status))["metadata"].(map[string]any)["uid"]; ok {
		t.Error("EvalRun without a uid sends one")
	}
}
