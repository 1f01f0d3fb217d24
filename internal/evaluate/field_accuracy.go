package evaluate

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/jsonlresult"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// fieldResult is one field's comparison.
type fieldResult struct {
	score, weight float64
	hit           bool
	note          string
}

// FieldAccuracy judges a field_accuracy evaluator (AgentV 4.42's field-accuracy grader reads the same comparison):
// the fields of the case's expected output compared with those of the answer (resp.Text) as JSON, scored by the
// evaluator's aggregation, the verdict left to the caller.
func FieldAccuracy(cfg *evalfile.FieldAccuracyConfig, c *evalfile.Case, resp *jsonlresult.Response) verdict.EvaluatorResult {
	return deterministic(fieldAccuracy(cfg, c, resp))
}

func fieldAccuracy(cfg *evalfile.FieldAccuracyConfig, c *evalfile.Case, resp *jsonlresult.Response) outcome {
	candidate, err := parseJSONFromText(resp.Text)
	if err != nil {
		return outcome{misses: []string{"the candidate answer is not JSON: " + excerpt(resp.Text, 120)},
			reasoning: "field_accuracy parses the candidate answer as JSON"}
	}
	exp := c.ExpectedAssistantContent()
	if exp == nil {
		return outcome{misses: []string{"the case has no expected assistant message with content to compare against"},
			reasoning: reasonComparesExpected}
	}
	var expected any
	switch exp.Kind {
	case evalfile.ContentObject:
		if err := json.Unmarshal(exp.Raw, &expected); err != nil {
			return outcome{misses: []string{"the expected content is not valid JSON"}}
		}
	case evalfile.ContentText:
		if expected, err = parseJSONFromText(exp.Text); err != nil {
			return outcome{misses: []string{"the expected content is a string that is not JSON: " + excerpt(exp.Text, 120)},
				reasoning: reasonComparesExpected}
		}
	default:
		return outcome{misses: []string{"the expected content is a list of segments, not a JSON value"},
			reasoning: reasonComparesExpected}
	}

	results := make([]fieldResult, 0, len(cfg.Fields))
	var o outcome
	for _, f := range cfg.Fields {
		r := compareField(f, candidate, expected)
		results = append(results, r)
		if r.hit {
			o.hits = append(o.hits, r.note)
		} else {
			o.misses = append(o.misses, r.note)
		}
	}
	if cfg.Aggregation == evalfile.AggregationAllOrNothing {
		if len(o.misses) == 0 {
			o.score = 1
		}
		o.reasoning = fmt.Sprintf("all_or_nothing: %d of %d fields matched", len(o.hits), len(results))
		return o
	}
	var sum, weights float64
	for _, r := range results {
		sum += r.score * r.weight
		weights += r.weight
	}
	if weights > 0 {
		o.score = sum / weights
		o.reasoning = fmt.Sprintf("weighted_average: %d of %d fields matched", len(o.hits), len(results))
	} else {
		o.reasoning = "weighted_average: no field carried weight (every field was optional and missing, or weighted 0)"
	}
	return o
}

func compareField(f evalfile.FieldSpec, candidate, expected any) fieldResult {
	parts, _ := evalfile.SplitFieldPath(f.Path) // validated by evalfile
	want, okWant := resolvePath(expected, parts)
	got, okGot := resolvePath(candidate, parts)
	switch {
	case !okWant:
		return fieldResult{score: 1, weight: f.Weight, hit: true, note: f.Path + ": no expected value, not compared"}
	case !okGot && f.Required:
		return fieldResult{weight: f.Weight, note: fmt.Sprintf("%s: missing (required, expected %s)", f.Path, jsonExcerpt(want))}
	case !okGot:
		return fieldResult{score: 1, hit: true, note: f.Path + ": optional and missing, not counted"}
	}
	hit, note := false, ""
	switch f.Match {
	case evalfile.MatchExact:
		hit, note = matchExact(got, want)
	case evalfile.MatchNumericTolerance:
		hit, note = matchNumeric(got, want, f.Tolerance, f.Relative)
	case evalfile.MatchDate:
		hit, note = matchDate(got, want, f.Formats)
	}
	r := fieldResult{weight: f.Weight, hit: hit, note: f.Path + ": " + note}
	if hit {
		r.score = 1
	}
	return r
}

// resolvePath follows a split field path; ok is false when a part is missing. A JSON null counts as present.
func resolvePath(v any, parts []string) (any, bool) {
	cur := v
	for _, p := range parts {
		switch t := cur.(type) {
		case map[string]any:
			next, ok := t[p]
			if !ok {
				return nil, false
			}
			cur = next
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(t) {
				return nil, false
			}
			cur = t[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

func matchExact(got, want any) (bool, string) {
	if reflect.DeepEqual(got, want) {
		return true, "matches " + jsonExcerpt(want)
	}
	if gk, wk := jsonKind(got), jsonKind(want); gk != wk {
		return false, fmt.Sprintf("type mismatch: got %s %s, expected %s %s", gk, jsonExcerpt(got), wk, jsonExcerpt(want))
	}
	return false, fmt.Sprintf("got %s, expected %s", jsonExcerpt(got), jsonExcerpt(want))
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	}
	return "object"
}

func matchNumeric(got, want any, tolerance float64, relative bool) (bool, string) {
	g, okG := toNumber(got)
	w, okW := toNumber(want)
	switch {
	case !okW:
		return false, "the expected value " + jsonExcerpt(want) + " is not numeric"
	case !okG:
		return false, "got " + jsonExcerpt(got) + ", which is not numeric (expected " + jsonExcerpt(want) + ")"
	}
	diff := math.Abs(g - w)
	measured, kind := diff, "absolute"
	if relative {
		kind = "relative"
		if w != 0 {
			measured = diff / math.Abs(w)
		}
	}
	desc := fmt.Sprintf("got %s, expected %s (%s difference %s, tolerance %s)",
		fmtNum(g), fmtNum(w), kind, fmtNum(measured), fmtNum(tolerance))
	return measured <= tolerance+scoreEpsilon*math.Max(1, tolerance), desc
}

func fmtNum(f float64) string { return strconv.FormatFloat(f, 'g', 6, 64) }

// toNumber reads a JSON number or a numeric string.
func toNumber(v any) (float64, bool) {
	switch t := v.(type) {
	case float64:
		return t, true
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return 0, false
		}
		return f, true
	}
	return 0, false
}

func matchDate(got, want any, formats []string) (bool, string) {
	ws, gs := fmt.Sprint(want), fmt.Sprint(got)
	w, okW := parseDate(ws, formats)
	g, okG := parseDate(gs, formats)
	switch {
	case !okW:
		return false, "the expected value " + jsonExcerpt(want) + " is not a date"
	case !okG:
		return false, "got " + jsonExcerpt(got) + ", which is not a date (expected " + w.String() + ")"
	case g == w:
		return true, "date " + w.String() + " matches"
	}
	return false, fmt.Sprintf("got date %s, expected %s", g, w)
}

// civilDate is a calendar date.
type civilDate struct{ y, m, d int }

func (c civilDate) String() string { return fmt.Sprintf("%04d-%02d-%02d", c.y, c.m, c.d) }

var (
	isoLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02"}
	namedMonth = regexp.MustCompile(`^(\d{1,2})[- ]([A-Za-z]{3,9})[- ](\d{4})$`)
	numeric    = regexp.MustCompile(`^(\d{1,2})[/-](\d{1,2})[/-](\d{4})$`)
	months     = map[string]int{
		"jan": 1, "january": 1, "feb": 2, "february": 2, "mar": 3, "march": 3, "apr": 4, "april": 4, "may": 5,
		"jun": 6, "june": 6, "jul": 7, "july": 7, "aug": 8, "august": 8, "sep": 9, "sept": 9, "september": 9,
		"oct": 10, "october": 10, "nov": 11, "november": 11, "dec": 12, "december": 12,
	}
)

// parseDate reads ISO dates and date-times (the calendar date as written, whatever the offset), DD-MMM-YYYY, and
// numeric dates with / or -. A numeric date is read as US (MM/DD/YYYY) or EU (DD/MM/YYYY) when formats name only
// one of them; otherwise a first number above 12 means EU, a second above 12 means US, and US is the default.
func parseDate(s string, formats []string) (civilDate, bool) {
	s = strings.TrimSpace(s)
	for _, layout := range isoLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			y, m, d := t.Date()
			return civilDate{y, int(m), d}, true
		}
	}
	if m := namedMonth.FindStringSubmatch(s); m != nil {
		month, ok := months[strings.ToLower(m[2])]
		if !ok {
			return civilDate{}, false
		}
		d, _ := strconv.Atoi(m[1])
		y, _ := strconv.Atoi(m[3])
		return validDate(y, month, d)
	}
	m := numeric.FindStringSubmatch(s)
	if m == nil {
		return civilDate{}, false
	}
	a, _ := strconv.Atoi(m[1])
	b, _ := strconv.Atoi(m[2])
	y, _ := strconv.Atoi(m[3])
	us, eu := false, false
	for _, f := range formats {
		us = us || strings.Contains(f, "MM/DD") || strings.Contains(f, "MM-DD")
		eu = eu || strings.Contains(f, "DD/MM") || strings.Contains(f, "DD-MM")
	}
	switch {
	case us && !eu:
		return validDate(y, a, b)
	case eu && !us:
		return validDate(y, b, a)
	case a > 12 && b <= 12:
		return validDate(y, b, a)
	default:
		return validDate(y, a, b)
	}
}

func validDate(y, m, d int) (civilDate, bool) {
	if m < 1 || m > 12 || d < 1 {
		return civilDate{}, false
	}
	t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
	if t.Day() != d {
		return civilDate{}, false
	}
	return civilDate{y, m, d}, true
}

// parseJSONFromText reads a JSON value from an answer: the whole text, a ```json fenced block, or the span from
// the first '{' to the last '}'.
func parseJSONFromText(text string) (any, error) {
	s := strings.TrimSpace(text)
	var v any
	if err := json.Unmarshal([]byte(s), &v); err == nil {
		return v, nil
	}
	if i := strings.Index(s, "```"); i >= 0 {
		body := s[i+3:]
		if nl := strings.IndexByte(body, '\n'); nl >= 0 {
			body = body[nl+1:]
		}
		if end := strings.Index(body, "```"); end >= 0 {
			if err := json.Unmarshal([]byte(strings.TrimSpace(body[:end])), &v); err == nil {
				return v, nil
			}
		}
	}
	if i, j := strings.IndexByte(s, '{'), strings.LastIndexByte(s, '}'); i >= 0 && j > i {
		if err := json.Unmarshal([]byte(s[i:j+1]), &v); err == nil {
			return v, nil
		}
	}
	return nil, fmt.Errorf("no JSON value found")
}

// reasonComparesExpected explains where field_accuracy takes its expectation from.
const reasonComparesExpected = "field_accuracy compares with the last expected assistant message's content"
