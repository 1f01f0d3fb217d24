package v1alpha1_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// notOnSucceeded are the reasons of the Passed, Regressed and ResultsTruncated conditions.
var notOnSucceeded = map[string]bool{
	"PolicyMet": true, "PolicyNotMet": true, "NoResults": true, "StatusBudgetExceeded": true, "AllResultsInStatus": true,
	"Regressed": true, "NotRegressed": true, "BaselinePending": true, "BaselineUnavailable": true,
}

// inProgress are the reasons of a run that has not ended.
var inProgress = map[string]bool{"Pending": true, "Queued": true, "Running": true, "Collecting": true}

// TestEveryReasonIsDocumented catches a reason added to the API and not to the documents users read: every reason
// of the Succeeded condition has a row in ARCHITECTURE.md's reasons table, and every terminal one is in README.md's
// list.
func TestEveryReasonIsDocumented(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "evalrun_status.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var reasons []string
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || len(vs.Names) != 1 || len(vs.Values) != 1 || !strings.HasPrefix(vs.Names[0].Name, "Reason") {
			return true
		}
		if lit, ok := vs.Values[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
			v, _ := strconv.Unquote(lit.Value)
			if !notOnSucceeded[v] {
				reasons = append(reasons, v)
			}
		}
		return true
	})
	if len(reasons) < 10 {
		t.Fatalf("found only %d reasons: %v", len(reasons), reasons)
	}
	read := func(name string) string {
		data, err := os.ReadFile(filepath.Join("..", "..", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	arch, readme := read("ARCHITECTURE.md"), read("README.md")
	_, table, ok := strings.Cut(arch, "## Reasons")
	if !ok {
		t.Fatal("ARCHITECTURE.md has no Reasons section")
	}
	table, _, _ = strings.Cut(table, "\n## ")
	for _, r := range reasons {
		if !strings.Contains(table, "\n| "+r+" |") {
			t.Errorf("reason %s has no row in ARCHITECTURE.md's reasons table", r)
		}
		if !inProgress[r] && !strings.Contains(readme, r) {
			t.Errorf("reason %s is not in README.md's list of Succeeded reasons", r)
		}
	}
}
