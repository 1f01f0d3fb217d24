//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
	"github.com/evalrun-operator/evalrun-operator/internal/stored"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
)

// Shared timeouts.
const (
	pollInterval = 500 * time.Millisecond
	// runTimeout bounds one EvalRun of the sample from creation to a terminal Succeeded condition.
	runTimeout = 4 * time.Minute
	// nsTimeout bounds namespace setup (the default ServiceAccount appears a few seconds after creation).
	nsTimeout = 60 * time.Second

	managerNamespace = "evalrun-system"
	runnerImage      = "localhost/evalrun/screening-runner:dev"
	sampleCommand    = "/app/screening-runner --eval {EVAL_FILE} --output {OUTPUT_FILE}"
)

var (
	restConfig *rest.Config
	k8s        client.Client
	clientset  *kubernetes.Clientset
	repoRoot   string
	// kubeconfigPath is the kubeconfig the tests use (for kubectl too).
	kubeconfigPath string
	// stateDir is the local cluster's persistent state directory (logs live there).
	stateDir = envOr("EVALRUN_CLUSTER_STATE", "/var/lib/evalrun-cluster")
	// kubeletRoot is the kubelet's --root-dir (pod volumes live there).
	kubeletRoot = envOr("EVALRUN_KUBELET_ROOT", "/run/evalrun-cluster/kubelet")
)

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func TestMain(m *testing.M) {
	_, file, _, _ := runtime.Caller(0)
	repoRoot = filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
	kubeconfig := envOr("KUBECONFIG", filepath.Join(repoRoot, "bin", "cluster", "kubeconfig"))
	if !filepath.IsAbs(kubeconfig) {
		// go test runs in the package directory; a relative KUBECONFIG is meant from the repository root.
		kubeconfig = filepath.Join(repoRoot, kubeconfig)
	}
	kubeconfigPath = kubeconfig
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		_, _ = fmt.Fprintf(os.Stderr, "e2e: loading kubeconfig %s (is the cluster up? make cluster-up): %v\n", kubeconfig, err)
		os.Exit(1)
	}
	cfg.QPS, cfg.Burst = 50, 100
	restConfig = cfg
	scheme := clientgoscheme.Scheme
	if err := evalsv1alpha1.AddToScheme(scheme); err != nil {
		_, _ = fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		os.Exit(1)
	}
	if k8s, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		_, _ = fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		os.Exit(1)
	}
	if clientset, err = kubernetes.NewForConfig(cfg); err != nil {
		_, _ = fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// ctxFor returns a context bounded by d and cancelled at the end of the test.
func ctxFor(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// newNamespace creates a namespace for one test, waits for its default ServiceAccount and, on failure, dumps the
// logs of the test's pods, the manager and the kubelet before deleting it (kept when E2E_KEEP_NAMESPACES=1).
func newNamespace(t *testing.T, prefix string, labels map[string]string) string {
	t.Helper()
	ctx := ctxFor(t, nsTimeout)
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	name := "e2e-" + prefix + "-" + hex.EncodeToString(b)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	if err := k8s.Create(ctx, ns); err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			dumpDiagnostics(t, name)
		}
		if os.Getenv("E2E_KEEP_NAMESPACES") == "1" {
			return
		}
		_ = k8s.Delete(context.Background(), ns, client.PropagationPolicy(metav1.DeletePropagationBackground))
	})
	err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		err := k8s.Get(ctx, client.ObjectKey{Namespace: name, Name: "default"}, &corev1.ServiceAccount{})
		return err == nil, client.IgnoreNotFound(err)
	})
	if err != nil {
		t.Fatalf("namespace %s: default ServiceAccount did not appear: %v", name, err)
	}
	return name
}

// sampleEvalFile returns examples/screening/eval.yaml made to stand alone: its code judge, the file
// judges/decision-check.py of the sample's bundle, inlined as `python3 -c '<script>'`, so that the tests' inline,
// ConfigMap and bucket eval files judge as the sample's bundle does, in the judge image.
func sampleEvalFile(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(repoRoot, "examples", "screening")
	b, err := os.ReadFile(filepath.Join(dir, "eval.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile(filepath.Join(dir, "judges", "decision-check.py"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.ContainsRune(script, '\'') {
		t.Fatal("judges/decision-check.py has a single quote: it cannot be inlined in the shell's single quotes")
	}
	command, err := json.Marshal("python3 -c '" + string(script) + "'") // a JSON string is a YAML double-quoted scalar
	if err != nil {
		t.Fatal(err)
	}
	const ref = "script: python3 judges/decision-check.py"
	if !bytes.Contains(b, []byte(ref)) {
		t.Fatalf("examples/screening/eval.yaml has no %q", ref)
	}
	return strings.ReplaceAll(string(b), ref, "script: "+string(command))
}

// sampleRun is testutil.MakeEvalRun made to run on the local cluster: the sample runner's command, its image as
// loaded into the node (never pulled), and two minutes to collect.
func sampleRun(name, namespace string) *testutil.EvalRunWrapper {
	return testutil.MakeEvalRun(name, namespace).Image(runnerImage).PullPolicy(corev1.PullIfNotPresent).
		Command(sampleCommand).ResultsDeadline(120)
}

// eachStoredResult calls f with every result line stored in the result ConfigMaps run's status names, read as
// the product reads them (stored.EachChunk, results.EachLine; raw is valid only during the call), and fails the
// test when one cannot be read.
func eachStoredResult(t *testing.T, run *evalsv1alpha1.EvalRun, f func(l *results.Line, raw []byte)) {
	t.Helper()
	ref := run.Status.Results
	if ref == nil {
		return
	}
	err := stored.EachChunk(ctxFor(t, time.Minute), k8s, run, ref.ConfigMaps, nil, false, func(where string, data []byte) error {
		if err := results.EachLine(data, func(l *results.Line, raw []byte) error { f(l, raw); return nil }); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("reading the stored results: %v", err)
	}
}

// create creates the run and fails the test on error.
func create(t *testing.T, run *evalsv1alpha1.EvalRun) {
	t.Helper()
	if err := k8s.Create(ctxFor(t, 30*time.Second), run); err != nil {
		t.Fatalf("creating EvalRun %s/%s: %v", run.Namespace, run.Name, err)
	}
}

// succeeded returns the Succeeded condition, or nil.
func succeeded(run *evalsv1alpha1.EvalRun) *metav1.Condition {
	return meta.FindStatusCondition(run.Status.Conditions, evalsv1alpha1.ConditionSucceeded)
}

// waitFinished waits until the run's Succeeded condition is True or False and returns the run.
func waitFinished(t *testing.T, namespace, name string, timeout time.Duration) *evalsv1alpha1.EvalRun {
	t.Helper()
	return waitRun(t, namespace, name, timeout, "a terminal Succeeded condition", func(run *evalsv1alpha1.EvalRun) bool {
		c := succeeded(run)
		return c != nil && c.Status != metav1.ConditionUnknown
	})
}

// waitRun polls the run until done(run) holds.
func waitRun(t *testing.T, namespace, name string, timeout time.Duration, what string, done func(*evalsv1alpha1.EvalRun) bool) *evalsv1alpha1.EvalRun {
	t.Helper()
	ctx := ctxFor(t, timeout)
	run := &evalsv1alpha1.EvalRun{}
	err := wait.PollUntilContextCancel(ctx, pollInterval, true, func(ctx context.Context) (bool, error) {
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, run); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return done(run), nil
	})
	if err != nil {
		t.Fatalf("EvalRun %s/%s did not reach %s within %s: %v\nconditions: %s", namespace, name, what, timeout, err,
			describeConditions(run.Status.Conditions))
	}
	return run
}

func describeConditions(conds []metav1.Condition) string {
	var b strings.Builder
	for _, c := range conds {
		_, _ = fmt.Fprintf(&b, "\n  %s=%s reason=%s message=%q", c.Type, c.Status, c.Reason, textbound.Head(c.Message, 300))
	}
	return b.String()
}

// runPods lists the pods of the run's Job.
func runPods(t *testing.T, namespace, run string) []corev1.Pod {
	t.Helper()
	var pods corev1.PodList
	if err := k8s.List(ctxFor(t, 30*time.Second), &pods, client.InNamespace(namespace), client.MatchingLabels{podwire.LabelRun: run}); err != nil {
		t.Fatalf("listing pods of %s: %v", run, err)
	}
	if len(pods.Items) == 0 {
		// Fall back to the Job's own label, in case the pod template does not carry the run label.
		if err := k8s.List(ctxFor(t, 30*time.Second), &pods, client.InNamespace(namespace), client.MatchingLabels{"job-name": run}); err != nil {
			t.Fatalf("listing pods of job %s: %v", run, err)
		}
	}
	return pods.Items
}

// containerStatus returns the status of the named container (init containers included).
func containerStatus(pod *corev1.Pod, name string) *corev1.ContainerStatus {
	for _, list := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	return nil
}

// dumpDiagnostics prints what a failed test needs: events and container logs of the namespace's pods, the
// manager's log tail and the kubelet's log tail.
func dumpDiagnostics(t *testing.T, namespace string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	t.Logf("===== diagnostics for namespace %s =====", namespace)
	var runs evalsv1alpha1.EvalRunList
	if err := k8s.List(ctx, &runs, client.InNamespace(namespace)); err == nil {
		for _, r := range runs.Items {
			t.Logf("EvalRun %s: summary=%+v missing=%v parseErrors=%+v collection=%+v runner=%+v conditions:%s", r.Name,
				r.Status.Summary, r.Status.MissingIDs, r.Status.ParseErrors, r.Status.Collection, r.Status.Runner,
				describeConditions(r.Status.Conditions))
		}
	}
	if events, err := clientset.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{}); err == nil {
		for _, e := range events.Items {
			t.Logf("event %s/%s %s %s: %s", e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Type, e.Reason, textbound.Head(e.Message, 300))
		}
	}
	dumpPodLogs(ctx, t, namespace, metav1.ListOptions{}, 100)
	dumpPodLogs(ctx, t, managerNamespace, metav1.ListOptions{}, 200)
	t.Logf("----- kubelet log tail -----\n%s", tailFile(filepath.Join(stateDir, "logs", "kubelet.log"), 40))
}

func dumpPodLogs(ctx context.Context, t *testing.T, namespace string, opts metav1.ListOptions, lines int64) {
	pods, err := clientset.CoreV1().Pods(namespace).List(ctx, opts)
	if err != nil {
		t.Logf("listing pods in %s: %v", namespace, err)
		return
	}
	for _, p := range pods.Items {
		t.Logf("pod %s/%s phase=%s", namespace, p.Name, p.Status.Phase)
		var names []string
		for _, c := range p.Spec.InitContainers {
			names = append(names, c.Name)
		}
		for _, c := range p.Spec.Containers {
			names = append(names, c.Name)
		}
		for _, name := range names {
			if st := containerStatus(&p, name); st != nil {
				t.Logf("  container %s: restarts=%d state=%s", name, st.RestartCount, describeState(st.State))
			}
			for _, previous := range []bool{true, false} {
				req := clientset.CoreV1().Pods(namespace).GetLogs(p.Name, &corev1.PodLogOptions{Container: name, TailLines: &lines, Previous: previous})
				b, err := req.DoRaw(ctx)
				if err != nil {
					continue
				}
				label := "log"
				if previous {
					label = "previous log"
				}
				t.Logf("----- %s/%s %s %s -----\n%s", namespace, p.Name, name, label, textbound.Head(string(b), 16000))
			}
		}
	}
}

func describeState(s corev1.ContainerState) string {
	switch {
	case s.Terminated != nil:
		return fmt.Sprintf("terminated(exit=%d reason=%s message=%q)", s.Terminated.ExitCode, s.Terminated.Reason, textbound.Head(s.Terminated.Message, 200))
	case s.Waiting != nil:
		return fmt.Sprintf("waiting(%s: %s)", s.Waiting.Reason, textbound.Head(s.Waiting.Message, 200))
	case s.Running != nil:
		return "running"
	}
	return "unknown"
}

// tailFile returns the last n lines of a file.
func tailFile(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return err.Error()
	}
	defer func() { _ = f.Close() }()
	if st, err := f.Stat(); err == nil && st.Size() > 1<<20 {
		_, _ = f.Seek(st.Size()-1<<20, io.SeekStart)
	}
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}

// kubectl runs the cluster's own kubectl (bin/k8s/<server version>/kubectl, built with the cluster, so no client
// skew) with the tests' kubeconfig and returns its combined output.
func kubectl(ctx context.Context, t *testing.T, args ...string) (string, error) {
	t.Helper()
	v, err := clientset.Discovery().ServerVersion()
	if err != nil {
		return "", fmt.Errorf("reading the server version: %w", err)
	}
	bin := filepath.Join(repoRoot, "bin", "k8s", v.GitVersion, "kubectl")
	cmd := exec.CommandContext(ctx, bin, append([]string{"--kubeconfig", kubeconfigPath}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("kubectl %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// isForbidden reports whether err is a 403 from the API server.
func isForbidden(err error) bool { return apierrors.IsForbidden(err) }

// evalRunResource is the EvalRun resource, for raw REST calls.
var evalRunResource = schema.GroupVersionResource{Group: evalsv1alpha1.GroupVersion.Group, Version: evalsv1alpha1.GroupVersion.Version, Resource: "evalruns"}

// podLogs returns a container's logs.
func podLogs(t *testing.T, namespace, pod, container string) string {
	t.Helper()
	data, err := clientset.CoreV1().Pods(namespace).GetLogs(pod, &corev1.PodLogOptions{Container: container}).DoRaw(ctxFor(t, 30*time.Second))
	if err != nil {
		t.Errorf("reading the logs of %s/%s: %v", pod, container, err)
	}
	return string(data)
}

// watchNamed watches the object name of list's kind in namespace from now on and calls f with each event, in order,
// on a goroutine of its own, until the test ends.
func watchNamed(t *testing.T, list client.ObjectList, namespace, name string, f func(watch.Event)) {
	t.Helper()
	watchList(t, list, f, client.InNamespace(namespace), client.MatchingFields{"metadata.name": name})
}

// watchAll is watchNamed for every object of list's kind in namespace.
func watchAll(t *testing.T, list client.ObjectList, namespace string, f func(watch.Event)) {
	t.Helper()
	watchList(t, list, f, client.InNamespace(namespace))
}

func watchList(t *testing.T, list client.ObjectList, f func(watch.Event), opts ...client.ListOption) {
	t.Helper()
	wc, err := client.NewWithWatch(restConfig, client.Options{Scheme: k8s.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w, err := wc.Watch(ctx, list, opts...)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			f(ev)
		}
	}()
	t.Cleanup(func() { cancel(); w.Stop(); <-done })
}
