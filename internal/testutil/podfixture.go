package testutil

import (
	"os"
	"path/filepath"
	"testing"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
)

// PodTestEval is the eval file of a PodFixture: four cases, alpha with a code_judge.
const PodTestEval = `$schema: agentv-eval-v2
evalcases:
  - id: alpha
    input_messages:
      - role: user
        content: "What's $(id) ` + "`x`" + `?"
    expected_messages:
      - role: assistant
        content: A
    execution:
      evaluators:
        - name: judge
          type: code_judge
          script: cat >/dev/null; echo '{"score":1,"hits":["looks right"]}'
  - id: beta
    input_messages:
      - role: user
        content: second question
    expected_messages:
      - role: assistant
        content: B
  - id: gamma
    input_messages:
      - role: user
        content: third
  - id: delta
    input_messages:
      - role: user
        content: fourth
`

// PodFixture is a pod's volumes (as directories), an eval file and a run configuration, with every default
// resolved as the manager resolves it, in a temporary directory: what the launcher, the collector and the judge
// see in a pod.
type PodFixture struct {
	Dir    string
	Pod    podwire.Pod
	Config *podwire.RunConfig
}

// NewPodFixture makes a PodFixture whose runner runs template, with the runner-end FIFO in place.
func NewPodFixture(t testing.TB, template string) *PodFixture {
	t.Helper()
	dir := t.TempDir()
	evalPath := filepath.Join(dir, "eval.yaml")
	if err := os.WriteFile(evalPath, []byte(PodTestEval), 0o644); err != nil {
		t.Fatal(err)
	}
	pod := podwire.PodIn(dir)
	// The pod's volumes exist before its containers start (emptyDirs).
	for _, v := range []string{pod.Bin, pod.Out, pod.Snapshot, pod.Verdicts} {
		if err := os.MkdirAll(v, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := podwire.CreateRunnerEnd(pod.RunnerEnd()); err != nil {
		t.Fatal(err)
	}
	if err := podwire.CreateJudgeEnds([]string{pod.JudgeEnd(0), pod.JudgeEnd(1)}); err != nil {
		t.Fatal(err)
	}
	return &PodFixture{
		Dir:    dir,
		Pod:    pod,
		Config: RunConfig(evalPath, []string{"alpha", "beta", "gamma", "delta"}, template),
	}
}

// RunConfig is a Batched run configuration of the eval file at evalPath with every default resolved, as the
// manager writes run.json (the pod's containers refuse one with a default left unresolved).
func RunConfig(evalPath string, ids []string, template string) *podwire.RunConfig {
	return &podwire.RunConfig{
		RunName: "run", Namespace: "ns", EvalFile: evalPath, CaseIDs: ids, Shards: 1,
		EvalFileView: podwire.EvalFileViewInputs, RunnerEvalFile: filepath.Join(filepath.Dir(evalPath), "view", "eval.yaml"),
		RunnerConfigFile: filepath.Join(filepath.Dir(evalPath), "view", podwire.RunnerConfigName),
		Launch:           podwire.Launch{CommandTemplate: template, Batching: "Batched", Workers: 1, KillGraceSeconds: 1, CollectorStartSeconds: 10},
		PassThreshold:    evalsv1alpha1.DefaultPassThreshold, CodeJudgeTimeoutSeconds: 10, CodeJudgeWorkers: 2,
		StatusBudgetBytes: evalsv1alpha1.DefaultStatusBudgetBytes, MaxOutputBytes: 64 << 20, ResultsDeadlineSeconds: 60, JudgeDeadlineSeconds: 60,
		JudgeContainers: 1,
	}
}

// Write writes content at path, making its directory.
func (f *PodFixture) Write(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
