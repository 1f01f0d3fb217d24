package v1alpha1_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
)

// mutableSpecFields are the spec fields a user may change on a run in progress.
var mutableSpecFields = map[string]bool{"suspend": true}

// TestEveryImmutableSpecFieldIsInTheRule catches the trap of adding a spec field and forgetting the immutability
// rules: every field of EvalRunSpec but the mutable ones must be compared with oldSelf by one of the CRD's root
// rules, which hold the spec still while the run is in progress (a finished run starts a new attempt when its spec
// changes).
func TestEveryImmutableSpecFieldIsInTheRule(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "config", "crd", "bases", "evals.evalrun.io_evalruns.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(data, &crd); err != nil {
		t.Fatal(err)
	}
	root := crd.Spec.Versions[0].Schema.OpenAPIV3Schema
	var rules []string
	for _, r := range root.XValidations {
		if strings.Contains(r.Rule, "oldSelf") {
			rules = append(rules, r.Rule)
		}
	}
	if len(rules) == 0 {
		t.Fatal("the EvalRun has no immutability rule")
	}
	rule := strings.Join(rules, "\n")
	st := reflect.TypeFor[evalsv1alpha1.EvalRunSpec]()
	for i := range st.NumField() {
		name, _, _ := strings.Cut(st.Field(i).Tag.Get("json"), ",")
		if mutableSpecFields[name] {
			if strings.Contains(rule, "self.spec."+name+" ") || strings.Contains(rule, "self.spec."+name+")") {
				t.Errorf("spec.%s is meant to be mutable but the immutability rule compares it", name)
			}
			continue
		}
		if !strings.Contains(rule, "self.spec."+name+" == oldSelf.spec."+name) {
			t.Errorf("spec.%s is not in the immutability rule on spec (add it, or list it in mutableSpecFields)", name)
		}
	}
}
