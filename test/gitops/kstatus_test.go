package gitops

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

// TestKstatus checks what the kstatus library (what Flux reads without healthCheckExprs, and kubectl-style waiters
// such as cli-utils' and kpt's) computes for every phase and reason: InProgress while the run is in progress or
// queued, Failed when it failed, Current when it finished. kstatus knows only Reconciling and Stalled (and
// observedGeneration), so a finished run is Current whether or not it met its success policy or regressed; a run
// without conditions yet (just created, or a new attempt's first status) is Current too, since kstatus takes a
// resource without conditions as current; and a new evals.evalrun.io/rerun value shows the previous attempt's
// status until the operator acts on it. The Argo CD check and the Flux expressions cover all of these.
func TestKstatus(t *testing.T) {
	for _, c := range runCases(t) {
		t.Run(c.name, func(t *testing.T) {
			res, err := status.Compute(&unstructured.Unstructured{Object: c.obj})
			if err != nil {
				t.Fatal(err)
			}
			if string(res.Status) != c.kstatus {
				t.Errorf("kstatus computes %s (%s), want %s", res.Status, res.Message, c.kstatus)
			}
		})
	}
}
