package gitops

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	lua "github.com/yuin/gopher-lua"
	"sigs.k8s.io/yaml"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
)

const (
	healthScript         = "config/gitops/argocd/health.lua"
	scheduleHealthScript = "config/gitops/argocd/schedule-health.lua"
)

// argoHealthStatuses are the health statuses Argo CD accepts from a Lua health check; any other status shows as
// Unknown ("Lua returned an invalid health status").
var argoHealthStatuses = map[string]bool{
	"Healthy": true, "Progressing": true, "Degraded": true, "Suspended": true, "Missing": true, "Unknown": true,
}

// runHealthScript runs a health check as Argo CD's controller runs a custom one from argocd-cm (util/lua in
// argoproj/argo-cd): a fresh gopher-lua state without the standard libraries except package, base and table (Argo
// CD also opens a reduced os library, which health.lua does not use), a one-second deadline, the object as the
// global obj, and the returned table decoded into a health status.
func runHealthScript(script string, obj map[string]any) (argoHealth, error) {
	l := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer l.Close()
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{{lua.LoadLibName, lua.OpenPackage}, {lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}} {
		if err := l.CallByParam(lua.P{Fn: l.NewFunction(lib.open), NRet: 0, Protect: true}, lua.LString(lib.name)); err != nil {
			return argoHealth{}, err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	l.SetContext(ctx)
	l.SetGlobal("obj", toLua(l, obj))
	if err := l.DoString(script); err != nil {
		return argoHealth{}, err
	}
	ret, ok := l.Get(-1).(*lua.LTable)
	if !ok {
		return argoHealth{}, fmt.Errorf("the script returned %s, not a table", l.Get(-1).Type())
	}
	return decodeHealth(ret)
}

// toLua converts unstructured content to Lua values as Argo CD does (its decodeValue): objects and arrays become
// tables (an array's nulls are dropped), numbers LNumber, and anything else nil.
func toLua(l *lua.LState, v any) lua.LValue {
	switch v := v.(type) {
	case bool:
		return lua.LBool(v)
	case string:
		return lua.LString(v)
	case json.Number:
		return lua.LString(v)
	case int:
		return lua.LNumber(v)
	case int32:
		return lua.LNumber(v)
	case int64:
		return lua.LNumber(v)
	case float64:
		return lua.LNumber(v)
	case []any:
		t := l.CreateTable(len(v), 0)
		for _, item := range v {
			t.Append(toLua(l, item))
		}
		return t
	case map[string]any:
		t := l.CreateTable(0, len(v))
		for key, item := range v {
			t.RawSetH(lua.LString(key), toLua(l, item))
		}
		return t
	}
	return lua.LNil
}

// decodeHealth reads the returned table as Argo CD does (JSON into {status, message}), but strictly: status and
// message must be strings (a message of another type fails Argo CD's decoding) and status one Argo CD accepts.
func decodeHealth(t *lua.LTable) (argoHealth, error) {
	var h argoHealth
	var err error
	t.ForEach(func(k, v lua.LValue) {
		s, isString := v.(lua.LString)
		switch {
		case k.String() == "status" && isString:
			h.Status = string(s)
		case k.String() == "message" && isString:
			h.Message = string(s)
		default:
			err = fmt.Errorf("unexpected field %s = %s (%s) in the returned table", k, v, v.Type())
		}
	})
	if err == nil && !argoHealthStatuses[h.Status] {
		err = fmt.Errorf("status %q is not an Argo CD health status", h.Status)
	}
	return h, err
}

func TestArgoCDHealth(t *testing.T) {
	script := readRepoFile(t, healthScript)
	cases := append(runCases(t), malformedCases(t)...)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := runHealthScript(script, c.obj)
			if err != nil {
				t.Fatalf("health.lua failed (Argo CD would show this error instead of a health): %v", err)
			}
			if diff := cmp.Diff(c.argo, got); diff != "" {
				t.Errorf("health (-want +got):\n%s", diff)
			}
		})
	}
}

// TestArgoCDHealthWithoutObject covers obj being nil or not a table, which Argo CD never passes but costs nothing to
// survive.
func TestArgoCDHealthWithoutObject(t *testing.T) {
	script := readRepoFile(t, healthScript)
	want := argoHealth{argoProgressing, "Waiting for the EvalRun operator to report the run's status"}
	for _, obj := range []map[string]any{nil, {}} {
		got, err := runHealthScript(script, obj)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("health of %v (-want +got):\n%s", obj, diff)
		}
	}
}

// TestArgoCDConfigMapCarriesTheScript checks the shipped argocd-cm patch: its keys are the ones Argo CD looks up
// for the API's group and kinds (resource.customizations.health.<group>_<kind>), and their values are health.lua
// and schedule-health.lua byte for byte (run `make gitops` after editing either).
func TestArgoCDConfigMapCarriesTheScript(t *testing.T) {
	var cm struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Data map[string]string `json:"data"`
	}
	if err := yaml.UnmarshalStrict([]byte(readRepoFile(t, "config/gitops/argocd/argocd-cm.yaml")), &cm); err != nil {
		t.Fatal(err)
	}
	if cm.APIVersion != "v1" || cm.Kind != "ConfigMap" || cm.Metadata.Name != "argocd-cm" {
		t.Errorf("argocd-cm.yaml is %s %s %s, want v1 ConfigMap argocd-cm", cm.APIVersion, cm.Kind, cm.Metadata.Name)
	}
	scripts := map[string]string{
		"resource.customizations.health." + evalsv1alpha1.GroupVersion.Group + "_EvalRun":      healthScript,
		"resource.customizations.health." + evalsv1alpha1.GroupVersion.Group + "_EvalSchedule": scheduleHealthScript,
	}
	if len(cm.Data) != len(scripts) {
		t.Errorf("argocd-cm.yaml has keys %v, want only %v", keys(cm.Data), keys(scripts))
	}
	component := readRepoFile(t, "config/gitops/argocd/kustomization.yaml")
	for key, script := range scripts {
		if diff := cmp.Diff(readRepoFile(t, script), cm.Data[key]); diff != "" {
			t.Errorf("argocd-cm.yaml's %s is not %s; run `make gitops` (-script +argocd-cm.yaml):\n%s", key, script, diff)
		}
		if !strings.Contains(component, "- "+key+"="+filepath.Base(script)+"\n") {
			t.Errorf("the kustomize Component does not generate %s from %s:\n%s", key, script, component)
		}
	}
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
