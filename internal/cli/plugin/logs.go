package plugin

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"sync"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spf13/cobra"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
)

type logsOptions struct {
	caseID         string
	containers     []string
	tail           int64
	follow         bool
	maxLogRequests int
}

func newLogsCommand(e *env) *cobra.Command {
	o := &logsOptions{}
	cmd := &cobra.Command{
		Use:   "logs RUN [--case ID] [--container runner|collector|judge] [--tail N] [-f]",
		Short: "Print the logs of an EvalRun's pods (the runner's and the collector's)",
		Long: `Print the logs of the pods of an EvalRun's Job: by default the runner's and the collector's containers,
each under a "==> pod/<pod> container/<container> <==" header, oldest pod first.

A sharded run has one pod per shard; --case ID shows only the pod of the shard that ran that case (found from
the run's run.json in its eval ConfigMap).

With --follow the logs of every chosen container of the pods that exist now are streamed at once, until each
container ends (or the command is interrupted); since they interleave, each line is prefixed with
"pod/<pod>/<container> ". Pods created later (a retried or a queued shard) are not followed: run the command
again.`,
		Example: `  # The runner's and collector's logs of a run
  kubectl evalrun logs screening-nightly

  # The last 50 lines of the runner of the shard that ran case kyc-0042
  kubectl evalrun logs screening-nightly --case kyc-0042 --container runner --tail 50

  # Follow a running run's runners and collectors
  kubectl evalrun logs screening-nightly -f`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return o.run(cmd, e, args[0]) },
	}
	cmd.Flags().StringVar(&o.caseID, "case", "", "Only the pod of the shard that ran this case id.")
	cmd.Flags().StringSliceVarP(&o.containers, "container", "c", []string{podwire.ContainerRunner, podwire.ContainerCollector},
		"Containers to show: runner, collector, judge (comma-separated or repeated).")
	cmd.Flags().Int64Var(&o.tail, "tail", -1, "Lines of the end of each log to show; -1 shows every line.")
	cmd.Flags().BoolVarP(&o.follow, "follow", "f", false, "Stream the logs until the containers end, each line prefixed with its pod and container.")
	cmd.Flags().IntVar(&o.maxLogRequests, "max-log-requests", 20,
		"With --follow, the most logs to stream at once; more is an error (narrow them with --case or --container).")
	return cmd
}

func (o *logsOptions) run(cmd *cobra.Command, e *env, name string) error {
	for _, c := range o.containers {
		if c != podwire.ContainerRunner && c != podwire.ContainerCollector && !podwire.IsJudgeContainer(c) {
			return fmt.Errorf("--container %q is not one of runner, collector, judge, judge-1 ... judge-7", c)
		}
	}
	if o.follow && o.maxLogRequests < 1 {
		return fmt.Errorf("--max-log-requests must be at least 1, got %d", o.maxLogRequests)
	}
	ctx := cmd.Context()
	c, err := e.client()
	if err != nil {
		return err
	}
	cs, err := e.clientset()
	if err != nil {
		return err
	}
	run, err := e.getRun(ctx, c, name)
	if err != nil {
		return err
	}
	pods, err := runPods(ctx, c, run, o.caseID)
	if err != nil {
		return err
	}
	if o.follow {
		return o.followAll(ctx, cmd.OutOrStdout(), cmd.ErrOrStderr(), cs, pods)
	}
	return o.write(ctx, cmd.OutOrStdout(), cmd.ErrOrStderr(), cs, pods)
}

// runPods lists the pods of run's Job, oldest first; with caseID, only those of the shard that ran it.
func runPods(ctx context.Context, c client.Reader, run *evalsv1alpha1.EvalRun, caseID string) ([]corev1.Pod, error) {
	jobName := run.Status.JobName
	if jobName == "" {
		return nil, fmt.Errorf("EvalRun %s has no Job yet", run.Name)
	}
	shard := -1
	if caseID != "" {
		var err error
		if shard, err = shardOfCase(ctx, c, run, caseID); err != nil {
			return nil, err
		}
	}
	sel := labels.SelectorFromSet(labels.Set{batchv1.JobNameLabel: jobName})
	job := &batchv1.Job{}
	switch err := c.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: jobName}, job); {
	case err == nil && job.Spec.Selector != nil:
		s, err := metav1.LabelSelectorAsSelector(job.Spec.Selector)
		if err != nil {
			return nil, fmt.Errorf("the selector of Job %s: %w", jobName, err)
		}
		sel = s
	case err != nil && !apierrors.IsNotFound(err):
		return nil, fmt.Errorf("reading Job %s: %w", jobName, err)
	}
	list := &corev1.PodList{}
	if err := c.List(ctx, list, client.InNamespace(run.Namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return nil, fmt.Errorf("listing the pods of Job %s: %w", jobName, err)
	}
	pods := list.Items
	if shard >= 0 {
		pods = slices.DeleteFunc(pods, func(p corev1.Pod) bool {
			return p.Annotations[podwire.AnnotationJobCompletionIndex] != strconv.Itoa(shard)
		})
	}
	if len(pods) == 0 {
		what := "Job " + jobName
		if shard >= 0 {
			what = fmt.Sprintf("shard %d of Job %s (it ran case %s)", shard, jobName, caseID)
		}
		why := "the Job or its pods were deleted"
		switch {
		case shard < 0 && meta.IsStatusConditionTrue(run.Status.Conditions, evalsv1alpha1.ConditionSucceeded):
			// assess.ReleasableOfOnePodRun: the manager's --release-succeeded-pods.
			why = "the Job or its pods were deleted (a manager run with --release-succeeded-pods deletes the pod of a succeeded " +
				"one-pod run); its results are in the run's stored results, the runner's stderr tail in status.collection.launcher"
		case shard >= evalsv1alpha1.MaxStatusShards:
			// assess.KeptShardPods (internal/manager/assess): the manager deletes such a shard's pod once it succeeded.
			why = fmt.Sprintf("the manager deletes the pod of a succeeded shard from index %d on; "+
				"its results are in the run's stored results", evalsv1alpha1.MaxStatusShards)
		}
		return nil, fmt.Errorf("no pods of %s are left (%s)", what, why)
	}
	slices.SortStableFunc(pods, func(a, b corev1.Pod) int {
		return a.CreationTimestamp.Compare(b.CreationTimestamp.Time)
	})
	return pods, nil
}

// shardOfCase is the shard (Job completion index) that ran caseID, from run.json in the run's eval ConfigMap; 0
// for a run of one pod.
func shardOfCase(ctx context.Context, c client.Reader, run *evalsv1alpha1.EvalRun, caseID string) (int, error) {
	name := run.Status.EvalConfigMapName
	if name == "" {
		return 0, fmt.Errorf("EvalRun %s has no eval ConfigMap yet", run.Name)
	}
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: name}, cm); err != nil {
		return 0, fmt.Errorf("reading the eval ConfigMap %s: %w", name, err)
	}
	var cfg podwire.RunConfig
	if err := json.Unmarshal([]byte(cm.Data[podwire.RunConfigKey]), &cfg); err != nil {
		return 0, fmt.Errorf("reading %s of ConfigMap %s: %w", podwire.RunConfigKey, name, err)
	}
	i := slices.Index(cfg.CaseIDs, caseID)
	if i < 0 {
		if slices.Contains(cfg.AllCaseIDs, caseID) && run.Status.Resume != nil {
			return 0, fmt.Errorf("case %s was not run by EvalRun %s: its result was carried from EvalRun %s",
				caseID, run.Name, run.Status.Resume.From)
		}
		return 0, fmt.Errorf("EvalRun %s has no case %s", run.Name, caseID)
	}
	shards := max(int(cfg.Shards), 1)
	for s := range shards {
		if lo, hi := podwire.ShardRange(len(cfg.CaseIDs), shards, s); i >= lo && i < hi {
			if shards == 1 {
				return -1, nil
			}
			return s, nil
		}
	}
	return 0, fmt.Errorf("case %s is in no shard of EvalRun %s", caseID, run.Name)
}

// logTarget is one container of one pod whose log is shown.
type logTarget struct{ namespace, pod, container string }

// targets are the chosen containers of pods, pod by pod; each pod without one of them is reported on errOut.
func (o *logsOptions) targets(errOut io.Writer, pods []corev1.Pod) ([]logTarget, error) {
	var targets []logTarget
	for _, p := range pods {
		for _, name := range o.containers {
			if !hasContainer(&p, name) {
				if _, err := fmt.Fprintf(errOut, "pod/%s has no container %s\n", p.Name, name); err != nil {
					return nil, err
				}
				continue
			}
			targets = append(targets, logTarget{p.Namespace, p.Name, name})
		}
	}
	return targets, nil
}

// write streams each chosen container's log of each pod, under a header.
func (o *logsOptions) write(ctx context.Context, out, errOut io.Writer, cs kubernetes.Interface, pods []corev1.Pod) error {
	targets, err := o.targets(errOut, pods)
	if err != nil {
		return err
	}
	for _, t := range targets {
		if _, err := fmt.Fprintf(out, "==> pod/%s container/%s <==\n", t.pod, t.container); err != nil {
			return err
		}
		rc, err := cs.CoreV1().Pods(t.namespace).GetLogs(t.pod, o.logOptions(t.container)).Stream(ctx)
		if err != nil {
			if _, werr := fmt.Fprintf(errOut, "pod/%s container/%s: %v\n", t.pod, t.container, err); werr != nil {
				return werr
			}
			continue
		}
		err = (&lineWriter{out: out, errOut: errOut}).copyLines("", rc)
		_ = rc.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// logOptions are the log request of one container.
func (o *logsOptions) logOptions(container string) *corev1.PodLogOptions {
	opts := &corev1.PodLogOptions{Container: container, Follow: o.follow}
	if o.tail >= 0 {
		opts.TailLines = &o.tail
	}
	return opts
}

// followAll streams the chosen containers' logs of pods at once, each line under its pod and container, until
// every stream ends. A stream that cannot start or breaks is reported on errOut and the others go on; writing to
// out failing ends them all.
func (o *logsOptions) followAll(ctx context.Context, out, errOut io.Writer, cs kubernetes.Interface, pods []corev1.Pod) error {
	targets, err := o.targets(errOut, pods)
	if err != nil {
		return err
	}
	if len(targets) > o.maxLogRequests {
		return fmt.Errorf("--follow would stream %d logs, more than --max-log-requests %d: raise it, or narrow the logs with --case or --container",
			len(targets), o.maxLogRequests)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	w := &lineWriter{out: out, errOut: errOut}
	var wg sync.WaitGroup
	for _, t := range targets {
		wg.Go(func() {
			prefix := "pod/" + t.pod + "/" + t.container + " "
			rc, err := cs.CoreV1().Pods(t.namespace).GetLogs(t.pod, o.logOptions(t.container)).Stream(ctx)
			if err != nil {
				w.report(prefix, err)
				return
			}
			defer func() { _ = rc.Close() }()
			if err := w.copyLines(prefix, rc); err != nil {
				if errors.Is(err, errWrite) {
					cancel(err)
					return
				}
				if ctx.Err() == nil {
					w.report(prefix, err)
				}
			}
		})
	}
	wg.Wait()
	if err := context.Cause(ctx); errors.Is(err, errWrite) {
		return err
	}
	return nil
}

// errWrite marks a failure to write the output (a closed pipe), which ends every stream.
var errWrite = errors.New("writing the logs")

// lineWriter writes whole prefixed lines of several streams to one output.
type lineWriter struct {
	mu          sync.Mutex
	out, errOut io.Writer
}

// maxLogLine bounds one line as it is written: a longer one is written in parts, each with the prefix.
const maxLogLine = 64 << 10

// copyLines writes r's lines, each after prefix, until r ends; a last line without a newline gets one.
func (w *lineWriter) copyLines(prefix string, r io.Reader) error {
	br := bufio.NewReaderSize(r, maxLogLine)
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			w.mu.Lock()
			// The runner's bytes reach a terminal: its control characters and bidi overrides are escaped
			// (textbound.Printable), so that a line can neither move the cursor nor forge another's prefix.
			_, werr := io.WriteString(w.out, prefix+textbound.Printable(string(bytes.TrimSuffix(line, []byte{'\n'})))+"\n")
			w.mu.Unlock()
			if werr != nil {
				return fmt.Errorf("%w: %w", errWrite, werr)
			}
		}
		switch {
		case err == nil, errors.Is(err, bufio.ErrBufferFull):
		case errors.Is(err, io.EOF):
			return nil
		default:
			return err
		}
	}
}

// report writes a stream's error to errOut.
func (w *lineWriter) report(prefix string, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, _ = fmt.Fprintf(w.errOut, "%s%v\n", prefix, err)
}

func hasContainer(p *corev1.Pod, name string) bool {
	has := func(cs []corev1.Container) bool {
		return slices.ContainsFunc(cs, func(c corev1.Container) bool { return c.Name == name })
	}
	return has(p.Spec.Containers) || has(p.Spec.InitContainers)
}
