package testutil

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// CRDMaxLength returns the maxLength of the string field at path in the schema of the CRD file (a file name in
// config/crd/bases) for version v1alpha1. The path names fields from the object's root, dot-separated, with "[]"
// after a list to step into its items: "status.cases[].evaluators[].message" or "status.missingIds[]". It fails
// the test when the file, the path or its maxLength is missing.
func CRDMaxLength(t testing.TB, file, path string) int64 {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "config", "crd", "bases", file))
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(data, &crd); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	var schema *apiextensionsv1.JSONSchemaProps
	for _, v := range crd.Spec.Versions {
		if v.Name == "v1alpha1" && v.Schema != nil {
			schema = v.Schema.OpenAPIV3Schema
		}
	}
	if schema == nil {
		t.Fatalf("%s has no v1alpha1 schema", file)
	}
	for _, field := range strings.Split(path, ".") {
		name, list := strings.CutSuffix(field, "[]")
		p, ok := schema.Properties[name]
		if !ok {
			t.Fatalf("%s: no field %q on the way to %s", file, name, path)
		}
		schema = &p
		if list {
			if schema.Items == nil || schema.Items.Schema == nil {
				t.Fatalf("%s: %s is not a list, in %s", file, name, path)
			}
			schema = schema.Items.Schema
		}
	}
	if schema.MaxLength == nil {
		t.Fatalf("%s: %s has no maxLength", file, path)
	}
	return *schema.MaxLength
}
