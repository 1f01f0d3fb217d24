package gitops

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/ext"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
)

const fluxKustomization = "config/gitops/flux/evals-kustomization.yaml"

// healthCheckExpressions is one entry of a Flux Kustomization's spec.healthCheckExprs.
type healthCheckExpressions struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Current    string `json:"current"`
	InProgress string `json:"inProgress,omitempty"`
	Failed     string `json:"failed,omitempty"`
}

// evalRunExpressions returns the shipped Kustomization's expressions for EvalRun.
func evalRunExpressions(t *testing.T) healthCheckExpressions {
	t.Helper()
	var ks struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Spec       struct {
			Wait             bool                     `json:"wait"`
			HealthCheckExprs []healthCheckExpressions `json:"healthCheckExprs"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal([]byte(readRepoFile(t, fluxKustomization)), &ks); err != nil {
		t.Fatal(err)
	}
	if ks.APIVersion != "kustomize.toolkit.fluxcd.io/v1" || ks.Kind != "Kustomization" {
		t.Fatalf("%s is a %s %s, want a kustomize.toolkit.fluxcd.io/v1 Kustomization", fluxKustomization, ks.APIVersion, ks.Kind)
	}
	if !ks.Spec.Wait {
		t.Errorf("%s does not set spec.wait: Flux would not check the EvalRuns' health", fluxKustomization)
	}
	for _, e := range ks.Spec.HealthCheckExprs {
		if e.APIVersion == evalsv1alpha1.GroupVersion.String() && e.Kind == "EvalRun" {
			return e
		}
	}
	t.Fatalf("%s has no healthCheckExprs entry for %s EvalRun", fluxKustomization, evalsv1alpha1.GroupVersion)
	return healthCheckExpressions{}
}

// fluxEvaluator evaluates healthCheckExprs as Flux does (fluxcd/pkg runtime/cel: NewExpression and
// StatusEvaluator, which kustomize-controller uses): each expression parsed, not type-checked, in Flux's CEL
// environment, and evaluated with the object's top-level fields (apiVersion, kind, metadata, spec, status) as
// variables, so an expression that reads a field the object lacks fails.
type fluxEvaluator struct {
	inProgress, failed, current cel.Program
}

func newFluxEvaluator(t *testing.T, e healthCheckExpressions) *fluxEvaluator {
	t.Helper()
	env, err := cel.NewEnv(
		cel.HomogeneousAggregateLiterals(),
		cel.EagerlyValidateDeclarations(true),
		cel.DefaultUTCTimeZone(true),
		cel.CrossTypeNumericComparisons(true),
		cel.OptionalTypes(),
		ext.Strings(),
		ext.Sets(),
		ext.Encoders(),
	)
	if err != nil {
		t.Fatal(err)
	}
	program := func(name, expr string) cel.Program {
		if expr == "" {
			t.Fatalf("the %s expression is empty", name)
		}
		parsed, iss := env.Parse(expr)
		if iss != nil {
			t.Fatalf("parsing the %s expression: %s", name, iss)
		}
		prg, err := env.Program(parsed, cel.EvalOptions(cel.OptOptimize), cel.InterruptCheckFrequency(100))
		if err != nil {
			t.Fatalf("the %s expression: %v", name, err)
		}
		return prg
	}
	return &fluxEvaluator{
		inProgress: program("inProgress", e.InProgress),
		failed:     program("failed", e.Failed),
		current:    program("current", e.Current),
	}
}

// evaluate returns InProgress, Failed or Current as Flux's StatusEvaluator does: a status.observedGeneration that
// differs from metadata.generation is InProgress (both read as integers; when either is not one, the check is
// skipped); then inProgress, failed and current are evaluated in that order and the first true one decides; none
// true is InProgress. An error is what Flux reports as the object's error (its health is then Unknown).
func (f *fluxEvaluator) evaluate(obj map[string]any) (string, error) {
	observed, ok, err := unstructured.NestedInt64(obj, "status", "observedGeneration")
	if err == nil && ok {
		generation, ok, err := unstructured.NestedInt64(obj, "metadata", "generation")
		if err == nil && ok && observed != generation {
			return inProgress, nil
		}
	}
	for _, e := range []struct {
		prg    cel.Program
		status string
	}{{f.inProgress, inProgress}, {f.failed, failed}, {f.current, current}} {
		val, _, err := e.prg.ContextEval(context.Background(), obj)
		if err != nil {
			return "", err
		}
		b, ok := val.(types.Bool)
		if !ok {
			return "", fmt.Errorf("the expression returned %v, not a bool", val)
		}
		if b {
			return e.status, nil
		}
	}
	return inProgress, nil
}

// TestDocsShowTheFluxExpressions checks that the Flux example of docs/schedules-and-gitops.md is the shipped one.
func TestDocsShowTheFluxExpressions(t *testing.T) {
	const doc = "docs/schedules-and-gitops.md"
	ks := readRepoFile(t, fluxKustomization)
	i := strings.Index(ks, "  healthCheckExprs:\n")
	if i < 0 {
		t.Fatalf("%s has no healthCheckExprs", fluxKustomization)
	}
	if !strings.Contains(readRepoFile(t, doc), ks[i:]) {
		t.Errorf("%s does not show the healthCheckExprs of %s as they are:\n%s", doc, fluxKustomization, ks[i:])
	}
}

func TestFluxHealthCheckExprs(t *testing.T) {
	f := newFluxEvaluator(t, evalRunExpressions(t))
	cases := append(runCases(t), malformedCases(t)...)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := f.evaluate(c.obj)
			if err != nil {
				got = fluxError
			}
			if got != c.flux {
				t.Errorf("Flux computes %s (error: %v), want %s", got, err, c.flux)
			}
		})
	}
}
