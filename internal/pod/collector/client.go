package collector

import (
	"fmt"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
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

// NewClient returns an API client from the in-cluster configuration (or KUBECONFIG).
func NewClient() (client.Client, error) {
	cfg, err := config.GetConfig()
	if err != nil {
		return nil, fmt.Errorf("load the API client configuration: %w", err)
	}
	cfg.UserAgent = "evalrun-collector"
	s, err := Scheme()
	if err != nil {
		return nil, fmt.Errorf("build the scheme: %w", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		return nil, fmt.Errorf("create the API client: %w", err)
	}
	return c, nil
}
