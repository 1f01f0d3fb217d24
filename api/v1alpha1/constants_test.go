package v1alpha1_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
)

const (
	evalRunCRD      = "evals.evalrun.io_evalruns.yaml"
	evalScheduleCRD = "evals.evalrun.io_evalschedules.yaml"
)

// runSpecDefaults are the constants of the EvalRun spec's +default markers, by path under the spec. An
// EvalSchedule's template carries the same defaults under spec.template.spec.
var runSpecDefaults = map[string]any{
	"evalFile.configMapKeyRef.key":      evalsv1alpha1.DefaultEvalFileKey,
	"backoffLimit":                      evalsv1alpha1.DefaultBackoffLimit,
	"resultsDeadlineSeconds":            evalsv1alpha1.DefaultResultsDeadlineSeconds,
	"target.batching":                   evalsv1alpha1.DefaultBatching,
	"target.evalFileView":               evalsv1alpha1.DefaultEvalFileView,
	"target.healthcheck.timeoutSeconds": evalsv1alpha1.DefaultHealthcheckTimeoutSeconds,
	"judging.passThreshold":             evalsv1alpha1.DefaultPassThreshold,
	"judging.codeJudgeTimeoutSeconds":   evalsv1alpha1.DefaultCodeJudgeTimeoutSeconds,
	"judging.codeJudgeWorkers":          evalsv1alpha1.DefaultCodeJudgeWorkers,
	"judging.llm.timeoutSeconds":        evalsv1alpha1.DefaultLLMTimeoutSeconds,
	"judging.llm.maxConcurrentRequests": evalsv1alpha1.DefaultLLMMaxConcurrentRequests,
	"judging.llm.answerDelimiters":      evalsv1alpha1.DefaultAnswerDelimiters,
	"successPolicy.minPassRate":         evalsv1alpha1.DefaultMinPassRate,
	"successPolicy.regression":          evalsv1alpha1.DefaultRegression,
	"sharding.shards":                   evalsv1alpha1.DefaultShards,
	"trials.count":                      evalsv1alpha1.DefaultTrials,
	"trials.passRate":                   evalsv1alpha1.DefaultTrialsPassRate,
	"resume.cases":                      evalsv1alpha1.DefaultResumeCases,
	"storage.statusFrom":                evalsv1alpha1.DefaultStatusFrom,
	"baseline.maxNewFailures":           evalsv1alpha1.DefaultMaxNewFailures,
	"baseline.test":                     evalsv1alpha1.DefaultBaselineTest,
	"baseline.alpha":                    evalsv1alpha1.DefaultBaselineAlpha,
	"baseline.minEffect":                evalsv1alpha1.DefaultBaselineMinEffect,
}

// scheduleSpecDefaults are the constants of the EvalSchedule spec's own +default markers.
var scheduleSpecDefaults = map[string]any{
	"concurrencyPolicy":          evalsv1alpha1.DefaultConcurrencyPolicy,
	"successfulRunsHistoryLimit": evalsv1alpha1.DefaultSuccessfulRunsHistoryLimit,
	"failedRunsHistoryLimit":     evalsv1alpha1.DefaultFailedRunsHistoryLimit,
}

// listBounds are the MaxItems the code cuts status lists to.
var listBounds = []struct {
	crd, path string
	want      int64
}{
	{evalRunCRD, "status.cases", evalsv1alpha1.MaxStatusCases},
	{evalRunCRD, "status.cases[].evaluators", evalsv1alpha1.MaxCaseEvaluators},
	{evalRunCRD, "status.missingIds", evalsv1alpha1.MaxStatusMissingIDs},
	{evalRunCRD, "status.parseErrors", evalsv1alpha1.MaxStatusParseErrors},
	{evalRunCRD, "status.unexpectedIds", evalsv1alpha1.MaxStatusUnexpectedIDs},
	{evalRunCRD, "status.summary.histogram", evalsv1alpha1.HistogramBins},
	{evalRunCRD, "status.shards", evalsv1alpha1.MaxStatusShards},
	{evalRunCRD, "status.shards[].missingIds", evalsv1alpha1.MaxShardMissingIDs},
	{evalRunCRD, "status.trials.flaky", evalsv1alpha1.MaxStatusFlakyIDs},
	{evalRunCRD, "status.baseline.newlyFailing", evalsv1alpha1.MaxComparisonIDs},
	{evalRunCRD, "status.baseline.newlyPassing", evalsv1alpha1.MaxComparisonIDs},
	{evalRunCRD, "status.baseline.missingInRun", evalsv1alpha1.MaxComparisonIDs},
	{evalRunCRD, "status.baseline.missingInBaseline", evalsv1alpha1.MaxComparisonIDs},
	{evalRunCRD, "status.previousAttempts", evalsv1alpha1.MaxPreviousAttempts},
	{evalScheduleCRD, "status.active", evalsv1alpha1.MaxScheduleActive},
}

// TestCRDMatchesTheConstants reads the generated CRDs: every +default on a field of this API equals its constant
// in constants.go (a +default without one fails too), and every status list the code cuts has the constant's
// MaxItems. Changing a marker without its constant, or the reverse, fails here.
func TestCRDMatchesTheConstants(t *testing.T) {
	schemas := map[string]*apiextensionsv1.JSONSchemaProps{
		evalRunCRD:      testutil.CRDSchema(t, evalRunCRD),
		evalScheduleCRD: testutil.CRDSchema(t, evalScheduleCRD),
	}
	roots := map[string]reflect.Type{
		evalRunCRD:      reflect.TypeFor[evalsv1alpha1.EvalRun](),
		evalScheduleCRD: reflect.TypeFor[evalsv1alpha1.EvalSchedule](),
	}
	want := map[string]map[string]string{evalRunCRD: {}, evalScheduleCRD: {}}
	for p, v := range runSpecDefaults {
		want[evalRunCRD]["spec."+p] = jsonOf(t, v)
		want[evalScheduleCRD]["spec.template.spec."+p] = jsonOf(t, v)
	}
	for p, v := range scheduleSpecDefaults {
		want[evalScheduleCRD]["spec."+p] = jsonOf(t, v)
	}
	for crd, s := range schemas {
		got := map[string]string{}
		ourDefaults(t, s, roots[crd], "", got)
		if diff := cmp.Diff(want[crd], got); diff != "" {
			t.Errorf("%s: defaults (-constants +CRD):\n%s", crd, diff)
		}
	}

	for _, b := range listBounds {
		if got := testutil.SchemaAt(t, schemas[b.crd], b.path).MaxItems; got == nil || *got != b.want {
			t.Errorf("%s: %s maxItems %v, the code's constant %d", b.crd, b.path, deref(got), b.want)
		}
	}

	// spec.trials.count's bound and the pods' bound of the spec's rule are the code's.
	if c := testutil.SchemaAt(t, schemas[evalRunCRD], "spec.trials.count"); c.Maximum == nil || *c.Maximum != evalsv1alpha1.MaxTrials {
		t.Errorf("spec.trials.count maximum %v, the code's MaxTrials %d", c.Maximum, evalsv1alpha1.MaxTrials)
	}
	podsRule := false
	for _, r := range testutil.SchemaAt(t, schemas[evalRunCRD], "spec").XValidations {
		podsRule = podsRule || (strings.Contains(r.Rule, "self.trials.count") && strings.HasSuffix(r.Rule, fmt.Sprintf("<= %d", evalsv1alpha1.MaxPods)))
	}
	if !podsRule {
		t.Errorf("spec has no rule bounding sharding.shards times trials.count by MaxPods %d", evalsv1alpha1.MaxPods)
	}

	// spec.target.workers has no +default (it is only valid with PerCase); the manager's fallback is within its
	// bounds.
	w := testutil.SchemaAt(t, schemas[evalRunCRD], "spec.target.workers")
	if d := float64(evalsv1alpha1.DefaultTargetWorkers); w.Minimum == nil || w.Maximum == nil || d < *w.Minimum || d > *w.Maximum {
		t.Errorf("DefaultTargetWorkers %v is outside spec.target.workers' bounds", d)
	}
}

// apiPkg is this API's package: defaults of fields of other packages' types (corev1's) are not ours.
var apiPkg = reflect.TypeFor[evalsv1alpha1.EvalRun]().PkgPath()

// ourDefaults walks a schema along the Go type it was generated from and records, by dotted path, the JSON of
// every default on a field of a struct of this package.
func ourDefaults(t *testing.T, s *apiextensionsv1.JSONSchemaProps, typ reflect.Type, path string, out map[string]string) {
	t.Helper()
	for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice {
		if typ.Kind() == reflect.Slice {
			if s.Items == nil || s.Items.Schema == nil {
				return
			}
			s = s.Items.Schema
		}
		typ = typ.Elem()
	}
	if typ.Kind() != reflect.Struct || typ.PkgPath() != apiPkg {
		return
	}
	for i := range typ.NumField() {
		f := typ.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" && strings.Contains(opts, "inline") {
			ourDefaults(t, s, f.Type, path, out)
			continue
		}
		p, ok := s.Properties[name]
		if !ok {
			continue
		}
		fp := strings.TrimPrefix(path+"."+name, ".")
		if p.Default != nil {
			out[fp] = compactJSON(t, p.Default.Raw)
		}
		ourDefaults(t, &p, f.Type, fp, out)
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func compactJSON(t *testing.T, raw []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return jsonOf(t, v)
}

func deref(p *int64) any {
	if p == nil {
		return "unset"
	}
	return *p
}
