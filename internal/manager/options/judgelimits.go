package options

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Default limits of every judge container (--judge-cpu-limit, --judge-memory-limit,
// --judge-ephemeral-storage-limit): answer code a code judge runs cannot take the node's CPU or memory. Its disk
// is bounded without a limit: its root file system is read-only and every volume it writes has a sizeLimit
// (verdicts, /dev/shm in memory). An ephemeral-storage limit on any container makes the kubelet bound the whole
// pod by the sum of the containers' limits, counting the runner's writable layer against it (boundTrustedStorage):
// so none by default ("").
const (
	DefaultJudgeCPULimit              = "1"
	DefaultJudgeMemoryLimit           = "1Gi"
	DefaultJudgeEphemeralStorageLimit = ""
)

// JudgeLimits is the manager's default limits of a judge container: each of cpu, memory and ephemeral-storage
// applies unless spec.judging.resources sets that limit itself.
type JudgeLimits corev1.ResourceList

// ParseJudgeLimits reads the three flags' values; each must be a positive quantity, or "" for no default limit.
func ParseJudgeLimits(cpu, memory, ephemeral string) (JudgeLimits, error) {
	out := JudgeLimits{}
	for name, v := range map[corev1.ResourceName]string{
		corev1.ResourceCPU: cpu, corev1.ResourceMemory: memory, corev1.ResourceEphemeralStorage: ephemeral,
	} {
		if v == "" {
			continue
		}
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return nil, fmt.Errorf("--judge-%s-limit %q: %w", name, v, err)
		}
		if q.Sign() <= 0 {
			return nil, fmt.Errorf("--judge-%s-limit %q is not above 0", name, v)
		}
		out[name] = q
	}
	return out, nil
}

// defaultJudgeLimits returns the defaults when limits is nil.
func defaultJudgeLimits(limits JudgeLimits) JudgeLimits {
	if limits != nil {
		return limits
	}
	l, err := ParseJudgeLimits(DefaultJudgeCPULimit, DefaultJudgeMemoryLimit, DefaultJudgeEphemeralStorageLimit)
	if err != nil {
		panic(err) // the constants above parse
	}
	return l
}

// Apply returns res with every default limit res does not set; a default below res's own request of
// that resource becomes the request (a limit below the request is invalid).
func (limits JudgeLimits) Apply(res corev1.ResourceRequirements) corev1.ResourceRequirements {
	res = *res.DeepCopy()
	for name, q := range limits {
		if _, set := res.Limits[name]; set {
			continue
		}
		if res.Limits == nil {
			res.Limits = corev1.ResourceList{}
		}
		if req, ok := res.Requests[name]; ok && req.Cmp(q) > 0 {
			q = req
		}
		res.Limits[name] = q.DeepCopy()
	}
	return res
}
