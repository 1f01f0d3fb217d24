package evaluate

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/jsonlresult"
	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
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
	n := 0
	for _, m := range resp.OutputMessages {
		n += len(m.ToolCalls)
	}
	if n > 0 {
		calls = make([]toolCall, 0, n)
		for _, m := range resp.OutputMessages {
			for _, tc := range m.ToolCalls {
				calls = append(calls, toolCall{name: tc.Tool, input: tc.Input})
			}
		}
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
	size := 64 + len(source)
	for i, c := range calls[:min(len(calls), 20)] {
		size += len(c.name) + 2*min(i, 1)
	}
	var b strings.Builder
	b.Grow(size) // one allocation, the string's own
	var num [20]byte
	b.Write(strconv.AppendInt(num[:0], int64(len(calls)), 10))
	b.WriteString(" tool calls from ")
	b.WriteString(source)
	b.WriteString(": ")
	for i, c := range calls {
		if i > 0 {
			b.WriteString(", ")
		}
		if i == 20 {
			b.WriteString("... ")
			b.Write(strconv.AppendInt(num[:0], int64(len(calls)-20), 10))
			b.WriteString(" more")
			break
		}
		b.WriteString(c.name)
	}
	return b.String()
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
	// The notes, "<tool>: called N time(s) (at least M required)", share one allocation.
	size := 0
	for _, m := range minimums {
		size += len(m.Tool) + 64
	}
	var b strings.Builder
	b.Grow(size)
	var num [20]byte
	var endsBuf [8]int
	var metBuf [8]bool
	ends, met := endsBuf[:0], metBuf[:0]
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
		b.WriteString(m.Tool)
		b.WriteString(": called ")
		b.Write(strconv.AppendInt(num[:0], int64(n), 10))
		b.WriteString(" ")
		b.WriteString(times(n))
		b.WriteString(" (at least ")
		b.Write(strconv.AppendInt(num[:0], int64(m.Count), 10))
		b.WriteString(" required)")
		ends, met = append(ends, b.Len()), append(met, n >= m.Count)
	}
	all, start := b.String(), 0
	o.hits = make([]string, 0, len(minimums))
	for i, end := range ends {
		if note := all[start:end]; met[i] {
			o.hits = append(o.hits, note)
		} else {
			o.misses = append(o.misses, note)
		}
		start = end
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

// inOrder scores expected calls in order the way AgentV (v2.0.1) does: for each expected call, it scans forward
// from the position after the previous match to the next call to that tool. If that call's args match, it is a
// hit; if not, a miss, and the scan goes on after that call. A tool that is never called again leaves the scan at
// the end, and it does not go back: every later expected call is a miss too. So expected [search, analyze, report]
// over calls [search, report] scores 1/3, not 2/3.
func inOrder(expected []evalfile.ExpectedCall, calls []toolCall) outcome {
	var o outcome
	if len(expected) == 0 {
		o.score = 1
		o.hits = []string{"no expected calls are set"}
		return o
	}
	next := 0
	exhaustedBy := -1 // the expected call whose search ran past the last call
	for i, want := range expected {
		if exhaustedBy >= 0 {
			o.misses = append(o.misses, fmt.Sprintf("expected[%d] %s: not looked for: the search for expected[%d] %s "+
				"ran past the last call, and in_order does not go back", i, want.Tool, exhaustedBy, expected[exhaustedBy].Tool))
			continue
		}
		k := next
		for k < len(calls) && calls[k].name != want.Tool {
			k++
		}
		switch {
		case k < len(calls):
			if why := argsMismatch(want, calls[k].input); why != "" {
				o.misses = append(o.misses, fmt.Sprintf("expected[%d] %s: the next call to it, #%d, does not match: %s", i, want.Tool, k+1, why))
			} else {
				o.hits = append(o.hits, fmt.Sprintf("expected[%d] %s: matched call #%d", i, want.Tool, k+1))
			}
			next = k + 1
		case next == 0:
			o.misses = append(o.misses, fmt.Sprintf("expected[%d] %s: not called", i, want.Tool))
		default:
			o.misses = append(o.misses, fmt.Sprintf("expected[%d] %s: not called after call #%d", i, want.Tool, next))
		}
		if k == len(calls) && next < len(calls) {
			exhaustedBy, next = i, len(calls)
		}
	}
	o.score = float64(len(o.hits)) / float64(len(expected))
	return o
}

// exact compares call i with expected call i and scores the share of matching expected positions, as AgentV
// v2.0.1 does (2 expected, 1 made and matching: 0.5; extra calls do not lower the score). A different number of
// calls is a Fail verdict whatever the score (stricter than AgentV), and the first miss says the counts differ.
// An empty expected list specifies no sequence: score 1 and a pass whatever the calls, as AgentV scores it.
func exact(expected []evalfile.ExpectedCall, calls []toolCall) outcome {
	var o outcome
	if len(expected) == 0 {
		o.score = 1
		o.hits = []string{"no tool sequence specified"}
		return o
	}
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
	if len(calls) != len(expected) {
		o.fail = true
		o.misses = append([]string{fmt.Sprintf("expected exactly %d tool calls, got %d", len(expected), len(calls))}, o.misses...)
	}
	o.score = float64(len(o.hits)) / float64(len(expected))
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
	return textbound.Head(s, n)
}
