//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/bundle"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
)

// Markers the runner must never see: the prompt file's, the reference file's and the code judge's. The input
// file's keyword is what it must repeat.
const (
	inputKeyword    = "BLUE-HERON-42"
	promptMarker    = "PROMPT-MARKER-7Q"
	referenceMarker = "REFERENCE-MARKER-3Z"
	judgeMarker     = "JUDGE-SCRIPT-MARKER-5K"
)

// bundleEvalYAML names an input file (./data/input.txt, next to it), a reference file (refs/answer.md) and a
// prompt file (prompts/judge.md, at the bundle's root: AgentV's search upwards), and a code judge script of the
// bundle that reads the reference file.
const bundleEvalYAML = `evalcases:
  - id: case-001
    expected_outcome: 'repeats "` + inputKeyword + `"'
    input_messages:
      - role: user
        content:
          - {type: text, value: "Repeat the file word for word."}
          - {type: file, value: ./data/input.txt}
    expected_messages:
      - role: assistant
        content:
          - {type: file, value: refs/answer.md}
    execution:
      evaluators:
        - {name: judge, type: llm_judge, prompt: prompts/judge.md}
        - {name: reference, type: code_judge, script: sh judges/check.sh}
`

// bundleTree is the e2e bundle: the eval file, its four files and filler files bringing it near 800 KiB, for the
// pin-time and pod-start figures.
func bundleTree(fillers int) map[string]string {
	files := map[string]string{
		"suites/eval.yaml":      bundleEvalYAML,
		"suites/data/input.txt": inputKeyword + "\n",
		"suites/refs/answer.md": referenceMarker + ": " + inputKeyword + "\n",
		"prompts/judge.md": promptMarker + " Grade the answer against the outcome.\n\n[[ ## expected_outcome ## ]]\n{{expected_outcome}}\n\n" +
			"[[ ## reference_answer ## ]]\n{{reference_answer}}\n\n[[ ## candidate_answer ## ]]\n{{candidate_answer}}\n",
		"suites/judges/check.sh": "# " + judgeMarker + "\ngrep -q '" + referenceMarker + "' refs/answer.md && echo '{\"score\":1,\"hits\":[\"the reference file is readable\"]}'\n",
	}
	for i := range fillers {
		files[fmt.Sprintf("docs/notes-%03d.txt", i)] = strings.Repeat(fmt.Sprintf("note %03d ", i), 4000/9)
	}
	return files
}

// TestEvalBundles runs one bundle from a ConfigMap and the same bundle from a bucket prefix (SeaweedFS in the
// cluster), judged by the judge server through the bundle's prompt file and by the bundle's code judge, which reads
// the reference file. The runner repeats its input file (it can read it, next to its eval file) and, hostile,
// looks for the prompt, reference and script everywhere it can (find /, the other containers' roots through /proc,
// grep), finding none of them.
func TestEvalBundles(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "bundle", nil)
	baseURL := startJudgeServer(t, ns)
	endpoint, fromHost := startBucket(t, ns)

	files := bundleTree(190)
	var manifest []bundle.File
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "math-bundle", Namespace: ns}, Data: map[string]string{}}
	host := openBucket(t, fromHost)
	var bytes int
	for p, content := range files {
		key, err := bundle.KeyFor(p)
		if err != nil {
			t.Fatal(err)
		}
		cm.Data[key] = content
		f, err := bundle.Hash(p, strings.NewReader(content), 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		manifest = append(manifest, f)
		bytes += len(content)
		if err := host.Put(ctxFor(t, time.Minute), "bundles/math/"+p, strings.NewReader(content), "text/plain"); err != nil {
			t.Fatal(err)
		}
	}
	m, err := bundle.NewManifest("suites/eval.yaml", manifest)
	if err != nil {
		t.Fatal(err)
	}
	if err := k8s.Create(ctxFor(t, time.Minute), cm); err != nil {
		t.Fatal(err)
	}
	t.Logf("the bundle: %d files, %d bytes, sha256 %s", len(files), bytes, m.SHA256)

	// The markers are spelled by the shell ("PROMPT-MARKER-$(echo 7Q)"), so the command in launch.json does not
	// hold them and a grep that finds one found a file of the bundle.
	spelled := func(marker string) string {
		i := strings.LastIndex(marker, "-")
		return `"` + marker[:i+1] + `$(echo ` + marker[i+1:] + `)"`
	}
	probe := `(echo PROBE; find / \( -path /proc -o -path /sys \) -prune -o \( -name 'judge.md' -o -name 'answer.md' -o -name 'check.sh' ` +
		`-o -name 'input.txt' -o -name 'bundle.json' -o -name 'eval.yaml' \) -print 2>/dev/null; ` +
		`ls -laR /evalrun 2>&1; for p in /proc/[0-9]*; do ls $p/root/evalrun/bundle 2>&1; cat $p/root/evalrun/bundle/prompts/judge.md 2>&1; done; ` +
		`cat /evalrun/bundle/prompts/judge.md /evalrun/bundle-source/* /evalrun-eval/* 2>&1; ` +
		`for d in /*; do case $d in /proc|/sys|/dev) ;; *) grep -rsl -e ` + spelled(promptMarker) + ` -e ` + spelled(referenceMarker) +
		` -e ` + spelled(judgeMarker) + ` "$d" 2>&1;; esac; done; ` +
		`echo PROBE-END) >&2; `
	answer := `in=$(cat "$(dirname "$EVAL_FILE")/data/input.txt") && printf '{"id":"case-001","text":"The file says %s"}\n' "$in" > {OUTPUT_FILE}`
	judging := &evalsv1alpha1.Judging{LLM: &evalsv1alpha1.LLMJudging{BaseURL: ptr.To(baseURL), Model: ptr.To("rules"), TimeoutSeconds: ptr.To[int32](10),
		APIKeySecretRef: &evalsv1alpha1.SecretKeyRef{Name: "judge-api-key", Key: "token"}}}
	bucket := evalsv1alpha1.S3Bucket{Endpoint: endpoint, Bucket: bucketName, Prefix: ptr.To("bundles/math"), CredentialsSecret: "evalrun-s3-credentials"}
	runs := []*evalsv1alpha1.EvalRun{
		sampleRun("bundle-cm", ns).FromBundleConfigMap("math-bundle", "suites/eval.yaml").Command(probe + answer).Obj(),
		sampleRun("bundle-s3", ns).FromBundleS3(bucket, "suites/eval.yaml").Command(probe + answer).Obj(),
	}
	for _, run := range runs {
		run.Spec.Judging = judging
		create(t, run)
	}
	for _, run := range runs {
		got := waitFinished(t, ns, run.Name, 5*time.Minute)
		expectCondition(t, got, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionTrue, evalsv1alpha1.ReasonCompleted})
		if d := ptr.Deref(got.Status.BundleSHA256, ""); d != m.SHA256 {
			t.Errorf("%s: bundleSHA256 %q, want %s", run.Name, d, m.SHA256)
		}
		for _, c := range got.Status.Cases {
			var evs []string
			for _, ev := range c.Evaluators {
				evs = append(evs, fmt.Sprintf("%s=%s %s", ev.Name, ev.Verdict, ev.Message))
			}
			if c.Verdict != evalsv1alpha1.VerdictPass {
				t.Errorf("%s: case %s %s (%s): %v", run.Name, c.ID, c.Verdict, c.Error, evs)
			}
		}
		pods := runPods(t, ns, run.Name)
		if len(pods) == 0 {
			t.Fatalf("%s: no pod", run.Name)
		}
		pod := pods[0]
		for _, c := range pod.Spec.Containers {
			for _, mnt := range c.VolumeMounts {
				if c.Name == podwire.ContainerRunner && (mnt.Name == podwire.VolumeBundle || mnt.Name == podwire.VolumeBundleSource || mnt.Name == podwire.VolumeEvalCredentials) {
					t.Errorf("%s: the runner mounts %s", run.Name, mnt.Name)
				}
			}
		}
		logs := podLogs(t, ns, pod.Name, podwire.ContainerRunner)
		probeOut := logs
		if i := strings.Index(logs, "PROBE"); i >= 0 {
			probeOut = logs[i:]
		}
		if !strings.Contains(probeOut, "PROBE-END") || !strings.Contains(probeOut, "/evalrun/view/bundle/suites/data/input.txt") {
			t.Errorf("%s: the runner's probe did not run through, or did not find its input file:\n%s", run.Name, textbound.Head(probeOut, 4000))
		}
		for _, secret := range []string{"judge.md", "answer.md", "check.sh", "bundle.json", promptMarker, referenceMarker, judgeMarker} {
			// A failed cat names the path it tried ("No such file", "can't open"); any other line naming a secret is a find.
			for _, line := range strings.Split(probeOut, "\n") {
				if strings.Contains(line, secret) && !strings.Contains(line, "No such file") && !strings.Contains(line, "Permission denied") {
					t.Errorf("%s: the runner found %q: %s", run.Name, secret, line)
				}
			}
		}
		// Figures: from the run's creation to its Job (the pin), and from the pod's creation to the runner's start
		// (install materializing the bundle included).
		job := got.CreationTimestamp.Time
		if st := got.Status.StartTime; st != nil {
			job = st.Time
		}
		if rs := containerStatus(&pod, podwire.ContainerRunner); rs != nil && rs.State.Terminated != nil {
			t.Logf("%s: pinned and Job started %s after the run's creation; runner started %s after its pod's creation",
				run.Name, job.Sub(got.CreationTimestamp.Time).Round(10*time.Millisecond), rs.State.Terminated.StartedAt.Sub(pod.CreationTimestamp.Time).Round(10*time.Millisecond))
		}
	}
}
