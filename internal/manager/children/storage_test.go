package children

import (
	"fmt"
	"testing"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/options"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
)

// podShapes are run specs that change the pod's volumes.
func podShapes() map[string]func(*evalsv1alpha1.EvalRun) {
	return map[string]func(*evalsv1alpha1.EvalRun){
		"plain": func(*evalsv1alpha1.EvalRun) {},
		"sharded": func(r *evalsv1alpha1.EvalRun) {
			r.Spec.Sharding = &evalsv1alpha1.Sharding{Shards: ptr.To[int32](3)}
		},
		"runner ephemeral-storage limit": func(r *evalsv1alpha1.EvalRun) {
			r.Spec.Target.Resources = &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceEphemeralStorage: resource.MustParse("32Mi")}}
		},
	}
}

// TestEveryEmptyDirIsBounded: every emptyDir of the run's pod has a positive sizeLimit (a volume added without
// one fails here), and every container mounts its own memory-backed /dev/shm, bounded, that no other mounts.
func TestEveryEmptyDirIsBounded(t *testing.T) {
	for name, shape := range podShapes() {
		for _, codeJudges := range []int{0, 2} {
			t.Run(fmt.Sprintf("%s, %d code judge cases", name, codeJudges), func(t *testing.T) {
				run := testutil.UnitRun(shape)
				cfg := BuildRunConfig(run, testutil.CaseIDs(4), nil, JudgeLoad{CodeJudgeCases: codeJudges}, options.Options{})
				spec := BuildJob(run, cfg, options.Options{}).Spec.Template.Spec
				for _, v := range spec.Volumes {
					if e := v.EmptyDir; e != nil && (e.SizeLimit == nil || e.SizeLimit.Sign() <= 0) {
						t.Errorf("emptyDir %s has no sizeLimit", v.Name)
					}
				}
				byName := map[string]corev1.Volume{}
				for _, v := range spec.Volumes {
					byName[v.Name] = v
				}
				shmUsers := map[string][]string{}
				for _, list := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
					for _, c := range list {
						var shm []string
						for _, m := range c.VolumeMounts {
							if m.MountPath == "/dev/shm" {
								shm = append(shm, m.Name)
								shmUsers[m.Name] = append(shmUsers[m.Name], c.Name)
							}
						}
						if len(shm) != 1 {
							t.Errorf("container %s mounts %v at /dev/shm, want its own volume", c.Name, shm)
							continue
						}
						v := byName[shm[0]]
						if v.EmptyDir == nil || v.EmptyDir.Medium != corev1.StorageMediumMemory || v.EmptyDir.SizeLimit.Cmp(ShmSizeLimit) != 0 {
							t.Errorf("container %s's /dev/shm is %+v, want a memory-backed emptyDir of %s", c.Name, v.VolumeSource, ShmSizeLimit.String())
						}
					}
				}
				for v, users := range shmUsers {
					if len(users) != 1 {
						t.Errorf("/dev/shm volume %s is shared by %v", v, users)
					}
				}
			})
		}
	}
}

// TestOutSizeLimit: the runner's output volume is bounded by its ephemeral-storage limit, else 2Gi; the
// snapshot holds a copy of it.
func TestOutSizeLimit(t *testing.T) {
	sizes := func(run *evalsv1alpha1.EvalRun) map[string]string {
		out := map[string]string{}
		for _, v := range BuildJob(run, BuildRunConfig(run, testutil.CaseIDs(2), nil, JudgeLoad{}, options.Options{}), options.Options{}).Spec.Template.Spec.Volumes {
			if v.EmptyDir != nil && v.EmptyDir.Medium == "" {
				out[v.Name] = v.EmptyDir.SizeLimit.String()
			}
		}
		return out
	}
	want := map[string]string{"bin": "256Mi", "view": "64Mi", "out": "2Gi", "snapshot": "2064Mi"}
	if diff := cmp.Diff(want, sizes(testutil.UnitRun())); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
	limited := testutil.UnitRun(podShapes()["runner ephemeral-storage limit"])
	want = map[string]string{"bin": "256Mi", "view": "64Mi", "out": "32Mi", "snapshot": "48Mi"}
	if diff := cmp.Diff(want, sizes(limited)); diff != "" {
		t.Errorf("with target.resources.limits.ephemeral-storage 32Mi (-want +got):\n%s", diff)
	}
}

// TestTrustedStorageNotCountedAgainstTheRunner: once the runner has an ephemeral-storage limit the kubelet
// bounds the whole pod by the sum of its containers' limits, so the collector gets a limit covering the volumes
// the runner does not write (with no request); without any such limit nothing is added.
func TestTrustedStorageNotCountedAgainstTheRunner(t *testing.T) {
	ephemeral := func(run *evalsv1alpha1.EvalRun) (limit, request *resource.Quantity) {
		job := BuildJob(run, BuildRunConfig(run, testutil.CaseIDs(2), nil, JudgeLoad{}, options.Options{}), options.Options{})
		c := containerOf(job, "collector")
		if q, ok := c.Resources.Limits[corev1.ResourceEphemeralStorage]; ok {
			limit = &q
		}
		if q, ok := c.Resources.Requests[corev1.ResourceEphemeralStorage]; ok {
			request = &q
		}
		return limit, request
	}
	if l, r := ephemeral(testutil.UnitRun()); l != nil || r != nil {
		t.Errorf("no ephemeral-storage limit anywhere: the collector got limit %v request %v", l, r)
	}
	l, r := ephemeral(testutil.UnitRun(podShapes()["runner ephemeral-storage limit"]))
	// bin 256Mi + view 64Mi + snapshot 48Mi + 128Mi margin; out (the runner's) not counted (no code judges: no
	// verdicts volume).
	if want := resource.MustParse("496Mi"); l == nil || l.Cmp(want) != 0 {
		t.Errorf("collector ephemeral-storage limit = %v, want %s", l, want.String())
	}
	if r == nil || !r.IsZero() {
		t.Errorf("collector ephemeral-storage request = %v, want 0", r)
	}
}
