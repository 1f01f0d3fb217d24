// Package ssa builds the server-side apply bodies of the status subresources: the part of an EvalRun's or an
// EvalSchedule's status one field manager owns, as the generated apply configuration.
package ssa

import (
	"encoding/json"
	"fmt"

	acv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"k8s.io/apimachinery/pkg/types"
)

// StatusApply returns the server-side apply configuration of an EvalRun's status subresource holding exactly the
// fields in owned: the part of the status one field manager (the manager's ManagerStatus, the collector's results
// section) owns, encoded with the API's JSON names, so that the fields a manager stops sending are removed and
// those of the other manager are left alone. A non-empty uid makes the apply succeed only on that EvalRun.
func StatusApply(namespace, name, uid string, owned any) (*acv1alpha1.EvalRunApplyConfiguration, error) {
	status, err := ApplyConfigurationOf[acv1alpha1.EvalRunStatusApplyConfiguration](owned)
	if err != nil {
		return nil, err
	}
	ac := acv1alpha1.EvalRun(name, namespace).WithStatus(status)
	if uid != "" {
		ac.WithUID(types.UID(uid))
	}
	return ac, nil
}

// ApplyConfigurationOf returns v (a status, or the part of one a field manager owns) as the apply configuration
// AC, through their shared JSON names: every field v sets, and only those.
func ApplyConfigurationOf[AC any](v any) (*AC, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode the status apply body: %w", err)
	}
	ac := new(AC)
	if err := json.Unmarshal(raw, ac); err != nil {
		return nil, fmt.Errorf("decode the status apply body: %w", err)
	}
	return ac, nil
}
