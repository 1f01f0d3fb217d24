// Package install checks the install artifacts against config/: the Helm chart (charts/evalrun-operator, with
// helm lint and helm template from EVALRUN_HELM, which `make helm` builds) and dist/install.yaml (`make
// build-installer`, kustomize from kubectl in KUBEBUILDER_ASSETS).
package install

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

const (
	root  = "../.."
	chart = root + "/charts/evalrun-operator"
	// release and namespace make the chart's names those of config/default (namePrefix evalrun-, namespace
	// evalrun-system).
	namespace = "evalrun-system"
)

// envHelm names the helm binary (make helm builds it; the Makefile exports its path).
const envHelm = "EVALRUN_HELM"

// requireHelm returns the helm binary; it fails the test without one (skips it under -short).
func requireHelm(t *testing.T) string {
	t.Helper()
	p := os.Getenv(envHelm)
	if p == "" {
		if testing.Short() {
			t.Skip(envHelm + " is not set (-short)")
		}
		t.Fatal(envHelm + " is not set: run `make test-unit`, or `make helm` and set it to bin/tools/helm-<version>")
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s: %v (run `make helm`)", envHelm, err)
	}
	return p
}

// requireKubectl returns kubectl (its kustomize) from the envtest assets.
func requireKubectl(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		if testing.Short() {
			t.Skip("KUBEBUILDER_ASSETS is not set (-short)")
		}
		t.Fatal("KUBEBUILDER_ASSETS is not set: run `make test-unit`, or set it to bin/k8s/<version> after `make envtest-assets`")
	}
	p := filepath.Join(dir, "kubectl")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("kubectl: %v (run `make envtest-assets`)", err)
	}
	return p
}

func run(t *testing.T, env []string, name string, args ...string) ([]byte, error) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, errors.New(err.Error() + ": " + stderr.String())
	}
	return out, nil
}

// render runs helm template on the chart with the given --set values (and the CRDs).
func render(t *testing.T, set ...string) []*unstructured.Unstructured {
	t.Helper()
	out, err := renderRaw(t, set...)
	if err != nil {
		t.Fatalf("helm template: %v", err)
	}
	return parse(t, out)
}

func renderRaw(t *testing.T, set ...string) ([]byte, error) {
	t.Helper()
	args := []string{"template", "evalrun", chart, "--namespace", namespace, "--include-crds", "--set", "fullnameOverride=evalrun"}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	return run(t, nil, requireHelm(t), args...)
}

func kustomize(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	out, err := run(t, nil, requireKubectl(t), "kustomize", root+"/config/default")
	if err != nil {
		t.Fatalf("kubectl kustomize: %v", err)
	}
	return parse(t, out)
}

func parse(t *testing.T, data []byte) []*unstructured.Unstructured {
	t.Helper()
	var objs []*unstructured.Unstructured
	d := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var m map[string]any
		if err := d.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return objs
			}
			t.Fatalf("decoding YAML: %v", err)
		}
		if len(m) > 0 {
			objs = append(objs, &unstructured.Unstructured{Object: m})
		}
	}
}

func find(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

func kinds(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetKind()+" "+o.GetNamespace()+"/"+o.GetName())
	}
	slices.Sort(out)
	return out
}

func as[T any](t *testing.T, o *unstructured.Unstructured) *T {
	t.Helper()
	if o == nil {
		t.Fatalf("no %T", new(T))
	}
	var v T
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &v); err != nil {
		t.Fatal(err)
	}
	return &v
}

func TestChartLint(t *testing.T) {
	helm := requireHelm(t)
	for _, set := range [][]string{
		nil,
		{"watchNamespaces={team-a,team-b}", "metrics.service.enabled=true", "metrics.serviceMonitor.enabled=true"},
		{"leaderElection.enabled=false", "metrics.enabled=false", "image.digest=sha256:" + strings.Repeat("a", 64)},
		{"prometheusRule.enabled=true", "llm.baseURL=http://judge.example/v1", "llm.model=m", "extraArgs={--max-concurrent-reconciles=8}",
			"podLabels.team=evals", "podAnnotations.owner=platform"},
	} {
		args := []string{"lint", "--strict", chart}
		for _, s := range set {
			args = append(args, "--set", s)
		}
		if out, err := run(t, nil, helm, args...); err != nil {
			t.Errorf("helm lint %v: %v\n%s", set, err, out)
		}
	}
}

// TestChartCRDsAreConfigs checks that the chart's CRDs are config/crd/bases byte for byte (`make manifests` copies
// them) and that helm installs them.
func TestChartCRDsAreConfigs(t *testing.T) {
	want, err := filepath.Glob(root + "/config/crd/bases/*.yaml")
	if err != nil || len(want) == 0 {
		t.Fatalf("no CRDs in config/crd/bases: %v", err)
	}
	got, _ := filepath.Glob(chart + "/crds/*.yaml")
	base := func(ps []string) []string {
		var out []string
		for _, p := range ps {
			out = append(out, filepath.Base(p))
		}
		return out
	}
	if diff := cmp.Diff(base(want), base(got)); diff != "" {
		t.Fatalf("chart CRD files (-config +chart):\n%s", diff)
	}
	for _, p := range want {
		a, _ := os.ReadFile(p)
		b, _ := os.ReadFile(filepath.Join(chart, "crds", filepath.Base(p)))
		if !bytes.Equal(a, b) {
			t.Errorf("charts/evalrun-operator/crds/%s differs from config/crd/bases: run `make manifests`", filepath.Base(p))
		}
	}
	rendered := render(t)
	for _, o := range kustomize(t) {
		if o.GetKind() != "CustomResourceDefinition" {
			continue
		}
		r := find(rendered, o.GetKind(), o.GetName())
		if r == nil {
			t.Errorf("helm template renders no CRD %s", o.GetName())
			continue
		}
		// kustomize adds config/default's labels; the rest is the same document.
		o.SetLabels(nil)
		if diff := cmp.Diff(o.Object, r.Object); diff != "" {
			t.Errorf("CRD %s (-kustomize +helm):\n%s", o.GetName(), diff)
		}
	}
}

// TestChartMatchesKustomize checks the chart with its default values (the image tags set to config/manager's dev)
// against config/default: the same objects
// (but the Namespace, which `helm install --create-namespace` makes), the manager ClusterRole's rules equal to the
// generated config/rbac/role.yaml, every other RBAC object's rules, roleRef and subjects, and the manager
// Deployment's essentials.
func TestChartMatchesKustomize(t *testing.T) {
	k := kustomize(t)
	// config/manager deploys the local cluster's :dev images; the chart's default tag is its appVersion
	// (TestChartValues, "image tags default to appVersion").
	h := render(t, "image.tag=dev", "collectorImage.tag=dev", "judgeImage.tag=dev")
	var wantObjs []*unstructured.Unstructured
	for _, o := range k {
		if o.GetKind() != "Namespace" {
			wantObjs = append(wantObjs, o)
		}
	}
	if diff := cmp.Diff(kinds(wantObjs), kinds(h)); diff != "" {
		t.Errorf("objects (-kustomize +helm):\n%s", diff)
	}

	generated, err := os.ReadFile(root + "/config/rbac/role.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.ClusterRole
	if err := yaml.Unmarshal(generated, &role); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(role.Rules, as[rbacv1.ClusterRole](t, find(h, "ClusterRole", "evalrun-manager-role")).Rules); diff != "" {
		t.Errorf("manager ClusterRole rules (-config/rbac/role.yaml +chart):\n%s", diff)
	}
	for _, o := range wantObjs {
		r := find(h, o.GetKind(), o.GetName())
		if r == nil {
			continue
		}
		switch o.GetKind() {
		case "ClusterRole", "Role":
			if diff := cmp.Diff(as[rbacv1.ClusterRole](t, o).Rules, as[rbacv1.ClusterRole](t, r).Rules); diff != "" {
				t.Errorf("%s %s rules (-kustomize +helm):\n%s", o.GetKind(), o.GetName(), diff)
			}
			for k, v := range o.GetLabels() {
				if strings.HasPrefix(k, "rbac.authorization.k8s.io/") && r.GetLabels()[k] != v {
					t.Errorf("%s %s: label %s=%q, want %q", o.GetKind(), o.GetName(), k, r.GetLabels()[k], v)
				}
			}
		case "ClusterRoleBinding", "RoleBinding":
			w, g := as[rbacv1.RoleBinding](t, o), as[rbacv1.RoleBinding](t, r)
			if diff := cmp.Diff(w.RoleRef, g.RoleRef); diff != "" {
				t.Errorf("%s %s roleRef (-kustomize +helm):\n%s", o.GetKind(), o.GetName(), diff)
			}
			if diff := cmp.Diff(w.Subjects, g.Subjects); diff != "" {
				t.Errorf("%s %s subjects (-kustomize +helm):\n%s", o.GetKind(), o.GetName(), diff)
			}
		}
	}

	want := as[appsv1.Deployment](t, find(k, "Deployment", "evalrun-controller-manager"))
	got := as[appsv1.Deployment](t, find(h, "Deployment", "evalrun-controller-manager"))
	if diff := cmp.Diff(essentials(want), essentials(got)); diff != "" {
		t.Errorf("manager Deployment (-kustomize +helm):\n%s", diff)
	}
}

// deployment is what the chart's manager Deployment must share with config/manager.
type deployment struct {
	Replicas          *int32
	PodSecurity       *corev1.PodSecurityContext
	ServiceAccount    string
	TerminationGrace  *int64
	Image, PullPolicy string
	Command, Args     []string
	Ports             []corev1.ContainerPort
	Security          *corev1.SecurityContext
	Liveness          *corev1.Probe
	Readiness         *corev1.Probe
	Resources         corev1.ResourceRequirements
	SelectorMatches   bool
}

func essentials(d *appsv1.Deployment) deployment {
	s := d.Spec.Template.Spec
	c := s.Containers[0]
	matches := true
	for k, v := range d.Spec.Selector.MatchLabels {
		matches = matches && d.Spec.Template.Labels[k] == v
	}
	return deployment{Replicas: d.Spec.Replicas, PodSecurity: s.SecurityContext, ServiceAccount: s.ServiceAccountName,
		TerminationGrace: s.TerminationGracePeriodSeconds, Image: c.Image, PullPolicy: string(c.ImagePullPolicy),
		Command: c.Command, Args: c.Args, Ports: c.Ports, Security: c.SecurityContext, Liveness: c.LivenessProbe,
		Readiness: c.ReadinessProbe, Resources: c.Resources, SelectorMatches: matches}
}

// TestChartValues checks what each value changes.
func TestChartValues(t *testing.T) {
	digest := "sha256:" + strings.Repeat("ab", 32)
	managerOf := func(objs []*unstructured.Unstructured) corev1.Container {
		return as[appsv1.Deployment](t, find(objs, "Deployment", "evalrun-controller-manager")).Spec.Template.Spec.Containers[0]
	}

	t.Run("images by digest", func(t *testing.T) {
		c := managerOf(render(t, "image.repository=registry.example/evalrun/manager", "image.digest="+digest,
			"collectorImage.repository=registry.example/evalrun/collector", "collectorImage.digest="+digest,
			"judgeImage.repository=registry.example/evalrun/judge", "judgeImage.digest="+digest))
		if c.Image != "registry.example/evalrun/manager@"+digest {
			t.Errorf("image = %s", c.Image)
		}
		if !slices.Contains(c.Args, "--collector-image=registry.example/evalrun/collector@"+digest) {
			t.Errorf("args = %v, want the collector by digest", c.Args)
		}
		if !slices.Contains(c.Args, "--judge-image=registry.example/evalrun/judge@"+digest) {
			t.Errorf("args = %v, want the judge image by digest", c.Args)
		}
	})

	t.Run("watched namespaces: RoleBindings, no ClusterRoleBinding", func(t *testing.T) {
		objs := render(t, "watchNamespaces={team-a,team-b}")
		if !slices.Contains(managerOf(objs).Args, "--watch-namespaces=team-a,team-b") {
			t.Errorf("args = %v, want --watch-namespaces=team-a,team-b", managerOf(objs).Args)
		}
		if find(objs, "ClusterRoleBinding", "evalrun-manager-rolebinding") != nil {
			t.Error("the manager ClusterRoleBinding is rendered in a namespaced install")
		}
		var bound []string
		for _, o := range objs {
			if o.GetKind() == "RoleBinding" && o.GetName() == "evalrun-manager-rolebinding" {
				rb := as[rbacv1.RoleBinding](t, o)
				bound = append(bound, rb.Namespace+" "+rb.RoleRef.Kind+"/"+rb.RoleRef.Name+" "+rb.Subjects[0].Namespace+"/"+rb.Subjects[0].Name)
			}
		}
		want := []string{
			"team-a ClusterRole/evalrun-manager-role evalrun-system/evalrun-controller-manager",
			"team-b ClusterRole/evalrun-manager-role evalrun-system/evalrun-controller-manager",
		}
		if diff := cmp.Diff(want, bound); diff != "" {
			t.Errorf("manager RoleBindings (-want +got):\n%s", diff)
		}
	})

	t.Run("default deadline", func(t *testing.T) {
		if args := managerOf(render(t, "defaultActiveDeadlineSeconds=3600")).Args; !slices.Contains(args, "--default-active-deadline-seconds=3600") {
			t.Errorf("args = %v, want --default-active-deadline-seconds=3600", args)
		}
	})

	t.Run("no leader election, no metrics", func(t *testing.T) {
		objs := render(t, "leaderElection.enabled=false", "metrics.enabled=false")
		want := []string{"--health-probe-bind-address=:8081", "--metrics-bind-address=0",
			"--collector-image=localhost/evalrun/collector:" + appVersion(t), "--judge-image=localhost/evalrun/judge:" + appVersion(t),
			"--default-active-deadline-seconds=86400"}
		if diff := cmp.Diff(want, managerOf(objs).Args); diff != "" {
			t.Errorf("args (-want +got):\n%s", diff)
		}
		for _, name := range []string{"Role evalrun-leader-election-role", "ClusterRole evalrun-metrics-auth-role", "ClusterRole evalrun-metrics-reader"} {
			kind, n, _ := strings.Cut(name, " ")
			if find(objs, kind, n) != nil {
				t.Errorf("%s is rendered", name)
			}
		}
	})

	t.Run("metrics Service and ServiceMonitor", func(t *testing.T) {
		objs := render(t, "metrics.service.enabled=true", "metrics.serviceMonitor.enabled=true")
		svc := as[corev1.Service](t, find(objs, "Service", "evalrun-controller-manager-metrics-service"))
		pod := as[appsv1.Deployment](t, find(objs, "Deployment", "evalrun-controller-manager")).Spec.Template
		for k, v := range svc.Spec.Selector {
			if pod.Labels[k] != v {
				t.Errorf("Service selector %s=%s does not select the manager pod (%v)", k, v, pod.Labels)
			}
		}
		sm := find(objs, "ServiceMonitor", "evalrun-controller-manager")
		if sm == nil {
			t.Fatal("no ServiceMonitor")
		}
		sel, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
		for k, v := range sel {
			if svc.Labels[k] != v {
				t.Errorf("ServiceMonitor selector %s=%s does not select the Service (%v)", k, v, svc.Labels)
			}
		}
		if find(render(t), "ServiceMonitor", "evalrun-controller-manager") != nil {
			t.Error("a ServiceMonitor is rendered by default")
		}
		if _, err := renderRaw(t, "metrics.service.enabled=false", "metrics.serviceMonitor.enabled=true"); err == nil || !strings.Contains(err.Error(), "needs metrics.service.enabled") {
			t.Errorf("a ServiceMonitor without the Service: err = %v", err)
		}
	})
}

// TestChartReleaseValues checks the values a release sets: image tags tied to appVersion, the version label, the
// LLM defaults, extra manager flags, pod labels and annotations.
func TestChartReleaseValues(t *testing.T) {
	managerOf := func(objs []*unstructured.Unstructured) corev1.Container {
		return as[appsv1.Deployment](t, find(objs, "Deployment", "evalrun-controller-manager")).Spec.Template.Spec.Containers[0]
	}

	t.Run("image tags default to appVersion; the version label", func(t *testing.T) {
		objs := render(t)
		c := managerOf(objs)
		v := appVersion(t)
		if want := "localhost/evalrun/manager:" + v; c.Image != want {
			t.Errorf("image = %s, want %s", c.Image, want)
		}
		for _, want := range []string{"--collector-image=localhost/evalrun/collector:" + v, "--judge-image=localhost/evalrun/judge:" + v} {
			if !slices.Contains(c.Args, want) {
				t.Errorf("args = %v, want %s", c.Args, want)
			}
		}
		for _, o := range objs {
			if o.GetKind() == "CustomResourceDefinition" {
				continue
			}
			if got := o.GetLabels()["app.kubernetes.io/version"]; got != v {
				t.Errorf("%s %s: app.kubernetes.io/version = %q, want %q", o.GetKind(), o.GetName(), got, v)
			}
		}
		pod := as[appsv1.Deployment](t, find(objs, "Deployment", "evalrun-controller-manager")).Spec.Template
		if pod.Labels["app.kubernetes.io/version"] != v {
			t.Errorf("pod labels = %v, want app.kubernetes.io/version=%s", pod.Labels, v)
		}
		if c := managerOf(render(t, "image.tag=v9", "collectorImage.tag=v8", "judgeImage.tag=v7")); c.Image != "localhost/evalrun/manager:v9" ||
			!slices.Contains(c.Args, "--collector-image=localhost/evalrun/collector:v8") || !slices.Contains(c.Args, "--judge-image=localhost/evalrun/judge:v7") {
			t.Errorf("tags set: image %s, args %v", c.Image, c.Args)
		}
	})

	t.Run("LLM defaults and extra manager flags", func(t *testing.T) {
		args := managerOf(render(t, "llm.baseURL=http://judge.example:8080/v1", "llm.model=judge-1",
			"extraArgs={--max-concurrent-reconciles=8,--bucket-call-timeout=2m}")).Args
		want := []string{"--llm-base-url=http://judge.example:8080/v1", "--llm-model=judge-1", "--max-concurrent-reconciles=8",
			"--bucket-call-timeout=2m"}
		if diff := cmp.Diff(want, args[len(args)-len(want):]); diff != "" {
			t.Errorf("the last args (-want +got):\n%s", diff)
		}
		for _, a := range managerOf(render(t)).Args {
			if strings.HasPrefix(a, "--llm-") {
				t.Errorf("default args name %s", a)
			}
		}
	})

	t.Run("judge limits", func(t *testing.T) {
		args := managerOf(render(t, "judgeLimits.cpu=2", "judgeLimits.memory=2Gi", "judgeLimits.ephemeralStorage=4Gi")).Args
		for _, a := range []string{"--judge-cpu-limit=2", "--judge-memory-limit=2Gi", "--judge-ephemeral-storage-limit=4Gi"} {
			if !slices.Contains(args, a) {
				t.Errorf("args %v lack %s", args, a)
			}
		}
		for _, a := range managerOf(render(t)).Args {
			if strings.HasPrefix(a, "--judge-") && strings.Contains(a, "-limit=") {
				t.Errorf("default args name %s (the manager's defaults apply)", a)
			}
		}
	})

	t.Run("pod labels and annotations", func(t *testing.T) {
		d := as[appsv1.Deployment](t, find(render(t, "podLabels.team=evals", "podAnnotations.example\\.com/owner=platform"), "Deployment", "evalrun-controller-manager"))
		if d.Spec.Template.Labels["team"] != "evals" {
			t.Errorf("pod labels = %v", d.Spec.Template.Labels)
		}
		if d.Spec.Template.Annotations["example.com/owner"] != "platform" {
			t.Errorf("pod annotations = %v", d.Spec.Template.Annotations)
		}
		if _, ok := d.Spec.Selector.MatchLabels["team"]; ok {
			t.Error("podLabels reach the Deployment's selector (immutable: an upgrade would fail)")
		}
	})

}

// TestChartPrometheusRule checks the chart's PrometheusRule: off by default, config/prometheus/rules.yaml's spec with
// the default values, every window and for: duration from its value.
func TestChartPrometheusRule(t *testing.T) {
	t.Run("PrometheusRule: the defaults are config/prometheus/rules.yaml", func(t *testing.T) {
		if find(render(t), "PrometheusRule", "evalrun-alerts") != nil {
			t.Error("a PrometheusRule is rendered by default")
		}
		got := find(render(t, "prometheusRule.enabled=true", "prometheusRule.labels.release=kube-prometheus-stack"), "PrometheusRule", "evalrun-alerts")
		if got == nil {
			t.Fatal("no PrometheusRule evalrun-alerts")
		}
		if got.GetLabels()["release"] != "kube-prometheus-stack" {
			t.Errorf("labels = %v", got.GetLabels())
		}
		want := find(kustomizeMonitoring(t), "PrometheusRule", "evalrun-alerts")
		if diff := cmp.Diff(want.Object["spec"], got.Object["spec"]); diff != "" {
			t.Errorf("PrometheusRule spec (-config/prometheus/rules.yaml +chart):\n%s", diff)
		}
	})

	t.Run("PrometheusRule: windows and for durations", func(t *testing.T) {
		r := find(render(t, "prometheusRule.enabled=true", "prometheusRule.failed.window=3m", "prometheusRule.passRate.window=4m",
			"prometheusRule.passRate.threshold=0.5", "prometheusRule.passRate.for=5s", "prometheusRule.regressed.window=6m",
			"prometheusRule.scheduleMissed.window=7m", "prometheusRule.stuck.window=8m", "prometheusRule.stuck.for=9s"),
			"PrometheusRule", "evalrun-alerts")
		if r == nil {
			t.Fatal("no PrometheusRule")
		}
		got := map[string]string{}
		for _, rule := range ruleList(t, r) {
			got[rule["alert"].(string)] = fmt.Sprint(rule["expr"], " for:", rule["for"])
		}
		for alert, parts := range map[string][]string{
			"EvalRunFailed":      {"{reason!=\"Completed\"}[3m]", "passed=\"False\"}[3m]", "for:<nil>"},
			"EvalRunPassRateLow": {"[4m]", "< 0.5", "for:5s"},
			"EvalRunRegressed":   {"[6m]"},
			"EvalScheduleMissed": {"[7m]"},
			"EvalRunsStuck":      {"[8m]", "for:9s"},
		} {
			for _, p := range parts {
				if !strings.Contains(got[alert], p) {
					t.Errorf("%s: %q does not contain %q", alert, got[alert], p)
				}
			}
		}
	})
}

// TestServiceMonitorsHonorLabels checks both ServiceMonitors (the chart's and config/prometheus's) keep the
// metrics' own namespace label, the run's.
func TestServiceMonitorsHonorLabels(t *testing.T) {
	sm := find(render(t, "metrics.service.enabled=true", "metrics.serviceMonitor.enabled=true"), "ServiceMonitor", "evalrun-controller-manager")
	if sm == nil {
		t.Fatal("no ServiceMonitor")
	}
	for _, o := range []*unstructured.Unstructured{sm, find(kustomizeMonitoring(t), "ServiceMonitor", "controller-manager-metrics-monitor")} {
		endpoints, _, _ := unstructured.NestedSlice(o.Object, "spec", "endpoints")
		for _, e := range endpoints {
			if honor, _, _ := unstructured.NestedBool(e.(map[string]any), "honorLabels"); !honor {
				t.Errorf("ServiceMonitor %s: an endpoint without honorLabels: the run's namespace label would become exported_namespace", o.GetName())
			}
		}
	}
}

// appVersion is Chart.yaml's appVersion.
func appVersion(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(chart + "/Chart.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Version    string `json:"version"`
		AppVersion string `json:"appVersion"`
	}
	if err := yaml.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	if c.AppVersion == "" || c.AppVersion == "dev" || c.Version == "" {
		t.Fatalf("Chart.yaml: version %q, appVersion %q: a release's, not a placeholder", c.Version, c.AppVersion)
	}
	return c.AppVersion
}

// kustomizeMonitoring renders config/prometheus (the ServiceMonitor and the alerts).
func kustomizeMonitoring(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	out, err := run(t, nil, requireKubectl(t), "kustomize", root+"/config/prometheus")
	if err != nil {
		t.Fatalf("kubectl kustomize config/prometheus: %v", err)
	}
	return parse(t, out)
}

// ruleList is every rule of a PrometheusRule's groups.
func ruleList(t *testing.T, r *unstructured.Unstructured) []map[string]any {
	t.Helper()
	groups, _, err := unstructured.NestedSlice(r.Object, "spec", "groups")
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, g := range groups {
		rules, _, _ := unstructured.NestedSlice(g.(map[string]any), "rules")
		for _, rule := range rules {
			out = append(out, rule.(map[string]any))
		}
	}
	return out
}

// TestChartNotes checks what `helm install` prints: the CRD upgrade step and the monitoring objects.
func TestChartNotes(t *testing.T) {
	out, err := run(t, nil, requireHelm(t), "install", "evalrun", chart, "--dry-run=client", "--namespace", namespace,
		"--set", "fullnameOverride=evalrun", "--set", "metrics.serviceMonitor.enabled=true", "--set", "prometheusRule.enabled=true",
		"--set", "llm.model=judge-1", "--set", "watchNamespaces={team-a}")
	if err != nil {
		t.Fatalf("helm install --dry-run: %v", err)
	}
	_, notes, ok := strings.Cut(string(out), "NOTES:")
	if !ok {
		t.Fatalf("no NOTES in:\n%s", out)
	}
	for _, want := range []string{"kubectl apply --server-side --force-conflicts -f <chart>/crds/", "evalrun-metrics-reader",
		"PrometheusRule evalrun-alerts", "in team-a.", "use judge-1", "deployment/evalrun-controller-manager"} {
		if !strings.Contains(notes, want) {
			t.Errorf("NOTES do not say %q:\n%s", want, notes)
		}
	}
}

// TestValuesAreDocumented checks that every top-level value of values.yaml has a comment above it (or shares the
// comment of the values just above it).
func TestValuesAreDocumented(t *testing.T) {
	data, err := os.ReadFile(chart + "/values.yaml")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	for i, l := range lines {
		if l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, " ") {
			continue
		}
		documented := false
		for j := i - 1; j >= 0 && lines[j] != ""; j-- {
			if strings.HasPrefix(lines[j], "#") {
				documented = true
				break
			}
		}
		if !documented {
			t.Errorf("values.yaml line %d: %q has no comment", i+1, l)
		}
	}
}

// TestBuildInstaller checks dist/install.yaml as `make build-installer` writes it: config/default's objects with
// the manager and collector images given by digest.
func TestBuildInstaller(t *testing.T) {
	kubectl := requireKubectl(t)
	out := filepath.Join(t.TempDir(), "install.yaml")
	manager := "registry.example:5000/evalrun/manager:v0.1.0@sha256:" + strings.Repeat("1", 64)
	collector := "registry.example:5000/evalrun/collector@sha256:" + strings.Repeat("2", 64)
	judge := "registry.example:5000/evalrun/judge@sha256:" + strings.Repeat("3", 64)
	if b, err := run(t, []string{"IMG=" + manager, "COLLECTOR_IMG=" + collector, "JUDGE_IMG=" + judge, "KUBECTL=" + kubectl}, root+"/hack/build-installer.sh", out); err != nil {
		t.Fatalf("hack/build-installer.sh: %v\n%s", err, b)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got := parse(t, data)
	k := kustomize(t)
	if diff := cmp.Diff(kinds(k), kinds(got)); diff != "" {
		t.Errorf("objects (-kustomize +install.yaml):\n%s", diff)
	}
	c := as[appsv1.Deployment](t, find(got, "Deployment", "evalrun-controller-manager")).Spec.Template.Spec.Containers[0]
	if want := "registry.example:5000/evalrun/manager@sha256:" + strings.Repeat("1", 64); c.Image != want {
		t.Errorf("manager image = %s, want %s", c.Image, want)
	}
	wantArgs := slices.Clone(as[appsv1.Deployment](t, find(k, "Deployment", "evalrun-controller-manager")).Spec.Template.Spec.Containers[0].Args)
	for i, a := range wantArgs {
		if strings.HasPrefix(a, "--collector-image=") {
			wantArgs[i] = "--collector-image=" + collector
		}
		if strings.HasPrefix(a, "--judge-image=") {
			wantArgs[i] = "--judge-image=" + judge
		}
	}
	if diff := cmp.Diff(wantArgs, c.Args); diff != "" {
		t.Errorf("manager args (-want +got):\n%s", diff)
	}

	if b, err := run(t, []string{"IMG=not an image", "COLLECTOR_IMG=" + collector, "JUDGE_IMG=" + judge, "KUBECTL=" + kubectl}, root+"/hack/build-installer.sh", out); err == nil {
		t.Errorf("hack/build-installer.sh took IMG='not an image':\n%s", b)
	}
}

// envPromtool names Prometheus' promtool (hack/prometheus.sh builds it; the Makefile exports its path).
const envPromtool = "EVALRUN_PROMTOOL"

// TestPromtoolRules checks the shipped alerts with Prometheus' own rule parser and evaluator: `promtool check
// rules` on config/prometheus/rules.yaml's spec and on the chart's PrometheusRule (defaults and shortened
// windows), and `promtool test rules` (testdata/rules_test.yaml: each alert fires in the case it describes).
func TestPromtoolRules(t *testing.T) {
	promtool := os.Getenv(envPromtool)
	if promtool == "" {
		if testing.Short() {
			t.Skip(envPromtool + " is not set (-short)")
		}
		t.Fatal(envPromtool + " is not set: run `make test-unit`, or `make prometheus` and set it to bin/prometheus/<version>/promtool")
	}
	dir := t.TempDir()
	write := func(name string, o *unstructured.Unstructured) string {
		t.Helper()
		if o == nil {
			t.Fatalf("%s: no PrometheusRule", name)
		}
		spec, err := yaml.Marshal(o.Object["spec"])
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, spec, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	files := []string{
		write("rules.yaml", find(kustomizeMonitoring(t), "PrometheusRule", "evalrun-alerts")),
		write("chart.yaml", find(render(t, "prometheusRule.enabled=true"), "PrometheusRule", "evalrun-alerts")),
		write("chart-short.yaml", find(render(t, "prometheusRule.enabled=true", "prometheusRule.failed.window=2m",
			"prometheusRule.stuck.window=90s", "prometheusRule.stuck.for=30s", "prometheusRule.passRate.for=0s"), "PrometheusRule", "evalrun-alerts")),
	}
	if out, err := run(t, nil, promtool, append([]string{"check", "rules", "--lint=all", "--lint-fatal"}, files...)...); err != nil {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}
	tests, err := os.ReadFile("testdata/rules_test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "rules_test.yaml"), tests, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := run(t, nil, promtool, "test", "rules", filepath.Join(dir, "rules_test.yaml")); err != nil {
		t.Fatalf("promtool test rules: %v\n%s", err, out)
	}
}
