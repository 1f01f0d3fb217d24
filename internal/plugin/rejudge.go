package plugin

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
)

// maxJudgingFileBytes bounds the --judging file: spec.judging's evaluators are at most 32, and the whole EvalRun
// at most what etcd takes.
const maxJudgingFileBytes = 1 << 20

type rejudgeOptions struct {
	judging string
	name    string
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
not its resume or baseline. --judging FILE replaces spec.judging with the YAML object in FILE (the shape of
spec.judging: evaluators, passThreshold, llm, ...). The eval file is pinned when the new run starts: a case whose
input changed since RUN answered it is reported, not judged.

Without --name the new run is named <RUN>-rejudge-<random suffix> by the API server. The command prints the
created run's name.`,
		Example: `  # Judge last night's answers again with a stricter threshold and an added evaluator
  kubectl evalrun rejudge screening-nightly --judging judging.yaml

  # Name the new run
  kubectl evalrun rejudge screening-nightly --judging judging.yaml --name screening-nightly-gpt5-judge`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return o.run(cmd, e, args[0]) },
	}
	cmd.Flags().StringVar(&o.judging, "judging", "", "A YAML file holding the new run's spec.judging (unset: RUN's).")
	cmd.Flags().StringVar(&o.name, "name", "", "The new run's name (unset: <RUN>-rejudge-<random suffix>).")
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
	run := RejudgeRun(src, o.name, judging)
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

// RejudgeRun is the EvalRun that judges src's kept records again: src's spec (eval file reference, target, judging
// or judging when not nil, success policy, storage, sharding, queue, pod template and deadlines; not suspend,
// resume or baseline) with rejudge.from naming src, in src's namespace, named name (or generated from src's name
// when empty).
func RejudgeRun(src *evalsv1alpha1.EvalRun, name string, judging *evalsv1alpha1.Judging) *evalsv1alpha1.EvalRun {
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
	if judging != nil {
		spec.Judging = judging.DeepCopy()
	}
	meta := metav1.ObjectMeta{Namespace: src.Namespace, Name: name}
	if name == "" {
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
