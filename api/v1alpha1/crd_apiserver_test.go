package v1alpha1_test

import (
	"context"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"

	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
)

// TestCRDsPassTheAPIServersChecks runs the checks the API server makes when the CRDs are created (the schema is
// structural, every CEL rule compiles and stays within the per-rule and per-CRD cost limits), without a server.
func TestCRDsPassTheAPIServersChecks(t *testing.T) {
	for _, file := range []string{evalRunCRD, evalScheduleCRD} {
		t.Run(file, func(t *testing.T) {
			crd := testutil.ReadCRD(t, file)
			apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(crd)
			var internal apiextensions.CustomResourceDefinition
			if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(crd, &internal, nil); err != nil {
				t.Fatal(err)
			}
			if errs := apiextensionsvalidation.ValidateCustomResourceDefinition(context.Background(), &internal); len(errs) > 0 {
				t.Errorf("the API server would refuse %s: %v", file, errs)
			}
		})
	}
}
