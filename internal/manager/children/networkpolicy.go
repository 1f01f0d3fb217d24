package children

import (
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/options"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
)

// ComponentNetworkPolicy is the component label of the run's NetworkPolicy.
const ComponentNetworkPolicy = "network-policy"

// namespaceNameLabel is the label every namespace carries with its own name.
const namespaceNameLabel = "kubernetes.io/metadata.name"

// BuildNetworkPolicy is the NetworkPolicy of the run's pods (every shard's): no ingress at all; egress only to
// what the trusted side needs (the API server unless statusFrom Bucket, the buckets the run names, the LLM
// judges' endpoint, DNS) and to the run's own spec.target.egress. Every in-cluster peer excludes the pods of every
// run (podwire.LabelRun), so a run's pod reaches no other run's pod, nor another shard of its own run. A
// NetworkPolicy is pod-wide: what it allows, the runner may use too (the judge's scripts are also confined by
// Landlock, internal/confine). Pure.
func BuildNetworkPolicy(run *evalsv1alpha1.EvalRun, cfg podwire.RunConfig, api options.APIServerEgress) *networkingv1.NetworkPolicy {
	names := NamesFor(run.Name)
	var egress []networkingv1.NetworkPolicyEgressRule
	// DNS: the endpoints below are names.
	egress = append(egress, networkingv1.NetworkPolicyEgressRule{Ports: []networkingv1.NetworkPolicyPort{
		{Protocol: ptr.To(corev1.ProtocolUDP), Port: ptr.To(intstr.FromInt32(53))},
		{Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To(intstr.FromInt32(53))},
	}})
	if !cfg.BucketOnly && len(api.Peers) > 0 {
		egress = append(egress, networkingv1.NetworkPolicyEgressRule{To: api.Peers, Ports: api.Ports})
	}
	var endpoints []string
	for _, b := range []*podwire.Bucket{cfg.Bucket, bundleObjects(cfg), evalObjectBucket(cfg)} {
		if b != nil {
			endpoints = append(endpoints, b.Endpoint)
		}
	}
	if cfg.LLM != nil {
		endpoints = append(endpoints, cfg.LLM.BaseURL)
	}
	slices.Sort(endpoints)
	for _, e := range slices.Compact(endpoints) {
		egress = append(egress, EgressTo(e, run.Namespace)...)
	}
	egress = append(egress, run.Spec.Target.Egress...)
	return &networkingv1.NetworkPolicy{
		ObjectMeta: Meta(run, names.NetworkPolicy, ComponentNetworkPolicy),
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{
				podwire.LabelRun: names.RunLabel, podwire.LabelComponent: ComponentPod,
			}},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
			Egress:      egress,
		},
	}
}

func bundleObjects(cfg podwire.RunConfig) *podwire.Bucket {
	if cfg.Bundle == nil {
		return nil
	}
	return cfg.Bundle.Objects
}

func evalObjectBucket(cfg podwire.RunConfig) *podwire.Bucket {
	if cfg.EvalObject == nil {
		return nil
	}
	return &cfg.EvalObject.Bucket
}

// notRunPods selects the pods that belong to no EvalRun.
var notRunPods = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
	{Key: podwire.LabelRun, Operator: metav1.LabelSelectorOpDoesNotExist},
}}

// EgressTo returns the egress rules that reach endpoint (a URL, or host:port) from a pod in namespace:
//   - an IP address: that address alone, on the endpoint's port;
//   - a Service name (one label: the run's namespace; "<svc>.<ns>", "<svc>.<ns>.svc[.<cluster domain>]"): the pods
//     of that namespace that belong to no run, on any port (a Service's port is not its pods' port);
//   - any other name: every address outside the cluster's pods on the endpoint's port (a name's addresses are not
//     known to a NetworkPolicy). A two-label name could be either, and gets both.
func EgressTo(endpoint, namespace string) []networkingv1.NetworkPolicyEgressRule {
	host, port := hostPort(endpoint)
	if host == "" {
		return nil
	}
	ports := []networkingv1.NetworkPolicyPort{{Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To(intstr.FromInt32(port))}}
	if ip, err := netip.ParseAddr(host); err == nil {
		return []networkingv1.NetworkPolicyEgressRule{{
			To:    []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: netip.PrefixFrom(ip, ip.BitLen()).String()}}},
			Ports: ports,
		}}
	}
	labels := strings.Split(strings.TrimSuffix(host, "."), ".")
	inCluster := func(ns string) networkingv1.NetworkPolicyEgressRule {
		return networkingv1.NetworkPolicyEgressRule{To: []networkingv1.NetworkPolicyPeer{{
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{namespaceNameLabel: ns}},
			PodSelector:       notRunPods,
		}}}
	}
	outside := networkingv1.NetworkPolicyEgressRule{
		To: []networkingv1.NetworkPolicyPeer{
			{IPBlock: &networkingv1.IPBlock{CIDR: "0.0.0.0/0"}},
			{IPBlock: &networkingv1.IPBlock{CIDR: "::/0"}},
		},
		Ports: ports,
	}
	switch {
	case len(labels) == 1:
		return []networkingv1.NetworkPolicyEgressRule{inCluster(namespace)}
	case len(labels) >= 3 && labels[2] == "svc":
		return []networkingv1.NetworkPolicyEgressRule{inCluster(labels[1])}
	case len(labels) == 2:
		return []networkingv1.NetworkPolicyEgressRule{inCluster(labels[1]), outside}
	}
	return []networkingv1.NetworkPolicyEgressRule{outside}
}

// hostPort is the host and port of a URL or host:port (port 443 for https, else 80 when none is given).
func hostPort(endpoint string) (string, int32) {
	if !strings.Contains(endpoint, "://") {
		endpoint = "http://" + endpoint
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return "", 0
	}
	port := int32(80)
	if u.Scheme == "https" {
		port = 443
	}
	if p, err := strconv.ParseInt(u.Port(), 10, 32); err == nil && p > 0 && p < 65536 {
		port = int32(p)
	}
	return strings.ToLower(u.Hostname()), port
}
