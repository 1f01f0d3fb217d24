//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
)

// apiWrites counts the writes the API server made in a namespace, per kind and event (ADDED = create, MODIFIED =
// update or patch, DELETED), as watches see them: what a run costs the API server and etcd beside its pods.
type apiWrites struct {
	mu sync.Mutex
	n  map[string]int
}

// watchNamespaceWrites starts counting every write to the kinds a run or a bare Job touches in namespace.
func watchNamespaceWrites(t *testing.T, namespace string) *apiWrites {
	t.Helper()
	w := &apiWrites{n: map[string]int{}}
	kinds := []struct {
		kind string
		list client.ObjectList
	}{
		{"EvalRun", &evalsv1alpha1.EvalRunList{}}, {"Job", &batchv1.JobList{}}, {"Pod", &corev1.PodList{}},
		{"ConfigMap", &corev1.ConfigMapList{}}, {"Secret", &corev1.SecretList{}},
		{"ServiceAccount", &corev1.ServiceAccountList{}}, {"Role", &rbacv1.RoleList{}},
		{"RoleBinding", &rbacv1.RoleBindingList{}}, {"NetworkPolicy", &networkingv1.NetworkPolicyList{}},
		{"Event", &corev1.EventList{}},
	}
	for _, k := range kinds {
		watchAll(t, k.list, namespace, func(ev watch.Event) {
			if ev.Type != watch.Added && ev.Type != watch.Modified && ev.Type != watch.Deleted {
				return
			}
			w.mu.Lock()
			w.n[k.kind+" "+string(ev.Type)]++
			w.mu.Unlock()
		})
	}
	return w
}

// perObject says the counts divided by objects (runs or Jobs), sorted by kind, and their total.
func (w *apiWrites) perObject(objects int) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	keys := make([]string, 0, len(w.n))
	total := 0
	for k, v := range w.n {
		keys = append(keys, k)
		total += v
	}
	slices.Sort(keys)
	parts := make([]string, 0, len(keys)+1)
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %.1f", k, float64(w.n[k])/float64(objects)))
	}
	parts = append(parts, fmt.Sprintf("total %.1f", float64(total)/float64(objects)))
	return strings.Join(parts, ", ")
}

// nodeProcesses are the node's long-lived processes whose CPU a run costs, by the first word of their command line
// (the base name).
var nodeProcesses = []string{"kubelet", "containerd", "kube-apiserver", "etcd", "kube-controller-manager",
	"kube-scheduler", "manager"}

// cpuTicks is a snapshot of the node's CPU: the busy clock ticks of the whole machine (/proc/stat: everything but
// idle and iowait) and of each of nodeProcesses (utime+stime, children reaped included, summed over processes of one
// name: containerd's shims are "containerd-shim-runc-v2" and count as "shims"), and as "pods" the CPU of every
// pod's processes (the kubepods cgroup's cpuacct.usage: the containers' own processes, the manager's among them).
type cpuTicks struct {
	busy  int64
	procs map[string]int64
}

// readCPUTicks reads the snapshot (the tests run as root on the node).
func readCPUTicks() cpuTicks {
	c := cpuTicks{procs: map[string]int64{}}
	if data, err := os.ReadFile("/proc/stat"); err == nil {
		line, _, _ := strings.Cut(string(data), "\n")
		f := strings.Fields(line)
		for i := 1; i < len(f); i++ {
			if i == 4 || i == 5 { // idle, iowait
				continue
			}
			v, _ := strconv.ParseInt(f[i], 10, 64)
			c.busy += v
		}
	}
	for _, f := range []string{"/sys/fs/cgroup/cpuacct/kubepods/cpuacct.usage", "/sys/fs/cgroup/kubepods/cpu.stat"} {
		if ticks, ok := cgroupTicks(f); ok {
			c.procs["pods"] = ticks
			break
		}
	}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		cmd, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || len(cmd) == 0 {
			continue
		}
		first, _, _ := strings.Cut(string(cmd), "\x00")
		name := first[strings.LastIndexByte(first, '/')+1:]
		if strings.HasPrefix(name, "containerd-shim") {
			name = "shims"
		} else if !slices.Contains(nodeProcesses, name) {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// Fields after the command's closing parenthesis: utime, stime, cutime, cstime are 14-17 (1-based).
		s := string(stat)
		rest := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(rest) < 15 {
			continue
		}
		for _, i := range []int{11, 12, 13, 14} {
			v, _ := strconv.ParseInt(rest[i], 10, 64)
			c.procs[name] += v
		}
	}
	return c
}

// cgroupTicks reads a cgroup's CPU use in clock ticks (100 a second): cgroup v1's cpuacct.usage in nanoseconds,
// or cgroup v2's cpu.stat usage_usec.
func cgroupTicks(file string) (int64, bool) {
	data, err := os.ReadFile(file)
	if err != nil {
		return 0, false
	}
	s := strings.TrimSpace(string(data))
	if rest, ok := strings.CutPrefix(s, "usage_usec "); ok {
		usec, err := strconv.ParseInt(strings.Fields(rest)[0], 10, 64)
		return usec / 10_000, err == nil
	}
	ns, err := strconv.ParseInt(s, 10, 64)
	return ns / 10_000_000, err == nil
}

// cpuPerObject says the CPU seconds (at 100 ticks a second) spent between before and after, divided by objects:
// the machine's and each process's that lived through both snapshots.
func cpuPerObject(before, after cpuTicks, objects int) string {
	const hz = 100.0
	per := func(ticks int64) string { return fmt.Sprintf("%.3f", float64(ticks)/hz/float64(objects)) }
	parts := []string{"node " + per(after.busy-before.busy)}
	names := make([]string, 0, len(after.procs))
	for name := range after.procs {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if d := after.procs[name] - before.procs[name]; d > 0 {
			parts = append(parts, name+" "+per(d))
		}
	}
	return strings.Join(parts, ", ") + " cpu-s"
}
