package controller

import (
	"context"
	"errors"
	"net"
	"net/url"
	"strconv"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/options"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DiscoverAPIServer finds where pods reach the API server, for runs' NetworkPolicies: the default/kubernetes
// Service's cluster IP and port, every address and port of its EndpointSlices (a network plugin may match a
// policy before or after the Service's translation), and host, the address the manager itself uses (its rest
// config). It returns what it found and the errors of what it could not read (a namespaced install may not read
// the default namespace: then only host's address, when it is an IP).
func DiscoverAPIServer(ctx context.Context, c client.Reader, host string) (options.APIServerEgress, error) {
	var addrs []string
	var errs []error
	if u, err := url.Parse(host); err == nil && u.Hostname() != "" {
		port := u.Port()
		if port == "" {
			port = "443"
		}
		addrs = append(addrs, net.JoinHostPort(u.Hostname(), port))
	}
	svc := &corev1.Service{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "kubernetes"}, svc); err != nil {
		errs = append(errs, err)
	} else {
		for _, ip := range svc.Spec.ClusterIPs {
			for _, p := range svc.Spec.Ports {
				addrs = append(addrs, net.JoinHostPort(ip, strconv.Itoa(int(p.Port))))
			}
		}
	}
	slices := &discoveryv1.EndpointSliceList{}
	if err := c.List(ctx, slices, client.InNamespace("default"), client.MatchingLabels{discoveryv1.LabelServiceName: "kubernetes"}); err != nil {
		errs = append(errs, err)
	} else {
		for _, s := range slices.Items {
			for _, e := range s.Endpoints {
				for _, a := range e.Addresses {
					for _, p := range s.Ports {
						if p.Port != nil {
							addrs = append(addrs, net.JoinHostPort(a, strconv.Itoa(int(*p.Port))))
						}
					}
				}
			}
		}
	}
	return options.APIServerEgressOf(addrs), errors.Join(errs...)
}
