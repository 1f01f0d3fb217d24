package collector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	acv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
	"github.com/evalrun-operator/evalrun-operator/internal/statusapply"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ApplyStatus server-side applies the collector-owned part of an EvalRun's status (summary, cases, missingIds,
// parseErrors, unexpectedIds, results, collection and the ResultsTruncated condition) with field manager
// evalrun-collector, forcing ownership of those fields. Fields other managers own, such as the manager's
// conditions, are left alone; fields the collector applied before and no longer sends are removed. When uid is
// not empty the apply only succeeds on the EvalRun with that uid.
func ApplyStatus(ctx context.Context, c client.Client, namespace, name, uid string, section results.Section) error {
	ac := statusApply(namespace, name, uid, &section)
	if err := c.Status().Apply(ctx, ac, client.FieldOwner(statusapply.FieldManagerCollector), client.ForceOwnership); err != nil {
		return fmt.Errorf("apply the status of EvalRun %s/%s: %w", namespace, name, err)
	}
	return nil
}

// statusApply is the server-side apply body of ApplyStatus: the collector's fields (statusapply.Collector).
func statusApply(namespace, name, uid string, section *results.Section) *acv1alpha1.EvalRunApplyConfiguration {
	return statusapply.EvalRun(namespace, name, types.UID(uid), statusapply.Collector(section))
}

// WriteResultConfigMaps stores the chunks in the pre-created result ConfigMaps named in names, by name only
// (a merge patch: a missing ConfigMap is an error, never created). ConfigMaps that get no chunk are emptied, so
// a re-run with fewer results leaves nothing stale.
func WriteResultConfigMaps(ctx context.Context, c client.Client, namespace string, names []string, chunks []results.Chunk) error {
	return writeChunks(ctx, c, namespace, names, chunks, podwire.ResultsKey, "result")
}

// WriteRecordConfigMaps stores the kept records' chunks in the pre-created record ConfigMaps named in names, as
// WriteResultConfigMaps stores results (by name only; ConfigMaps without a chunk are emptied).
func WriteRecordConfigMaps(ctx context.Context, c client.Client, namespace string, names []string, chunks []results.Chunk) error {
	return writeChunks(ctx, c, namespace, names, chunks, podwire.RecordsKey, "record")
}

// writeChunks puts each chunk under key of the ConfigMap it is destined for, among names, and empties the others;
// kind names the ConfigMaps in errors.
func writeChunks(ctx context.Context, c client.Client, namespace string, names []string, chunks []results.Chunk, key, kind string) error {
	byName := make(map[string]results.Chunk, len(chunks))
	for _, ch := range chunks {
		byName[ch.Destination] = ch
	}
	for _, name := range names {
		patch := map[string]any{"binaryData": nil}
		if ch, ok := byName[name]; ok {
			patch = map[string]any{"binaryData": map[string]any{key: ch.Data}}
		}
		if err := patchConfigMap(ctx, c, namespace, name, kind, patch); err != nil {
			return err
		}
	}
	return nil
}

// WriteShardSection records a shard's collection (its status results section, JSON) under podwire.ShardSectionKey
// in the shard's pre-created ConfigMap, by name only (a merge patch: a missing ConfigMap is an error).
func WriteShardSection(ctx context.Context, c client.Client, namespace, name string, section results.Section) error {
	body, err := json.Marshal(section)
	if err != nil {
		return fmt.Errorf("encode the section of shard ConfigMap %s: %w", name, err)
	}
	return patchConfigMap(ctx, c, namespace, name, "shard", map[string]any{"data": map[string]string{podwire.ShardSectionKey: string(body)}})
}

// patchConfigMap merge-patches the named, pre-created ConfigMap (what says which of the run's ConfigMaps it is).
func patchConfigMap(ctx context.Context, c client.Client, namespace, name, what string, patch map[string]any) error {
	data, err := json.Marshal(patch)
	if err != nil {
		return fmt.Errorf("encode the patch of ConfigMap %s: %w", name, err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	if err := c.Patch(ctx, cm, client.RawPatch(types.MergePatchType, data), client.FieldOwner(statusapply.FieldManagerCollector)); err != nil {
		return fmt.Errorf("write %s ConfigMap %s/%s: %w", what, namespace, name, err)
	}
	return nil
}

// Backoff bounds the retries of API writes.
type Backoff struct {
	// Initial is the first wait (default 200ms); each wait doubles up to Max (default 10s), with up to 50% jitter
	// so that the collectors of a nightly batch do not all retry together after an API outage.
	Initial, Max time.Duration
}

// retry calls op until it succeeds, returns a permanent error, or ctx ends. It returns the last error. The waits
// come from apimachinery's wait.Backoff (doubling, jittered), held under Max.
func retry(ctx context.Context, b Backoff, op func(context.Context) error) error {
	if b.Initial <= 0 {
		b.Initial = 200 * time.Millisecond
	}
	if b.Max <= 0 {
		b.Max = 10 * time.Second
	}
	// No Cap: wait.Backoff stops stepping once it reaches its cap; the bound is applied to the base wait instead.
	steps := wait.Backoff{Duration: b.Initial, Factor: 2, Jitter: 0.5, Steps: math.MaxInt32}
	for attempt := 1; ; attempt++ {
		err := op(ctx)
		if err == nil {
			return nil
		}
		if permanent(err) {
			return err
		}
		if steps.Duration > b.Max {
			steps.Duration = b.Max // keeps the jitter, and the doubling from overflowing
		}
		t := time.NewTimer(steps.Step())
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("gave up after %d attempts: %w", attempt, err)
		case <-t.C:
		}
	}
}

// permanent reports errors that no retry can fix: the request itself is wrong or the object is gone.
func permanent(err error) bool {
	return apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) || apierrors.IsNotFound(err) ||
		apierrors.IsGone(err) || apierrors.IsMethodNotSupported(err) || apierrors.IsRequestEntityTooLargeError(err) ||
		errors.Is(err, context.Canceled)
}
