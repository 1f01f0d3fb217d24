package evaluate

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/jsonlresult"
)

// toolCall is one call the candidate made.
type toolCall struct {
	name  string
	input json.RawMessage
}

// Sources of tool calls.
const (
	sourceOutputMessages = "output_messages"
	sourceTrace          = "trace"
)

// candidateToolCalls returns the candidate's tool calls in order: those of outputMessages[].toolCalls, or, when
// there are none, the trace's tool_call events.
func candidateToolCalls(resp *jsonlresult.Response) (calls []toolCall, source string) {
	for _, m := range resp.OutputMessages {
		for _, tc := range m.ToolCalls {
			calls = append(calls, toolCall{name: tc.Tool, input: tc.Input})
		}
	}
	if len(calls) > 0 {
		return calls, sourceOutputMessages
	}
	for _, e := range resp.Trace {
		if e.Type == "tool_call" {
			calls = append(calls, toolCall{name: e.Name, input: e.Input})
		}
	}
	if len(calls) > 0 {
		return calls, sourceTrace
	}
	return nil, ""
}

func describeCalls(calls []toolCall, source string) string {
	if len(calls) == 0 {
		return "the candidate made no tool calls (none in output_messages or trace)"
	}
	b := make([]byte, 0, 64+len(source)+16*min(len(calls), 20))
	b = strconv.AppendInt(b, int64(len(calls)), 10)
	b = append(b, " tool calls from "...)
	b = append(b, source...)
	b = append(b, ": "...)
	for i, c := range calls {
		if i > 0 {
			b = append(b, ", "...)
		}
		if i == 20 {
			b = append(b, "... "...)
			b = strconv.AppendInt(b, int64(len(calls)-20), 10)
			b = append(b, " more"...)
			break
		}
		b = append(b, c.name...)
	}
	return string(b)
}

func toolTrajectory(cfg *evalfile.ToolTrajectoryConfig, resp *jsonlresult.Response) outcome {
	calls, source := candidateToolCalls(resp)
	var o outcome
	switch cfg.Mode {
	case evalfile.ModeAnyOrder:
		o = anyOrder(cfg.Minimums, calls)
	case evalfile.ModeInOrder:
		o = inOrder(cfg.Expected, calls)
	case evalfile.ModeExact:
		o = exact(cfg.Expected, calls)
	}
	o.reasoning = describeCalls(calls, source)
	return o
}

func anyOrder(minimums []evalfile.ToolMinimum, calls []toolCall) outcome {
	var o outcome
	if len(minimums) == 0 {
		o.score = 1
		o.hits = []string{"no minimums are set"}
		return o
	}
	// Few minimums over few calls are counted by scanning; a map pays off only for many of both.
	var counts map[string]int
	if len(minimums)*len(calls) > 256 {
		counts = make(map[string]int, len(minimums))
		for _, c := range calls {
			counts[c.name]++
		}
	}
	for _, m := range minimums {
		n := 0
		if counts != nil {
			n = counts[m.Tool]
		} else {
			for _, c := range calls {
				if c.name == m.Tool {
					n++
				}
			}
		}
		note := m.Tool + ": called " + strconv.Itoa(n) + " " + times(n) + " (at least " + strconv.Itoa(m.Count) + " required)"
		if n >= m.Count {
			o.hits = append(o.hits, note)
		} else {
			o.misses = append(o.misses, note)
		}
	}
	o.score = float64(len(o.hits)) / float64(len(minimums))
	return o
}

func times(n int) string {
	if n == 1 {
		return "time"
	}
	return "times"
}

// inOrder finds each expected call after the previous match; other calls may come between them.
func inOrder(expected []evalfile.ExpectedCall, calls []toolCall) outcome {
	var o outcome
	if len(expected) == 0 {
		o.score = 1
		o.hits = []string{"no expected calls are set"}
		return o
	}
	next := 0
	for i, want := range expected {
		found := -1
		mismatch := ""
		for k := next; k < len(calls); k++ {
			if calls[k].name != want.Tool {
				continue
			}
			if why := argsMismatch(want, calls[k].input); why != "" {
				if mismatch == "" {
					mismatch = fmt.Sprintf("call #%d has the tool but %s", k+1, why)
				}
				continue
			}
			found = k
			break
		}
		switch {
		case found >= 0:
			o.hits = append(o.hits, fmt.Sprintf("expected[%d] %s: matched call #%d", i, want.Tool, found+1))
			next = found + 1
		case mismatch != "":
			o.misses = append(o.misses, fmt.Sprintf("expected[%d] %s: no matching call after call #%d; %s", i, want.Tool, next, mismatch))
		default:
			o.misses = append(o.misses, fmt.Sprintf("expected[%d] %s: not called after call #%d", i, want.Tool, next))
		}
	}
	o.score = float64(len(o.hits)) / float64(len(expected))
	return o
}

// exact compares call i with expected i. Unlike the reference tool, a different number of calls fails the
// evaluator (score 0) instead of passing with a miss.
func exact(expected []evalfile.ExpectedCall, calls []toolCall) outcome {
	var o outcome
	n := max(len(expected), len(calls))
	for i := 0; i < n; i++ {
		switch {
		case i >= len(calls):
			o.misses = append(o.misses, fmt.Sprintf("call #%d: expected %s, got no call", i+1, expected[i].Tool))
		case i >= len(expected):
			o.misses = append(o.misses, fmt.Sprintf("call #%d: unexpected extra call to %s", i+1, calls[i].name))
		case calls[i].name != expected[i].Tool:
			o.misses = append(o.misses, fmt.Sprintf("call #%d: expected %s, got %s", i+1, expected[i].Tool, calls[i].name))
		default:
			if why := argsMismatch(expected[i], calls[i].input); why != "" {
				o.misses = append(o.misses, fmt.Sprintf("call #%d: %s but %s", i+1, expected[i].Tool, why))
			} else {
				o.hits = append(o.hits, fmt.Sprintf("call #%d: %s", i+1, expected[i].Tool))
			}
		}
	}
	switch {
	case len(calls) != len(expected):
		o.misses = append([]string{fmt.Sprintf("expected exactly %d tool calls, got %d", len(expected), len(calls))}, o.misses...)
		o.score = 0
	case len(expected) == 0:
		o.score = 1
		o.hits = []string{"no calls expected and none made"}
	default:
		o.score = float64(len(o.hits)) / float64(len(expected))
	}
	return o
}

// argsMismatch returns "" when the call's input matches the expected args (listed keys only, deep equality),
// else what differs.
func argsMismatch(want evalfile.ExpectedCall, input json.RawMessage) string {
	if want.AnyArgs || want.Args == nil {
		return ""
	}
	var expected map[string]any
	if err := json.Unmarshal(want.Args, &expected); err != nil {
		return "the expected args are not an object"
	}
	if len(expected) == 0 {
		return ""
	}
	var actual map[string]any
	if len(input) == 0 || json.Unmarshal(input, &actual) != nil || actual == nil {
		return fmt.Sprintf("its input is not an object (%s)", excerpt(string(input), 80))
	}
	keys := make([]string, 0, len(expected))
	for k := range expected {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		got, ok := actual[k]
		if !ok {
			return fmt.Sprintf("args.%s is missing", k)
		}
		if !reflect.DeepEqual(expected[k], got) {
			return fmt.Sprintf("args.%s is %s, expected %s", k, jsonExcerpt(got), jsonExcerpt(expected[k]))
		}
	}
	return ""
}

// jsonExcerpt renders a decoded JSON value, bounded.
func jsonExcerpt(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return excerpt(string(b), 80)
}

func excerpt(s string, n int) string {
	if s == "" {
		return "empty"
	}
	return truncate(s, n)
}
