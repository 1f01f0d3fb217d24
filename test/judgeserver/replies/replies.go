// Package replies holds judge replies that are a function of the request's prompts alone, so that two judging
// programs sending the same prompts get the same replies: the oracle comparisons of internal/check ask AgentV
// (v2.0.1, TestAgentVExamples; 4.42.4, testdata/agentv442) and the operator the same way, through
// test/judgeserver --replies hashed when AgentV is recorded and through Hashed in the tests, and compare the scores
// they make of them.
package replies

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// BundlePlaceholder is what a bundle's absolute path is written as before hashing (the recordings write it so too):
// the same bundle at two places gives the same replies.
const BundlePlaceholder = "/BUNDLE"

var (
	// rubricID matches a rubric line of a checklist prompt: "- [id]...".
	rubricID = regexp.MustCompile(`(?m)^- \[([^\]]+)\]`)
	// criterionID matches a criterion heading of AgentV 4.42's score-range prompt: "### Criterion: id", then
	// " (weight: w)" and " [REQUIRED: min score s]" when set.
	criterionID = regexp.MustCompile(`(?m)^### Criterion: (.*?)(?: \(weight: [^)]*\))?(?: \[REQUIRED: [^\]]*\])?$`)
)

// The reply schemas, told apart by what the system prompt asks for.
const (
	// scoreRangeMark is in AgentV 4.42's score-range rubric schema: an integer score 0-10 per criterion.
	scoreRangeMark = `"score": integer (0-10)`
	// checksMark is in every checklist rubric schema (AgentV v2.0.1 and 4.42, the operator's): {checks: [{id,
	// satisfied, reasoning}]}.
	checksMark = `"checks"`
	// assertionsMark is in AgentV 4.42's freeform schema: {score, assertions: [{text, passed, evidence}], details}.
	assertionsMark = `"assertions"`
)

// Hashed returns the reply content to a system and a user prompt, with root (an absolute path, "" for none)
// written as BundlePlaceholder first. It depends on nothing else. The reply has the schema the system prompt asks
// for:
//   - a score-range rubric prompt (AgentV 4.42: "score": integer (0-10)): every criterion id of the
//     "### Criterion: id" headings after "[[ ## scoring_criteria ## ]]" scored 0..10, the hash of the prompts and the
//     id modulo 11;
//   - a checklist rubric prompt (the system prompt asks for "checks"): every rubric id listed after
//     "[[ ## rubrics ## ]]" is checked, satisfied unless the hash of the prompts and the id is 0 modulo 3;
//   - AgentV 4.42's freeform prompt (the system prompt asks for "assertions"): a score in {0, 0.1, ..., 1}, the hash
//     of the prompts modulo 11 tenths, one to three assertions passed or not by the hash's bits, and details naming
//     the hash;
//   - any other prompt (AgentV v2.0.1's and the operator's freeform): the same score with one hit and one miss
//     naming it.
func Hashed(system, user, root string) string {
	if root != "" {
		system = strings.ReplaceAll(system, root, BundlePlaceholder)
		user = strings.ReplaceAll(user, root, BundlePlaceholder)
	}
	sum := sha256.Sum256([]byte(system + "\x00" + user))
	score := float64(sum[0]%11) / 10
	switch {
	case strings.Contains(system, scoreRangeMark):
		type check struct {
			ID        string `json:"id"`
			Score     int    `json:"score"`
			Reasoning string `json:"reasoning"`
		}
		checks := []check{}
		if _, criteria, ok := strings.Cut(user, "[[ ## scoring_criteria ## ]]\n"); ok {
			for _, m := range criterionID.FindAllStringSubmatch(criteria, -1) {
				h := sha256.Sum256(append(sum[:], m[1]...))
				checks = append(checks, check{ID: m[1], Score: int(h[0] % 11), Reasoning: fmt.Sprintf("hash %02x", h[0])})
			}
		}
		return marshal(map[string]any{"checks": checks, "overall_reasoning": fmt.Sprintf("%d criteria scored by hash", len(checks))})
	case strings.Contains(system, checksMark):
		type check struct {
			ID        string `json:"id"`
			Satisfied bool   `json:"satisfied"`
			Reasoning string `json:"reasoning"`
		}
		checks := []check{}
		if _, rubrics, ok := strings.Cut(user, "[[ ## rubrics ## ]]\n"); ok {
			for _, m := range rubricID.FindAllStringSubmatch(rubrics, -1) {
				h := sha256.Sum256(append(sum[:], m[1]...))
				checks = append(checks, check{ID: m[1], Satisfied: h[0]%3 != 0, Reasoning: fmt.Sprintf("hash %02x", h[0])})
			}
		}
		return marshal(map[string]any{"checks": checks, "overall_reasoning": fmt.Sprintf("%d rubrics checked by hash", len(checks))})
	case strings.Contains(system, assertionsMark):
		type assertion struct {
			Text     string `json:"text"`
			Passed   bool   `json:"passed"`
			Evidence string `json:"evidence"`
		}
		n := 1 + int(sum[1]%3)
		assertions := make([]assertion, n)
		for i := range assertions {
			assertions[i] = assertion{Text: fmt.Sprintf("aspect %d of hash %02x", i+1, sum[0]), Passed: sum[2]>>i&1 == 1,
				Evidence: fmt.Sprintf("bit %d of %02x", i, sum[2])}
		}
		return marshal(map[string]any{"score": score, "assertions": assertions,
			"details": map[string]any{"hash": fmt.Sprintf("%02x%02x%02x", sum[0], sum[1], sum[2])}})
	}
	return marshal(map[string]any{"score": score, "hits": []string{fmt.Sprintf("hash %02x", sum[0])},
		"misses": []string{fmt.Sprintf("hash %02x", sum[1])}, "reasoning": fmt.Sprintf("score %.1f by hash", score)})
}

func marshal(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // maps of strings, numbers and bools always marshal
	}
	return string(b)
}
