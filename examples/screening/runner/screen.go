package main

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Decisions.
const (
	decisionClear  = "CLEAR"
	decisionReview = "REVIEW"
)

// reportingThreshold is the transaction amount at or above which a row needs review.
const reportingThreshold = 10000

// highRiskCountries are origin countries that always need review.
var highRiskCountries = map[string]bool{"KP": true, "IR": true, "MM": true, "SY": true}

// watchlist holds names that match the (fictional) sanctions list, lower-cased.
var watchlist = map[string]bool{"ivan sanctioned": true, "acme shell holdings": true}

// row is the transaction row of a screening request.
type row struct {
	ID            string
	Name          string
	Amount        *float64
	OriginCountry string
	PEP           bool
}

// readRow finds the user message's structured content and reads its row. It returns a reason when the case cannot
// be screened.
func readRow(c evalCase) (row, string) {
	var content map[string]any
	for _, m := range c.InputMessages {
		if m.Role == "user" {
			if obj, ok := m.Content.(map[string]any); ok {
				content = obj
			}
		}
	}
	if content == nil {
		return row{}, "no structured user content"
	}
	raw, ok := content["row"].(map[string]any)
	if !ok {
		return row{}, "user content has no row"
	}
	r := row{ID: c.ID}
	if id, ok := raw["id"].(string); ok && id != "" {
		r.ID = id
	}
	r.Name, _ = raw["name"].(string)
	r.OriginCountry, _ = raw["origin_country"].(string)
	r.PEP, _ = raw["pep"].(bool)
	switch a := raw["amount"].(type) {
	case int:
		v := float64(a)
		r.Amount = &v
	case float64:
		r.Amount = &a
	}
	if r.Amount == nil {
		return row{}, "row has no numeric amount"
	}
	return r, ""
}

// decide applies the screening rules and returns the decision with its reasons, in a stable order.
func decide(r row) (string, []string) {
	var reasons []string
	if watchlist[strings.ToLower(strings.TrimSpace(r.Name))] {
		reasons = append(reasons, "watchlist match")
	}
	if *r.Amount >= reportingThreshold {
		reasons = append(reasons, fmt.Sprintf("amount %.2f at or above the %d reporting threshold", *r.Amount, reportingThreshold))
	}
	if highRiskCountries[strings.ToUpper(r.OriginCountry)] {
		reasons = append(reasons, "high-risk origin country "+strings.ToUpper(r.OriginCountry))
	}
	if r.PEP {
		reasons = append(reasons, "politically exposed person")
	}
	sort.Strings(reasons)
	if len(reasons) > 0 {
		return decisionReview, reasons
	}
	return decisionClear, []string{}
}

// screen turns one case into its output record; a non-empty second value says why the case was skipped. With
// flip, the decision is the opposite one (a model that regressed on this case).
func screen(c evalCase, flip bool) (record, string) {
	start := time.Now()
	r, skip := readRow(c)
	if skip != "" {
		return record{}, skip
	}
	decision, reasons := decide(r)
	if flip {
		decision, reasons = flipDecision(decision), append(reasons, "flipped")
	}
	hit := watchlist[strings.ToLower(strings.TrimSpace(r.Name))]
	calls := []toolCall{
		{Tool: "watchlist_lookup", Input: map[string]any{"name": r.Name}, Output: map[string]any{"hit": hit}},
		{
			Tool:   "screening_check",
			Input:  map[string]any{"origin_country": r.OriginCountry, "amount": *r.Amount},
			Output: map[string]any{"decision": decision, "reasons": reasons},
		},
	}
	if decision == decisionReview {
		calls = append(calls, toolCall{
			Tool:   "create_review_ticket",
			Input:  map[string]any{"row_id": r.ID, "reasons": reasons},
			Output: map[string]any{"ticket": "RV-" + r.ID},
		})
	}
	text, _ := json.Marshal(map[string]any{"decision": decision, "reasons": reasons, "row_id": r.ID})
	return record{
		ID:   c.ID,
		Text: string(text),
		OutputMessages: []outputMessage{
			{Role: "assistant", ToolCalls: calls},
			{Role: "assistant", Content: map[string]any{"decision": decision}},
		},
		DurationMs: float64(time.Since(start).Microseconds()) / 1000,
	}, ""
}

// flipDecision is the opposite decision.
func flipDecision(d string) string {
	if d == decisionClear {
		return decisionReview
	}
	return decisionClear
}
