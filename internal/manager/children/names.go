// Package children builds a run's children as pure functions of the EvalRun, its run configuration and the
// manager's options: their deterministic names (NamesFor), the run configuration written to run.json
// (BuildRunConfig), the Indexed Job and its pod (BuildJob: containers, volumes and their size limits, security), the
// ConfigMaps, the collector's ServiceAccount, Role and RoleBinding, and the run's NetworkPolicy. No I/O: the
// reconciler creates what these return. (pure)
package children

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"

	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
)

// Name length limits of the child kinds.
const (
	// maxObjectName bounds ConfigMap, ServiceAccount, Role and RoleBinding names (DNS subdomain).
	maxObjectName = 253
	// maxJobName bounds Job names: the Job controller copies the name into the pods' job-name label value.
	maxJobName = 63
	// maxLabelValue bounds label values.
	maxLabelValue = 63
	// hashLen is the number of hex digits of the run name's sha256 kept in a cut name.
	hashLen = 8
	// childMarker marks every child's name as the operator's.
	childMarker = "-evalrun"
)

// ChildNames are the deterministic names of one EvalRun's children. Every name carries the "-evalrun" marker, so
// that it is unmistakably the operator's and a user's own objects (a ConfigMap "<run>-eval" holding the eval file,
// a Job named like the run) do not collide with it; a clash that still happens ends the run with ChildConflict.
type ChildNames struct {
	// EvalConfigMap holds the pinned eval file and run.json: <run>-evalrun-eval.
	EvalConfigMap string
	// ServiceAccount, Role and RoleBinding give the collector its narrow API access: <run>-evalrun-collector.
	ServiceAccount string
	Role           string
	RoleBinding    string
	// Job runs the evaluation: <run>-evalrun.
	Job string
	// NetworkPolicy is the run pods' NetworkPolicy: <run>-evalrun.
	NetworkPolicy string
	// RunLabel is the value of the evals.evalrun.io/run label on every child.
	RunLabel string
	run      string
}

// NamesFor returns the children's names of the EvalRun called run. Names that would exceed their kind's limit are
// cut and suffixed with a hash of the whole run name, so they stay unique and stable.
func NamesFor(run string) ChildNames {
	collector := childName(run, childMarker+"-collector", maxObjectName)
	return ChildNames{
		EvalConfigMap:  childName(run, childMarker+"-eval", maxObjectName),
		ServiceAccount: collector,
		Role:           collector,
		RoleBinding:    collector,
		Job:            childName(run, childMarker, maxJobName),
		NetworkPolicy:  childName(run, childMarker, maxObjectName),
		RunLabel:       childName(run, "", maxLabelValue),
		run:            run,
	}
}

// ResultConfigMap returns the name of the i-th (0-based) result ConfigMap: <run>-evalrun-results-<i>.
func (n ChildNames) ResultConfigMap(i int) string {
	return childName(n.run, childMarker+"-results-"+strconv.Itoa(i), maxObjectName)
}

// RecordConfigMap returns the name of the i-th (0-based) record ConfigMap, where the collectors keep the cases'
// records as the runner wrote them (docs/rejudge.md): <run>-evalrun-records-<i>.
func (n ChildNames) RecordConfigMap(i int) string {
	return childName(n.run, childMarker+"-records-"+strconv.Itoa(i), maxObjectName)
}

// RecordConfigMaps returns the names of count record ConfigMaps, in order.
func (n ChildNames) RecordConfigMaps(count int) []string {
	names := make([]string, count)
	for i := range names {
		names[i] = n.RecordConfigMap(i)
	}
	return names
}

// ShardConfigMap returns the name of shard i's ConfigMap, where its collector records its collection:
// <run>-evalrun-shard-<i>.
func (n ChildNames) ShardConfigMap(i int) string {
	return childName(n.run, childMarker+"-shard-"+strconv.Itoa(i), maxObjectName)
}

// CarriedConfigMap returns the name of the i-th ConfigMap of results a resumed run carries:
// <run>-evalrun-carried-<i>.
func (n ChildNames) CarriedConfigMap(i int) string {
	return childName(n.run, childMarker+"-carried-"+strconv.Itoa(i), maxObjectName)
}

// BundleConfigMap returns the name of the pinned copy of a run's eval bundle from a ConfigMap:
// <run>-evalrun-bundle.
func (n ChildNames) BundleConfigMap() string {
	return childName(n.run, childMarker+"-bundle", maxObjectName)
}

// ResultConfigMaps returns the names of count result ConfigMaps, in order.
func (n ChildNames) ResultConfigMaps(count int) []string {
	names := make([]string, count)
	for i := range names {
		names[i] = n.ResultConfigMap(i)
	}
	return names
}

// ResultConfigMapCount is how many result ConfigMaps a run of cases cases gets:
// ceil(cases / podwire.CasesPerResultConfigMap), at least 1 and at most podwire.MaxResultConfigMaps.
func ResultConfigMapCount(cases int) int {
	n := (cases + podwire.CasesPerResultConfigMap - 1) / podwire.CasesPerResultConfigMap
	return min(max(n, 1), podwire.MaxResultConfigMaps)
}

// childName returns run+suffix when it fits in limit, otherwise a prefix of run, "-", 8 hex digits of the run
// name's sha256, and suffix. The result starts and ends with an alphanumeric character when run and suffix do.
func childName(run, suffix string, limit int) string {
	if len(run)+len(suffix) <= limit {
		return run + suffix
	}
	sum := sha256.Sum256([]byte(run))
	hash := hex.EncodeToString(sum[:])[:hashLen]
	keep := limit - len(suffix) - len(hash) - 1
	prefix := strings.TrimRight(run[:keep], "-.")
	return prefix + "-" + hash + suffix
}
