package assess

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
)

// maxScheduleWalk bounds how many scheduled times one reconcile steps through to find the most recent missed one
// (an every-minute schedule after a year away is 525,600 of them).
const maxScheduleWalk = 1_000_000

// ParseSchedule parses spec.schedule in spec.timeZone (the manager's local zone when unset).
func ParseSchedule(spec *evalsv1alpha1.EvalScheduleSpec) (cron.Schedule, error) {
	if strings.Contains(spec.Schedule, "TZ") {
		return nil, fmt.Errorf("schedule %q: use spec.timeZone instead of a TZ= or CRON_TZ= prefix", spec.Schedule)
	}
	sched, err := cron.ParseStandard(spec.Schedule)
	if err != nil {
		return nil, fmt.Errorf("schedule %q: %w", spec.Schedule, err)
	}
	if spec.TimeZone == nil {
		return sched, nil
	}
	loc, err := time.LoadLocation(*spec.TimeZone)
	if err != nil {
		return nil, fmt.Errorf("timeZone %q: %w", *spec.TimeZone, err)
	}
	if s, ok := sched.(*cron.SpecSchedule); ok {
		s.Location = loc
	}
	return sched, nil
}

// MostRecent returns the latest scheduled time in (earliest, now] and how many there were (0 and the zero time
// when none). It steps through at most maxScheduleWalk times; past that, the count is a lower bound.
func MostRecent(sched cron.Schedule, earliest, now time.Time) (time.Time, int) {
	var last time.Time
	missed := 0
	for t := earliest; missed < maxScheduleWalk; missed++ {
		next := sched.Next(t)
		if next.IsZero() || next.After(now) {
			break
		}
		last, t = next, next
	}
	return last, missed
}

// ScheduledRunName is the deterministic name of a schedule's run for a scheduled time: <schedule>-<minutes since
// the Unix epoch>, as CronJob names its Jobs, so that a manager that restarts never creates a run twice.
func ScheduledRunName(schedule string, t time.Time) string {
	return schedule + "-" + strconv.FormatInt(t.Unix()/60, 10)
}

// ScheduledTime reads a run's scheduled time from its annotation, falling back to its creation time.
func ScheduledTime(run *evalsv1alpha1.EvalRun) time.Time {
	if t, err := time.Parse(time.RFC3339, run.Annotations[evalsv1alpha1.AnnotationScheduledTime]); err == nil {
		return t
	}
	return run.CreationTimestamp.Time
}

// succeeded reports a finished run whose Succeeded condition is True.
func succeeded(run *evalsv1alpha1.EvalRun) bool {
	return meta.IsStatusConditionTrue(run.Status.Conditions, evalsv1alpha1.ConditionSucceeded)
}

// ScheduleRuns are a schedule's runs, each group in scheduled order (oldest first).
type ScheduleRuns struct {
	Active, Succeeded, Failed []*evalsv1alpha1.EvalRun
}

// GroupRuns sorts runs into active, succeeded and failed, by scheduled time.
func GroupRuns(runs []*evalsv1alpha1.EvalRun) ScheduleRuns {
	slices.SortStableFunc(runs, func(a, b *evalsv1alpha1.EvalRun) int {
		if c := ScheduledTime(a).Compare(ScheduledTime(b)); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	var g ScheduleRuns
	for _, run := range runs {
		switch _, done := TerminalAssessment(run); {
		case !done:
			g.Active = append(g.Active, run)
		case succeeded(run):
			g.Succeeded = append(g.Succeeded, run)
		default:
			g.Failed = append(g.Failed, run)
		}
	}
	return g
}

// expired returns the finished runs beyond the history limits, oldest first, except runs still needed as the
// baseline of a run that has not been compared yet.
func (g ScheduleRuns) Expired(spec *evalsv1alpha1.EvalScheduleSpec) []*evalsv1alpha1.EvalRun {
	needed := map[string]bool{}
	for _, group := range [][]*evalsv1alpha1.EvalRun{g.Active, g.Succeeded, g.Failed} {
		for _, run := range group {
			if NeedsComparison(run) {
				needed[BaselineName(run)] = true
			}
		}
	}
	var out []*evalsv1alpha1.EvalRun
	cut := func(runs []*evalsv1alpha1.EvalRun, limit *int32, def int32) {
		keep := int(ptr.Deref(limit, def))
		for i := 0; i < len(runs)-keep; i++ {
			if !needed[runs[i].Name] {
				out = append(out, runs[i])
			}
		}
	}
	cut(g.Succeeded, spec.SuccessfulRunsHistoryLimit, evalsv1alpha1.DefaultSuccessfulRunsHistoryLimit)
	cut(g.Failed, spec.FailedRunsHistoryLimit, evalsv1alpha1.DefaultFailedRunsHistoryLimit)
	return out
}

// latestSucceeded is the run that succeeded with the latest scheduled time, or nil.
func (g ScheduleRuns) LatestSucceeded() *evalsv1alpha1.EvalRun {
	if len(g.Succeeded) == 0 {
		return nil
	}
	return g.Succeeded[len(g.Succeeded)-1]
}

// lastFinished is the finished run with the latest scheduled time, or nil.
func (g ScheduleRuns) LastFinished() *evalsv1alpha1.EvalRun {
	var last *evalsv1alpha1.EvalRun
	for _, group := range [][]*evalsv1alpha1.EvalRun{g.Succeeded, g.Failed} {
		if n := len(group); n > 0 && (last == nil || ScheduledTime(group[n-1]).After(ScheduledTime(last))) {
			last = group[n-1]
		}
	}
	return last
}

// FinishedRunStatus is a finished run as status.lastFinished shows it (the GitOps health tests build theirs with it).
func FinishedRunStatus(run *evalsv1alpha1.EvalRun) *evalsv1alpha1.FinishedRun {
	return &evalsv1alpha1.FinishedRun{Name: run.Name, ScheduledTime: metav1.NewTime(ScheduledTime(run)), RunOutcome: OutcomeOf(run)}
}

// OutcomeOf is how a finished run (its current attempt) ended: its conditions and summary.
func OutcomeOf(run *evalsv1alpha1.EvalRun) evalsv1alpha1.RunOutcome {
	out := evalsv1alpha1.RunOutcome{CompletionTime: run.Status.CompletionTime, Summary: run.Status.Summary}
	if c := meta.FindStatusCondition(run.Status.Conditions, evalsv1alpha1.ConditionSucceeded); c != nil {
		out.Succeeded, out.Reason = c.Status, c.Reason
	}
	if c := meta.FindStatusCondition(run.Status.Conditions, evalsv1alpha1.ConditionPassed); c != nil {
		out.Passed = ptr.To(c.Status)
	}
	if c := meta.FindStatusCondition(run.Status.Conditions, evalsv1alpha1.ConditionRegressed); c != nil {
		out.Regressed = ptr.To(c.Status)
	}
	return out
}

// ScheduledRun builds the run a schedule creates for scheduled time t: the template's labels, annotations and
// spec, the schedule's label and the scheduled time, controlled by the schedule. A template baseline without a
// run name becomes the schedule's latest run that succeeded (no baseline when there is none yet).
func ScheduledRun(s *evalsv1alpha1.EvalSchedule, t time.Time, latest *evalsv1alpha1.EvalRun) *evalsv1alpha1.EvalRun {
	tmpl := s.Spec.Template
	run := &evalsv1alpha1.EvalRun{
		ObjectMeta: metav1.ObjectMeta{
			Name: ScheduledRunName(s.Name, t), Namespace: s.Namespace,
			Labels: map[string]string{}, Annotations: map[string]string{},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(s, evalsv1alpha1.GroupVersion.WithKind("EvalSchedule"))},
		},
		Spec: *tmpl.Spec.DeepCopy(),
	}
	if tmpl.Metadata != nil {
		for k, v := range tmpl.Metadata.Labels {
			run.Labels[k] = v
		}
		for k, v := range tmpl.Metadata.Annotations {
			run.Annotations[k] = v
		}
	}
	run.Labels[evalsv1alpha1.LabelSchedule] = s.Name
	run.Annotations[evalsv1alpha1.AnnotationScheduledTime] = t.UTC().Format(time.RFC3339)
	if b := run.Spec.Baseline; b != nil && ptr.Deref(b.RunName, "") == "" {
		if latest == nil {
			run.Spec.Baseline = nil
		} else {
			b.RunName = ptr.To(latest.Name)
		}
	}
	return run
}

// NeedsComparison reports a run with spec.baseline whose comparison is not decided yet: its Regressed condition
// is missing or waits for the baseline.
func NeedsComparison(run *evalsv1alpha1.EvalRun) bool {
	if run.Spec.Baseline == nil {
		return false
	}
	c := meta.FindStatusCondition(run.Status.Conditions, evalsv1alpha1.ConditionRegressed)
	return c == nil || c.Reason == evalsv1alpha1.ReasonBaselinePending
}
