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

// mutableSpecFields are the spec fields a user may change on a live EvalRun.
var mutableSpecFields = map[string]bool{"suspend": true}

// TestEveryImmutableSpecFieldIsInTheRule catches the trap of adding a spec field and forgetting the immutability
// rule: every field of EvalRunSpec but the mutable ones must be compared with oldSelf by the CRD's rule on spec.
func TestEveryImmutableSpecFieldIsInTheRule(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "config", "crd", "bases", "evals.evalrun.io_evalruns.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(data, &crd); err != nil {
		t.Fatal(err)
	}
	spec := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	var rule string
	for _, r := range spec.XValidations {
		if strings.Contains(r.Rule, "oldSelf") {
			rule = r.Rule
		}
	}
	if rule == "" {
		t.Fatal("spec has no immutability rule")
	}
	st := reflect.TypeFor[evalsv1alpha1.EvalRunSpec]()
	for i := range st.NumField() {
		name, _, _ := strings.Cut(st.Field(i).Tag.Get("json"), ",")
		if mutableSpecFields[name] {
			if strings.Contains(rule, "self."+name+" ") || strings.Contains(rule, "self."+name+")") {
				t.Errorf("spec.%s is meant to be mutable but the immutability rule compares it", name)
			}
			continue
		}
		if !strings.Contains(rule, "self."+name+" == oldSelf."+name) {
			t.Errorf("spec.%s is not in the immutability rule on spec (add it, or list it in mutableSpecFields)", name)
		}
	}
}
