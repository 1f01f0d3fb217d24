package controller_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/controller"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
)

// readManifest decodes the YAML file at config/rbac/<name> into obj.
func readManifest(t *testing.T, name string, obj any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "config", "rbac", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(data, obj); err != nil {
		t.Fatalf("decoding config/rbac/%s: %v", name, err)
	}
}

// syncBuffer is a bytes.Buffer safe for the manager's concurrent log writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestNamespacedInstall installs the manager the way config/rbac/README.md describes for --watch-namespaces: its
// generated ClusterRole (config/rbac/role.yaml, read from the file) granted only through RoleBindings in the
// watched namespaces, the leader-election Role (config/rbac/leader_election_role.yaml) in its own namespace, and
// no ClusterRoleBinding at all. The manager runs as its ServiceAccount (impersonated) with the same setup as
// cmd/manager. Runs in the watched namespaces are reconciled to their end, through every kind of write the
// manager makes; a run in another namespace is left alone; and nothing the manager does is forbidden.
func TestNamespacedInstall(t *testing.T) {
	requireEnv(t)
	ctx := context.Background()
	system, watchedA, watchedB, unwatched := newNamespace(t), newNamespace(t), newNamespace(t), newNamespace(t)

	// The suite's manager watches every namespace; this test's manager is to be the only one.
	mgr.stop()
	t.Cleanup(func() {
		var err error
		if mgr, err = startManager(); err != nil {
			t.Fatalf("restarting the suite's manager: %v", err)
		}
	})

	asManager := installNamespaced(t, system, watchedA, watchedB)
	// The API server authorizes with RBAC: the manager's identity may not read EvalRuns outside its namespaces.
	managerClient, err := client.New(asManager, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the manager's grants are in force", func() error {
		return managerClient.List(ctx, &evalsv1alpha1.EvalRunList{}, client.InNamespace(watchedA))
	})
	for what, opts := range map[string][]client.ListOption{"cluster-wide": nil, "in " + unwatched: {client.InNamespace(unwatched)}} {
		if err := managerClient.List(ctx, &evalsv1alpha1.EvalRunList{}, opts...); !apierrors.IsForbidden(err) {
			t.Fatalf("listing EvalRuns %s as the manager: %v, want Forbidden (is RBAC authorization on?)", what, err)
		}
	}

	nm := startNamespacedManager(t, asManager, system, watchedA+", "+watchedB)
	runA := createRun(t, testutil.MakeEvalRun("scoped", watchedA))
	runB := createRun(t, testutil.MakeEvalRun("scoped", watchedB))
	runOff := createRun(t, testutil.MakeEvalRun("scoped", unwatched))

	// A: created, run, collected: Completed (children, Job, status, events).
	runA, _, podA := runningPod(t, runA)
	collectorApply(t, k8s, runA, evalsv1alpha1.OutcomeCompleted, &evalsv1alpha1.RunSummary{Total: 2, Passed: 2, MeanScore: "1.0000"})
	updatePodStatus(t, podA, runnerTerminated(0, "Completed", time.Now()))
	waitReason(t, runA, metav1.ConditionTrue, evalsv1alpha1.ReasonCompleted)

	// B: a pod whose runner never started is evicted and counted on the Job (pods/eviction, Job patch); the next
	// pod's runner cannot be configured: InvalidContainerConfig, and the Job is deleted.
	jobB := waitJob(t, runB)
	waitReason(t, runB, metav1.ConditionUnknown, evalsv1alpha1.ReasonPending)
	podB := createJobPod(t, jobB, jobB.Name+"-try1")
	updatePodStatus(t, podB, runnerStartError)
	waitPodGone(t, podB)
	podB = createJobPod(t, jobB, jobB.Name+"-try2")
	updatePodStatus(t, podB, func(s *corev1.PodStatus) {
		s.Phase = corev1.PodPending
		s.Conditions = []corev1.PodCondition{condition(corev1.PodScheduled, corev1.ConditionTrue)}
		s.ContainerStatuses = []corev1.ContainerStatus{containerWaiting(podwire.ContainerRunner, "CreateContainerConfigError", `secret "api-key" not found`)}
	})
	waitReason(t, runB, metav1.ConditionUnknown, evalsv1alpha1.ReasonPending)
	advanceClock(t, 3*time.Minute)
	poke(t, runB)
	waitReason(t, runB, metav1.ConditionFalse, evalsv1alpha1.ReasonInvalidContainerConfig)
	eventually(t, "the failed run's Job is deleted", func() error {
		if r := retriesOf(t, jobB); r != "gone" {
			return fmt.Errorf("the Job is still there (retries %q)", r)
		}
		return nil
	})
	eventually(t, "the manager recorded events in a watched namespace", func() error {
		return hasEvent(ctx, watchedB, runB.Name, evalsv1alpha1.ReasonInvalidContainerConfig)
	})

	// The unwatched run: nothing done, nothing written. Settled since both other runs finished.
	settle(t, 0)
	nm.stop(t)
	assertUntouched(t, runOff)
	nm.assertNothingRefused(t)
	if c := meta.FindStatusCondition(getRun(t, runA).Status.Conditions, evalsv1alpha1.ConditionSucceeded); c == nil || c.Reason != evalsv1alpha1.ReasonCompleted {
		t.Errorf("the watched run's outcome changed: %+v", c)
	}
}

// installNamespaced creates the manager's ServiceAccount in system and its grants for watching namespaces, as
// config/rbac/README.md describes the namespaced install, and returns a config that acts as that ServiceAccount.
func installNamespaced(t *testing.T, system string, namespaces ...string) *rest.Config {
	t.Helper()
	ctx := context.Background()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "controller-manager", Namespace: system}}
	if err := k8s.Create(ctx, sa); err != nil {
		t.Fatal(err)
	}
	subject := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: sa.Name, Namespace: system}
	role := &rbacv1.ClusterRole{}
	readManifest(t, "role.yaml", role)
	role.Name = "manager-role-" + system // cluster-scoped: unique to this test run
	if err := k8s.Create(ctx, role); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k8s.Delete(ctx, role) })
	objs := []client.Object{}
	for _, ns := range namespaces {
		objs = append(objs, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "manager-rolebinding", Namespace: ns},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
			Subjects: []rbacv1.Subject{subject}})
	}
	leRole := &rbacv1.Role{}
	readManifest(t, "leader_election_role.yaml", leRole)
	leRole.Namespace = system
	leBinding := &rbacv1.RoleBinding{}
	readManifest(t, "leader_election_role_binding.yaml", leBinding)
	leBinding.Namespace = system
	leBinding.Subjects = []rbacv1.Subject{subject}
	for _, obj := range append(objs, leRole, leBinding) {
		if err := k8s.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	cfg := rest.CopyConfig(restCfg)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: fmt.Sprintf("system:serviceaccount:%s:%s", system, sa.Name)}
	return cfg
}

// namespacedManager is a manager started as cmd/manager starts it with --watch-namespaces and --leader-elect,
// keeping its logs (client-go's included) and its cache's list/watch errors to look for refusals.
type namespacedManager struct {
	logs    syncBuffer
	mu      sync.Mutex
	watch   []error
	cancel  context.CancelFunc
	done    chan error
	stopped bool
}

func startNamespacedManager(t *testing.T, cfg *rest.Config, system, watch string) *namespacedManager {
	t.Helper()
	nm := &namespacedManager{done: make(chan error, 1)}
	logger := zap.New(zap.WriteTo(&nm.logs), zap.Level(zapcore.Level(-2)))
	klog.SetLogger(logger)
	t.Cleanup(klog.ClearLogger)
	cacheOpts := controller.CacheOptions(controller.ParseNamespaces(watch))
	cacheOpts.DefaultWatchErrorHandler = func(ctx context.Context, r *toolscache.Reflector, err error) {
		nm.mu.Lock()
		nm.watch = append(nm.watch, err)
		nm.mu.Unlock()
		toolscache.DefaultWatchErrorHandler(ctx, r, err)
	}
	m, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                        scheme,
		Logger:                        logger,
		Metrics:                       metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:        "0",
		LeaderElection:                true,
		LeaderElectionNamespace:       system,
		LeaderElectionID:              "evalrun-operator.evals.evalrun.io",
		LeaderElectionReleaseOnCancel: true,
		Cache:                         cacheOpts,
		Controller:                    config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	nm.cancel = cancel
	if err := controller.SetupManager(ctx, m, clk, testOptions); err != nil {
		cancel()
		t.Fatal(err)
	}
	go func() { nm.done <- m.Start(ctx) }()
	t.Cleanup(func() { nm.stop(t) })
	syncCtx, syncCancel := context.WithTimeout(ctx, timeout)
	defer syncCancel()
	if !m.GetCache().WaitForCacheSync(syncCtx) {
		t.Fatalf("the namespaced manager's cache did not sync; watch errors: %v", nm.watchErrors())
	}
	select {
	case <-m.Elected():
	case <-time.After(timeout):
		t.Fatalf("the namespaced manager was not elected leader; logs:\n%s", nm.logs.String())
	}
	return nm
}

func (nm *namespacedManager) stop(t *testing.T) {
	if nm.stopped {
		return
	}
	nm.stopped = true
	nm.cancel()
	if err := <-nm.done; err != nil {
		t.Errorf("the namespaced manager stopped with: %v", err)
	}
}

func (nm *namespacedManager) watchErrors() error {
	nm.mu.Lock()
	defer nm.mu.Unlock()
	return errors.Join(nm.watch...)
}

// assertNothingRefused fails the test if a list or watch failed, if anything the manager logged was a refusal, or
// if a reconcile failed (a run's children are created in an order the API server's checks accept the first time:
// the collector's RoleBinding after its Role, which the RBAC escalation check reads).
func (nm *namespacedManager) assertNothingRefused(t *testing.T) {
	t.Helper()
	if err := nm.watchErrors(); err != nil {
		t.Errorf("the cache's list/watch failed: %v", err)
	}
	for _, line := range strings.Split(nm.logs.String(), "\n") {
		if strings.Contains(strings.ToLower(line), "forbidden") {
			t.Errorf("the namespaced manager was refused: %s", line)
		}
		if strings.Contains(line, "Reconciler error") {
			t.Errorf("a reconcile failed: %s", line)
		}
	}
}

// hasEvent returns nil when namespace holds an event about the object named regarding with the given reason.
func hasEvent(ctx context.Context, namespace, regarding, reason string) error {
	var events corev1.EventList
	if err := k8s.List(ctx, &events, client.InNamespace(namespace)); err != nil {
		return err
	}
	for _, e := range events.Items {
		if e.InvolvedObject.Name == regarding && e.Reason == reason {
			return nil
		}
	}
	return fmt.Errorf("no %s event about %s among %d", reason, regarding, len(events.Items))
}

// assertUntouched fails the test if the manager wrote the run's status or created any of its children.
func assertUntouched(t *testing.T, run *evalsv1alpha1.EvalRun) {
	t.Helper()
	got := getRun(t, run)
	if len(got.Status.Conditions) != 0 || got.Status.JobName != "" || got.Status.ObservedGeneration != 0 {
		t.Errorf("the run in the unwatched namespace has status %+v", got.Status)
	}
	var jobs batchv1.JobList
	var cms corev1.ConfigMapList
	for _, list := range []client.ObjectList{&jobs, &cms} {
		if err := k8s.List(context.Background(), list, client.InNamespace(run.Namespace), client.HasLabels{podwire.LabelRun}); err != nil {
			t.Fatal(err)
		}
	}
	if len(jobs.Items)+len(cms.Items) != 0 {
		t.Errorf("the unwatched namespace holds %d Jobs and %d ConfigMaps of runs", len(jobs.Items), len(cms.Items))
	}
}
