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

// TestEveryReasonIsDocumented catches a reason added to the API and not to the page users read: every reason of the
// Succeeded condition (and of BudgetExceeded, cost_types.go) has a row in the reasons tables of docs/operations.md.
func TestEveryReasonIsDocumented(t *testing.T) {
	fset := token.NewFileSet()
	var reasons []string
	for _, file := range []string{"evalrun_status.go", "cost_types.go"} {
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		reasons = append(reasons, reasonsIn(f)...)
	}
	if len(reasons) < 10 {
		t.Fatalf("found only %d reasons: %v", len(reasons), reasons)
	}
	const doc = "docs/operations.md"
	data, err := os.ReadFile(filepath.Join("..", "..", doc))
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(data), "\n## Reasons\n")
	if !ok {
		t.Fatalf("%s has no Reasons section", doc)
	}
	table, _, _ = strings.Cut(table, "\n## ")
	for _, r := range reasons {
		if !strings.Contains(table, "\n| "+r+" |") {
			t.Errorf("reason %s has no row in the reasons table of %s", r, doc)
		}
	}
}

// reasonsIn are the values of the Reason* string constants of f, less notOnSucceeded's.
func reasonsIn(f *ast.File) []string {
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
	return reasons
}
