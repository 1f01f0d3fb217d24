package stored

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/records"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

func resultConfigMap(t *testing.T, name string, ids ...string) *corev1.ConfigMap {
	t.Helper()
	var lines [][]byte
	for _, id := range ids {
		b, err := json.Marshal(results.Line{CaseResult: verdict.CaseResult{ID: id, Verdict: verdict.VerdictPass, Score: 1}})
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, b)
	}
	chunks, err := results.Chunks([]string{name}, lines)
	if err != nil {
		t.Fatal(err)
	}
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
		BinaryData: map[string][]byte{podwire.ResultsKey: chunks[0].Data}}
}

func storedRun(configMaps ...string) *evalsv1alpha1.EvalRun {
	run := testutil.MakeEvalRun("run", "ns").Obj()
	run.Status.Results = &evalsv1alpha1.ResultsReference{ConfigMaps: configMaps}
	return run
}

func TestEachLine(t *testing.T) {
	corrupt := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "corrupt"},
		BinaryData: map[string][]byte{podwire.ResultsKey: []byte("not gzip")}}
	failing := interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
		if key.Name == "flaky" {
			return errors.New("connection refused")
		}
		return c.Get(ctx, key, obj, opts...)
	}}
	c := fake.NewClientBuilder().WithScheme(testutil.Scheme()).WithInterceptorFuncs(failing).
		WithObjects(resultConfigMap(t, "a", "case-1", "case-2"), resultConfigMap(t, "b", "case-3"), corrupt).Build()
	cases := map[string]struct {
		run              *evalsv1alpha1.EvalRun
		want             []string
		wantMsg, wantErr string
	}{
		"every ConfigMap in order": {run: storedRun("a", "b"), want: []string{"case-1", "case-2", "case-3"}},
		"none":                     {run: testutil.MakeEvalRun("run", "ns").Obj()},
		"gone":                     {run: storedRun("a", "gone"), want: []string{"case-1", "case-2"}, wantMsg: "result ConfigMap gone: stored results are gone"},
		"unreadable":               {run: storedRun("corrupt"), wantMsg: "result ConfigMap corrupt cannot be read: open a result chunk: "},
		"API failure":              {run: storedRun("flaky"), wantErr: "reading result ConfigMap flaky: connection refused"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []string
			msg, err := EachLine(t.Context(), c, tc.run, func(l *results.Line) error { got = append(got, l.ID); return nil })
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
			if !strings.HasPrefix(msg, tc.wantMsg) || (tc.wantMsg == "") != (msg == "") {
				t.Errorf("message %q, want %q", msg, tc.wantMsg)
			}
			if (err == nil) != (tc.wantErr == "") || (err != nil && err.Error() != tc.wantErr) {
				t.Errorf("error %v, want %q", err, tc.wantErr)
			}
		})
	}
	var got []string
	err := EachChunk(t.Context(), c, storedRun(), []string{"gone", "b"}, nil, true, func(where string, _ []byte) error {
		got = append(got, where)
		return nil
	})
	if err != nil || !cmp.Equal([]string{"result ConfigMap b"}, got) {
		t.Errorf("skipGone: %v, %v", got, err)
	}
}

func TestCredentials(t *testing.T) {
	secret := func(name string, data map[string][]byte) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Data: data}
	}
	c := fake.NewClientBuilder().WithScheme(testutil.Scheme()).WithObjects(
		secret("ok", map[string][]byte{"accessKeyID": []byte("id"), "secretAccessKey": []byte("key")}),
		secret("half", map[string][]byte{"accessKeyID": []byte("id")})).Build()
	id, key, missing, err := Credentials(t.Context(), c, "ns", "ok")
	if err != nil || missing != "" || id != "id" || key.Reveal() != "key" {
		t.Errorf("ok: %q %q %q %v", id, key.Reveal(), missing, err)
	}
	for name, want := range map[string]string{
		"half": "waiting for keys accessKeyID and secretAccessKey in Secret half holding the bucket's credentials",
		"none": "waiting for Secret none holding the bucket's credentials (keys accessKeyID and secretAccessKey)",
	} {
		if _, _, missing, err := Credentials(t.Context(), c, "ns", name); err != nil || missing != want {
			t.Errorf("%s: missing %q, error %v; want %q", name, missing, err, want)
		}
	}
}

// TestEachRecordChunk: the record ConfigMaps named are read in order, an empty or deleted one is skipped, and an
// API error is returned.
func TestEachRecordChunk(t *testing.T) {
	keeper := records.NewKeeper(evalsv1alpha1.RecordsInConfigMaps, []string{"run-evalrun-records-0"}, podwire.MaxRecordConfigMapBytes)
	r := records.New("case-1", "d", records.ModeLine, []byte(`{"id":"case-1","text":"x"}`))
	if err := keeper.Add(&r); err != nil {
		t.Fatal(err)
	}
	chunks, _, err := keeper.Finish()
	if err != nil {
		t.Fatal(err)
	}
	kept := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "run-evalrun-records-0"},
		BinaryData: map[string][]byte{podwire.RecordsKey: chunks[0].Data}}
	empty := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "run-evalrun-records-1"}}
	failing := interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
		if key.Name == "flaky" {
			return errors.New("connection refused")
		}
		return c.Get(ctx, key, obj, opts...)
	}}
	c := fake.NewClientBuilder().WithScheme(testutil.Scheme()).WithInterceptorFuncs(failing).WithObjects(kept, empty).Build()
	run := storedRun()
	var ids []string
	read := func(_ string, data []byte) error {
		return records.Each(data, func(r *records.Record) error {
			ids = append(ids, r.ID)
			return nil
		})
	}
	names := []string{"run-evalrun-records-0", "run-evalrun-records-1", "run-evalrun-records-2"}
	if err := EachRecordChunk(context.Background(), c, run, names, 1, read); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"case-1"}, ids); diff != "" {
		t.Errorf("records read (-want +got):\n%s", diff)
	}
	if err := EachRecordChunk(context.Background(), c, run, []string{"flaky"}, 1, read); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("an API error is %v", err)
	}
}
