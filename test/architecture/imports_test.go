package architecture

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const module = "github.com/evalrun-operator/evalrun-operator"

// launcherAllowed is every package of this module the runner container's init may link (cmd/launcher runs beside
// the untrusted runner, in its container): the pod's wire contract (which spells the API's words it carries itself, so
// the launcher links no API machinery), the output and eval-file parsers its PerCase prompts and cost budget read (the
// runner view and the runner's own output: nothing the runner does not already hold; evalfile with its YAML tree
// and its 4.42 reader, which reads a suite's view), the vocabulary of verdicts the wire contract's judge frames are
// written in (types only), and its own packages. Judging, results, object-store, LLM and API client code stay out:
// adding a package here is a decision about what runs beside untrusted code.
var launcherAllowed = []string{
	"cmd/launcher", "internal/evalfile", "internal/evalfile/suite42", "internal/evalfile/yamltree", "internal/idindex",
	"internal/jsonenc", "internal/jsonlresult",
	"internal/pod/launcher", "internal/pod/reaper", "internal/podwire", "internal/safefile", "internal/verdict",
	"internal/textbound",
}

// companions are the packages every binary that links a package (of) links too, and why:
//   - the readers of the eval file formats internal/evalfile tells from a document but does not read itself: each
//     registers itself with evalfile when linked (evalfile.RegisterFormat), so a binary that reads eval files and
//     forgets one refuses that format's files at run time;
//   - AgentV 4.42's graders, which each Judge is given by its maker (evaluate.Judge.Grader42): a binary that judges
//     without them judges every test of a 4.42 suite an Error. This one is a net under the tests of the places
//     that make Judges, each of which judges a 4.42 suite.
var companions = []struct{ of, pkg, why string }{
	{"internal/evalfile", "internal/evalfile/suite42", "it would refuse that format's files: import it for its side effect in its main"},
	{"internal/evaluate", "internal/evaluate/grade42", "its Judges would judge each AgentV 4.42 test an Error: give every Judge it " +
		"makes grade42.Graders{}"},
}

// judgingPackages are the judging engine and the LLM client: what judges runs in the pod (and in `collector check`),
// so the manager and the kubectl plugin, which only read verdicts (internal/verdict), link neither.
var judgingPackages = []string{"internal/evaluate", "internal/llm"}

// managerStages are the manager's packages in the one order their imports may run: each may import only the
// stages before it (its configuration, then the pure builders of children, then the assessment, then the
// stages that observe (the eval source, the collections), then the reconcilers, which call them and act).
var managerStages = []string{"internal/manager/options", "internal/manager/runmemo", "internal/manager/children", "internal/manager/assess",
	"internal/manager/metrics", "internal/manager/bucketpool", "internal/manager/kueue", "internal/manager/evalsource",
	"internal/manager/collect", "internal/manager/controller"}

// clientPackages are the import path prefixes of API and cloud clients, which pure packages never link.
var clientPackages = []string{"k8s.io/client-go/", "sigs.k8s.io/controller-runtime", "github.com/aws/"}

// facts are what the import rules read: each package's transitive dependencies (go list -deps) and direct imports,
// and the module's binaries (its main packages).
type facts struct {
	deps     map[string][]string // package (module-relative) -> its dependencies (full import paths)
	imports  map[string][]string // package (module-relative) -> its direct, non-test imports (full import paths)
	binaries []string            // the main packages (module-relative), whose deps are in deps
}

// brokenRules returns a line for every import rule the packages break:
//   - the manager (cmd/manager) links nothing of internal/pod/ or internal/cli/;
//   - the manager and the kubectl plugin (cmd/kubectl-evalrun) link no judgingPackages;
//   - the launcher (cmd/launcher) links no package of this module outside launcherAllowed, and no client;
//   - a manager stage (managerStages) imports no later stage;
//   - a pure package (the map's "(pure)") links no API or cloud client;
//   - no package but internal/testutil's own imports internal/testutil (tests may);
//   - a binary that links a package links its companions (every format's reader with internal/evalfile, AgentV
//     4.42's graders with internal/evaluate).
func brokenRules(f facts, pure []string) []string {
	var broken []string
	for _, bin := range f.binaries {
		for _, c := range companions {
			if slices.Contains(f.deps[bin], module+"/"+c.of) && !slices.Contains(f.deps[bin], module+"/"+c.pkg) {
				broken = append(broken, bin+" links "+c.of+" but not "+c.pkg+" ("+c.why+")")
			}
		}
	}
	for _, d := range f.deps["cmd/manager"] {
		for _, side := range []string{"internal/pod/", "internal/cli/"} {
			if strings.HasPrefix(d, module+"/"+side) {
				broken = append(broken, "cmd/manager links "+d+" (the manager links nothing of "+side+")")
			}
		}
	}
	for _, cmd := range []string{"cmd/manager", "cmd/kubectl-evalrun"} {
		for _, d := range f.deps[cmd] {
			if rel, ok := strings.CutPrefix(d, module+"/"); ok && slices.Contains(judgingPackages, rel) {
				broken = append(broken, cmd+" links "+d+" (the judging engine and the LLM client run only where cases are judged)")
			}
		}
	}
	for _, d := range f.deps["cmd/launcher"] {
		if rel, ok := strings.CutPrefix(d, module+"/"); ok && !slices.Contains(launcherAllowed, rel) {
			broken = append(broken, "cmd/launcher links "+d+", which is not in its allowlist")
		}
		if client(d) {
			broken = append(broken, "cmd/launcher links the client "+d)
		}
	}
	for i, stage := range managerStages {
		for _, imp := range f.imports[stage] {
			if rel, ok := strings.CutPrefix(imp, module+"/"); ok && slices.Contains(managerStages[i+1:], rel) {
				broken = append(broken, stage+" imports "+rel+", a later stage of the manager")
			}
		}
	}
	for _, p := range pure {
		for _, d := range f.deps[p] {
			if client(d) {
				broken = append(broken, "the pure package "+p+" links the client "+d)
			}
		}
	}
	for p, imports := range f.imports {
		if p == "internal/testutil" || strings.HasPrefix(p, "internal/testutil/") {
			continue
		}
		for _, i := range imports {
			if i == module+"/internal/testutil" || strings.HasPrefix(i, module+"/internal/testutil/") {
				broken = append(broken, p+" imports "+i+" outside its tests")
			}
		}
	}
	slices.Sort(broken)
	return broken
}

func client(importPath string) bool {
	return slices.ContainsFunc(clientPackages, func(prefix string) bool { return strings.HasPrefix(importPath, prefix) })
}

// TestBrokenRules: each rule fails on a dependency that breaks it, and a tree that keeps them passes.
func TestBrokenRules(t *testing.T) {
	m := func(rel string) string { return module + "/" + rel }
	good := facts{
		deps: map[string][]string{
			"cmd/manager": {m("internal/manager/controller"), m("internal/evalfile"), m("internal/evalfile/suite42"),
				"k8s.io/client-go/kubernetes"},
			"cmd/launcher": {m("internal/pod/launcher"), m("internal/evalfile"), m("internal/evalfile/suite42"),
				"golang.org/x/sys/unix"},
			"cmd/kubectl-evalrun": {m("internal/cli/plugin"), m("internal/verdict")},
			"cmd/collector": {m("internal/pod/collector"), m("internal/evalfile"), m("internal/evalfile/suite42"),
				m("internal/evaluate"), m("internal/evaluate/grade42"), m("internal/llm")},
			"hack/imagepack":    {"archive/tar"},
			"internal/evalfile": {m("internal/jsonenc")},
		},
		binaries: []string{"cmd/manager", "cmd/launcher", "cmd/kubectl-evalrun", "cmd/collector", "hack/imagepack"},
		imports: map[string][]string{"internal/manager/controller": {m("internal/evalfile"), m("internal/manager/assess")},
			"internal/manager/assess": {m("internal/manager/children")}, "internal/testutil/s3server": {m("internal/testutil")}},
	}
	if got := brokenRules(good, []string{"internal/evalfile"}); len(got) != 0 {
		t.Errorf("a tree that keeps every rule: %v", got)
	}
	tests := []struct {
		name string
		edit func(f *facts)
		want []string
	}{
		{"the manager links pod code", func(f *facts) { f.deps["cmd/manager"] = append(f.deps["cmd/manager"], m("internal/pod/collector")) },
			[]string{"cmd/manager links " + m("internal/pod/collector") + " (the manager links nothing of internal/pod/)"}},
		{"the manager links the plugin", func(f *facts) { f.deps["cmd/manager"] = append(f.deps["cmd/manager"], m("internal/cli/plugin")) },
			[]string{"cmd/manager links " + m("internal/cli/plugin") + " (the manager links nothing of internal/cli/)"}},
		{"the manager links the LLM client", func(f *facts) { f.deps["cmd/manager"] = append(f.deps["cmd/manager"], m("internal/llm")) },
			[]string{"cmd/manager links " + m("internal/llm") + " (the judging engine and the LLM client run only where cases are judged)"}},
		{"the plugin links the judging engine", func(f *facts) {
			f.deps["cmd/kubectl-evalrun"] = append(f.deps["cmd/kubectl-evalrun"], m("internal/evaluate"))
		}, []string{"cmd/kubectl-evalrun links " + m("internal/evaluate") + " (the judging engine and the LLM client run only where cases are judged)",
			"cmd/kubectl-evalrun links internal/evaluate but not internal/evaluate/grade42 (its Judges would judge each " +
				"AgentV 4.42 test an Error: give every Judge it makes grade42.Graders{})"}},
		{"the launcher links the judging engine", func(f *facts) { f.deps["cmd/launcher"] = append(f.deps["cmd/launcher"], m("internal/evaluate")) },
			[]string{"cmd/launcher links " + m("internal/evaluate") + ", which is not in its allowlist",
				"cmd/launcher links internal/evaluate but not internal/evaluate/grade42 (its Judges would judge each " +
					"AgentV 4.42 test an Error: give every Judge it makes grade42.Graders{})"}},
		{"the launcher links client-go", func(f *facts) { f.deps["cmd/launcher"] = append(f.deps["cmd/launcher"], "k8s.io/client-go/rest") },
			[]string{"cmd/launcher links the client k8s.io/client-go/rest"}},
		{"a pure package links controller-runtime", func(f *facts) {
			f.deps["internal/evalfile"] = append(f.deps["internal/evalfile"], "sigs.k8s.io/controller-runtime/pkg/client")
		}, []string{"the pure package internal/evalfile links the client sigs.k8s.io/controller-runtime/pkg/client"}},
		{"a stage imports a later stage", func(f *facts) {
			f.imports["internal/manager/children"] = append(f.imports["internal/manager/children"], m("internal/manager/assess"))
		}, []string{"internal/manager/children imports internal/manager/assess, a later stage of the manager"}},
		{"the assessment imports the reconcilers", func(f *facts) {
			f.imports["internal/manager/assess"] = append(f.imports["internal/manager/assess"], m("internal/manager/controller"))
		}, []string{"internal/manager/assess imports internal/manager/controller, a later stage of the manager"}},
		{"a binary reads eval files without the 4.42 reader", func(f *facts) {
			f.deps["cmd/manager"] = slices.DeleteFunc(f.deps["cmd/manager"], func(d string) bool { return d == m("internal/evalfile/suite42") })
		}, []string{"cmd/manager links internal/evalfile but not internal/evalfile/suite42 (it would refuse that format's " +
			"files: import it for its side effect in its main)"}},
		{"the plugin comes to read eval files", func(f *facts) {
			f.deps["cmd/kubectl-evalrun"] = append(f.deps["cmd/kubectl-evalrun"], m("internal/evalfile"))
		}, []string{"cmd/kubectl-evalrun links internal/evalfile but not internal/evalfile/suite42 (it would refuse that " +
			"format's files: import it for its side effect in its main)"}},
		{"a binary judges without the 4.42 graders", func(f *facts) {
			f.deps["cmd/collector"] = slices.DeleteFunc(f.deps["cmd/collector"], func(d string) bool { return d == m("internal/evaluate/grade42") })
		}, []string{"cmd/collector links internal/evaluate but not internal/evaluate/grade42 (its Judges would judge each " +
			"AgentV 4.42 test an Error: give every Judge it makes grade42.Graders{})"}},
		{"a package imports testutil", func(f *facts) {
			f.imports["internal/manager/controller"] = append(f.imports["internal/manager/controller"], m("internal/testutil"))
		},
			[]string{"internal/manager/controller imports " + m("internal/testutil") + " outside its tests"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := facts{deps: map[string][]string{}, imports: map[string][]string{}, binaries: good.binaries}
			for k, v := range good.deps {
				f.deps[k] = slices.Clone(v)
			}
			for k, v := range good.imports {
				f.imports[k] = slices.Clone(v)
			}
			tc.edit(&f)
			if diff := cmp.Diff(tc.want, brokenRules(f, []string{"internal/evalfile"})); diff != "" {
				t.Errorf("broken rules (-want +got):\n%s", diff)
			}
		})
	}
}

// TestImportRules: the tree keeps the import rules of its grouping (brokenRules), read with go list.
func TestImportRules(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatal("the go command is needed to list the packages' dependencies")
	}
	pure := purePackages(t)
	if len(pure) < 10 {
		t.Fatalf("ARCHITECTURE.md's map marks %d packages (pure); want the pure packages marked: %v", len(pure), pure)
	}
	f := facts{deps: map[string][]string{}, imports: map[string][]string{}}
	for _, line := range goList(t, "-f", "{{if eq .Name \"main\"}}{{.ImportPath}}{{end}}", "./...") {
		if rel, ok := strings.CutPrefix(line, module+"/"); ok {
			f.binaries = append(f.binaries, rel)
		}
	}
	for _, b := range []string{"cmd/manager", "cmd/launcher", "cmd/kubectl-evalrun"} {
		if !slices.Contains(f.binaries, b) {
			t.Fatalf("go list finds no binary %s among %v", b, f.binaries)
		}
	}
	for _, p := range slices.Concat(f.binaries, pure) {
		f.deps[p] = goList(t, "-deps", "-f", "{{.ImportPath}}", "./"+p)
	}
	for _, line := range goList(t, "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...") {
		fields := strings.Fields(line)
		if rel, ok := strings.CutPrefix(fields[0], module+"/"); ok {
			f.imports[rel] = fields[1:]
		}
	}
	for _, b := range brokenRules(f, pure) {
		t.Error(b)
	}
}

// purePackages returns the packages ARCHITECTURE.md's map marks "(pure)" (on the entry's line or its continuation).
func purePackages(t *testing.T) []string {
	t.Helper()
	var pure []string
	current := ""
	for _, line := range mapLines(t) {
		if m := mapEntry.FindStringSubmatch(line); m != nil {
			current = strings.TrimSuffix(m[1], "/")
		}
		if strings.Contains(line, "(pure)") && current != "" && !slices.Contains(pure, current) {
			pure = append(pure, current)
		}
	}
	return pure
}

// goList runs go list in the module's root and returns its lines.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("go list %v: %v\n%s", args, err, stderr)
	}
	var lines []string
	for _, line := range strings.Split(string(out), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			lines = append(lines, line)
		}
	}
	return lines
}
