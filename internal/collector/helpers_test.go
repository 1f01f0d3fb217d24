package collector

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"testing"
)

// decodeAll returns the stored result lines of a collection by case id.
func decodeAll(t *testing.T, g *Gathered) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, c := range g.Output.Chunks {
		zr, err := gzip.NewReader(bytes.NewReader(c.Data))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(zr)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var r struct {
				ID string `json:"id"`
			}
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatalf("stored line is not JSON: %v", err)
			}
			out[r.ID] = sc.Text()
		}
	}
	return out
}
