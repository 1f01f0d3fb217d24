package evalconvert

import (
	"testing"

	"github.com/evalrun-operator/evalrun-operator/internal/testutil/v2files"
)

// BenchmarkConvert converts every v2 file of the repository (their bundles read: prompt files, AgentV's config),
// and reads each suite back.
func BenchmarkConvert(b *testing.B) {
	files := v2files.All(b)
	b.ReportAllocs()
	for b.Loop() {
		for _, vf := range files {
			if _, err := Convert(vf.Data, Options{Bundle: vf.Bundle}); err != nil {
				b.Fatal(err)
			}
		}
	}
}
