package options

import (
	"net"
	"net/netip"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// APIServerEgress is where the run's pods reach the API server (the collector's status and result writes): the
// addresses and ports of the kubernetes Service and of its endpoints, found once when the manager starts
// (cmd/manager). Without them the policy has no API server rule and a collector that writes status cannot; the
// manager then creates no policy (RunNetworkPolicies).
type APIServerEgress struct {
	Peers []networkingv1.NetworkPolicyPeer
	Ports []networkingv1.NetworkPolicyPort
}

// APIServerEgressOf is the API server rule from the kubernetes Service's address and port and its endpoints'
// (host:port strings); addresses that are not IPs are left out.
func APIServerEgressOf(addrs []string) APIServerEgress {
	var out APIServerEgress
	seenIP, seenPort := map[string]bool{}, map[int32]bool{}
	for _, a := range addrs {
		host, port, err := net.SplitHostPort(a)
		if err != nil {
			continue
		}
		ip, err := netip.ParseAddr(host)
		p, perr := strconv.ParseInt(port, 10, 32)
		if err != nil || perr != nil {
			continue
		}
		if cidr := netip.PrefixFrom(ip, ip.BitLen()).String(); !seenIP[cidr] {
			seenIP[cidr] = true
			out.Peers = append(out.Peers, networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: cidr}})
		}
		if !seenPort[int32(p)] {
			seenPort[int32(p)] = true
			out.Ports = append(out.Ports, networkingv1.NetworkPolicyPort{Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To(intstr.FromInt32(int32(p)))})
		}
	}
	return out
}
