package v1alpha1_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/utils/ptr"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
)

// immutableMessage is what every rejection of a spec change says.
const immutableMessage = "spec is immutable except suspend"

// specUpdateAllowed is the Go statement of the immutability rules: an update may change spec.suspend; any other
// spec change is admitted only once the run has finished (a Succeeded condition that is not Unknown).
func specUpdateAllowed(old, updated *evalsv1alpha1.EvalRun) bool {
	a, b := old.Spec.DeepCopy(), updated.Spec.DeepCopy()
	a.Suspend, b.Suspend = nil, nil
	if reflect.DeepEqual(a, b) {
		return true
	}
	for _, c := range old.Status.Conditions {
		if c.Type == evalsv1alpha1.ConditionSucceeded && c.Status != metav1.ConditionUnknown {
			return true
		}
	}
	return false
}

// everyFieldSet is an EvalRun whose spec sets every field, and specChanges change each (a required field to
// another value, an optional one to another value and to unset).
func everyFieldSet() *evalsv1alpha1.EvalRun {
	r := testutil.MakeEvalRun("immutable", "default").Obj()
	s := &r.Spec
	s.Judging = &evalsv1alpha1.Judging{PassThreshold: "0.8"}
	s.SuccessPolicy = &evalsv1alpha1.SuccessPolicy{MinPassRate: "1"}
	s.ActiveDeadlineSeconds = ptr.To[int64](600)
	s.BackoffLimit = ptr.To[int32](0)
	s.TTLSecondsAfterFinished = ptr.To[int32](60)
	s.ResultsDeadlineSeconds = ptr.To[int32](300)
	s.Suspend = ptr.To(false)
	s.QueueName = "team-a"
	s.PodTemplate = &evalsv1alpha1.PodOverrides{Labels: map[string]string{"a": "b"}}
	s.Sharding = &evalsv1alpha1.Sharding{Shards: ptr.To[int32](2)}
	// One trial: a run with more is refused with a resume.
	s.Trials = &evalsv1alpha1.Trials{Count: ptr.To[int32](1), PassRate: ptr.To("1")}
	s.Resume = &evalsv1alpha1.Resume{From: "earlier"}
	s.Storage = &evalsv1alpha1.ResultsStorage{S3: s3Bucket()}
	s.Baseline = &evalsv1alpha1.Baseline{RunName: ptr.To("earlier")}
	return r
}

var specChanges = map[string][]func(s *evalsv1alpha1.EvalRunSpec){
	"evalFile": {func(s *evalsv1alpha1.EvalRunSpec) { s.EvalFile.Inline = ptr.To("evalcases: []") }},
	"target": {
		func(s *evalsv1alpha1.EvalRunSpec) { s.Target.Image = "other:1" },
		// A re-judge may leave target unset (a resume and a re-judge are exclusive).
		func(s *evalsv1alpha1.EvalRunSpec) {
			s.Resume, s.Rejudge, s.Target = nil, &evalsv1alpha1.Rejudge{From: "earlier"}, evalsv1alpha1.Target{}
		},
	},
	"judging": {
		func(s *evalsv1alpha1.EvalRunSpec) { s.Judging.PassThreshold = "0.5" },
		func(s *evalsv1alpha1.EvalRunSpec) { s.Judging = nil },
	},
	"successPolicy": {
		func(s *evalsv1alpha1.EvalRunSpec) { s.SuccessPolicy.MinPassRate = "0.5" },
		func(s *evalsv1alpha1.EvalRunSpec) { s.SuccessPolicy = nil },
	},
	"activeDeadlineSeconds": {
		func(s *evalsv1alpha1.EvalRunSpec) { s.ActiveDeadlineSeconds = ptr.To[int64](5) },
		func(s *evalsv1alpha1.EvalRunSpec) { s.ActiveDeadlineSeconds = nil },
	},
	"backoffLimit": {
		func(s *evalsv1alpha1.EvalRunSpec) { s.BackoffLimit = ptr.To[int32](3) },
		func(s *evalsv1alpha1.EvalRunSpec) { s.BackoffLimit = nil },
	},
	"ttlSecondsAfterFinished": {
		func(s *evalsv1alpha1.EvalRunSpec) { s.TTLSecondsAfterFinished = ptr.To[int32](0) },
		func(s *evalsv1alpha1.EvalRunSpec) { s.TTLSecondsAfterFinished = nil },
	},
	"resultsDeadlineSeconds": {
		func(s *evalsv1alpha1.EvalRunSpec) { s.ResultsDeadlineSeconds = ptr.To[int32](30) },
		func(s *evalsv1alpha1.EvalRunSpec) { s.ResultsDeadlineSeconds = nil },
	},
	"suspend": {
		func(s *evalsv1alpha1.EvalRunSpec) { s.Suspend = ptr.To(true) },
		func(s *evalsv1alpha1.EvalRunSpec) { s.Suspend = nil },
	},
	"queueName": {
		func(s *evalsv1alpha1.EvalRunSpec) { s.QueueName = "team-b" },
		func(s *evalsv1alpha1.EvalRunSpec) { s.QueueName = "" },
	},
	"podTemplate": {
		func(s *evalsv1alpha1.EvalRunSpec) { s.PodTemplate.Labels["a"] = "c" },
		func(s *evalsv1alpha1.EvalRunSpec) { s.PodTemplate = nil },
	},
	"sharding": {
		func(s *evalsv1alpha1.EvalRunSpec) { s.Sharding.Shards = ptr.To[int32](4) },
		func(s *evalsv1alpha1.EvalRunSpec) { s.Sharding = nil },
	},
	"trials": {
		func(s *evalsv1alpha1.EvalRunSpec) { s.Trials.PassRate = ptr.To("0.5") },
		func(s *evalsv1alpha1.EvalRunSpec) { s.Trials = nil },
		func(s *evalsv1alpha1.EvalRunSpec) { s.Resume, s.Trials.Count = nil, ptr.To[int32](3) },
	},
	"resume": {
		func(s *evalsv1alpha1.EvalRunSpec) { s.Resume.From = "other" },
		func(s *evalsv1alpha1.EvalRunSpec) { s.Resume = nil },
	},
	"rejudge": {
		func(s *evalsv1alpha1.EvalRunSpec) { s.Resume, s.Rejudge = nil, &evalsv1alpha1.Rejudge{From: "earlier"} },
	},
	"storage": {
		func(s *evalsv1alpha1.EvalRunSpec) { s.Storage.S3.Bucket = "other" },
		func(s *evalsv1alpha1.EvalRunSpec) { s.Storage = nil },
	},
	"baseline": {
		func(s *evalsv1alpha1.EvalRunSpec) { s.Baseline.RunName = ptr.To("other") },
		func(s *evalsv1alpha1.EvalRunSpec) { s.Baseline = nil },
	},
}

// TestImmutabilityRulesMatchTheGo runs the CRD's validation rules as the API server does (its CEL validator,
// in-process) on updates that change each spec field (to another value, to unset, from unset) of a run in
// progress and of a finished one, and checks that they admit exactly the updates specUpdateAllowed admits, each
// rejection saying immutableMessage.
func TestImmutabilityRulesMatchTheGo(t *testing.T) {
	validate := crdValidator(t, evalRunCRD)
	st := reflect.TypeFor[evalsv1alpha1.EvalRunSpec]()
	for i := range st.NumField() {
		name, _, _ := strings.Cut(st.Field(i).Tag.Get("json"), ",")
		if len(specChanges[name]) == 0 {
			t.Errorf("specChanges has no change of spec.%s", name)
		}
	}
	states := map[string][]metav1.Condition{
		"new":         nil,
		"in progress": {{Type: evalsv1alpha1.ConditionSucceeded, Status: metav1.ConditionUnknown, Reason: "Running"}},
		"succeeded":   {{Type: evalsv1alpha1.ConditionSucceeded, Status: metav1.ConditionTrue, Reason: "Completed"}},
		"failed":      {{Type: evalsv1alpha1.ConditionSucceeded, Status: metav1.ConditionFalse, Reason: "RunnerFailed"}},
	}
	for state, conds := range states {
		for name, changes := range specChanges {
			for i, change := range changes {
				changed := everyFieldSet()
				change(&changed.Spec)
				// Each change both ways: from every field set to the change, and back.
				for dir, pair := range [][2]*evalsv1alpha1.EvalRun{{everyFieldSet(), changed}, {changed, everyFieldSet()}} {
					old, updated := pair[0].DeepCopy(), pair[1].DeepCopy()
					old.Status.Conditions, updated.Status.Conditions = conds, conds
					want := specUpdateAllowed(old, updated)
					errs := validate(t, updated, old)
					if got := len(errs) == 0; got != want {
						t.Errorf("%s run, spec.%s change %d (direction %d): admitted %v, want %v: %v", state, name, i, dir, got, want, errs)
					}
					for _, e := range errs {
						if !strings.Contains(e.Error(), immutableMessage) {
							t.Errorf("%s run, spec.%s change %d: rejection %q does not say %q", state, name, i, e.Error(), immutableMessage)
						}
					}
				}
			}
		}
		old, updated := everyFieldSet(), everyFieldSet()
		old.Status.Conditions, updated.Status.Conditions = conds, conds
		if errs := validate(t, updated, old); len(errs) > 0 {
			t.Errorf("%s run, unchanged: %v", state, errs)
		}
	}
}

// crdValidator returns a function that validates an update of obj against a generated CRD's schema and CEL
// rules, as the API server does.
func crdValidator(t *testing.T, file string) func(t *testing.T, obj, old runtime.Object) field.ErrorList {
	t.Helper()
	var internal apiextensions.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(testutil.CRDSchema(t, file), &internal, nil); err != nil {
		t.Fatal(err)
	}
	s, err := structuralschema.NewStructural(&internal)
	if err != nil {
		t.Fatal(err)
	}
	v := cel.NewValidator(s, true, celconfig.PerCallLimit)
	return func(t *testing.T, obj, old runtime.Object) field.ErrorList {
		t.Helper()
		o, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			t.Fatal(err)
		}
		oo, err := runtime.DefaultUnstructuredConverter.ToUnstructured(old)
		if err != nil {
			t.Fatal(err)
		}
		errs, _ := v.Validate(context.Background(), nil, s, o, oo, celconfig.RuntimeCELCostBudget)
		return errs
	}
}
