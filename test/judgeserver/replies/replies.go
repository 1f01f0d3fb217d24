// Package replies holds judge replies that are a function of the request's prompts alone, so that two judging
// programs sending the same prompts get the same replies: the oracle comparison of internal/check
// (TestAgentVExamples) asks AgentV v2.0.1 and the operator the same way, through test/judgeserver --replies hashed
// when AgentV is recorded and through Hashed in the test, and compares the scores they make of them.
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

// rubricID matches a rubric line of a rubric prompt: "- [id]...".
var rubricID = regexp.MustCompile(`(?m)^- \[([^\]]+)\]`)

// Hashed returns the reply content to a system and a user prompt, with root (an absolute path, "" for none)
// written as BundlePlaceholder first. It depends on nothing else:
//   - a rubric prompt (the system prompt asks for "checks"): every rubric id listed after "[[ ## rubrics ## ]]" is
//     checked, satisfied unless the hash of the prompts and the id is 0 modulo 3;
//   - any other prompt: a score in {0, 0.1, ..., 1}, the hash of the prompts modulo 11 tenths, with one hit and
//     one miss naming it.
func Hashed(system, user, root string) string {
	if root != "" {
		system = strings.ReplaceAll(system, root, BundlePlaceholder)
		user = strings.ReplaceAll(user, root, BundlePlaceholder)
	}
	sum := sha256.Sum256([]byte(system + "\x00" + user))
	if strings.Contains(system, `"checks"`) {
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
		b, _ := json.Marshal(map[string]any{"checks": checks, "overall_reasoning": fmt.Sprintf("%d rubrics checked by hash", len(checks))})
		return string(b)
	}
	score := float64(sum[0]%11) / 10
	b, _ := json.Marshal(map[string]any{"score": score, "hits": []string{fmt.Sprintf("hash %02x", sum[0])},
		"misses": []string{fmt.Sprintf("hash %02x", sum[1])}, "reasoning": fmt.Sprintf("score %.1f by hash", score)})
	return string(b)
}
