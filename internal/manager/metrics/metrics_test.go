package metrics

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestShippedMetricsArtifactsNameRealMetrics catches a metric renamed in the code but not in what users install
// or read: every evalrun_* name in the example alerts, the Grafana dashboard and docs/operations.md's Metrics section
// is one the manager registers, and docs/operations.md documents every one it registers.
func TestShippedMetricsArtifactsNameRealMetrics(t *testing.T) {
	const metricsDoc = "docs/operations.md"
	registered := map[string]bool{}
	for name := range registeredLabels(t) {
		registered[name] = true
	}
	root := filepath.Join("..", "..", "..")
	name := regexp.MustCompile(`evalrun_[a-z_]+`)
	for _, file := range []string{"config/prometheus/rules.yaml", "charts/evalrun-operator/templates/prometheusrule.yaml",
		"config/grafana/evalrun-dashboard.json", metricsDoc} {
		data, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		if file == metricsDoc {
			_, text, _ = strings.Cut(text, "## Metrics")
			text, _, _ = strings.Cut(text, "\n## ")
		}
		var used []string
		for _, n := range name.FindAllString(text, -1) {
			n = strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(n, "_bucket"), "_sum"), "_count")
			if strings.HasPrefix(n, "evalrun_operator") {
				continue
			}
			if !registered[n] {
				t.Errorf("%s names %s, which the manager does not register", file, n)
			}
			used = append(used, n)
		}
		if file == metricsDoc {
			for n := range registered {
				if !slices.Contains(used, n) {
					t.Errorf("%s's Metrics section does not document %s", metricsDoc, n)
				}
			}
		}
	}
}
