package assess

import (
	"testing"

	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
)

// Every bound the manager cuts a status string to fits the field's maxLength in the generated CRDs. The bounds are
// in bytes (textbound) and maxLength counts characters; a string has at most as many characters as bytes.
func TestStringBoundsFitTheCRD(t *testing.T) {
	const runs, schedules = "evals.evalrun.io_evalruns.yaml", "evals.evalrun.io_evalschedules.yaml"
	for _, tc := range []struct {
		file, path string
		bound      int
	}{
		{runs, "status.conditions[].message", MaxConditionMessage},
		{schedules, "status.conditions[].message", MaxConditionMessage},
		{runs, "status.runner.reason", maxRunnerReason},
		{runs, "status.runner.message", maxRunnerMessage},
		{runs, "status.runner.imageID", maxRunnerImageID},
		{runs, "status.shards[].imageID", maxRunnerImageID},
		{runs, "status.shards[].message", maxShardMessage},
		{runs, "status.queue.reason", MaxQueueReason},
		{runs, "status.queue.message", MaxQueueMessage},
		{runs, "status.queue.clusterQueue", MaxQueueClusterQueue},
	} {
		if limit := testutil.CRDMaxLength(t, tc.file, tc.path); int64(tc.bound) > limit {
			t.Errorf("%s %s: the manager cuts to %d bytes, over the CRD's maxLength %d", tc.file, tc.path, tc.bound, limit)
		}
	}
}
