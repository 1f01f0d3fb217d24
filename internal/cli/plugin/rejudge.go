package plugin

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
)

// maxJudgingFileBytes bounds the --judging file: spec.judging's evaluators are at most 32, and the whole EvalRun
// at most what etcd takes.
const maxJudgingFileBytes = 1 << 20

type rejudgeOptions struct {
	judging  string
	name     string
	baseline string
}

func newRejudgeCommand(e *env) *cobra.Command {
	o := &rejudgeOptions{}
	cmd := &cobra.Command{
		Use:   "rejudge RUN",
		Short: "Create an EvalRun that judges a finished run's kept records again, without running its runner",
		Long: `Create an EvalRun that judges RUN's kept records again (spec.rejudge.from: RUN): no runner runs; a
judging-only pod reads the records RUN kept of what its runner answered and judges them with the new run's eval
file and judging, so a new evaluator, a changed threshold or another judge model costs no agent run.

The new run takes RUN's spec: its eval file reference, target (code_judge scripts run in its image unless
judging.image says otherwise), judging, success policy, storage, sharding, queue, pod template and deadlines;
not its resume or baseline. A run with trials is judged again with its trials: the new run takes RUN's trial
count and pass rate when it starts (its spec does not copy them). --judging FILE replaces spec.judging with the YAML object in FILE (the shape of
spec.judging: evaluators, passThreshold, llm, ...). The eval file is pinned when the new run starts: a case whose
input changed since RUN answered it is reported, not judged.

--baseline BASE compares the new run with EvalRun BASE (spec.baseline.runName), with the bounds of RUN's own
spec.baseline when it has one (maxNewFailures, maxScoreDrop). It is how both sides of a comparison are judged
again with the same judge: re-judge the baseline run, then the other run with --baseline naming the baseline's
re-judge; the comparison waits for that re-judge to finish.

Without --name the new run is named <RUN>-rejudge-<random suffix> by the API server. The command prints the
created run's name.`,
		Example: `  # Judge last night's answers again with a stricter threshold and an added evaluator
  kubectl evalrun rejudge screening-nightly --judging judging.yaml

  # Name the new run
  kubectl evalrun rejudge screening-nightly --judging judging.yaml --name screening-nightly-gpt5-judge

  # Judge both sides of a comparison again with the same judge
  kubectl evalrun rejudge screening-main --judging judging.yaml --name screening-main-again
  kubectl evalrun rejudge screening-branch --judging judging.yaml --baseline screening-main-again`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return o.run(cmd, e, args[0]) },
	}
	cmd.Flags().StringVar(&o.judging, "judging", "", "A YAML file holding the new run's spec.judging (unset: RUN's).")
	cmd.Flags().StringVar(&o.name, "name", "", "The new run's name (unset: <RUN>-rejudge-<random suffix>).")
	cmd.Flags().StringVar(&o.baseline, "baseline", "", "An EvalRun to compare the new run with (spec.baseline.runName; unset: no comparison).")
	return cmd
}

func (o *rejudgeOptions) run(cmd *cobra.Command, e *env, name string) error {
	var judging *evalsv1alpha1.Judging
	if o.judging != "" {
		var err error
		if judging, err = readJudging(o.judging); err != nil {
			return err
		}
	}
	c, src, err := e.clientAndRun(cmd.Context(), name)
	if err != nil {
		return err
	}
	if o.baseline != "" {
		// A baseline that does not exist would only say so in the new run's Regressed condition, once judged.
		if _, err := e.getRun(cmd.Context(), c, o.baseline); err != nil {
			return fmt.Errorf("--baseline: %w", err)
		}
	}
	run := RejudgeRun(src, RejudgeSpec{Name: o.name, Judging: judging, Baseline: o.baseline})
	if err := c.Create(cmd.Context(), run); err != nil {
		return fmt.Errorf("creating the re-judge of EvalRun %s: %w", name, err)
	}
	_, err = fmt.Fprintf(cmd.OutOrStdout(), "evalrun.%s/%s created\n", evalsv1alpha1.GroupVersion.Group, run.Name)
	return err
}

// readJudging reads a --judging file: one spec.judging object, strictly (an unknown field is an error).
func readJudging(path string) (*evalsv1alpha1.Judging, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("--judging: %w", err)
	}
	if info.Size() > maxJudgingFileBytes {
		return nil, fmt.Errorf("--judging %s is %d bytes, more than %d", path, info.Size(), maxJudgingFileBytes)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--judging: %w", err)
	}
	j := &evalsv1alpha1.Judging{}
	if err := yaml.UnmarshalStrict(data, j); err != nil {
		return nil, fmt.Errorf("--judging %s is not a spec.judging object: %w", path, err)
	}
	return j, nil
}

// RejudgeSpec is what a re-judge takes other than its source's spec.
type RejudgeSpec struct {
	// Name is the re-judge's name; empty: generated from the source's name.
	Name string
	// Judging replaces the source's spec.judging when not nil.
	Judging *evalsv1alpha1.Judging
	// Baseline, when not empty, is the EvalRun the re-judge is compared with (typically the re-judge of the
	// source's baseline, judged the same way).
	Baseline string
}

// RejudgeRun is the EvalRun that judges src's kept records again: src's spec (eval file reference, target, judging
// or o.Judging when not nil, success policy, storage, sharding, queue, pod template and deadlines; not suspend,
// resume, baseline or trials, which the manager takes from src) with rejudge.from naming src, in src's namespace, named o.Name (or generated from src's name
// when empty). With o.Baseline it is compared with that run by the test and within the bounds of src's
// spec.baseline (the defaults when src has none): the comparison src had is with a run judged another way, so it is not kept.
func RejudgeRun(src *evalsv1alpha1.EvalRun, o RejudgeSpec) *evalsv1alpha1.EvalRun {
	s := src.Spec.DeepCopy()
	spec := evalsv1alpha1.EvalRunSpec{
		EvalFile:                s.EvalFile,
		Target:                  s.Target,
		Judging:                 s.Judging,
		SuccessPolicy:           s.SuccessPolicy,
		ActiveDeadlineSeconds:   s.ActiveDeadlineSeconds,
		BackoffLimit:            s.BackoffLimit,
		TTLSecondsAfterFinished: s.TTLSecondsAfterFinished,
		ResultsDeadlineSeconds:  s.ResultsDeadlineSeconds,
		QueueName:               s.QueueName,
		PodTemplate:             s.PodTemplate,
		Sharding:                s.Sharding,
		Storage:                 s.Storage,
		Rejudge:                 &evalsv1alpha1.Rejudge{From: src.Name},
	}
	if o.Judging != nil {
		spec.Judging = o.Judging.DeepCopy()
	}
	if o.Baseline != "" {
		// src's test and bounds (every field but the run it names).
		spec.Baseline = &evalsv1alpha1.Baseline{}
		if s.Baseline != nil {
			spec.Baseline = s.Baseline
		}
		spec.Baseline.RunName = ptr.To(o.Baseline)
	}
	meta := metav1.ObjectMeta{Namespace: src.Namespace, Name: o.Name}
	if o.Name == "" {
		meta.GenerateName = rejudgePrefix(src.Name)
	}
	return &evalsv1alpha1.EvalRun{
		TypeMeta:   metav1.TypeMeta{APIVersion: evalsv1alpha1.GroupVersion.String(), Kind: "EvalRun"},
		ObjectMeta: meta,
		Spec:       spec,
	}
}

// rejudgePrefix is the generateName of a re-judge of the run called name: "<name>-rejudge-", cut so that the
// API server's 5-character suffix keeps it within the 63 characters of the run's label values.
func rejudgePrefix(name string) string {
	const suffix, maxName = "-rejudge-", 63 - 5
	if len(name)+len(suffix) > maxName {
		name = name[:maxName-len(suffix)]
	}
	return name + suffix
}
