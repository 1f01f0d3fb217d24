// Package check implements `collector check`, the offline check users run on a runner's output before they deploy
// (and the acceptance harness of the project): it reads the output exactly as the in-pod collector does and
// reports, per requested case, the answer, trace and metrics, plus missing ids, unexpected ids and line errors.
//
// The command runs in steps (read the requested ids, parse the output, build the cases in requested order,
// render), so that judging can be added as one more step per case between building and rendering.
package check

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/jsonlresult"
)

// Exit codes of the command.
const (
	ExitOK     = 0 // every requested case has a result and the output has no line errors
	ExitFailed = 1 // the output fails the check
	ExitUsage  = 2 // bad flags, or an I/O error
)

// Modes and formats.
const (
	modeBatch  = "batch"
	modeSingle = "single"

	formatJSON    = "json"
	formatTable   = "table"
	formatSummary = "summary"
)

const usageText = `usage: collector check --mode batch|single (--eval EVAL.yaml | --ids a,b,c | --ids-file FILE) --output FILE
                       [--format json|table|summary] [--run-code-judges] [--judging JUDGING.yaml] [--pass-threshold 0.8]

Checks a runner's output the way the collector reads it. With --eval it also judges every case with the eval
file's evaluators (code_judge scripts run, in the eval file's directory, only with --run-code-judges). Exit code 0
when every requested case has a result and the output has no line errors, 1 when it fails the check, 2 for usage
or I/O errors.`

// config is the command line.
type config struct {
	mode     string
	evalPath string
	ids      string
	idsFile  string
	output   string
	format   string
	// runCodeJudges runs code_judge scripts locally when judging with --eval.
	runCodeJudges bool
	// passThreshold is the EvalRun's judging.passThreshold; judgingPath names a YAML or JSON file holding the
	// EvalRun's judging section (its evaluators are the defaults for cases that declare none).
	passThreshold string
	judgingPath   string
}

// usageError is a problem with the command line.
type usageError string

func (e usageError) Error() string { return string(e) }

// Main runs `collector check` with args (the flags after "check") and returns the exit code.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return ExitOK
	}
	if err != nil {
		printErr(stderr, "collector check: %v\n%s\n", err, usageText)
		return ExitUsage
	}
	doc, err := run(ctx, cfg)
	if err != nil {
		var ue usageError
		if errors.As(err, &ue) {
			printErr(stderr, "collector check: %v\n%s\n", err, usageText)
		} else {
			printErr(stderr, "collector check: %v\n", err)
		}
		return ExitUsage
	}
	if err := render(stdout, stderr, cfg.format, doc); err != nil {
		printErr(stderr, "collector check: writing the result: %v\n", err)
		return ExitUsage
	}
	if !doc.OK {
		return ExitFailed
	}
	return ExitOK
}

// printErr reports on stderr; the exit code carries the outcome, so a failed write to stderr is ignored.
func printErr(stderr io.Writer, format string, args ...any) {
	_, _ = fmt.Fprintf(stderr, format, args...)
}

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	cfg := &config{}
	fs := flag.NewFlagSet("collector check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		_, _ = fmt.Fprintln(fs.Output(), usageText)
		fs.PrintDefaults()
	}
	fs.StringVar(&cfg.mode, "mode", "", "output contract: batch (one JSONL file for all cases) or single (one file for one case)")
	fs.StringVar(&cfg.evalPath, "eval", "", "eval file whose evalcases are the requested cases")
	fs.StringVar(&cfg.ids, "ids", "", "comma-separated requested case ids")
	fs.StringVar(&cfg.idsFile, "ids-file", "", "file with one requested case id per line")
	fs.StringVar(&cfg.output, "output", "", "the runner's output file")
	fs.StringVar(&cfg.format, "format", formatJSON, "json, table or summary")
	fs.BoolVar(&cfg.runCodeJudges, "run-code-judges", false, "with --eval, run code_judge scripts locally (they run the eval file's commands)")
	fs.StringVar(&cfg.passThreshold, "pass-threshold", "", "with --eval, the EvalRun's judging.passThreshold (default: the judging file's, else 0.8)")
	fs.StringVar(&cfg.judgingPath, "judging", "",
		"with --eval, a YAML or JSON file holding the EvalRun's spec.judging (evaluators, passThreshold): the in-cluster verdicts")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	switch cfg.mode {
	case modeBatch, modeSingle:
	case "":
		return nil, errors.New("--mode is required")
	default:
		return nil, fmt.Errorf("--mode must be batch or single, got %q", cfg.mode)
	}
	sources := 0
	for _, s := range []string{cfg.evalPath, cfg.ids, cfg.idsFile} {
		if s != "" {
			sources++
		}
	}
	if sources != 1 {
		return nil, errors.New("give exactly one of --eval, --ids and --ids-file")
	}
	if (cfg.passThreshold != "" || cfg.judgingPath != "") && cfg.evalPath == "" {
		return nil, errors.New("--pass-threshold and --judging need --eval")
	}
	if cfg.output == "" {
		return nil, errors.New("--output is required")
	}
	if cfg.runCodeJudges && cfg.evalPath == "" {
		return nil, errors.New("--run-code-judges needs --eval")
	}
	switch cfg.format {
	case formatJSON, formatTable, formatSummary:
	default:
		return nil, fmt.Errorf("--format must be json, table or summary, got %q", cfg.format)
	}
	return cfg, nil
}

// plan is what a check works on: the requested ids in order and, with --eval, the eval file and the judging step.
type plan struct {
	ids   []string
	eval  *evalfile.File
	judge *judging
}

// run checks the output and returns the document; an error means a usage or I/O problem (exit code 2).
func run(ctx context.Context, cfg *config) (*Document, error) {
	// Step 1: the requested ids.
	ids, eval, err := requestedIDs(cfg)
	if err != nil {
		return nil, err
	}
	// Step 2: parse the output. With --format summary the responses are not kept, so that very large outputs
	// are checked in bounded memory; with --eval each response is judged as it arrives.
	keep := cfg.format != formatSummary
	judge, err := newJudging(ctx, cfg, eval, keep)
	if err != nil {
		return nil, err
	}
	p := &plan{ids: ids, eval: eval, judge: judge}
	var doc *Document
	var responses map[string]*jsonlresult.Response
	switch cfg.mode {
	case modeSingle:
		doc, responses, err = checkSingle(p, cfg.output)
	default:
		doc, responses, err = checkBatch(ctx, p, cfg.output, keep)
	}
	if err != nil {
		return nil, err
	}
	// Step 3: the cases, in requested order.
	if keep {
		doc.Cases = make([]Case, 0, len(p.ids))
		for _, id := range p.ids {
			doc.Cases = append(doc.Cases, newCase(id, responses[id]))
		}
	}
	// Step 4: with --eval, the judgements and the run summary.
	if p.judge != nil {
		p.judge.apply(doc, p.ids)
	}
	return doc, nil
}

func newDocument(mode string) *Document {
	return &Document{
		Mode:          mode,
		Cases:         []Case{},
		MissingIDs:    []string{},
		UnexpectedIDs: []string{},
		ParseErrors:   []jsonlresult.LineError{},
	}
}

// checkBatch parses a JSONL batch output.
func checkBatch(ctx context.Context, p *plan, path string, keep bool) (*Document, map[string]*jsonlresult.Response, error) {
	doc := newDocument(modeBatch)
	responses := make(map[string]*jsonlresult.Response)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		noOutput(doc, p.ids, fmt.Errorf("%w: %s does not exist", jsonlresult.ErrNoOutputFile, path))
		return doc, responses, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("opening the output file: %w", err)
	}
	defer func() { _ = f.Close() }()
	res, err := jsonlresult.ParseBatch(ctxReader{ctx, f}, p.ids, jsonlresult.Options{}, func(r *jsonlresult.Response) error {
		if keep {
			responses[r.ID] = r
		}
		if p.judge != nil {
			p.judge.observe(r)
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	doc.MissingIDs = nonNil(res.MissingIDs)
	doc.UnexpectedIDs = nonNil(res.UnexpectedIDs)
	doc.ParseErrors = nonNil(res.ParseErrors)
	doc.Summary = Summary{
		Requested:   res.Requested,
		Present:     res.Present,
		Missing:     res.MissingCount,
		ParseErrors: res.ParseErrorCount,
		Unexpected:  res.UnexpectedCount,
	}
	doc.OK = res.OK()
	if err := res.Err(); err != nil {
		doc.Error = err.Error()
	}
	return doc, responses, nil
}

// checkSingle parses one case's output file.
func checkSingle(p *plan, path string) (*Document, map[string]*jsonlresult.Response, error) {
	doc := newDocument(modeSingle)
	id := p.ids[0]
	resp, err := jsonlresult.ParseSingleFile(id, path, 0)
	if errors.Is(err, jsonlresult.ErrNoOutputFile) {
		noOutput(doc, p.ids, err)
		return doc, map[string]*jsonlresult.Response{}, nil
	}
	if err != nil {
		return nil, nil, err
	}
	doc.OK = true
	doc.Summary = Summary{Requested: 1, Present: 1}
	if p.judge != nil {
		p.judge.observe(resp)
	}
	return doc, map[string]*jsonlresult.Response{id: resp}, nil
}

// noOutput fills the document of a run whose runner wrote no output file: every case is missing.
func noOutput(doc *Document, ids []string, err error) {
	doc.OK = false
	doc.Error = err.Error()
	doc.MissingIDs = ids[:min(len(ids), jsonlresult.DefaultMaxListedIDs)]
	doc.Summary = Summary{Requested: len(ids), Missing: len(ids)}
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// ctxReader stops reading once the context is done (the command was interrupted).
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// oneLine makes a message safe for a single line of terminal output.
var oneLine = strings.NewReplacer("\r\n", `\n`, "\n", `\n`, "\r", `\r`, "\t", `\t`)
