// Package testutil holds test builders shared by the project's tests.
package testutil

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
)

// ScreeningEval is a small valid agentv-eval-v2 file with two cases.
const ScreeningEval = `$schema: agentv-eval-v2
description: screening
evalcases:
  - id: case-001
    expected_messages:
      - role: assistant
        content:
          decision: CLEAR
    input_messages:
      - role: user
        content:
          row: {id: case-001, amount: 5000}
  - id: case-002
    expected_messages:
      - role: assistant
        content:
          decision: REVIEW
    input_messages:
      - role: user
        content:
          row: {id: case-002, amount: 25000}
`

// EvalRunWrapper builds EvalRuns for tests: MakeEvalRun("a", "ns").Image("x").Obj().
type EvalRunWrapper struct{ evalsv1alpha1.EvalRun }

// MakeEvalRun returns a valid Batched EvalRun with an inline eval file.
func MakeEvalRun(name, namespace string) *EvalRunWrapper {
	return &EvalRunWrapper{evalsv1alpha1.EvalRun{
		TypeMeta:   metav1.TypeMeta{APIVersion: evalsv1alpha1.GroupVersion.String(), Kind: "EvalRun"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: evalsv1alpha1.EvalRunSpec{
			EvalFile: evalsv1alpha1.EvalFileSource{Inline: ptr.To(ScreeningEval)},
			Target: evalsv1alpha1.Target{
				Image:           "localhost/evalrun/screening-runner:dev",
				CommandTemplate: "/app/runner --eval {EVAL_FILE} --output {OUTPUT_FILE}",
			},
		},
	}}
}

// LLM sets spec.judging.llm.
func (w *EvalRunWrapper) LLM(l evalsv1alpha1.LLMJudging) *EvalRunWrapper {
	if w.Spec.Judging == nil {
		w.Spec.Judging = &evalsv1alpha1.Judging{}
	}
	w.Spec.Judging.LLM = &l
	return w
}

// Obj returns the built EvalRun.
func (w *EvalRunWrapper) Obj() *evalsv1alpha1.EvalRun { return w.DeepCopy() }

// Image sets the runner image.
func (w *EvalRunWrapper) Image(image string) *EvalRunWrapper {
	w.Spec.Target.Image = image
	return w
}

// Command sets the command template.
func (w *EvalRunWrapper) Command(tmpl string) *EvalRunWrapper {
	w.Spec.Target.CommandTemplate = evalsv1alpha1.CommandTemplate(tmpl)
	return w
}

// PerCase switches to PerCase batching with the given workers.
func (w *EvalRunWrapper) PerCase(workers int32) *EvalRunWrapper {
	w.Spec.Target.Batching = evalsv1alpha1.BatchingPerCase
	w.Spec.Target.Workers = ptr.To(workers)
	return w
}

// Inline sets the inline eval file.
func (w *EvalRunWrapper) Inline(yaml string) *EvalRunWrapper {
	w.Spec.EvalFile = evalsv1alpha1.EvalFileSource{Inline: ptr.To(yaml)}
	return w
}

// FromConfigMap takes the eval file from a ConfigMap key.
func (w *EvalRunWrapper) FromConfigMap(name, key string) *EvalRunWrapper {
	w.Spec.EvalFile = evalsv1alpha1.EvalFileSource{ConfigMapKeyRef: &evalsv1alpha1.ConfigMapKeyReference{Name: name, Key: key}}
	return w
}

// Healthcheck sets the healthcheck template.
func (w *EvalRunWrapper) Healthcheck(tmpl string) *EvalRunWrapper {
	w.Spec.Target.Healthcheck = &evalsv1alpha1.Healthcheck{CommandTemplate: evalsv1alpha1.CommandTemplate(tmpl)}
	return w
}

// HealthcheckTimeout sets the healthcheck's timeoutSeconds (after Healthcheck).
func (w *EvalRunWrapper) HealthcheckTimeout(seconds int32) *EvalRunWrapper {
	w.Spec.Target.Healthcheck.TimeoutSeconds = ptr.To(seconds)
	return w
}

// FromS3 takes the eval file from a bucket object with the given sha256 (hex).
func (w *EvalRunWrapper) FromS3(bucket evalsv1alpha1.S3Bucket, key, sha256 string) *EvalRunWrapper {
	w.Spec.EvalFile = evalsv1alpha1.EvalFileSource{S3: &evalsv1alpha1.S3Object{S3Bucket: bucket, Key: key, SHA256: sha256}}
	return w
}

// FromBundleConfigMap takes the eval file evalFile of the eval bundle in ConfigMap name.
func (w *EvalRunWrapper) FromBundleConfigMap(name, evalFile string) *EvalRunWrapper {
	w.Spec.EvalFile = evalsv1alpha1.EvalFileSource{Bundle: &evalsv1alpha1.EvalBundle{EvalFile: evalFile,
		ConfigMap: &evalsv1alpha1.BundleConfigMap{Name: name}}}
	return w
}

// FromBundleS3 takes the eval file evalFile of the eval bundle under the bucket's prefix.
func (w *EvalRunWrapper) FromBundleS3(bucket evalsv1alpha1.S3Bucket, evalFile string) *EvalRunWrapper {
	w.Spec.EvalFile = evalsv1alpha1.EvalFileSource{Bundle: &evalsv1alpha1.EvalBundle{EvalFile: evalFile, S3: &bucket}}
	return w
}

// Storage keeps the run's results in a bucket (spec.storage.s3).
func (w *EvalRunWrapper) Storage(bucket evalsv1alpha1.S3Bucket) *EvalRunWrapper {
	w.Spec.Storage = &evalsv1alpha1.ResultsStorage{S3: bucket}
	return w
}

// PullPolicy sets the runner image's pull policy.
func (w *EvalRunWrapper) PullPolicy(p corev1.PullPolicy) *EvalRunWrapper {
	w.Spec.Target.ImagePullPolicy = p
	return w
}

// ResultsDeadline sets spec.resultsDeadlineSeconds.
func (w *EvalRunWrapper) ResultsDeadline(seconds int32) *EvalRunWrapper {
	w.Spec.ResultsDeadlineSeconds = ptr.To(seconds)
	return w
}

// MinPassRate sets the success policy's minPassRate.
func (w *EvalRunWrapper) MinPassRate(rate string) *EvalRunWrapper {
	if w.Spec.SuccessPolicy == nil {
		w.Spec.SuccessPolicy = &evalsv1alpha1.SuccessPolicy{}
	}
	w.Spec.SuccessPolicy.MinPassRate = rate
	return w
}

// Queue sets the Kueue queue name.
func (w *EvalRunWrapper) Queue(name string) *EvalRunWrapper {
	w.Spec.QueueName = name
	return w
}

// Label sets a label on the EvalRun's metadata.
func (w *EvalRunWrapper) Label(key, value string) *EvalRunWrapper {
	if w.Labels == nil {
		w.Labels = map[string]string{}
	}
	w.Labels[key] = value
	return w
}

// Suspend sets spec.suspend.
func (w *EvalRunWrapper) Suspend(s bool) *EvalRunWrapper {
	w.Spec.Suspend = ptr.To(s)
	return w
}

// ActiveDeadline sets spec.activeDeadlineSeconds.
func (w *EvalRunWrapper) ActiveDeadline(s int64) *EvalRunWrapper {
	w.Spec.ActiveDeadlineSeconds = ptr.To(s)
	return w
}

// Resources sets the runner's resources.
func (w *EvalRunWrapper) Resources(r corev1.ResourceRequirements) *EvalRunWrapper {
	w.Spec.Target.Resources = &r
	return w
}

// MemoryLimit sets the runner's memory request and limit to q.
func (w *EvalRunWrapper) MemoryLimit(q string) *EvalRunWrapper {
	return w.Resources(corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(q)},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(q)},
	})
}

// Env adds an environment variable to the runner.
func (w *EvalRunWrapper) Env(name, value string) *EvalRunWrapper {
	w.Spec.Target.Env = append(w.Spec.Target.Env, corev1.EnvVar{Name: name, Value: value})
	return w
}

// Shards splits the run's cases into shards, parallelism of them at once (0: all).
func (w *EvalRunWrapper) Shards(shards, parallelism int32) *EvalRunWrapper {
	w.Spec.Sharding = &evalsv1alpha1.Sharding{Shards: ptr.To(shards)}
	if parallelism > 0 {
		w.Spec.Sharding.Parallelism = ptr.To(parallelism)
	}
	return w
}

// Trials answers every case count times; passRate, when not empty, is the share of trials a case must pass.
func (w *EvalRunWrapper) Trials(count int32, passRate string) *EvalRunWrapper {
	w.Spec.Trials = &evalsv1alpha1.Trials{Count: ptr.To(count)}
	if passRate != "" {
		w.Spec.Trials.PassRate = ptr.To(passRate)
	}
	return w
}

// Resume makes the run resume the EvalRun called from, running the cases mode selects.
func (w *EvalRunWrapper) Resume(from string, mode evalsv1alpha1.ResumeCases) *EvalRunWrapper {
	w.Spec.Resume = &evalsv1alpha1.Resume{From: from, Cases: ptr.To(mode)}
	return w
}

// Rejudge makes the run judge the kept records of the EvalRun called from again, with no runner: its target is
// unset.
func (w *EvalRunWrapper) Rejudge(from string) *EvalRunWrapper {
	w.Spec.Rejudge, w.Spec.Target = &evalsv1alpha1.Rejudge{From: from}, evalsv1alpha1.Target{}
	return w
}

// Baseline compares the run with the EvalRun called name, allowing maxNewFailures newly failing cases and, when
// maxScoreDrop is not empty, a mean score drop of at most maxScoreDrop.
func (w *EvalRunWrapper) Baseline(name string, maxNewFailures int32, maxScoreDrop string) *EvalRunWrapper {
	w.Spec.Baseline = &evalsv1alpha1.Baseline{RunName: ptr.To(name), MaxNewFailures: ptr.To(maxNewFailures)}
	if maxScoreDrop != "" {
		w.Spec.Baseline.MaxScoreDrop = ptr.To(maxScoreDrop)
	}
	return w
}

// PairedBaseline compares the run with the EvalRun called name by the Paired test, with alpha and minEffect when
// they are not empty (else the API's defaults).
func (w *EvalRunWrapper) PairedBaseline(name, alpha, minEffect string) *EvalRunWrapper {
	w.Spec.Baseline = &evalsv1alpha1.Baseline{RunName: ptr.To(name), Test: ptr.To(evalsv1alpha1.BaselineTestPaired)}
	if alpha != "" {
		w.Spec.Baseline.Alpha = ptr.To(alpha)
	}
	if minEffect != "" {
		w.Spec.Baseline.MinEffect = ptr.To(minEffect)
	}
	return w
}

// FailWhenRegressed makes a regressed run not pass (successPolicy.regression: Fail).
func (w *EvalRunWrapper) FailWhenRegressed() *EvalRunWrapper {
	if w.Spec.SuccessPolicy == nil {
		w.Spec.SuccessPolicy = &evalsv1alpha1.SuccessPolicy{}
	}
	w.Spec.SuccessPolicy.Regression = ptr.To(evalsv1alpha1.RegressionFail)
	return w
}

// DecisionEval is an eval file of n cases, case-000 to case-<n-1>, each judged on its answer's decision field
// (field_accuracy, exact): an answer {"decision":"CLEAR"} passes, any other decision fails. Every row is one the
// sample screening runner clears (a small domestic amount).
func DecisionEval(n int) string {
	var b strings.Builder
	b.WriteString("$schema: agentv-eval-v2\ndescription: decisions\nexecution:\n  evaluators:\n" +
		"    - name: decision\n      type: field_accuracy\n      fields:\n        - path: decision\n          match: exact\n")
	b.WriteString("evalcases:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - id: %s\n    input_messages:\n      - role: user\n        content: {row: {amount: 100, origin_country: NZ}}\n"+
			"    expected_messages:\n      - role: assistant\n        content: {decision: CLEAR}\n", CaseID(i))
	}
	return b.String()
}

// CaseID is the id of case i of DecisionEval.
func CaseID(i int) string { return fmt.Sprintf("case-%03d", i) }

// DecisionLine is one JSONL record answering case i of DecisionEval with decision.
func DecisionLine(i int, decision string) string {
	return fmt.Sprintf(`{"id":%q,"output_messages":[{"role":"assistant","content":{"decision":%q}}]}`, CaseID(i), decision) + "\n"
}

// UnitRunUID is the UID of UnitRun's EvalRun.
const UnitRunUID = "0b5a8c3e-1111-2222-3333-444455556666"

// UnitRun is the EvalRun the manager's unit tests build children from and assess: MakeEvalRun("screen", "team-a")
// as if the API server had stored it (UnitRunUID, generation 1), then each mutation in order.
func UnitRun(mutate ...func(*evalsv1alpha1.EvalRun)) *evalsv1alpha1.EvalRun {
	run := MakeEvalRun("screen", "team-a").Obj()
	run.UID = UnitRunUID
	run.Generation = 1
	for _, m := range mutate {
		m(run)
	}
	return run
}
