package plugin

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/google/go-cmp/cmp"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
)

// shardPod is a pod of a sharded run's Job, as the Job controller labels and annotates it.
func shardPod(ns, job string, index string, containers ...string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: job + "-" + index + "-x",
		Labels:      map[string]string{batchv1.JobNameLabel: job},
		Annotations: map[string]string{podwire.AnnotationJobCompletionIndex: index}}}
	for _, c := range containers {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: c, Image: "img"})
	}
	p.Spec.InitContainers = []corev1.Container{{Name: podwire.ContainerCollector, Image: "img"}}
	return p
}

func TestLogsFindsTheShardOfACase(t *testing.T) {
	ns := newNamespace(t)
	c, _ := apiServer(t)
	ctx := t.Context()
	storedRun(t, ns, "sharded", screeningLines(nil, nil, nil), 2, func(r *evalsv1alpha1.EvalRun) {
		r.Status.Resume = &evalsv1alpha1.ResumeStatus{From: "earlier", FromUID: "u", Cases: evalsv1alpha1.ResumeMissing, Ran: 5, Carried: 1}
	})
	cfg := podwire.RunConfig{RunName: "sharded", CaseIDs: []string{"case-001", "case-002", "case-003", "case-004", "case-005"},
		AllCaseIDs: []string{"case-001", "case-002", "case-003", "case-004", "case-005", "case-006"}, Shards: 2}
	runJSON, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	eval := configMap(ns, "sharded-evalrun-eval")
	eval.Data = map[string]string{podwire.RunConfigKey: string(runJSON)}
	if err := c.Create(ctx, eval); err != nil {
		t.Fatal(err)
	}
	for _, i := range []string{"0", "1"} {
		if err := c.Create(ctx, shardPod(ns, "sharded-evalrun", i, podwire.ContainerRunner, podwire.ContainerJudge)); err != nil {
			t.Fatal(err)
		}
	}
	// case-003 is the third of five cases: shard 1 holds [2, 5). The pod has no node, so there is no log to give
	// (envtest has no kubelet): the header names the pod.
	out, _, err := kubectlEvalrun(t, ns, "logs", "sharded", "--case", "case-003", "-c", "runner")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("==> pod/sharded-evalrun-1-x container/runner <==\n", out); diff != "" {
		t.Errorf("stdout (-want +got):\n%s", diff)
	}
	out, _, err = kubectlEvalrun(t, ns, "logs", "sharded", "-c", "judge")
	if err != nil {
		t.Fatal(err)
	}
	if want := "==> pod/sharded-evalrun-0-x container/judge <==\n==> pod/sharded-evalrun-1-x container/judge <==\n"; out != want {
		t.Errorf("every pod: stdout %q, want %q", out, want)
	}
	for args, want := range map[string]string{
		"--case case-006":      "case case-006 was not run by EvalRun sharded: its result was carried from EvalRun earlier",
		"--case case-042":      "EvalRun sharded has no case case-042",
		"--container launcher": `--container "launcher" is not one of runner, collector, judge, judge-1 ... judge-7`,
	} {
		_, _, err := kubectlEvalrun(t, ns, append([]string{"logs", "sharded"}, strings.Fields(args)...)...)
		if err == nil || err.Error() != want {
			t.Errorf("logs %s: error %v, want %q", args, err, want)
		}
	}
	if err := c.DeleteAllOf(ctx, &corev1.Pod{}, clientInNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	_, _, err = kubectlEvalrun(t, ns, "logs", "sharded", "--case", "case-001")
	if want := "no pods of shard 0 of Job sharded-evalrun (it ran case case-001) are left (the Job or its pods were deleted)"; err == nil || err.Error() != want {
		t.Errorf("pods gone: error %v, want %q", err, want)
	}
}

func TestLogsWritesEachContainer(t *testing.T) {
	pods := []corev1.Pod{*shardPod("ns", "run-evalrun", "0", podwire.ContainerRunner), *shardPod("ns", "run-evalrun", "1", podwire.ContainerRunner)}
	var objs []runtime.Object
	for i := range pods {
		objs = append(objs, &pods[i])
	}
	cs := fake.NewClientset(objs...)
	var out, errOut bytes.Buffer
	o := &logsOptions{containers: []string{podwire.ContainerRunner, podwire.ContainerCollector, podwire.ContainerJudge}, tail: 10}
	if err := o.write(t.Context(), &out, &errOut, cs, pods); err != nil {
		t.Fatal(err)
	}
	// A log that does not end its last line gets a line break, so the next header starts a line.
	want := `==> pod/run-evalrun-0-x container/runner <==
fake logs
==> pod/run-evalrun-0-x container/collector <==
fake logs
==> pod/run-evalrun-1-x container/runner <==
fake logs
==> pod/run-evalrun-1-x container/collector <==
fake logs
`
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("stdout (-want +got):\n%s", diff)
	}
	if want := "pod/run-evalrun-0-x has no container judge\npod/run-evalrun-1-x has no container judge\n"; errOut.String() != want {
		t.Errorf("stderr %q, want %q", errOut.String(), want)
	}
}

// A runner's log line that clears the screen, moves the cursor back over the prefix or reverses the text shows
// escaped, and cannot forge another stream's prefix.
func TestCopyLinesEscapesRunnerBytes(t *testing.T) {
	var out bytes.Buffer
	w := &lineWriter{out: &out, errOut: io.Discard}
	in := "\x1b[2J\x1b[32mPASS\rpod/x/collector forged\u202eSSAP\u202c\nsecond\x07"
	if err := w.copyLines("pod/p/runner ", strings.NewReader(in)); err != nil {
		t.Fatal(err)
	}
	want := `pod/p/runner \x1b[2J\x1b[32mPASS\rpod/x/collector forged\u202eSSAP\u202c` + "\n" + `pod/p/runner second\x07` + "\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
}
