package verdict

import (
	"testing"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
)

// TestSpelledAsTheAPI: the vocabulary spells verdicts, the default threshold and the histogram as the API does
// (it does not import the API, so that the launcher links no API machinery).
func TestSpelledAsTheAPI(t *testing.T) {
	for _, c := range []struct{ ours, api string }{
		{string(VerdictPass), string(evalsv1alpha1.VerdictPass)},
		{string(VerdictFail), string(evalsv1alpha1.VerdictFail)},
		{string(VerdictError), string(evalsv1alpha1.VerdictError)},
		{string(VerdictSkipped), string(evalsv1alpha1.VerdictSkipped)},
		{DefaultPassThreshold, evalsv1alpha1.DefaultPassThreshold},
	} {
		if c.ours != c.api {
			t.Errorf("verdict spells %q, the API %q", c.ours, c.api)
		}
	}
	if HistogramBins != evalsv1alpha1.HistogramBins {
		t.Errorf("HistogramBins = %d, the API's %d", HistogramBins, evalsv1alpha1.HistogramBins)
	}
}
