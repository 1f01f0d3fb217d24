package kueue

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/assess"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

// A waiting run's place in its queue (status.queue.position), from Kueue's visibility API: the pending workloads
// of its LocalQueue (GET /apis/visibility.kueue.x-k8s.io/v1beta2/namespaces/<ns>/localqueues/<name>/pendingworkloads).
// Kueue serves that API through the API server's aggregation layer; where it is not served (no aggregation layer,
// Kueue's visibility server off, the APIService not installed) the position is absent, which is not an error.

// +kubebuilder:rbac:groups=visibility.kueue.x-k8s.io,resources=localqueues/pendingworkloads,verbs=get

// visibilityLocalQueue is the visibility API's LocalQueue resource the manager reads.
var visibilityLocalQueue = schema.GroupVersionKind{Group: "visibility.kueue.x-k8s.io", Version: "v1beta2", Kind: "LocalQueue"}

// Bounds of a position lookup: one GET within visibilityTimeout, of at most maxPendingWorkloads workloads (a run
// further back than that has no position shown).
const (
	visibilityTimeout   = 5 * time.Second
	maxPendingWorkloads = 1000
)

// PendingWorkloads is the part of Kueue's PendingWorkloadsSummary the manager reads.
type PendingWorkloads struct {
	Items []PendingWorkload `json:"items"`
}

// PendingWorkload is one pending workload of a LocalQueue, as Kueue's visibility API lists it.
type PendingWorkload struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	// PositionInLocalQueue counts from 0.
	PositionInLocalQueue int32 `json:"positionInLocalQueue"`
}

// Positions returns each pending workload's position in its LocalQueue, counted from 1 (Kueue counts from 0); a
// name listed twice keeps its first, and a negative position is not one.
func Positions(p PendingWorkloads) map[string]int32 {
	out := make(map[string]int32, len(p.Items))
	for _, w := range p.Items {
		if _, seen := out[w.Metadata.Name]; !seen && w.PositionInLocalQueue >= 0 {
			out[w.Metadata.Name] = w.PositionInLocalQueue + 1
		}
	}
	return out
}

// Visibility reads pending workloads from Kueue's visibility API once it is found served; it looks for it at
// most once per kueueRecheck. One read of a LocalQueue's pending workloads serves every run waiting in it for
// assess.QueuePositionRecheck: 1,000 runs waiting in one queue make one GET per interval, not 1,000.
type Visibility struct {
	mapper meta.RESTMapper
	// get GETs an absolute API path and returns the body.
	get func(ctx context.Context, path string) ([]byte, error)

	mu        sync.Mutex
	served    bool
	lastCheck time.Time
	// queues holds each LocalQueue's (namespace/name) last read.
	queues map[string]*pendingRead
}

// pendingRead is one LocalQueue's last read of its pending workloads: positions by workload name, and when it
// was read. Its mutex is held while it is read again, so the runs of one queue wait for one GET.
type pendingRead struct {
	mu        sync.Mutex
	at        time.Time
	positions map[string]int32
}

// NewVisibility reads the visibility API with cfg (the manager's identity).
func NewVisibility(mapper meta.RESTMapper, cfg *rest.Config) (*Visibility, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("a client for Kueue's visibility API: %w", err)
	}
	c := dc.RESTClient()
	return &Visibility{mapper: mapper, get: func(ctx context.Context, path string) ([]byte, error) {
		return c.Get().AbsPath(path).Param("limit", strconv.Itoa(maxPendingWorkloads)).DoRaw(ctx)
	}}, nil
}

// isServed reports whether the visibility API is served, asking the API server's discovery at most once per
// kueueRecheck while it is not.
func (v *Visibility) IsServed(now time.Time) bool {
	if v == nil {
		return false
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.served || (!v.lastCheck.IsZero() && now.Sub(v.lastCheck) < kueueRecheck) {
		return v.served
	}
	v.lastCheck = now
	if _, err := v.mapper.RESTMapping(visibilityLocalQueue.GroupKind(), visibilityLocalQueue.Version); err != nil {
		return false
	}
	v.served = true
	return true
}

// position returns workload's position in the LocalQueue queue of namespace (nil where the API is not served or
// does not list it). An API that stops answering is looked for again later, not an error of the run.
func (v *Visibility) Position(ctx context.Context, namespace, queue, workload string, now time.Time) *int32 {
	if workload == "" || !v.IsServed(now) {
		return nil
	}
	read := v.queueRead(namespace + "/" + queue)
	read.mu.Lock()
	defer read.mu.Unlock()
	if read.positions == nil || now.Sub(read.at) >= assess.QueuePositionRecheck || now.Before(read.at) {
		positions, ok := v.ReadPending(ctx, namespace, queue, now)
		if !ok {
			read.positions = nil
			return nil
		}
		read.positions, read.at = positions, now
	}
	if n, ok := read.positions[workload]; ok {
		return &n
	}
	return nil
}

// queueRead returns the LocalQueue's read (key namespace/name), made on first use.
func (v *Visibility) queueRead(key string) *pendingRead {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.queues == nil {
		v.queues = map[string]*pendingRead{}
	}
	read, ok := v.queues[key]
	if !ok {
		read = &pendingRead{}
		v.queues[key] = read
	}
	return read
}

// readPending GETs the LocalQueue's pending workloads within visibilityTimeout and returns their positions,
// counted from 1. An API that fails is looked for again only after kueueRecheck; a body that is not the
// summary gives no positions.
func (v *Visibility) ReadPending(ctx context.Context, namespace, queue string, now time.Time) (map[string]int32, bool) {
	ctx, cancel := context.WithTimeout(ctx, visibilityTimeout)
	defer cancel()
	path := fmt.Sprintf("/apis/%s/%s/namespaces/%s/localqueues/%s/pendingworkloads",
		visibilityLocalQueue.Group, visibilityLocalQueue.Version, namespace, queue)
	body, err := v.get(ctx, path)
	if err != nil {
		v.mu.Lock()
		v.served, v.lastCheck = false, now
		v.mu.Unlock()
		return nil, false
	}
	var p PendingWorkloads
	if err := json.Unmarshal(body, &p); err != nil {
		return nil, false
	}
	return Positions(p), true
}
