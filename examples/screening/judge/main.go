// Command screening-judge is the screening example's code_judge. It reads the code_judge input (one JSON object
// on stdin: candidate_answer, expected_messages, config, ...) and prints one JSON object
// {score, hits, misses, reasoning} on stdout.
//
// It checks that the candidate's decision equals the expected decision (the last expected message whose content
// has a decision) and that the reasons agree with it: a REVIEW needs at least one reason, a CLEAR none. With
// config.require_reasons false only the decision counts.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// input is the part of the code_judge payload the judge reads.
type input struct {
	EvalID           string `json:"eval_id"`
	CandidateAnswer  string `json:"candidate_answer"`
	ExpectedMessages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"expected_messages"`
	Config struct {
		RequireReasons *bool `json:"require_reasons"`
	} `json:"config"`
}

// result is the code_judge output.
type result struct {
	Score     float64  `json:"score"`
	Hits      []string `json:"hits"`
	Misses    []string `json:"misses"`
	Reasoning string   `json:"reasoning"`
}

type answer struct {
	Decision string   `json:"decision"`
	Reasons  []string `json:"reasons"`
}

func main() {
	os.Exit(run(os.Stdin, os.Stdout, os.Stderr))
}

func run(stdin io.Reader, stdout, stderr io.Writer) int {
	data, err := io.ReadAll(io.LimitReader(stdin, 16<<20))
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "screening-judge: reading stdin: %v\n", err)
		return 1
	}
	var in input
	if err := json.Unmarshal(data, &in); err != nil {
		_, _ = fmt.Fprintf(stderr, "screening-judge: stdin is not the code_judge JSON: %v\n", err)
		return 1
	}
	if err := json.NewEncoder(stdout).Encode(judge(in)); err != nil {
		_, _ = fmt.Fprintf(stderr, "screening-judge: %v\n", err)
		return 1
	}
	return 0
}

// expectedDecision is the decision of the last expected message that has one.
func expectedDecision(in input) string {
	decision := ""
	for _, m := range in.ExpectedMessages {
		var c struct {
			Decision string `json:"decision"`
		}
		if json.Unmarshal(m.Content, &c) == nil && c.Decision != "" {
			decision = c.Decision
		}
	}
	return decision
}

func judge(in input) result {
	r := result{Hits: []string{}, Misses: []string{}}
	want := expectedDecision(in)
	if want == "" {
		r.Misses = append(r.Misses, "no expected decision in expected_messages")
		r.Reasoning = "Cannot judge: the case has no expected decision."
		return r
	}
	var got answer
	if err := json.Unmarshal([]byte(in.CandidateAnswer), &got); err != nil || got.Decision == "" {
		r.Misses = append(r.Misses, "candidate answer is not JSON with a decision")
		r.Reasoning = "The runner's answer could not be read."
		return r
	}
	checks, passed := 1, 0
	if got.Decision == want {
		passed++
		r.Hits = append(r.Hits, "decision matches: "+want)
	} else {
		r.Misses = append(r.Misses, fmt.Sprintf("decision mismatch: expected=%s actual=%s", want, got.Decision))
	}
	if in.Config.RequireReasons == nil || *in.Config.RequireReasons {
		checks++
		switch {
		case got.Decision == "REVIEW" && len(got.Reasons) == 0:
			r.Misses = append(r.Misses, "REVIEW without reasons")
		case got.Decision == "CLEAR" && len(got.Reasons) > 0:
			r.Misses = append(r.Misses, fmt.Sprintf("CLEAR with %d reasons", len(got.Reasons)))
		default:
			passed++
			r.Hits = append(r.Hits, fmt.Sprintf("%d reasons consistent with %s", len(got.Reasons), got.Decision))
		}
	}
	r.Score = float64(passed) / float64(checks)
	if len(r.Misses) == 0 {
		r.Reasoning = "Decision and reasons match the expectation."
	} else {
		r.Reasoning = "The screening output does not match the expectation."
	}
	return r
}
