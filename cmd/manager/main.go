// Command manager is the evalrun-operator: it reconciles EvalRuns into Jobs whose pods run a batch runner beside
// the collector, and reports how each run went.
package main

import (
	"crypto/tls"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/options"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/controller"
	"github.com/evalrun-operator/evalrun-operator/internal/memlimit"

	// The AgentV 4.42 suite reader registers itself with evalfile: this binary reads 4.42 suites (test/architecture).
	_ "github.com/evalrun-operator/evalrun-operator/internal/evalfile/suite42"
)

// leaderElectionID names the Lease the manager replicas compete for.
const leaderElectionID = "evalrun-operator.evals.evalrun.io"

func main() {
	var (
		opts          options.Options
		metricsAddr   string
		secureMetrics bool
		probeAddr     string
		election      leaderElection
		enableHTTP2   bool
		// watchNamespaces limits the manager to these namespaces (comma-separated; empty: all).
		watchNamespaces string
		api             apiClient
	)
	flag.StringVar(&opts.CollectorImage, "collector-image", options.DefaultCollectorImage,
		"Image of the install and collector containers (holds the collector binary at /collector and the launcher at /launcher).")
	flag.StringVar(&opts.JudgeImage, "judge-image", options.DefaultJudgeImage,
		"Image the code_judge scripts of a run run in when its spec.judging.image is unset (never the runner's image): "+
			"the project's judge image holds sh, coreutils, python3, node, bun and a uv run shim.")
	flag.Int64Var(&opts.StatusBudgetBytes, "status-budget-bytes", evalsv1alpha1.DefaultStatusBudgetBytes,
		"Byte budget of the results section the collector writes into an EvalRun's status (at most 614400).")
	flag.DurationVar(&opts.UnschedulableTimeout, "unschedulable-timeout", options.DefaultUnschedulableTimeout,
		"How long a run's pod may stay unschedulable before the run fails with Unschedulable.")
	flag.DurationVar(&opts.ImagePullTimeout, "image-pull-timeout", options.DefaultImagePullTimeout,
		"How long an image pull may keep failing before the run fails with ImagePullFailed.")
	flag.DurationVar(&opts.ContainerCreateTimeout, "container-create-timeout", options.DefaultContainerCreateTimeout,
		"How long the kubelet may keep failing to create a run's container or pod sandbox before the pod is replaced "+
			"(InfrastructureFailed after 3 replacements); for CreateContainerConfigError, before the run fails with InvalidContainerConfig.")
	flag.DurationVar(&opts.PodRejectedTimeout, "pod-rejected-timeout", options.DefaultPodRejectedTimeout,
		"How long the API server may keep rejecting a run's pod (Pod Security, ResourceQuota, webhooks) before the run fails with PodRejected, "+
			"and refusing to create the run's own objects with Forbidden (the manager's RBAC, admission webhooks or policies) before it fails with CreateForbidden.")
	flag.StringVar(&opts.LLMBaseURL, "llm-base-url", "",
		"Cluster-wide default of spec.judging.llm.baseURL (an OpenAI-compatible API's base URL) for runs that set spec.judging.llm.")
	flag.StringVar(&opts.LLMModel, "llm-model", "", "Cluster-wide default of spec.judging.llm.model.")
	flag.StringVar(&watchNamespaces, "watch-namespaces", "",
		"Comma-separated namespaces whose EvalRuns the manager reconciles (default: all); with it, bind the manager's ClusterRole per namespace with RoleBindings.")
	flag.Int64Var(&opts.DefaultActiveDeadlineSeconds, "default-active-deadline-seconds", options.DefaultActiveDeadlineSeconds,
		"The Job's activeDeadlineSeconds for runs whose spec.activeDeadlineSeconds is unset (1 to 604800; there is no "+
			"\"no deadline\": every run ends). Kubernetes counts it from the Job's start; the run then fails with DeadlineExceeded.")
	flag.IntVar(&opts.MaxConcurrentReconciles, "max-concurrent-reconciles", options.DefaultMaxConcurrentReconciles,
		"How many EvalRuns are reconciled at once on the controller's workers (the reconciles of runs that name a bucket run off them: --bucket-concurrency).")
	flag.IntVar(&opts.ScheduleConcurrentReconciles, "schedule-concurrent-reconciles", options.DefaultScheduleConcurrentReconciles,
		"How many EvalSchedules are reconciled at once.")
	flag.IntVar(&opts.BucketConcurrency, "bucket-concurrency", options.DefaultBucketConcurrency,
		"How many reconciles of runs that name one bucket endpoint run at once, off the workers: "+
			"an endpoint that hangs holds at most this many, and delays only the runs that name it.")
	flag.DurationVar(&opts.BucketCallTimeout, "bucket-call-timeout", options.DefaultBucketCallTimeout,
		"Bound of each bucket step of a reconcile (pinning an eval file, merging shards, planning a resume, a comparison, a clean-up); "+
			"a run that cannot be prepared within its deadline (spec.activeDeadlineSeconds or --default-active-deadline-seconds, "+
			"from its creation) fails with BucketUnavailable.")
	flag.StringVar(&metricsAddr, "metrics-bind-address", "0",
		"Address of the metrics endpoint, for example :8443 (HTTPS) or :8080 (HTTP); 0 disables it.")
	flag.BoolVar(&secureMetrics, "metrics-secure", true,
		"Serve metrics over HTTPS with Kubernetes authentication and authorization.")
	flag.StringVar(&probeAddr, "health-probe-bind-address", ":8081", "Address of the health and readiness probes.")
	flag.BoolVar(&election.enabled, "leader-elect", false, "Elect a leader so that only one replica reconciles.")
	flag.DurationVar(&election.lease, "leader-elect-lease-duration", defaultLeaseDuration,
		"How long the other replicas wait after the leader's last renewal before one of them takes over.")
	flag.DurationVar(&election.renew, "leader-elect-renew-deadline", defaultRenewDeadline,
		"How long the leader keeps retrying to renew its lease before it gives up leading and the manager exits "+
			"(an API server slower than this restarts the manager).")
	flag.DurationVar(&election.retry, "leader-elect-retry-period", defaultRetryPeriod,
		"How long the replicas wait between attempts to take or renew the lease.")
	flag.BoolVar(&enableHTTP2, "enable-http2", false, "Serve metrics over HTTP/2 (off: HTTP/2 stream-reset attacks).")
	flag.Float64Var(&api.qps, "kube-api-qps", defaultAPIQPS,
		"Requests per second the manager's API client may send on average (client-go's rate limiter; the Kubernetes "+
			"default of 20 makes 1,000 runs applied at once wait minutes for their children).")
	flag.IntVar(&api.burst, "kube-api-burst", defaultAPIBurst, "Requests the manager's API client may send in a burst above --kube-api-qps.")
	zapOpts := zap.Options{}
	var judgeCPU, judgeMemory, judgeEphemeral string
	var releaseSucceededPods bool
	flag.BoolVar(&releaseSucceededPods, "release-succeeded-pods", false,
		"delete the pod of a one-pod run once the run is decided succeeded and its Job counted the pod (its logs go with it; "+
			"the runner's stderr tail stays in status.collection.launcher): a node's kubelet works per pod it holds, finished ones included")
	networkPolicy := true
	flag.BoolVar(&networkPolicy, "run-network-policy", true,
		"Give every run's pods a NetworkPolicy: no ingress, egress only to DNS, the API server, the run's buckets and LLM endpoint, and spec.target.egress.")
	flag.StringVar(&judgeCPU, "judge-cpu-limit", options.DefaultJudgeCPULimit,
		"CPU limit of every judge container unless spec.judging.resources sets one (answer code a code judge runs cannot take the node's CPU).")
	flag.StringVar(&judgeMemory, "judge-memory-limit", options.DefaultJudgeMemoryLimit,
		"Memory limit of every judge container unless spec.judging.resources sets one.")
	flag.StringVar(&judgeEphemeral, "judge-ephemeral-storage-limit", options.DefaultJudgeEphemeralStorageLimit,
		"Ephemeral-storage limit of every judge container unless spec.judging.resources sets one "+
			"(\"\": none; any container's limit makes the kubelet bound the whole pod by the sum).")
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
	// The cache holds every run's objects: near the container's limit the garbage collector works harder before
	// the kernel's OOM killer would end the manager (docs/operations.md#sizing).
	if soft := memlimit.Apply(memlimit.CgroupFiles); soft > 0 {
		ctrl.Log.Info("Go soft memory limit set from the container's", "bytes", soft)
	}
	if api.qps <= 0 || api.burst <= 0 {
		ctrl.Log.Error(nil, "Invalid flags: --kube-api-qps and --kube-api-burst must be above 0")
		os.Exit(2)
	}
	if opts.DefaultActiveDeadlineSeconds == 0 {
		// Options' zero value means the default; on the command line 0 would read as "none", which does not exist.
		ctrl.Log.Error(nil, "Invalid flags: --default-active-deadline-seconds must be at least 1 (every run ends)")
		os.Exit(2)
	}
	limits, err := options.ParseJudgeLimits(judgeCPU, judgeMemory, judgeEphemeral)
	if err != nil {
		ctrl.Log.Error(err, "Invalid flags")
		os.Exit(2)
	}
	opts.JudgeLimits = limits
	opts.NoNetworkPolicy = !networkPolicy
	opts.ReleaseSucceededPods = releaseSucceededPods
	if err := opts.Validate(); err != nil {
		ctrl.Log.Error(err, "Invalid flags")
		os.Exit(2)
	}
	if err := election.validate(); err != nil {
		ctrl.Log.Error(err, "Invalid flags")
		os.Exit(2)
	}

	if err := run(opts, api, metricsAddr, secureMetrics, enableHTTP2, probeAddr, election, controller.ParseNamespaces(watchNamespaces)); err != nil {
		ctrl.Log.Error(err, "Manager stopped")
		os.Exit(1)
	}
}

// apiClient is the rate limit of the manager's API client (--kube-api-qps, --kube-api-burst).
type apiClient struct {
	qps   float64
	burst int
}

// The API client's defaults: Kueue's manager's (50, 100), not client-go's 20 and 30, which, with several API calls
// per new run, throttle a thousand runs applied at once for minutes.
const (
	defaultAPIQPS   = 50
	defaultAPIBurst = 100
)

// leaderElection is how the replicas elect their leader (--leader-elect and its durations).
type leaderElection struct {
	enabled             bool
	lease, renew, retry time.Duration
}

// The leader election's defaults, client-go's and controller-runtime's: a 15 s lease, renewed within 10 s, tried
// every 2 s. On an API server so loaded that a renewal takes longer than the renew deadline the leader gives up and
// the manager restarts (no run is lost: measured on the saturated local node, docs/operations.md); widen them there.
const (
	defaultLeaseDuration = 15 * time.Second
	defaultRenewDeadline = 10 * time.Second
	defaultRetryPeriod   = 2 * time.Second
)

// validate checks the durations as client-go's leader elector would at start (lease above the renew deadline,
// the renew deadline above 1.2 retry periods), so a wrong flag is an error at once, not a crash later.
func (e leaderElection) validate() error {
	switch {
	case e.lease <= 0 || e.renew <= 0 || e.retry <= 0:
		return fmt.Errorf("--leader-elect-lease-duration (%s), --leader-elect-renew-deadline (%s) and --leader-elect-retry-period (%s) must be above 0",
			e.lease, e.renew, e.retry)
	case e.lease <= e.renew:
		return fmt.Errorf("--leader-elect-lease-duration (%s) must be longer than --leader-elect-renew-deadline (%s)", e.lease, e.renew)
	case float64(e.renew) <= 1.2*float64(e.retry):
		return fmt.Errorf("--leader-elect-renew-deadline (%s) must be longer than 1.2 times --leader-elect-retry-period (%s)", e.renew, e.retry)
	}
	return nil
}

func run(opts options.Options, api apiClient, metricsAddr string, secureMetrics, enableHTTP2 bool, probeAddr string, election leaderElection,
	namespaces []string) error {
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(evalsv1alpha1.AddToScheme(scheme))

	metricsOpts := metricsserver.Options{BindAddress: metricsAddr, SecureServing: secureMetrics}
	if !enableHTTP2 {
		metricsOpts.TLSOpts = []func(*tls.Config){func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} }}
	}
	if secureMetrics {
		metricsOpts.FilterProvider = filters.WithAuthenticationAndAuthorization
	}
	cfg := ctrl.GetConfigOrDie()
	cfg.QPS, cfg.Burst = float32(api.qps), api.burst
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                        scheme,
		Metrics:                       metricsOpts,
		HealthProbeBindAddress:        probeAddr,
		LeaderElection:                election.enabled,
		LeaderElectionID:              leaderElectionID,
		LeaseDuration:                 &election.lease,
		RenewDeadline:                 &election.renew,
		RetryPeriod:                   &election.retry,
		LeaderElectionReleaseOnCancel: true,
		// With --watch-namespaces the manager lists and watches only those namespaces, so its ClusterRole can be
		// granted per namespace with RoleBindings instead of a ClusterRoleBinding (config/rbac/README.md).
		Cache: controller.CacheOptions(namespaces),
	})
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	ctx := ctrl.SetupSignalHandler()
	if !opts.NoNetworkPolicy {
		api, err := controller.DiscoverAPIServer(ctx, mgr.GetAPIReader(), cfg.Host)
		if err != nil {
			ctrl.Log.Error(err, "Runs' NetworkPolicies reach the API server only at the addresses found", "peers", len(api.Peers))
		}
		opts.APIServer = api
	}
	if err := controller.SetupManager(ctx, mgr, clock.RealClock{}, opts); err != nil {
		return err
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return fmt.Errorf("adding the health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return fmt.Errorf("adding the readiness check: %w", err)
	}
	ctrl.Log.Info("Starting the manager", "collectorImage", opts.CollectorImage, "judgeImage", opts.JudgeImage, "statusBudgetBytes", opts.StatusBudgetBytes,
		"unschedulableTimeout", opts.UnschedulableTimeout.String(), "imagePullTimeout", opts.ImagePullTimeout.String(),
		"containerCreateTimeout", opts.ContainerCreateTimeout.String(), "podRejectedTimeout", opts.PodRejectedTimeout.String(),
		"watchNamespaces", namespaces)
	return mgr.Start(ctx)
}
