package controller_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	managermetrics "github.com/evalrun-operator/evalrun-operator/internal/manager/metrics"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/children"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/options"

	dto "github.com/prometheus/client_model/go"
	"go.uber.org/zap/zapcore"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/watch"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/controller"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
)

// Shared waiting bounds of the integration tests: every wait polls with interval up to timeout.
const (
	timeout  = 30 * time.Second
	interval = 25 * time.Millisecond
)

var (
	testEnv *envtest.Environment
	restCfg *rest.Config
	scheme  = runtime.NewScheme()
	// k8s is an uncached admin client for the tests' own reads and writes.
	k8s client.Client
	// clk is the manager's clock; tests move it forward to pass deadlines without waiting.
	clk = &offsetClock{}
	// writes counts the manager's API writes, by namespace.
	writes = newWriteCounter()
	mgr    *runningManager
)

func TestMain(m *testing.M) {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(evalsv1alpha1.AddToScheme(scheme))
	log.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapLevel())))
	var err error
	if testEnv, restCfg, err = testutil.StartEnv(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	restCfg.QPS = -1 // as the manager runs: no client-side rate limit, the API server's fairness applies
	if k8s, err = client.New(restCfg, client.Options{Scheme: scheme}); err != nil {
		fmt.Fprintf(os.Stderr, "creating the test client: %v\n", err)
		os.Exit(1)
	}
	if mgr, err = startManager(); err != nil {
		fmt.Fprintf(os.Stderr, "starting the manager: %v\n", err)
		os.Exit(1)
	}
	code := m.Run()
	mgr.stop()
	if err := testEnv.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "stopping envtest: %v\n", err)
	}
	os.Exit(code)
}

// zapLevel is the manager's log level in tests: errors only, unless EVALRUN_TEST_VERBOSE is set.
func zapLevel() zapcore.Level {
	if os.Getenv("EVALRUN_TEST_VERBOSE") != "" {
		return -2
	}
	return 2
}

// requireEnv fails a test that needs the API server when envtest is not configured.
func requireEnv(t *testing.T) {
	t.Helper()
	if testEnv == nil {
		t.Fatal("KUBEBUILDER_ASSETS is not set")
	}
}

// runningManager is a manager started by the tests, with the real reconciler.
type runningManager struct {
	cancel context.CancelFunc
	done   chan error
	cache  client.Reader
}

// testOptions are the manager's options in the suite: production defaults except a short image-pull timeout.
var testOptions = options.Options{ImagePullTimeout: 20 * time.Second, UnschedulableTimeout: 5 * time.Minute,
	// Only one-pod runs whose Job counts index 0 complete have their pod released (TestSucceededOnePodRunReleasesItsPod).
	ReleaseSucceededPods: true}

// startManager starts the manager as cmd/manager does (scoped cache, field indexes, the reconciler), with its
// client wrapped to count writes.
func startManager() (*runningManager, error) {
	m, err := ctrl.NewManager(restCfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  cache.Options{ByObject: controller.CacheByObject()},
		// A restarted manager registers the same controller name again in this process.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := controller.IndexFields(ctx, m.GetFieldIndexer()); err != nil {
		cancel()
		return nil, err
	}
	managermetrics.Register(m.GetClient(), m.Elected())
	counted := interceptor.NewClient(noWatch{m.GetClient()}, writes.funcs())
	r := controller.NewEvalRunReconciler(counted, m.GetAPIReader(), m.GetEventRecorder(controller.ControllerName), clk, testOptions)
	if err := r.SetupWithManager(m); err != nil {
		cancel()
		return nil, err
	}
	sr := controller.NewEvalScheduleReconciler(counted, m.GetAPIReader(), m.GetEventRecorder(controller.ScheduleControllerName), clk, testOptions)
	if err := sr.SetupWithManager(m); err != nil {
		cancel()
		return nil, err
	}
	rm := &runningManager{cancel: cancel, done: make(chan error, 1), cache: m.GetClient()}
	go func() { rm.done <- m.Start(ctx) }()
	if !m.GetCache().WaitForCacheSync(ctx) {
		cancel()
		return nil, errors.New("the manager's cache did not sync")
	}
	return rm, nil
}

func (m *runningManager) stop() {
	m.cancel()
	if err := <-m.done; err != nil {
		fmt.Fprintf(os.Stderr, "the manager stopped with: %v\n", err)
	}
}

// noWatch adapts the manager's client to the interceptor, which wraps a client.WithWatch; the reconciler never
// watches through its client.
type noWatch struct{ client.Client }

func (noWatch) Watch(context.Context, client.ObjectList, ...client.ListOption) (watch.Interface, error) {
	return nil, errors.New("watch through the reconciler's client is not supported")
}

// offsetClock is the real time plus an offset the tests can move forward.
type offsetClock struct{ offset atomic.Int64 }

func (c *offsetClock) Now() time.Time                  { return time.Now().Add(time.Duration(c.offset.Load())) }
func (c *offsetClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }
func (c *offsetClock) advance(d time.Duration)         { c.offset.Add(int64(d)) }

// writeCounter counts API writes by namespace and by "verb kind".
type writeCounter struct {
	mu     sync.Mutex
	counts map[string]map[string]int
}

func newWriteCounter() *writeCounter { return &writeCounter{counts: map[string]map[string]int{}} }

func (w *writeCounter) add(namespace, what string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.counts[namespace] == nil {
		w.counts[namespace] = map[string]int{}
	}
	w.counts[namespace][what]++
}

// in returns a copy of the counts of namespace.
func (w *writeCounter) in(namespace string) map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string]int{}
	for k, v := range w.counts[namespace] {
		out[k] = v
	}
	return out
}

func kindOf(obj runtime.Object) string {
	gvks, _, err := scheme.ObjectKinds(obj)
	if err != nil || len(gvks) == 0 {
		return fmt.Sprintf("%T", obj)
	}
	return gvks[0].Kind
}

func (w *writeCounter) funcs() interceptor.Funcs {
	return interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			w.add(obj.GetNamespace(), "create "+kindOf(obj))
			return c.Create(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			w.add(obj.GetNamespace(), "update "+kindOf(obj))
			return c.Update(ctx, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			w.add(obj.GetNamespace(), "patch "+kindOf(obj))
			return c.Patch(ctx, obj, patch, opts...)
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			w.add(obj.GetNamespace(), "delete "+kindOf(obj))
			return c.Delete(ctx, obj, opts...)
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			w.add(obj.GetNamespace(), "update "+kindOf(obj)+"/"+sub)
			return c.SubResource(sub).Update(ctx, obj, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			w.add(obj.GetNamespace(), "patch "+kindOf(obj)+"/"+sub)
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
		SubResourceApply: func(ctx context.Context, c client.Client, sub string, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
			ns := ""
			switch n := obj.(type) {
			case interface{ GetNamespace() string }:
				ns = n.GetNamespace()
			case interface{ GetNamespace() *string }:
				if p := n.GetNamespace(); p != nil {
					ns = *p
				}
			}
			w.add(ns, "apply EvalRun/"+sub)
			return c.SubResource(sub).Apply(ctx, obj, opts...)
		},
	}
}

// total sums counts.
func total(counts map[string]int) int {
	n := 0
	for _, v := range counts {
		n += v
	}
	return n
}

// eventually polls f until it returns nil, failing the test with f's last error after timeout.
func eventually(t testing.TB, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still not true after %s: %v", what, timeout, err)
		}
		time.Sleep(interval)
	}
}

// metricValue returns the sum of a metric's series in the controller-runtime registry that carry every label
// given as name, value pairs: gauges and counters by value, histograms by sample count.
func metricValue(name string, labels ...string) float64 {
	families, err := metrics.Registry.Gather()
	if err != nil {
		return -1
	}
	var sum float64
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	series:
		for _, m := range f.GetMetric() {
			for i := 0; i+1 < len(labels); i += 2 {
				if !hasLabel(m, labels[i], labels[i+1]) {
					continue series
				}
			}
			switch {
			case m.Gauge != nil:
				sum += m.Gauge.GetValue()
			case m.Counter != nil:
				sum += m.Counter.GetValue()
			case m.Histogram != nil:
				sum += float64(m.Histogram.GetSampleCount())
			}
		}
	}
	return sum
}

func hasLabel(m *dto.Metric, name, value string) bool {
	for _, l := range m.GetLabel() {
		if l.GetName() == name && l.GetValue() == value {
			return true
		}
	}
	return false
}

// reconciles is how many reconciles the controller has finished.
func reconciles() float64 {
	return metricValue("controller_runtime_reconcile_total", "controller", controller.ControllerName)
}

// settle waits until the controller has finished more than after reconciles and is idle: nothing queued, no
// worker busy.
func settle(t testing.TB, after float64) {
	t.Helper()
	eventually(t, "the controller is idle", func() error {
		if n := reconciles(); n <= after {
			return fmt.Errorf("%v reconciles, waiting for more than %v", n, after)
		}
		depth := metricValue("workqueue_depth", "name", controller.ControllerName)
		active := metricValue("controller_runtime_active_workers", "controller", controller.ControllerName)
		if depth != 0 || active != 0 {
			return fmt.Errorf("queue depth %v, active workers %v", depth, active)
		}
		return nil
	})
}

// poke makes the controller reconcile the run once more (an annotation change is an update event) and waits
// until it is idle again.
func poke(t testing.TB, run *evalsv1alpha1.EvalRun) {
	t.Helper()
	before := reconciles()
	patch := fmt.Sprintf(`{"metadata":{"annotations":{"test.evalrun.io/poke":%q}}}`, time.Now().Format(time.RFC3339Nano))
	if err := k8s.Patch(context.Background(), run.DeepCopy(), client.RawPatch("application/merge-patch+json", []byte(patch))); err != nil {
		t.Fatalf("poking EvalRun %s: %v", run.Name, err)
	}
	settle(t, before)
}

var nsSeq atomic.Int32

// newNamespace creates a namespace for one test.
func newNamespace(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("t%d-%s", nsSeq.Add(1), strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name())))
	if len(name) > 63 {
		name = strings.TrimRight(name[:63], "-")
	}
	if err := k8s.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	return name
}

// getRun reads the run.
func getRun(t testing.TB, run *evalsv1alpha1.EvalRun) *evalsv1alpha1.EvalRun {
	t.Helper()
	got := &evalsv1alpha1.EvalRun{}
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(run), got); err != nil {
		t.Fatalf("reading EvalRun %s: %v", run.Name, err)
	}
	return got
}

// waitReason waits until the run's Succeeded condition has status and reason, and returns the run.
func waitReason(t testing.TB, run *evalsv1alpha1.EvalRun, status metav1.ConditionStatus, reason string) *evalsv1alpha1.EvalRun {
	t.Helper()
	var got *evalsv1alpha1.EvalRun
	eventually(t, fmt.Sprintf("EvalRun %s Succeeded=%s/%s", run.Name, status, reason), func() error {
		got = getRun(t, run)
		c := meta.FindStatusCondition(got.Status.Conditions, evalsv1alpha1.ConditionSucceeded)
		if c == nil || c.Status != status || c.Reason != reason {
			return fmt.Errorf("Succeeded condition is %+v", c)
		}
		return nil
	})
	return got
}

// waitJob waits for the run's Job and returns it.
func waitJob(t testing.TB, run *evalsv1alpha1.EvalRun) *batchv1.Job {
	t.Helper()
	job := &batchv1.Job{}
	eventually(t, "the Job of "+run.Name+" exists", func() error {
		return k8s.Get(context.Background(), client.ObjectKey{Namespace: run.Namespace, Name: children.NamesFor(run.Name).Job}, job)
	})
	return job
}

// conditionSummary renders conditions as sorted "Type=Status/Reason" strings.
func conditionSummary(conds []metav1.Condition) []string {
	var out []string
	for _, c := range conds {
		out = append(out, fmt.Sprintf("%s=%s/%s", c.Type, c.Status, c.Reason))
	}
	sort.Strings(out)
	return out
}
