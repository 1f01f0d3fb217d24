package report

import (
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
)

// TestWriteComparisonJudgeImages: a comparison says which judge image each side's code judges ran in, and none
// for runs without code judges.
func TestWriteComparisonJudgeImages(t *testing.T) {
	c := &Comparison{BaselineComparison: evalsv1alpha1.BaselineComparison{RunName: "nightly", EvalFile: evalsv1alpha1.EvalFileSame,
		BaselineJudgeImage: &evalsv1alpha1.JudgeImageStatus{Image: "runner:v1", Source: evalsv1alpha1.JudgeImageSourceTarget}},
		JudgeImage: &evalsv1alpha1.JudgeImageStatus{Image: "localhost/evalrun/judge:dev", Source: evalsv1alpha1.JudgeImageSourceDefault,
			ImageID: ptr.To("localhost/evalrun/judge@sha256:ab")}}
	var b strings.Builder
	if err := WriteComparison(&b, "candidate", c); err != nil {
		t.Fatal(err)
	}
	want := "Judge image: localhost/evalrun/judge:dev from Default, ran localhost/evalrun/judge@sha256:ab (baseline runner:v1 from Target)\n"
	if !strings.Contains(b.String(), want) {
		t.Errorf("comparison:\n%s\nwant the line %q", b.String(), want)
	}
	b.Reset()
	c.JudgeImage, c.BaselineJudgeImage = nil, nil
	if err := WriteComparison(&b, "candidate", c); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "Judge image") {
		t.Errorf("runs without code judges:\n%s\nwant no judge image line", b.String())
	}
}
