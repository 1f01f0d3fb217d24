package children

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
)

// Values of the evals.evalrun.io/component label.
const (
	ComponentEval      = "eval"
	ComponentCollector = "collector"
	ComponentResults   = "results"
	ComponentRecords   = "records"
	ComponentShard     = "shard"
	ComponentJob       = "job"
)

// EvalRunGVK is the GroupVersionKind written into the children's owner references.
var EvalRunGVK = evalsv1alpha1.GroupVersion.WithKind("EvalRun")

// Meta returns the metadata every child carries: name, namespace, the run and component labels and a
// controller owner reference to the run.
func Meta(run *evalsv1alpha1.EvalRun, name, component string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:      name,
		Namespace: run.Namespace,
		Labels: map[string]string{
			podwire.LabelRun:       NamesFor(run.Name).RunLabel,
			podwire.LabelComponent: component,
		},
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(run, EvalRunGVK)},
	}
}

// EvalSHA256 returns the hex sha256 of an eval file, as reported in status.evalFileSHA256.
func EvalSHA256(evalData []byte) string {
	sum := sha256.Sum256(evalData)
	return hex.EncodeToString(sum[:])
}

// BuildEvalConfigMap returns the immutable ConfigMap pinning the eval file (key eval.yaml) and the run
// configuration (key run.json).
//
// An eval file that is a bucket object is not copied: the pods download it. Its case ids, which may be too many
// for run.json, go gzip'd under podwire.IDsKey.
func BuildEvalConfigMap(run *evalsv1alpha1.EvalRun, evalData []byte, cfg podwire.RunConfig) (*corev1.ConfigMap, error) {
	cm := &corev1.ConfigMap{
		ObjectMeta: Meta(run, NamesFor(run.Name).EvalConfigMap, ComponentEval),
		Immutable:  ptr.To(true),
		Data:       map[string]string{},
	}
	if cfg.IDsFile != "" {
		ids, err := podwire.EncodeIDs(cfg.CaseIDs, cfg.AllCaseIDs)
		if err != nil {
			return nil, fmt.Errorf("encoding the case ids: %w", err)
		}
		cm.BinaryData = map[string][]byte{podwire.IDsKey: ids}
		cfg.CaseIDs, cfg.AllCaseIDs = nil, nil
	}
	if !cfg.EvalFileInBucket() {
		cm.Data[podwire.EvalFileKey] = string(evalData)
	}
	runJSON, err := json.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("encoding run.json: %w", err)
	}
	cm.Data[podwire.RunConfigKey] = string(runJSON)
	return cm, nil
}

// RunConfigFrom reads run.json back from a pinned eval ConfigMap.
func RunConfigFrom(cm *corev1.ConfigMap) (podwire.RunConfig, error) {
	var cfg podwire.RunConfig
	raw, ok := cm.Data[podwire.RunConfigKey]
	if !ok {
		return cfg, fmt.Errorf("ConfigMap %s has no key %s", cm.Name, podwire.RunConfigKey)
	}
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		return cfg, fmt.Errorf("decoding %s of ConfigMap %s: %w", podwire.RunConfigKey, cm.Name, err)
	}
	if cfg.IDsFile != "" {
		if err := cfg.LoadIDs(cm.BinaryData[podwire.IDsKey]); err != nil {
			return cfg, fmt.Errorf("ConfigMap %s: %w", cm.Name, err)
		}
	}
	return cfg, nil
}

// BuildResultConfigMaps returns the empty result ConfigMaps named in cfg.ResultConfigMaps. The collector may
// only update them by name (see BuildCollectorRole), so they must exist before the pod starts.
func BuildResultConfigMaps(run *evalsv1alpha1.EvalRun, cfg podwire.RunConfig) []*corev1.ConfigMap {
	out := make([]*corev1.ConfigMap, 0, len(cfg.ResultConfigMaps))
	for _, name := range cfg.ResultConfigMaps {
		out = append(out, &corev1.ConfigMap{ObjectMeta: Meta(run, name, ComponentResults)})
	}
	return out
}

// BuildRecordConfigMaps returns the empty record ConfigMaps named in cfg.Records (a run that keeps its records in
// ConfigMaps). The collector may only update them by name, as the result ConfigMaps.
func BuildRecordConfigMaps(run *evalsv1alpha1.EvalRun, cfg podwire.RunConfig) []*corev1.ConfigMap {
	if cfg.Records == nil {
		return nil
	}
	out := make([]*corev1.ConfigMap, 0, len(cfg.Records.ConfigMaps))
	for _, name := range cfg.Records.ConfigMaps {
		out = append(out, &corev1.ConfigMap{ObjectMeta: Meta(run, name, ComponentRecords)})
	}
	return out
}

// BuildShardConfigMaps returns the empty shard ConfigMaps named in cfg.ShardConfigMaps (a sharded or resumed
// run), each labelled with its shard index. The collectors may only update them by name.
func BuildShardConfigMaps(run *evalsv1alpha1.EvalRun, cfg podwire.RunConfig) []*corev1.ConfigMap {
	out := make([]*corev1.ConfigMap, 0, len(cfg.ShardConfigMaps))
	for i, name := range cfg.ShardConfigMaps {
		meta := Meta(run, name, ComponentShard)
		meta.Labels[podwire.LabelShard] = strconv.Itoa(i)
		out = append(out, &corev1.ConfigMap{ObjectMeta: meta})
	}
	return out
}

// BuildCollectorServiceAccount returns the ServiceAccount the run's pod runs as. Only the collector container
// mounts a token for it.
func BuildCollectorServiceAccount(run *evalsv1alpha1.EvalRun) *corev1.ServiceAccount {
	return &corev1.ServiceAccount{
		ObjectMeta:                   Meta(run, NamesFor(run.Name).ServiceAccount, ComponentCollector),
		AutomountServiceAccountToken: ptr.To(false),
	}
}

// BuildCollectorRole returns the collector's Role. It grants, by resourceNames only:
//   - get on this EvalRun, and get and patch on its status (the collector's server-side apply), unless the run is
//     sharded or resumed: its collectors then record their collections in shard ConfigMaps and never write the
//     EvalRun;
//   - get, update and patch on this run's pre-created result, record (and shard) ConfigMaps;
//   - for a re-judge (spec.rejudge) whose source kept its records in ConfigMaps, get on those record ConfigMaps.
//
// It grants no create: Kubernetes cannot restrict create by name, so a create grant would let the token make any
// ConfigMap in the namespace. The manager pre-creates the bounded set of result ConfigMaps instead.
func BuildCollectorRole(run *evalsv1alpha1.EvalRun, cfg podwire.RunConfig) *rbacv1.Role {
	group := evalsv1alpha1.GroupVersion.Group
	var rules []rbacv1.PolicyRule
	if !cfg.HasShardConfigMaps() {
		rules = append(rules,
			rbacv1.PolicyRule{APIGroups: []string{group}, Resources: []string{"evalruns"}, ResourceNames: []string{run.Name}, Verbs: []string{"get"}},
			rbacv1.PolicyRule{APIGroups: []string{group}, Resources: []string{"evalruns/status"}, ResourceNames: []string{run.Name}, Verbs: []string{"get", "patch"}},
		)
	}
	writable := append(slices.Clone(cfg.ResultConfigMaps), cfg.ShardConfigMaps...)
	if cfg.Records != nil {
		writable = append(writable, cfg.Records.ConfigMaps...)
	}
	rules = append(rules, rbacv1.PolicyRule{
		APIGroups: []string{""}, Resources: []string{"configmaps"},
		ResourceNames: writable, Verbs: []string{"get", "update", "patch"},
	})
	if rj := cfg.Rejudge; rj != nil && len(rj.ConfigMaps) > 0 {
		// A re-judge reads the source run's record ConfigMaps, those only, and never writes them.
		rules = append(rules, rbacv1.PolicyRule{
			APIGroups: []string{""}, Resources: []string{"configmaps"},
			ResourceNames: slices.Clone(rj.ConfigMaps), Verbs: []string{"get"},
		})
	}
	return &rbacv1.Role{ObjectMeta: Meta(run, NamesFor(run.Name).Role, ComponentCollector), Rules: rules}
}

// BuildCollectorRoleBinding binds the collector's Role to its ServiceAccount.
func BuildCollectorRoleBinding(run *evalsv1alpha1.EvalRun) *rbacv1.RoleBinding {
	names := NamesFor(run.Name)
	return &rbacv1.RoleBinding{
		ObjectMeta: Meta(run, names.RoleBinding, ComponentCollector),
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: names.Role},
		Subjects: []rbacv1.Subject{
			{Kind: rbacv1.ServiceAccountKind, Name: names.ServiceAccount, Namespace: run.Namespace},
		},
	}
}
