package collector

import (
	"fmt"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/config"
)

// Scheme holds the types the collector reads and writes.
func Scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := corev1.AddToScheme(s); err != nil {
		return nil, err
	}
	if err := evalsv1alpha1.AddToScheme(s); err != nil {
		return nil, err
	}
	return s, nil
}

// RESTMapper maps the only two kinds the collector reads and writes, ConfigMap and EvalRun, to their namespaced
// resources without asking the API server. controller-runtime's default mapper discovers them instead: on a
// pod's first request it fetches the API server's whole discovery document (every group and resource of the
// cluster), which every run's pod would pay for, and the API server with it.
func RESTMapper() meta.RESTMapper {
	m := meta.NewDefaultRESTMapper(nil)
	m.Add(corev1.SchemeGroupVersion.WithKind("ConfigMap"), meta.RESTScopeNamespace)
	m.Add(evalsv1alpha1.GroupVersion.WithKind("EvalRun"), meta.RESTScopeNamespace)
	return m
}

// NewClient returns an API client from the in-cluster configuration (or KUBECONFIG).
func NewClient() (client.Client, error) {
	cfg, err := config.GetConfig()
	if err != nil {
		return nil, fmt.Errorf("load the API client configuration: %w", err)
	}
	return newClient(cfg)
}

// newClient is the collector's client for cfg: its scheme and its static RESTMapper (no discovery request).
func newClient(cfg *rest.Config) (client.Client, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = "evalrun-collector"
	s, err := Scheme()
	if err != nil {
		return nil, fmt.Errorf("build the scheme: %w", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: s, Mapper: RESTMapper()})
	if err != nil {
		return nil, fmt.Errorf("create the API client: %w", err)
	}
	return c, nil
}
