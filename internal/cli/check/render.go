package check

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// tableTextBytes bounds the answer excerpt in the table format, in bytes.
const tableTextBytes = 60

// render writes the document in the chosen format.
func render(stdout, stderr io.Writer, format string, doc *Document) error {
	switch format {
	case formatSummary:
		if !doc.OK {
			// The verdict goes to stdout; the reason on stderr is a courtesy, so a failed write is not an error.
			_, _ = fmt.Fprintf(stderr, "collector check: %s\n", oneLine(doc.Error))
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
func writeTable(out io.Writer, doc *Document) error {
	w := &errWriter{w: out}
	tw := &errWriter{w: tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)}
	judged := doc.Summary.Summary != nil
	if judged {
		tw.println("ID\tSTATUS\tVERDICT\tSCORE\tLINE\tTRACE\tMESSAGES\tTEXT")
	} else {
		tw.println("ID\tSTATUS\tLINE\tTRACE\tMESSAGES\tTEXT")
	}
	for _, c := range doc.Cases {
		line := "-"
		if c.Line > 0 {
			line = fmt.Sprint(c.Line)
		}
		tw.printf("%s\t%s\t", oneLine(c.ID), c.Status)
		if judged {
			score := "-"
			if c.Score != nil && (c.Verdict == verdict.VerdictPass || c.Verdict == verdict.VerdictFail) {
				score = verdict.FormatScore(*c.Score)
			}
			tw.printf("%s\t%s\t", c.Verdict, score)
		}
		tw.printf("%s\t%d\t%d\t%s\n", line, len(c.Trace),
			len(c.OutputMessages), textbound.PrintableHead(strings.ReplaceAll(c.Text, "\t", `\t`), tableTextBytes))
	}
	if err := tw.flush(); err != nil {
		return err
	}
	s := doc.Summary
	if s.ParseErrors > 0 {
		w.printf("\nLine errors (%d):\n", s.ParseErrors)
		for _, e := range doc.ParseErrors {
			w.printf("  line %d: %s\n    %s\n", e.Line, oneLine(e.Message), oneLine(e.Excerpt))
		}
		if more := s.ParseErrors - len(doc.ParseErrors); more > 0 {
			w.printf("  ... and %d more\n", more)
		}
	}
	listIDs(w, "Missing ids", doc.MissingIDs, s.Missing)
	listIDs(w, "Unexpected ids (ignored)", doc.UnexpectedIDs, s.Unexpected)
	w.printf("\nrequested %d, present %d, missing %d, unexpected %d, line errors %d\n",
		s.Requested, s.Present, s.Missing, s.Unexpected, s.ParseErrors)
	if j := s.Summary; j != nil {
		w.printf("judged: passed %d, failed %d, errored %d, skipped %d", j.Passed, j.Failed, j.Errored, j.Skipped)
		if j.BudgetUnjudged > 0 {
			w.printf(" (%d errored: left unjudged by the LLM judging budget)", j.BudgetUnjudged)
		}
		if j.Judged > 0 {
			w.printf("; score mean %s, median %s, min %s, max %s", verdict.FormatScore(j.MeanScore),
				verdict.FormatScore(j.MedianScore), verdict.FormatScore(j.MinScore), verdict.FormatScore(j.MaxScore))
		}
		w.println()
	}
	if doc.OK {
		w.println("OK")
	} else {
		w.printf("FAILED: %s\n", oneLine(doc.Error))
	}
	return w.err
}

func listIDs(w *errWriter, title string, ids []string, total int) {
	if total == 0 {
		return
	}
	w.printf("\n%s (%d):\n", title, total)
	for _, id := range ids {
		w.printf("  %s\n", oneLine(id))
	}
	if more := total - len(ids); more > 0 {
		w.printf("  ... and %d more\n", more)
	}
}

// errWriter remembers the first write error, so that a function writing many lines checks once at the end.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}

func (e *errWriter) println(args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintln(e.w, args...)
	}
}

// flush flushes a tabwriter underneath and returns the first error.
func (e *errWriter) flush() error {
	if f, ok := e.w.(interface{ Flush() error }); ok && e.err == nil {
		e.err = f.Flush()
	}
	return e.err
}
