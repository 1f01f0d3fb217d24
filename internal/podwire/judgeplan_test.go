package podwire

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
)

func TestContainers(t *testing.T) {
	for _, tc := range []struct {
		workers int32
		cases   int
		want    int32
	}{
		{2, 0, 2}, {2, 1, 1}, {2, 5, 2}, {64, 100, 8}, {8, 3, 3}, {0, 3, 1},
	} {
		if got := Containers(tc.workers, tc.cases); got != tc.want {
			t.Errorf("Containers(%d, %d) = %d, want %d", tc.workers, tc.cases, got, tc.want)
		}
	}
}

func TestPartition(t *testing.T) {
	cases := []string{"a", "b", "c", "d", "e"}
	got := [][]string{Partition(cases, 2, 0), Partition(cases, 2, 1), Partition(cases, 2, 2), Partition(cases, 1, 0)}
	want := [][]string{{"a", "c", "e"}, {"b", "d"}, nil, cases}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("partitions (-want +got):\n%s", diff)
	}
}

const planEval = `$schema: agentv-eval-v2
evalcases:
  - id: plain
    input_messages: [{role: user, content: x}]
  - id: direct
    input_messages: [{role: user, content: x}]
    execution:
      evaluators:
        - {name: t, type: code_judge, script: "true"}
        - {name: m, type: latency, threshold: 1000}
  - id: composite
    input_messages: [{role: user, content: x}]
    execution:
      evaluators:
        - name: both
          type: composite
          evaluators:
            - {name: inner, type: code_judge, script: "true"}
            - {name: m, type: latency, threshold: 1000}
          aggregator: {type: code_judge, script: "true"}
`

// A judge may report exactly the code_judge invocations of its own cases: code_judge evaluators, composite
// members and code_judge aggregators, nothing else.
func TestExpected(t *testing.T) {
	file, err := evalfile.Parse([]byte(planEval))
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{"plain", "direct", "composite"}
	if diff := cmp.Diff([]string{"direct", "composite"}, CodeJudgedCases(file, ids)); diff != "" {
		t.Errorf("code-judged cases (-want +got):\n%s", diff)
	}
	c := file.Case("composite")
	got := map[int]map[string]map[string]bool{0: Expected(file, ids, 2, 0), 1: Expected(file, ids, 2, 1)}
	want := map[int]map[string]map[string]bool{
		0: {"direct": {file.Case("direct").Evaluators[0].Key: true}},
		1: {"composite": {c.Evaluators[0].Composite.Members[0].Key: true, c.Evaluators[0].Key: true}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("expected invocations (-want +got):\n%s", diff)
	}
}
