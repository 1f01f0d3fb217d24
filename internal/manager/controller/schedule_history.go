package controller

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/compare"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/assess"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/collect"
	"github.com/evalrun-operator/evalrun-operator/internal/stored"
)

// maxFlakiest bounds status.flakiest.
const maxFlakiest = 10

// eventHistoryReset is the event of a case history that could not be read and was started over.
const eventHistoryReset = "CaseHistoryReset"

// recordHistory records the schedule's finished runs that its case history (the ConfigMap
// <schedule>-evalrun-history, which it controls) does not hold yet, oldest first, each case's verdict read from the
// run's stored results; then it fills status.historyRuns, historyDroppedCases and flakiest from the history. A run
// is recorded once: the history keeps the uids of its runs and the scheduled time of its latest, so a reconcile
// repeated after a crash adds nothing. A run without stored results, or scheduled before the latest recorded
// one (it finished late), is not recorded.
func (r *EvalScheduleReconciler) recordHistory(ctx context.Context, s *evalsv1alpha1.EvalSchedule, g assess.ScheduleRuns,
	status *evalsv1alpha1.EvalScheduleStatus) error {
	h, cm, err := collect.ReadHistory(ctx, r.apiReader, s.Namespace, s.Name)
	if err != nil && cm == nil {
		return err
	}
	if err != nil {
		r.recorder.Eventf(s, nil, corev1.EventTypeWarning, eventHistoryReset, "RecordHistory", "starting the case history over: %v", err)
		h = &compare.History{}
	}
	finished := slices.Concat(g.Succeeded, g.Failed)
	slices.SortStableFunc(finished, func(a, b *evalsv1alpha1.EvalRun) int { return assess.ScheduledTime(a).Compare(assess.ScheduledTime(b)) })
	changed := err != nil
	for _, run := range finished {
		if h.Recorded(string(run.UID), assess.ScheduledTime(run)) || !stored.HasResults(run) {
			continue
		}
		verdicts, msg, err := r.collect.CaseVerdicts(ctx, run)
		if err != nil {
			return fmt.Errorf("reading the case verdicts of run %s: %w", run.Name, err)
		}
		if msg != "" {
			ctrl.LoggerFrom(ctx).V(1).Info("Run not recorded in the case history", "evalRun", klog.KObj(run), "reason", msg)
			continue
		}
		h.Record(string(run.UID), assess.ScheduledTime(run), verdicts)
		changed = true
	}
	if changed {
		if err := r.writeHistory(ctx, s, h, cm); err != nil {
			return err
		}
	}
	status.HistoryRuns = int32(len(h.Runs))
	status.HistoryDroppedCases = int32(h.Dropped)
	status.Flakiest = nil
	for _, f := range h.Flakiest(maxFlakiest) {
		status.Flakiest = append(status.Flakiest, evalsv1alpha1.FlakyCase{ID: f.ID, Flips: int32(f.Flips), Runs: int32(f.Runs),
			FlipRate: f.Rate.FloatString(4)})
	}
	return nil
}

// writeHistory encodes h within its budget (dropping the cases beyond it) into the schedule's history ConfigMap:
// cm updated (a conflict returns, to be retried on the history as it then is), or a new one the schedule controls.
func (r *EvalScheduleReconciler) writeHistory(ctx context.Context, s *evalsv1alpha1.EvalSchedule, h *compare.History, cm *corev1.ConfigMap) error {
	data, err := h.Encode(compare.HistoryBudget)
	if err != nil {
		return fmt.Errorf("encoding the case history of EvalSchedule %s: %w", s.Name, err)
	}
	if cm != nil {
		cm.Data = nil
		cm.BinaryData = map[string][]byte{collect.HistoryKey: data}
		if err := r.client.Update(ctx, cm); err != nil {
			return fmt.Errorf("updating the case history ConfigMap %s: %w", cm.Name, err)
		}
		return nil
	}
	cm = &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: collect.HistoryConfigMapName(s.Name), Namespace: s.Namespace,
			Labels: map[string]string{evalsv1alpha1.LabelSchedule: s.Name}},
		BinaryData: map[string][]byte{collect.HistoryKey: data},
	}
	if err := controllerutil.SetControllerReference(s, cm, r.client.Scheme()); err != nil {
		return fmt.Errorf("owning the case history ConfigMap %s: %w", cm.Name, err)
	}
	if err := r.client.Create(ctx, cm); err != nil {
		// AlreadyExists: another reconcile wrote it since it was read; retried on it.
		return fmt.Errorf("creating the case history ConfigMap %s: %w", cm.Name, err)
	}
	return nil
}
