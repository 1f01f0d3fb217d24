package grade42

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/jsonlresult"
)

// AgentV 4.42.4's tool-trajectory grader (graders/tool-trajectory.ts) over the output messages' tool calls:
// any_order (least counts by tool), in_order, exact, superset and subset, arguments compared by args_match (exact
// by default, superset, subset, ignore, or a list of fields), max_duration_ms checked against a call's
// duration_ms; passing at 0.8.

// call42 is one tool call of the answer: its tool, its arguments (decoded; nil when absent) and duration.
type call42 struct {
	name       string
	args       any
	hasArgs    bool
	durationMs *float64
}

// calls42 are the tool calls of the output messages, in order.
func calls42(out output42) []call42 {
	var calls []call42
	for _, m := range out.messages {
		for _, tc := range m.ToolCalls {
			c := call42{name: tc.Tool, durationMs: tc.DurationMs}
			if len(tc.Input) > 0 {
				if json.Unmarshal(tc.Input, &c.args) == nil {
					c.hasArgs = c.args != nil
				}
			}
			calls = append(calls, c)
		}
	}
	return calls
}

// trajectory42 judges a tool-trajectory grader.
func trajectory42(cfg *evalfile.ToolTrajectoryConfig, out output42) grade42 {
	if cfg == nil {
		return errored42("the tool-trajectory grader has no configuration")
	}
	calls := calls42(out)
	switch cfg.Mode {
	case evalfile.ModeAnyOrder:
		return anyOrder42(cfg.Minimums, calls)
	case evalfile.ModeInOrder:
		return sequence42(cfg, calls, false)
	case evalfile.ModeExact:
		return sequence42(cfg, calls, true)
	case evalfile.ModeSuperset:
		return superset42(cfg, calls)
	case evalfile.ModeSubset:
		return subset42(cfg, calls)
	}
	return grade42{verdict: fail42, assertions: []assertion42{{Text: "Unknown mode: " + string(cfg.Mode)}}, aspects: 1}
}

// trivially is a grader with nothing to check: it passes (expectedAspectCount 0).
func trivially(text string) grade42 {
	return grade42{score: 1, verdict: pass42, assertions: []assertion42{{Text: text, Passed: true}}}
}

// ratio42 is a grader scored passed/total with the 0.8 verdict.
func ratio42(assertions []assertion42, passed, total, aspects int) grade42 {
	score := 1.0
	if total > 0 {
		score = float64(passed) / float64(total)
	}
	return grade42{score: score, verdict: verdictOf42(score), assertions: assertions, aspects: aspects}
}

func anyOrder42(minimums []evalfile.ToolMinimum, calls []call42) grade42 {
	if len(minimums) == 0 {
		return trivially("No tool requirements specified")
	}
	counts := map[string]int{}
	for _, c := range calls {
		counts[c.name]++
	}
	var as []assertion42
	passed := 0
	for _, m := range minimums {
		ok := counts[m.Tool] >= m.Count
		if ok {
			passed++
		}
		as = append(as, assertion42{Text: fmt.Sprintf("%s: called %d times (required >=%d)", m.Tool, counts[m.Tool], m.Count), Passed: ok})
	}
	return ratio42(as, passed, len(minimums), len(minimums))
}

// argsMode is an expected call's args_match: its own, else the grader's, else exact.
func argsMode(item evalfile.ExpectedCall, cfg *evalfile.ToolTrajectoryConfig) *evalfile.ArgsMatch {
	switch {
	case item.ArgsMatch != nil:
		return item.ArgsMatch
	case cfg.ArgsMatch != nil:
		return cfg.ArgsMatch
	}
	return &evalfile.ArgsMatch{Mode: "exact"}
}

// argsMatch42 is AgentV's argsMatch: no expected args (or args: any) match anything; ignore matches anything;
// otherwise the call's arguments compared with the expected ones as the mode says.
func argsMatch42(item evalfile.ExpectedCall, call call42, m *evalfile.ArgsMatch) bool {
	if item.AnyArgs || len(item.Args) == 0 {
		return true
	}
	if m.Mode == "ignore" {
		return true
	}
	if !call.hasArgs {
		return false
	}
	var expected any
	if json.Unmarshal(item.Args, &expected) != nil {
		return false
	}
	if m.Fields != nil {
		for _, f := range m.Fields {
			want, ok := nestedValue(expected, f)
			if !ok {
				continue
			}
			got, _ := nestedValue(call.args, f)
			if !reflect.DeepEqual(want, got) {
				return false
			}
		}
		return true
	}
	want, _ := expected.(map[string]any)
	got, isObj := call.args.(map[string]any)
	switch m.Mode {
	case "superset":
		if !isObj {
			return false
		}
		for k, v := range want {
			if g, ok := got[k]; !ok || !reflect.DeepEqual(v, g) {
				return false
			}
		}
		return true
	case "subset":
		if !isObj {
			return false
		}
		for k, v := range got {
			if w, ok := want[k]; !ok || !reflect.DeepEqual(v, w) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(expected, call.args)
}

// nestedValue is AgentV's getNestedValue: the value at a dot path.
func nestedValue(v any, path string) (any, bool) {
	cur := v
	for _, part := range strings.Split(path, ".") {
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = obj[part]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// latencyCheck is AgentV's checkLatency of a matched call: "" when there is nothing to check; skipped when the call
// has no duration.
func latencyCheck(tool string, max, got *float64) (a *assertion42, skipped bool) {
	if max == nil {
		return nil, false
	}
	if got == nil {
		return nil, true
	}
	if *got <= *max {
		return &assertion42{Text: fmt.Sprintf("%s completed in %sms (max: %sms)", tool, jsString(*got), jsString(*max)), Passed: true}, false
	}
	return &assertion42{Text: fmt.Sprintf("%s took %sms (max: %sms)", tool, jsString(*got), jsString(*max))}, false
}

// sequence42 is AgentV's evaluateInOrder (exact false) and evaluateExact: the expected calls found in order (with
// other calls between them, or exactly at their positions), a matched call's latency checked; the score counts
// the calls found and the latencies within bounds over the expected calls and the latency checks that had a
// duration.
func sequence42(cfg *evalfile.ToolTrajectoryConfig, calls []call42, exact bool) grade42 {
	expected := cfg.Expected
	if len(expected) == 0 {
		return trivially("No tool sequence specified")
	}
	var as []assertion42
	hits, latencyHits, latencySkips, latencyChecks := 0, 0, 0, 0
	for _, e := range expected {
		if e.MaxDurationMs != nil {
			latencyChecks++
		}
	}
	check := func(e evalfile.ExpectedCall, c call42) {
		a, skip := latencyCheck(e.Tool, e.MaxDurationMs, c.durationMs)
		switch {
		case skip:
			latencySkips++
		case a != nil:
			as = append(as, *a)
			if a.Passed {
				latencyHits++
			}
		}
	}
	if exact {
		if len(calls) != len(expected) {
			as = append(as, assertion42{Text: fmt.Sprintf("Expected %d tool calls, got %d", len(expected), len(calls))})
		}
		n := min(len(expected), len(calls))
		for i := range n {
			e, c := expected[i], calls[i]
			switch {
			case c.name != e.Tool:
				as = append(as, assertion42{Text: fmt.Sprintf("Position %d: expected %s, got %s", i, e.Tool, c.name)})
			case !argsMatch42(e, c, argsMode(e, cfg)):
				as = append(as, assertion42{Text: fmt.Sprintf("Position %d: %s args mismatch", i, e.Tool)})
			default:
				as = append(as, assertion42{Text: fmt.Sprintf("Position %d: %s", i, e.Tool), Passed: true})
				hits++
				check(e, c)
			}
		}
		for i := n; i < len(expected); i++ {
			as = append(as, assertion42{Text: fmt.Sprintf("Position %d: expected %s, got nothing", i, expected[i].Tool)})
		}
	} else {
		next := 0
		for i, e := range expected {
			found, mismatch := false, false
			for next < len(calls) {
				c := calls[next]
				if c.name == e.Tool {
					if argsMatch42(e, c, argsMode(e, cfg)) {
						as = append(as, assertion42{Text: fmt.Sprintf("Found %s at position %d", e.Tool, next), Passed: true})
						hits++
						next++
						found = true
						check(e, c)
						break
					}
					as = append(as, assertion42{Text: fmt.Sprintf("Expected %s at position %d: tool found at %d but args mismatch", e.Tool, i, next)})
					next++
					mismatch = true
					break
				}
				next++
			}
			if !found && !mismatch {
				as = append(as, assertion42{Text: fmt.Sprintf("Expected %s at position %d, not found in remaining trace", e.Tool, i)})
			}
		}
	}
	total := len(expected) + latencyChecks - latencySkips
	return ratio42(as, hits+latencyHits, total, total)
}

// superset42 is AgentV's evaluateSuperset: every expected call found among the calls, each call used once.
func superset42(cfg *evalfile.ToolTrajectoryConfig, calls []call42) grade42 {
	if len(cfg.Expected) == 0 {
		return trivially("No expected tools specified")
	}
	used := make([]bool, len(calls))
	var as []assertion42
	passed := 0
	for _, e := range cfg.Expected {
		found := false
		for j, c := range calls {
			if !used[j] && c.name == e.Tool && argsMatch42(e, c, argsMode(e, cfg)) {
				as = append(as, assertion42{Text: fmt.Sprintf("Found %s at position %d", e.Tool, j), Passed: true})
				used[j], found = true, true
				passed++
				break
			}
		}
		if !found {
			as = append(as, assertion42{Text: fmt.Sprintf("Expected %s not found in actual trajectory", e.Tool)})
		}
	}
	return ratio42(as, passed, len(cfg.Expected), len(cfg.Expected))
}

// subset42 is AgentV's evaluateSubset: every call is one of the expected (allowed) calls.
func subset42(cfg *evalfile.ToolTrajectoryConfig, calls []call42) grade42 {
	if len(cfg.Expected) == 0 {
		if len(calls) == 0 {
			return trivially("No tool calls and no expected tools")
		}
		return grade42{verdict: fail42, aspects: len(calls),
			assertions: []assertion42{{Text: fmt.Sprintf("%d unexpected tool call(s) with empty allowed list", len(calls))}}}
	}
	if len(calls) == 0 {
		return trivially("No actual tool calls (trivially a subset)")
	}
	var as []assertion42
	passed := 0
	for i, c := range calls {
		allowed := false
		for _, e := range cfg.Expected {
			if c.name == e.Tool && argsMatch42(e, c, argsMode(e, cfg)) {
				allowed = true
				break
			}
		}
		if allowed {
			passed++
			as = append(as, assertion42{Text: fmt.Sprintf("Position %d: %s is in allowed set", i, c.name), Passed: true})
		} else {
			as = append(as, assertion42{Text: fmt.Sprintf("Position %d: %s is not in allowed set", i, c.name)})
		}
	}
	return ratio42(as, passed, len(calls), len(calls))
}

// explorationTools are AgentV's DEFAULT_EXPLORATION_TOOLS.
var explorationTools = []string{"read", "grep", "glob", "search", "list", "Read", "Grep", "Glob", "WebSearch", "WebFetch"}

// executionMetrics42 is AgentV 4.42's execution-metrics grader: each limit set is a check (tool calls, LLM calls (the
// assistant messages), tokens (input and output), cost, duration, the exploration ratio within its tolerance), the
// score the share that pass, passing at 0.8.
func executionMetrics42(cfg *evalfile.ExecutionMetricsConfig, out output42, resp *jsonlresult.Response) grade42 {
	if cfg == nil {
		return errored42("the execution-metrics grader has no configuration")
	}
	calls := calls42(out)
	llmCalls := 0
	for _, m := range out.messages {
		if m.Role == roleAssistant {
			llmCalls++
		}
	}
	var as []assertion42
	bound := func(label string, got, max float64, unit string) {
		if got <= max {
			as = append(as, assertion42{Text: fmt.Sprintf("%s %s%s <= %s%s max", label, jsString(got), unit, jsString(max), unit), Passed: true})
		} else {
			as = append(as, assertion42{Text: fmt.Sprintf("%s %s%s > %s%s max", label, jsString(got), unit, jsString(max), unit)})
		}
	}
	if cfg.MaxToolCalls != nil {
		bound("Tool calls", float64(len(calls)), *cfg.MaxToolCalls, "")
	}
	if cfg.MaxLLMCalls != nil {
		bound("LLM calls", float64(llmCalls), *cfg.MaxLLMCalls, "")
	}
	if cfg.MaxTokens != nil {
		if resp.TokenUsage == nil {
			as = append(as, assertion42{Text: "Token usage data not available"})
		} else {
			bound("Total tokens", resp.TokenUsage.Input+resp.TokenUsage.Output, *cfg.MaxTokens, "")
		}
	}
	if cfg.MaxCostUSD != nil {
		if resp.CostUSD == nil {
			as = append(as, assertion42{Text: "Cost data not available"})
		} else {
			c, m := *resp.CostUSD, *cfg.MaxCostUSD
			as = append(as, assertion42{Text: fmt.Sprintf("Cost $%.4f %s $%.4f max", c, ternary(c <= m, "<=", ">"), m), Passed: c <= m})
		}
	}
	if cfg.MaxDurationMs != nil {
		if resp.DurationMs == nil {
			as = append(as, assertion42{Text: "Duration data not available"})
		} else {
			bound("Duration", *resp.DurationMs, *cfg.MaxDurationMs, "ms")
		}
	}
	if cfg.TargetExplorationRatio != nil {
		if len(calls) == 0 {
			as = append(as, assertion42{Text: "Exploration ratio not available (no tool calls)"})
		} else {
			counts := map[string]int{}
			for _, c := range calls {
				counts[c.name]++
			}
			n := 0
			for _, t := range explorationTools {
				n += counts[t]
			}
			ratio := float64(n) / float64(len(calls))
			target := *cfg.TargetExplorationRatio
			tolerance := 0.2
			if cfg.ExplorationTolerance != nil {
				tolerance = *cfg.ExplorationTolerance
			}
			diff := ratio - target
			if diff < 0 {
				diff = -diff
			}
			if diff <= tolerance {
				as = append(as, assertion42{Text: fmt.Sprintf("Exploration ratio %.2f within tolerance of target %s", ratio, jsString(target)), Passed: true})
			} else {
				as = append(as, assertion42{Text: fmt.Sprintf("Exploration ratio %.2f outside tolerance of target %s (diff: %.2f, tolerance: %s)",
					ratio, jsString(target), diff, jsString(tolerance))})
			}
		}
	}
	passed := 0
	for _, a := range as {
		if a.Passed {
			passed++
		}
	}
	score := 0.0
	if len(as) > 0 {
		score = float64(passed) / float64(len(as))
	}
	return grade42{score: score, verdict: verdictOf42(score), assertions: as, aspects: max(len(as), 1)}
}

// skillTrigger42 is AgentV 4.42's skill-trigger grader: whether a tool call loaded the skill (a Skill tool naming it,
// a Read of a file under skills/NAME/, or a tool output naming such a file), against should_trigger (default true).
func skillTrigger42(cfg *evalfile.SkillTriggerConfig, out output42) grade42 {
	if cfg == nil {
		return errored42("the skill-trigger grader has no configuration")
	}
	should := cfg.ShouldTrigger == nil || *cfg.ShouldTrigger
	skillDir := "skills/" + cfg.Skill + "/"
	triggered, evidence, total := false, "", 0
	for _, m := range out.messages {
		for _, tc := range m.ToolCalls {
			total++
			if triggered {
				continue
			}
			var input map[string]any
			_ = json.Unmarshal(tc.Input, &input)
			switch strings.ToLower(tc.Tool) {
			case "skill":
				arg := jsStringOf(input["skill"])
				if strings.Contains(arg, cfg.Skill) {
					triggered, evidence = true, `Skill tool invoked with skill="`+arg+`"`
				}
			case "read":
				p := input["file_path"]
				if p == nil {
					p = input["path"]
				}
				if fp := jsStringOf(p); strings.Contains(fp, skillDir) {
					triggered, evidence = true, "Read tool loaded skill file: "+fp
				}
			}
			if !triggered && len(tc.Output) > 0 && string(tc.Output) != jsonNull {
				outStr := string(tc.Output)
				var s string
				if json.Unmarshal(tc.Output, &s) == nil {
					outStr = s
				} else if v, err := parseOrdered(tc.Output); err == nil {
					outStr = jsString(v)
				}
				if strings.Contains(outStr, skillDir) {
					triggered, evidence = true, `Tool "`+tc.Tool+`" output referenced skill file for "`+cfg.Skill+`"`
				}
			}
		}
	}
	if triggered == should {
		text := ternary(should, evidence, `Skill "`+cfg.Skill+`" correctly did not trigger`)
		if should && text == "" {
			text = `Skill "` + cfg.Skill + `" triggered as expected`
		}
		return grade42{score: 1, verdict: pass42, assertions: []assertion42{{Text: text, Passed: true}}, aspects: 1}
	}
	text := ""
	switch {
	case should && total > 0:
		text = fmt.Sprintf(`Skill "%s" not found in %d tool call(s)`, cfg.Skill, total)
	case should:
		text = "No tool calls recorded"
	case evidence != "":
		text = evidence
	default:
		text = `Skill "` + cfg.Skill + `" triggered unexpectedly`
	}
	return grade42{verdict: fail42, assertions: []assertion42{{Text: text}}, aspects: 1}
}

// jsStringOf is JavaScript's String(v ?? "") of a decoded JSON value.
func jsStringOf(v any) string {
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return t
	case float64, bool:
		return jsString(t)
	case map[string]any:
		return "[object Object]"
	case []any:
		parts := make([]string, len(t))
		for i, x := range t {
			parts[i] = jsStringOf(x)
		}
		return strings.Join(parts, ",")
	}
	return ""
}

// latency42 is AgentV 4.42's latency grader: the duration at most the threshold. The duration is the invocation's
// as the launcher measured it (PerCase), else the record's duration_ms (AgentV reads the record's).
func latency42(cfg *evalfile.LatencyConfig, resp *jsonlresult.Response) grade42 {
	if cfg == nil {
		return errored42("the latency grader has no configuration")
	}
	var d *float64
	switch {
	case resp.MeasuredDurationMs != nil:
		f := float64(*resp.MeasuredDurationMs)
		d = &f
	case resp.DurationMs != nil:
		d = resp.DurationMs
	}
	if d == nil {
		return grade42{verdict: fail42, assertions: []assertion42{{Text: "No duration data available in trace"}}, aspects: 1,
			request: orderedObject{{keyType, "latency"}, {"threshold", cfg.ThresholdMs}, {keyDuration, nil}}}
	}
	g := binary42(*d <= cfg.ThresholdMs,
		fmt.Sprintf("Duration %sms <= %sms threshold", jsString(*d), jsString(cfg.ThresholdMs)),
		fmt.Sprintf("Duration %sms > %sms threshold", jsString(*d), jsString(cfg.ThresholdMs)))
	g.request = orderedObject{{keyType, "latency"}, {"threshold", cfg.ThresholdMs}, {keyDuration, *d}}
	return g
}

// cost42 is AgentV 4.42's cost grader: the record's cost_usd at most the budget.
func cost42(cfg *evalfile.CostConfig, resp *jsonlresult.Response) grade42 {
	if cfg == nil {
		return errored42("the cost grader has no configuration")
	}
	if resp.CostUSD == nil {
		return grade42{verdict: fail42, assertions: []assertion42{{Text: "No cost data available in trace"}}, aspects: 1,
			request: orderedObject{{keyType, "cost"}, {"budget", cfg.BudgetUSD}, {"costUsd", nil}}}
	}
	c, b := *resp.CostUSD, cfg.BudgetUSD
	g := binary42(c <= b, fmt.Sprintf("Cost $%.4f <= $%.4f budget", c, b), fmt.Sprintf("Cost $%.4f > $%.4f budget", c, b))
	g.request = orderedObject{{keyType, "cost"}, {"budget", b}, {"costUsd", c}}
	return g
}

// tokenUsage42 is AgentV 4.42's token-usage grader: each limit set holds (the total counts cached tokens).
func tokenUsage42(cfg *evalfile.TokenUsageConfig, resp *jsonlresult.Response) grade42 {
	if cfg == nil {
		return errored42("the token-usage grader has no configuration")
	}
	aspects := 0
	for _, l := range []*float64{cfg.MaxTotal, cfg.MaxInput, cfg.MaxOutput} {
		if l != nil {
			aspects++
		}
	}
	aspects = max(aspects, 1)
	u := resp.TokenUsage
	if u == nil {
		return grade42{verdict: fail42, assertions: []assertion42{{Text: "No token usage data available in trace"}}, aspects: aspects}
	}
	cached := 0.0
	if u.Cached != nil {
		cached = *u.Cached
	}
	total := u.Input + u.Output + cached
	var as []assertion42
	check := func(label string, got float64, limit *float64) {
		if limit == nil {
			return
		}
		ok := got <= *limit
		as = append(as, assertion42{Text: fmt.Sprintf("%s tokens %s %s %s", label, jsString(got), ternary(ok, "<=", ">"), jsString(*limit)), Passed: ok})
	}
	check("Input", u.Input, cfg.MaxInput)
	check("Output", u.Output, cfg.MaxOutput)
	check("Total", total, cfg.MaxTotal)
	ok := true
	for _, a := range as {
		ok = ok && a.Passed
	}
	g := grade42{verdict: fail42, assertions: as, aspects: aspects}
	if ok {
		g.score, g.verdict = 1, pass42
	}
	return g
}

// binary42 is a grader that passes (score 1) or fails (0), with the assertion of either.
func binary42(ok bool, passText, failText string) grade42 {
	if ok {
		return grade42{score: 1, verdict: pass42, assertions: []assertion42{{Text: passText, Passed: true}}, aspects: 1}
	}
	return grade42{verdict: fail42, assertions: []assertion42{{Text: failText}}, aspects: 1}
}
