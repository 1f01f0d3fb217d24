package collector

import (
	"testing"

	"github.com/evalrun-operator/evalrun-operator/internal/results"
)

// decodeAll returns the stored result lines of a collection by case id, read as the manager and the plugin read
// them (results.EachLine).
func decodeAll(t *testing.T, g *Gathered) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, c := range g.Output.Chunks {
		if err := results.EachLine(c.Data, func(l *results.Line, raw []byte) error {
			out[l.ID] = string(raw)
			return nil
		}); err != nil {
			t.Fatalf("stored chunk for %s: %v", c.Destination, err)
		}
	}
	return out
}
