package testutil

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// ReadCRD reads a generated CRD from config/crd/bases (file is its name there), found from the working directory
// up to the module root.
func ReadCRD(t testing.TB, file string) *apiextensionsv1.CustomResourceDefinition {
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
	return &crd
}

// CRDSchema is the schema of a generated CRD's only version.
func CRDSchema(t testing.TB, file string) *apiextensionsv1.JSONSchemaProps {
	t.Helper()
	crd := ReadCRD(t, file)
	if len(crd.Spec.Versions) != 1 || crd.Spec.Versions[0].Schema == nil {
		t.Fatalf("%s has %d versions, want 1 with a schema", file, len(crd.Spec.Versions))
	}
	return crd.Spec.Versions[0].Schema.OpenAPIV3Schema
}

// SchemaAt is the schema at path: field names from s, dot-separated, with "[]" after a list to step into its items
// ("status.cases[].evaluators[].message", "status.missingIds[]"). It fails the test when a step is missing.
func SchemaAt(t testing.TB, s *apiextensionsv1.JSONSchemaProps, path string) *apiextensionsv1.JSONSchemaProps {
	t.Helper()
	for step := range strings.SplitSeq(path, ".") {
		name, list := strings.CutSuffix(step, "[]")
		p, ok := s.Properties[name]
		if !ok {
			t.Fatalf("the CRD has no %s (at %s)", path, name)
		}
		s = &p
		if list {
			if s.Items == nil || s.Items.Schema == nil {
				t.Fatalf("%s is not a list", path)
			}
			s = s.Items.Schema
		}
	}
	return s
}

// CRDMaxLength returns the maxLength of the string field at path (see SchemaAt) in the CRD file. It fails the test
// when the file, the path or its maxLength is missing.
func CRDMaxLength(t testing.TB, file, path string) int64 {
	t.Helper()
	s := SchemaAt(t, CRDSchema(t, file), path)
	if s.MaxLength == nil {
		t.Fatalf("%s: %s has no maxLength", file, path)
	}
	return *s.MaxLength
}
