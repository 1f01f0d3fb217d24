package collector

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
)

// nothingToRunMessage is the collection's message of a pod with no case to run.
const nothingToRunMessage = "nothing to run: every case of this shard has its result for this trial carried from the resumed run"

// NothingToRun is the collection of a pod with no case to run (cfg.NothingToRun: a trial of a resumed run whose
// every case of the shard has its result carried): Completed, with no case and no result, the runner counted as
// finished (none was started), its message saying why. The manager's merge takes the shard's cases from the
// carried results.
func NothingToRun(cfg *podwire.RunConfig, podName string, now time.Time) *Gathered {
	at := metav1.NewTime(now.UTC().Truncate(time.Second))
	b := results.NewBuilder(results.Options{BudgetBytes: cfg.StatusBudgetBytes, NoCases: cfg.HasShardConfigMaps()})
	out, err := b.Finish(results.Tail{Collection: evalsv1alpha1.CollectionStatus{RunnerFinished: true,
		Outcome: evalsv1alpha1.OutcomeCompleted, Message: nothingToRunMessage, CollectedAt: &at, PodName: podName}})
	if err != nil {
		// An empty section always fits the pod's budget; keep a minimal one should it not.
		c := &evalsv1alpha1.CollectionStatus{RunnerFinished: true, Outcome: evalsv1alpha1.OutcomeCompleted, Message: nothingToRunMessage,
			CollectedAt: &at, PodName: podName}
		out = &results.Output{Section: results.Section{Summary: &evalsv1alpha1.RunSummary{}, Collection: c}}
	}
	return &Gathered{Output: out, Outcome: evalsv1alpha1.OutcomeCompleted, Message: nothingToRunMessage, Summary: *out.Section.Summary}
}
