package plugin

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
)

var (
	envOnce    sync.Once
	testEnv    *envtest.Environment
	envClient  client.Client
	kubeconfig string
	envErr     error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if testEnv != nil {
		_ = testEnv.Stop()
	}
	if kubeconfig != "" {
		_ = os.RemoveAll(filepath.Dir(kubeconfig))
	}
	os.Exit(code)
}

// apiServer starts one envtest API server for the package (stopped in TestMain) and returns a client and a
// kubeconfig file for it.
func apiServer(t *testing.T) (client.Client, string) {
	t.Helper()
	envOnce.Do(func() {
		env, cfg, err := testutil.StartEnv()
		if err != nil {
			envErr = err
			return
		}
		testEnv = env
		if envClient, envErr = client.New(cfg, client.Options{Scheme: testutil.Scheme()}); envErr != nil {
			return
		}
		kubeconfig, envErr = writeKubeconfig(cfg)
	})
	if envErr != nil {
		testutil.EnvUnavailable(t, envErr)
	}
	return envClient, kubeconfig
}

// writeKubeconfig writes a kubeconfig for cfg (a client certificate user) into a new temporary directory.
func writeKubeconfig(cfg *rest.Config) (string, error) {
	dir, err := os.MkdirTemp("", "kubectl-evalrun-test")
	if err != nil {
		return "", err
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken}
	kc.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "admin", Namespace: "default"}
	kc.CurrentContext = "envtest"
	path := filepath.Join(dir, "kubeconfig")
	return path, clientcmd.WriteToFile(*kc, path)
}

// kubectlEvalrun runs `kubectl evalrun args...` in-process against the envtest API server, in namespace ns.
func kubectlEvalrun(t *testing.T, ns string, args ...string) (string, string, error) {
	t.Helper()
	_, kc := apiServer(t)
	var out, errOut bytes.Buffer
	cmd := NewCommand(genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: &errOut})
	cmd.SetArgs(append([]string{"--kubeconfig", kc, "-n", ns}, args...))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := cmd.ExecuteContext(ctx)
	return out.String(), errOut.String(), err
}

// newNamespace creates a namespace for one test.
func newNamespace(t *testing.T) string {
	t.Helper()
	c, _ := apiServer(t)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "plugin-"}}
	if err := c.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// storedRun creates a finished EvalRun whose results are lines, stored in result ConfigMaps (n of them, each
// with its share of the lines) as the collector stores them, with only the first case in status.cases.
func storedRun(t *testing.T, ns, name string, lines []*results.Line, configMaps int, mutate func(*evalsv1alpha1.EvalRun)) {
	t.Helper()
	c, _ := apiServer(t)
	ctx := context.Background()
	run := testutil.MakeEvalRun(name, ns).Obj()
	if err := c.Create(ctx, run); err != nil {
		t.Fatal(err)
	}
	var names []string
	for i := range configMaps {
		lo, hi := i*len(lines)/configMaps, (i+1)*len(lines)/configMaps
		cm := name + "-evalrun-results-" + string(rune('0'+i))
		names = append(names, cm)
		chunks, err := results.Chunks([]string{cm}, encode(t, lines[lo:hi]))
		if err != nil {
			t.Fatal(err)
		}
		obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: cm, Namespace: ns}, BinaryData: map[string][]byte{}}
		if len(chunks) > 0 {
			obj.BinaryData[podwire.ResultsKey] = chunks[0].Data
		}
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	start := metav1.NewTime(time.Date(2026, 11, 26, 15, 0, 0, 0, time.UTC))
	end := metav1.NewTime(start.Add(42 * time.Second))
	run.Status = evalsv1alpha1.EvalRunStatus{
		StartTime: &start, CompletionTime: &end, JobName: name + "-evalrun", EvalConfigMapName: name + "-evalrun-eval",
		EvalFileSHA256: "0123",
		Cases:          []evalsv1alpha1.CaseResult{lines[0].Status()},
		Results: &evalsv1alpha1.ResultsReference{ConfigMaps: names, Key: podwire.ResultsKey, Format: "jsonl+gzip",
			TotalCases: int32(len(lines)), OmittedCases: int32(len(lines) - 1)},
		Conditions: []metav1.Condition{{Type: evalsv1alpha1.ConditionSucceeded, Status: metav1.ConditionTrue,
			Reason: evalsv1alpha1.ReasonCompleted, Message: "done", LastTransitionTime: end}},
	}
	if mutate != nil {
		mutate(run)
	}
	if err := c.Status().Update(ctx, run); err != nil {
		t.Fatal(err)
	}
}

func encode(t *testing.T, lines []*results.Line) [][]byte {
	t.Helper()
	var out [][]byte
	for _, l := range lines {
		b, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

func configMap(ns, name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
}

func clientInNamespace(ns string) client.DeleteAllOfOption { return client.InNamespace(ns) }
