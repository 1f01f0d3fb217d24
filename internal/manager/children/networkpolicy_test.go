package children

import (
	"testing"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/options"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
)

func tcp(port int32) []networkingv1.NetworkPolicyPort {
	return []networkingv1.NetworkPolicyPort{{Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To(intstr.FromInt32(port))}}
}

func inNamespace(ns string) networkingv1.NetworkPolicyEgressRule {
	return networkingv1.NetworkPolicyEgressRule{To: []networkingv1.NetworkPolicyPeer{{
		NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}},
		PodSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: podwire.LabelRun, Operator: metav1.LabelSelectorOpDoesNotExist}}},
	}}}
}

func anywhere(port int32) networkingv1.NetworkPolicyEgressRule {
	return networkingv1.NetworkPolicyEgressRule{To: []networkingv1.NetworkPolicyPeer{
		{IPBlock: &networkingv1.IPBlock{CIDR: "0.0.0.0/0"}}, {IPBlock: &networkingv1.IPBlock{CIDR: "::/0"}}}, Ports: tcp(port)}
}

func TestEgressTo(t *testing.T) {
	for _, tc := range []struct {
		endpoint string
		want     []networkingv1.NetworkPolicyEgressRule
	}{
		{"http://10.96.3.4:8333", []networkingv1.NetworkPolicyEgressRule{{To: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "10.96.3.4/32"}}}, Ports: tcp(8333)}}},
		{"http://[fd00::1]/v1", []networkingv1.NetworkPolicyEgressRule{{To: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "fd00::1/128"}}}, Ports: tcp(80)}}},
		{"http://seaweedfs:8333", []networkingv1.NetworkPolicyEgressRule{inNamespace("evals")}},
		{"http://judge.models.svc:8080/v1", []networkingv1.NetworkPolicyEgressRule{inNamespace("models")}},
		{"http://judge.models.svc.cluster.local:8080/v1", []networkingv1.NetworkPolicyEgressRule{inNamespace("models")}},
		{"seaweedfs.storage:8333", []networkingv1.NetworkPolicyEgressRule{inNamespace("storage"), anywhere(8333)}},
		{"https://api.openai.example.com/v1", []networkingv1.NetworkPolicyEgressRule{anywhere(443)}},
		{"", nil},
	} {
		t.Run(tc.endpoint, func(t *testing.T) {
			if d := cmp.Diff(tc.want, EgressTo(tc.endpoint, "evals")); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestBuildNetworkPolicy(t *testing.T) {
	api := options.APIServerEgressOf([]string{"10.96.0.1:443", "172.18.0.2:6443", "10.96.0.1:443", "not-an-ip:443"})
	if d := cmp.Diff(options.APIServerEgress{
		Peers: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "10.96.0.1/32"}}, {IPBlock: &networkingv1.IPBlock{CIDR: "172.18.0.2/32"}}},
		Ports: append(tcp(443), tcp(6443)...),
	}, api); d != "" {
		t.Errorf("API server egress (-want +got):\n%s", d)
	}
	run := &evalsv1alpha1.EvalRun{ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: "evals", UID: "u"}}
	run.Spec.Target.Egress = []networkingv1.NetworkPolicyEgressRule{anywhere(8443)}
	dns := networkingv1.NetworkPolicyEgressRule{Ports: []networkingv1.NetworkPolicyPort{
		{Protocol: ptr.To(corev1.ProtocolUDP), Port: ptr.To(intstr.FromInt32(53))}, {Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To(intstr.FromInt32(53))}}}
	cfg := podwire.RunConfig{Bucket: &podwire.Bucket{Endpoint: "http://seaweedfs.storage.svc:8333"},
		EvalObject: &podwire.EvalObject{Bucket: podwire.Bucket{Endpoint: "http://seaweedfs.storage.svc:8333"}},
		LLM:        &podwire.LLM{BaseURL: "http://10.0.0.9:8080/v1"}}
	np := BuildNetworkPolicy(run, cfg, api)
	want := []networkingv1.NetworkPolicyEgressRule{
		dns,
		{To: api.Peers, Ports: api.Ports},
		{To: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.9/32"}}}, Ports: tcp(8080)},
		inNamespace("storage"), // the bucket, once though named twice
		anywhere(8443),         // spec.target.egress
	}
	if d := cmp.Diff(want, np.Spec.Egress); d != "" {
		t.Errorf("egress (-want +got):\n%s", d)
	}
	if np.Name != "nightly-evalrun" || np.Namespace != "evals" || !metav1.IsControlledBy(np, run) {
		t.Errorf("metadata %+v", np.ObjectMeta)
	}
	if d := cmp.Diff(metav1.LabelSelector{MatchLabels: map[string]string{podwire.LabelRun: "nightly", podwire.LabelComponent: ComponentPod}},
		np.Spec.PodSelector); d != "" {
		t.Errorf("pod selector (-want +got):\n%s", d)
	}
	if len(np.Spec.Ingress) != 0 || len(np.Spec.PolicyTypes) != 2 {
		t.Errorf("ingress %v types %v, want none allowed, both types", np.Spec.Ingress, np.Spec.PolicyTypes)
	}
	// statusFrom Bucket: the pod makes no API call, so no API server rule.
	cfg.BucketOnly = true
	for _, r := range BuildNetworkPolicy(run, cfg, api).Spec.Egress {
		if cmp.Equal(r.To, api.Peers) {
			t.Error("a bucket-only run's pods may reach the API server")
		}
	}
	// The job's pods carry what the policy selects.
	job := BuildJob(testutil.UnitRun(), BuildRunConfig(testutil.UnitRun(), testutil.CaseIDs(1), nil, JudgeLoad{}, options.Options{}), options.Options{})
	sel := BuildNetworkPolicy(testutil.UnitRun(), podwire.RunConfig{}, api).Spec.PodSelector.MatchLabels
	for k, v := range sel {
		if job.Spec.Template.Labels[k] != v {
			t.Errorf("the pods' label %s=%q, the policy selects %q", k, job.Spec.Template.Labels[k], v)
		}
	}
}
