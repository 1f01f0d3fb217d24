package collector

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestClientMakesNoDiscoveryRequest: the collector's client reads a ConfigMap and an EvalRun with no request
// but those two, against a real API server: no /api, /apis or group-version discovery, which every run's pod
// would otherwise make (controller-runtime's default mapper does, and this test fails with it).
func TestClientMakesNoDiscoveryRequest(t *testing.T) {
	apiClient(t) // starts the API server
	var mu sync.Mutex
	var paths []string
	cfg := rest.CopyConfig(testEnv.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			mu.Lock()
			paths = append(paths, r.URL.Path)
			mu.Unlock()
			return rt.RoundTrip(r)
		})
	})
	c, err := newClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	key := client.ObjectKey{Namespace: "default", Name: "no-such-object"}
	for _, obj := range []client.Object{&corev1.ConfigMap{}, &evalsv1alpha1.EvalRun{}} {
		if err := c.Get(ctx, key, obj); !apierrors.IsNotFound(err) {
			t.Fatalf("get %T: %v, want NotFound", obj, err)
		}
	}
	want := []string{"/api/v1/namespaces/default/configmaps/no-such-object",
		"/apis/evals.evalrun.io/v1alpha1/namespaces/default/evalruns/no-such-object"}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(paths, " ") != strings.Join(want, " ") {
		t.Errorf("requests %q, want only %q", paths, want)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
