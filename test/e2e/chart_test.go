//go:build e2e

package e2e

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
)

// chartRelease and chartNamespace are the chart's release in the chart test, in a namespace of its own.
const (
	chartRelease   = "evalrun-chart-e2e"
	chartNamespace = "evalrun-chart-e2e"
)

// TestHelmInstallUpgradeUninstall installs the chart (charts/evalrun-operator) on the local cluster, runs a sample
// EvalRun to completion under its manager, upgrades the CRDs by the documented path (kubectl apply --server-side
// of the chart's crds/) and the release with new values (extraArgs, llm, podLabels), runs another sample, and
// uninstalls it: nothing of the release is left but the CRDs.
//
// The chart's manager watches only the test's namespace; config/default's manager (hack/deploy.sh), which watches
// every namespace, is scaled to 0 meanwhile so the two never reconcile the same run, and scaled back at the end.
// Not parallel for that reason.
func TestHelmInstallUpgradeUninstall(t *testing.T) {
	ctx := ctxFor(t, 12*time.Minute)
	helms, _ := filepath.Glob(filepath.Join(repoRoot, "bin", "tools", "helm-*"))
	if len(helms) == 0 {
		t.Fatal("no helm under bin/tools (make helm)")
	}
	helm := func(args ...string) string {
		t.Helper()
		out, err := runCmd(ctx, helms[0], append([]string{"--kubeconfig", kubeconfigPath}, args...)...)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	chart := filepath.Join(repoRoot, "charts", "evalrun-operator")
	ns := newNamespace(t, "chart", nil)

	shared := client.ObjectKey{Namespace: managerNamespace, Name: "evalrun-controller-manager"}
	scaleShared := func(n int32) int32 {
		t.Helper()
		d := &appsv1.Deployment{}
		if err := k8s.Get(ctx, shared, d); err != nil {
			t.Fatal(err)
		}
		was := ptr.Deref(d.Spec.Replicas, 1)
		d.Spec.Replicas = ptr.To(n)
		if err := k8s.Update(ctx, d); err != nil {
			t.Fatal(err)
		}
		if out, err := kubectl(ctx, t, "-n", managerNamespace, "rollout", "status", "deployment/evalrun-controller-manager", "--timeout=180s"); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return was
	}
	replicas := scaleShared(0)
	t.Cleanup(func() { scaleShared(replicas) })

	common := []string{"--namespace", chartNamespace, "--set", "fullnameOverride=" + chartRelease, "--set", "image.tag=dev", "--set", "collectorImage.tag=dev",
		"--set", "watchNamespaces={" + ns + "}", "--wait", "--timeout", "3m"}
	helm(append([]string{"install", chartRelease, chart, "--create-namespace"}, common...)...)
	t.Cleanup(func() {
		_, _ = runCmd(context.Background(), helms[0], "--kubeconfig", kubeconfigPath, "uninstall", chartRelease, "--namespace", chartNamespace, "--wait")
		_ = k8s.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: chartNamespace}})
	})
	sample := func(name string) {
		t.Helper()
		create(t, sampleRun(name, ns).Inline(testutil.DecisionEval(3)).Obj())
		got := waitFinished(t, ns, name, runTimeout)
		expectCondition(t, got, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionTrue, evalsv1alpha1.ReasonCompleted})
	}
	sample("under-install")

	// The documented CRD upgrade, then the release's.
	if out, err := kubectl(ctx, t, "apply", "--server-side", "--force-conflicts", "-f", filepath.Join(chart, "crds")); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	helm(append([]string{"upgrade", chartRelease, chart, "--set", "extraArgs={--max-concurrent-reconciles=2}",
		"--set", "llm.model=judge-e2e", "--set", "podLabels.e2e=upgraded"}, common...)...)
	d := &appsv1.Deployment{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: chartNamespace, Name: chartRelease + "-controller-manager"}, d); err != nil {
		t.Fatal(err)
	}
	args := d.Spec.Template.Spec.Containers[0].Args
	if !slices.Contains(args, "--max-concurrent-reconciles=2") || !slices.Contains(args, "--llm-model=judge-e2e") ||
		d.Spec.Template.Labels["e2e"] != "upgraded" {
		t.Errorf("after the upgrade: args %v, pod labels %v", args, d.Spec.Template.Labels)
	}
	sample("under-upgrade")

	helm("uninstall", chartRelease, "--namespace", chartNamespace, "--wait")
	sel := client.MatchingLabels{"app.kubernetes.io/instance": chartRelease}
	var left []string
	for _, l := range []client.ObjectList{&appsv1.DeploymentList{}, &corev1.ServiceAccountList{}, &corev1.ServiceList{},
		&rbacv1.RoleList{}, &rbacv1.RoleBindingList{}, &rbacv1.ClusterRoleList{}, &rbacv1.ClusterRoleBindingList{}} {
		if err := k8s.List(ctx, l, sel); err != nil {
			t.Fatal(err)
		}
		left = append(left, metaItems(l)...)
	}
	if len(left) > 0 {
		t.Errorf("helm uninstall left: %s", strings.Join(left, ", "))
	}
	for _, crd := range []string{"evalruns.evals.evalrun.io", "evalschedules.evals.evalrun.io"} {
		if out, err := kubectl(ctx, t, "get", "crd", crd, "-o", "name"); err != nil {
			t.Errorf("CRD %s is gone after helm uninstall: %v\n%s", crd, err, out)
		}
	}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: chartNamespace, Name: chartRelease + "-controller-manager"}, &appsv1.Deployment{}); !apierrors.IsNotFound(err) {
		t.Errorf("the manager Deployment after uninstall: %v", err)
	}
}

// metaItems names the items of a typed list as kind namespace/name.
func metaItems(l client.ObjectList) []string {
	var out []string
	switch x := l.(type) {
	case *appsv1.DeploymentList:
		for _, i := range x.Items {
			out = append(out, "Deployment "+i.Namespace+"/"+i.Name)
		}
	case *corev1.ServiceAccountList:
		for _, i := range x.Items {
			out = append(out, "ServiceAccount "+i.Namespace+"/"+i.Name)
		}
	case *corev1.ServiceList:
		for _, i := range x.Items {
			out = append(out, "Service "+i.Namespace+"/"+i.Name)
		}
	case *rbacv1.RoleList:
		for _, i := range x.Items {
			out = append(out, "Role "+i.Namespace+"/"+i.Name)
		}
	case *rbacv1.RoleBindingList:
		for _, i := range x.Items {
			out = append(out, "RoleBinding "+i.Namespace+"/"+i.Name)
		}
	case *rbacv1.ClusterRoleList:
		for _, i := range x.Items {
			out = append(out, "ClusterRole "+i.Name)
		}
	case *rbacv1.ClusterRoleBindingList:
		for _, i := range x.Items {
			out = append(out, "ClusterRoleBinding "+i.Name)
		}
	}
	return out
}
