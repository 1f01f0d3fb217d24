package collect

import (
	"context"
	"fmt"
	"math/big"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/compare"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
	"github.com/evalrun-operator/evalrun-operator/internal/stored"
)

// HistoryKey is the binaryData key of a schedule's case history ConfigMap (compare.History, gzip'd JSON).
const HistoryKey = "history.json.gz"

// HistoryConfigMapName is the name of the ConfigMap holding schedule's case history.
func HistoryConfigMapName(schedule string) string { return schedule + "-evalrun-history" }

// ScheduleOf names the EvalSchedule that created run (its controller, also named by its schedule label), or "".
func ScheduleOf(run *evalsv1alpha1.EvalRun) string {
	ref := metav1.GetControllerOf(run)
	if ref == nil || ref.Kind != "EvalSchedule" || ref.Name != run.Labels[evalsv1alpha1.LabelSchedule] {
		return ""
	}
	return ref.Name
}

// ReadHistory reads schedule's case history ConfigMap in namespace ns, uncached (the manager caches only the
// ConfigMaps of runs). A missing ConfigMap is an empty history and a nil ConfigMap; one that cannot be decoded
// is an error that says so, returned with the ConfigMap (an error without one is the API server's).
func ReadHistory(ctx context.Context, reader client.Reader, ns, schedule string) (*compare.History, *corev1.ConfigMap, error) {
	cm := &corev1.ConfigMap{}
	name := HistoryConfigMapName(schedule)
	if err := reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cm); err != nil {
		if apierrors.IsNotFound(err) {
			return &compare.History{}, nil, nil
		}
		return nil, nil, fmt.Errorf("reading the case history ConfigMap %s: %w", name, err)
	}
	h, err := compare.DecodeHistory(cm.BinaryData[HistoryKey])
	if err != nil {
		return nil, cm, fmt.Errorf("ConfigMap %s, key %s: %w", name, HistoryKey, err)
	}
	return h, cm, nil
}

// CaseVerdicts reads a finished run's case verdicts from its stored results (bucket or ConfigMaps), each case
// decided over its trials as the comparison decides it. The message says why they cannot be read, for good.
func (r *Collections) CaseVerdicts(ctx context.Context, run *evalsv1alpha1.EvalRun) (map[string]byte, string, error) {
	if !stored.HasResults(run) {
		return nil, "it has no stored results", nil
	}
	v := compare.NewVerdicts(compare.TrialRuleOf(run))
	msg, err := r.eachStoredLine(ctx, run, run, func(l *results.Line) error { v.Add(l); return nil })
	if msg != "" || err != nil {
		return nil, msg, err
	}
	return v.Finish(), "", nil
}

// quarantined is the set of run's cases spec.baseline.quarantine leaves out: those whose flip rate in the history
// of the schedule that created run, before run, is above flakyOver. The message says why it cannot be told, for
// good (a flakyOver or a history that cannot be read); the error is one a retry may fix.
func (r *Collections) quarantined(ctx context.Context, run *evalsv1alpha1.EvalRun) (map[string]bool, string, error) {
	q := run.Spec.Baseline.Quarantine
	if q == nil {
		return nil, "", nil
	}
	over, ok := new(big.Rat).SetString(q.FlakyOver)
	if !ok || over.Sign() <= 0 || over.Cmp(big.NewRat(1, 1)) > 0 {
		return nil, fmt.Sprintf("spec.baseline.quarantine.flakyOver %q: want a decimal in (0, 1]", q.FlakyOver), nil
	}
	schedule := ScheduleOf(run)
	if schedule == "" {
		return nil, "", nil
	}
	h, cm, err := ReadHistory(ctx, r.apiReader, run.Namespace, schedule)
	switch {
	case err != nil && cm != nil:
		return nil, "the case history: " + err.Error(), nil
	case err != nil:
		return nil, "", err
	}
	return h.Before(string(run.UID)).Quarantined(over), "", nil
}
