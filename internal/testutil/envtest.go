package testutil

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
)

// ErrNoAssets says how to get the kube-apiserver and etcd binaries envtest runs.
var ErrNoAssets = errors.New("KUBEBUILDER_ASSETS is not set: run `make test-unit`, or set it to bin/k8s/<version> after `make envtest-assets`")

// StartEnv starts a kube-apiserver and etcd (envtest) with the EvalRun CRD installed from config/crd/bases, found
// from the working directory up to the module root. The caller stops the environment; on error nothing is left
// running.
func StartEnv() (*envtest.Environment, *rest.Config, error) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		return nil, nil, ErrNoAssets
	}
	root, err := moduleRoot()
	if err != nil {
		return nil, nil, err
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(root, "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := env.Start()
	if err != nil {
		_ = env.Stop() // Start can fail with the control plane already running
		return nil, nil, fmt.Errorf("start envtest: %w", err)
	}
	return env, cfg, nil
}

// Scheme is a scheme with the Kubernetes types and the EvalRun API.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := evalsv1alpha1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}

// moduleRoot is the nearest directory from the working directory up that holds go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// RequireAssetsVar, when set (make test-unit sets it), makes a missing test asset (KUBEBUILDER_ASSETS for envtest,
// EVALRUN_WEED for the S3-compatible server) fail the tests that need it instead of skipping them.
const RequireAssetsVar = "EVALRUN_REQUIRE_TEST_ASSETS"

// AssetMissing ends a test whose asset (envtest's binaries, SeaweedFS's weed) is not there: it is skipped with the
// reason, so that plain `go test ./internal/...` runs every pure test, unless EVALRUN_REQUIRE_TEST_ASSETS is set,
// which makes it a failure.
func AssetMissing(tb testing.TB, err error) {
	tb.Helper()
	if os.Getenv(RequireAssetsVar) == "" {
		tb.Skipf("skipped, a test asset is missing: %v (set %s=1 to make this a failure)", err, RequireAssetsVar)
	}
	tb.Fatal(err)
}

// EnvUnavailable ends a test whose envtest did not start: skipped without KUBEBUILDER_ASSETS (see AssetMissing),
// failed for any other error.
func EnvUnavailable(tb testing.TB, err error) {
	tb.Helper()
	if errors.Is(err, ErrNoAssets) {
		AssetMissing(tb, err)
	}
	tb.Fatalf("start envtest: %v", err)
}
