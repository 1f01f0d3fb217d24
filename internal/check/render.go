package check

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/evalrun-operator/evalrun-operator/internal/evaluate"
	"github.com/evalrun-operator/evalrun-operator/internal/jsonlresult"
)

// tableTextChars bounds the answer excerpt in the table format.
const tableTextChars = 60

// render writes the document in the chosen format.
func render(stdout, stderr io.Writer, format string, doc *Document) error {
	switch format {
	case formatSummary:
		if !doc.OK {
			fmt.Fprintf(stderr, "collector check: %s\n", oneLine.Replace(doc.Error))
		}
		return writeJSON(stdout, SummaryDocument{OK: doc.OK, Summary: doc.Summary})
	case formatTable:
		return writeTable(stdout, doc)
	default:
		return writeJSON(stdout, doc)
	}
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// writeTable writes the document for people: one row per case, then the problems and the verdict.
func writeTable(w io.Writer, doc *Document) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	judged := doc.Summary.Summary != nil
	if judged {
		fmt.Fprintln(tw, "ID\tSTATUS\tVERDICT\tSCORE\tLINE\tTRACE\tMESSAGES\tTEXT")
	} else {
		fmt.Fprintln(tw, "ID\tSTATUS\tLINE\tTRACE\tMESSAGES\tTEXT")
	}
	for _, c := range doc.Cases {
		line := "-"
		if c.Line > 0 {
			line = fmt.Sprint(c.Line)
		}
		fmt.Fprintf(tw, "%s\t%s\t", oneLine.Replace(c.ID), c.Status)
		if judged {
			score := "-"
			if c.Score != nil && (c.Verdict == evaluate.VerdictPass || c.Verdict == evaluate.VerdictFail) {
				score = evaluate.FormatScore(*c.Score)
			}
			fmt.Fprintf(tw, "%s\t%s\t", c.Verdict, score)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\n", line, len(c.Trace),
			len(c.OutputMessages), oneLine.Replace(jsonlresult.Excerpt(c.Text, tableTextChars)))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	s := doc.Summary
	if s.ParseErrors > 0 {
		fmt.Fprintf(w, "\nLine errors (%d):\n", s.ParseErrors)
		for _, e := range doc.ParseErrors {
			fmt.Fprintf(w, "  line %d: %s\n    %s\n", e.Line, e.Message, oneLine.Replace(e.Excerpt))
		}
		if more := s.ParseErrors - len(doc.ParseErrors); more > 0 {
			fmt.Fprintf(w, "  ... and %d more\n", more)
		}
	}
	listIDs(w, "Missing ids", doc.MissingIDs, s.Missing)
	listIDs(w, "Unexpected ids (ignored)", doc.UnexpectedIDs, s.Unexpected)
	fmt.Fprintf(w, "\nrequested %d, present %d, missing %d, unexpected %d, line errors %d\n",
		s.Requested, s.Present, s.Missing, s.Unexpected, s.ParseErrors)
	if j := s.Summary; j != nil {
		fmt.Fprintf(w, "judged: passed %d, failed %d, errored %d, skipped %d", j.Passed, j.Failed, j.Errored, j.Skipped)
		if j.Judged > 0 {
			fmt.Fprintf(w, "; score mean %s, median %s, min %s, max %s", evaluate.FormatScore(j.MeanScore),
				evaluate.FormatScore(j.MedianScore), evaluate.FormatScore(j.MinScore), evaluate.FormatScore(j.MaxScore))
		}
		fmt.Fprintln(w)
	}
	var err error
	if doc.OK {
		_, err = fmt.Fprintln(w, "OK")
	} else {
		_, err = fmt.Fprintf(w, "FAILED: %s\n", oneLine.Replace(doc.Error))
	}
	return err
}

func listIDs(w io.Writer, title string, ids []string, total int) {
	if total == 0 {
		return
	}
	fmt.Fprintf(w, "\n%s (%d):\n", title, total)
	for _, id := range ids {
		fmt.Fprintf(w, "  %s\n", oneLine.Replace(id))
	}
	if more := total - len(ids); more > 0 {
		fmt.Fprintf(w, "  ... and %d more\n", more)
	}
}
