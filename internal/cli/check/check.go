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

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/jsonlresult"
	"github.com/evalrun-operator/evalrun-operator/internal/pipeline"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
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
                       [--bundle DIR]
                       [--llm-base-url URL --llm-model MODEL [--llm-api-key-file FILE] [--llm-timeout 60s]
                        [--llm-max-concurrent 4] [--llm-requests-per-minute N] [--run-uid UID]]

Checks a runner's output the way the collector reads it. With --eval it also judges every case with the eval
file's evaluators (code_judge scripts run, in the eval file's directory, only with --run-code-judges). Files the judges read (prompt files, input
files, reference files) resolve from the eval file's directory up to --bundle DIR (default: the eval file's directory), never outside it;
without --bundle, AgentV's .agentv/config.yaml is searched up to the eval file's repository root. Exit code 0
when every requested case has a result and the output has no line errors, 1 when it fails the check, 2 for usage
or I/O errors.`

// config is the command line.
type config struct {
	mode     string
	evalPath string
	// bundle is the eval bundle's root directory (--bundle); "" makes the eval file's directory the root.
	bundle  string
	ids     string
	idsFile string
	output  string
	format  string
	// runCodeJudges runs code_judge scripts locally when judging with --eval.
	runCodeJudges bool
	// passThreshold is the EvalRun's judging.passThreshold; judgingPath names a YAML or JSON file holding the
	// EvalRun's judging section (its evaluators are the defaults for cases that declare none).
	passThreshold string
	judgingPath   string
	// llm is the model endpoint of LLM judges (--llm-* flags, EVALRUN_LLM_* variables, the judging file's llm).
	llm llmFlags
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
	fs.StringVar(&cfg.bundle, "bundle", "",
		"with --eval, the eval bundle's root directory: the eval file and the files it names (prompt, input and "+
			"reference files; default: the eval file's directory)")
	fs.StringVar(&cfg.ids, "ids", "", "comma-separated requested case ids")
	fs.StringVar(&cfg.idsFile, "ids-file", "", "file with one requested case id per line")
	fs.StringVar(&cfg.output, "output", "", "the runner's output file")
	fs.StringVar(&cfg.format, "format", formatJSON, "json, table or summary")
	fs.BoolVar(&cfg.runCodeJudges, "run-code-judges", false, "with --eval, run code_judge scripts locally (they run the eval file's commands)")
	fs.StringVar(&cfg.passThreshold, "pass-threshold", "",
		"with --eval, the EvalRun's judging.passThreshold (default: the judging file's, else "+evalsv1alpha1.DefaultPassThreshold+")")
	fs.StringVar(&cfg.judgingPath, "judging", "",
		"with --eval, a YAML or JSON file holding the EvalRun's spec.judging (or the EvalRun): the in-cluster verdicts")
	fs.StringVar(&cfg.llm.baseURL, "llm-base-url", os.Getenv(EnvLLMBaseURL),
		"with --eval, the OpenAI-compatible base URL LLM judges call (default $"+EnvLLMBaseURL+", else the judging file's llm.baseURL)")
	fs.StringVar(&cfg.llm.model, "llm-model", os.Getenv(EnvLLMModel), "with --eval, the model LLM judges ask (default $"+EnvLLMModel+", else the judging file's)")
	fs.StringVar(&cfg.llm.keyFile, "llm-api-key-file", "",
		"with --eval, a file holding the API key (default: $"+EnvLLMAPIKey+"; never give the key itself on the command line)")
	fs.DurationVar(&cfg.llm.timeout, "llm-timeout", 0, "with --eval, the timeout of each model request (default: the judging file's, else 60s)")
	fs.IntVar(&cfg.llm.maxConcurrent, "llm-max-concurrent", 0, "with --eval, the model requests in flight at once (default: the judging file's, else 4)")
	fs.IntVar(&cfg.llm.requestsPerMinute, "llm-requests-per-minute", 0, "with --eval, a limit on model requests started per minute (default: none)")
	fs.StringVar(&cfg.llm.runUID, "run-uid", os.Getenv(podwire.EnvRunUID),
		"with --eval and the judging file's llm.answerDelimiters Nonce, the EvalRun's metadata.uid that keys the answer markers, "+
			"to send the prompts that run sends (default $"+podwire.EnvRunUID+", else \"collector-check\")")
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
	if cfg.bundle != "" && cfg.evalPath == "" {
		return nil, errors.New("--bundle needs --eval")
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

// run checks the output and returns the document; an error means a usage or I/O problem (exit code 2). It runs
// the collection pipeline the in-pod collector runs; only the rendering is the check's own.
func run(ctx context.Context, cfg *config) (*Document, error) {
	// Step 1: the requested ids and, with --eval, the judging.
	ids, eval, err := requestedIDs(cfg)
	if err != nil {
		return nil, err
	}
	in, err := judgingInput(cfg, eval)
	if err != nil {
		return nil, err
	}
	in.IDs = ids
	// Step 2: the source of the responses.
	doc := newDocument(cfg.mode)
	out := pipeline.Output{Batching: evalsv1alpha1.BatchingBatched, BatchPath: cfg.output}
	if cfg.mode == modeSingle {
		data, err := readSingle(ids[0], cfg.output)
		if err != nil {
			return nil, err
		}
		out.Batching = evalsv1alpha1.BatchingPerCase
		out.ReadCase = func(string) ([]byte, error) {
			if data == nil {
				return nil, os.ErrNotExist
			}
			return data, nil
		}
	}
	src := pipeline.SourceFor(out)
	// Step 3: parse, claim, judge. With --format summary the cases are not kept, so that very large outputs are
	// checked in bounded memory.
	sink := &documentSink{keep: cfg.format != formatSummary, judged: in.Judge != nil}
	if sink.keep {
		sink.cases = make([]Case, len(ids))
	}
	res, err := pipeline.Run(ctx, in, src, sink)
	if err != nil {
		return nil, err
	}
	// Step 4: the document.
	if sink.keep {
		doc.Cases = sink.cases
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
	if sink.judged {
		s := res.Summary
		doc.Summary.Summary = &s
	}
	doc.OK = res.OK()
	switch {
	case res.NoOutput:
		doc.Error = res.NoOutputErr.Error()
	case cfg.mode == modeSingle && !doc.OK:
		doc.Error = fmt.Sprintf("case %q: %v: %s does not exist", ids[0], jsonlresult.ErrNoOutputFile, cfg.output)
	case !doc.OK:
		doc.Error = (&jsonlresult.BatchError{MissingIDs: res.MissingIDs, MissingCount: res.MissingCount,
			ParseErrors: res.ParseErrors, ParseErrorCount: res.ParseErrorCount}).Error()
	}
	return doc, nil
}

// readSingle reads one case's output file: nil without error when it does not exist.
func readSingle(id, path string) ([]byte, error) {
	data, err := pipeline.ReadBounded(path, jsonlresult.DefaultMaxSingleBytes)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("case %q: %s: %w", id, path, err)
	case data == nil:
		return []byte{}, nil
	}
	return data, nil
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

// documentSink keeps each requested case (unless only the summary is printed) in requested order.
type documentSink struct {
	keep, judged bool
	cases        []Case
}

type indexedCase struct {
	i int
	c Case
}

// Prepare builds a case of the document; it is safe for concurrent use.
func (s *documentSink) Prepare(_ *[]byte, pc pipeline.Case) (indexedCase, error) {
	if !s.keep {
		return indexedCase{}, nil
	}
	c := newCase(pc.Result.ID, pc.Response)
	if s.judged {
		r := pc.Result
		score := r.Score
		c.Score = &score
		c.Verdict = r.Verdict
		c.Evaluators = r.Evaluators
		c.VerdictReason = r.Error
		if c.VerdictReason == "" {
			c.VerdictReason = r.Reason
		}
	}
	return indexedCase{i: pc.Index, c: c}, nil
}

// Commit places the case at its requested position.
func (s *documentSink) Commit(ic indexedCase) error {
	if s.keep {
		s.cases[ic.i] = ic.c
	}
	return nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// oneLine makes text safe for one line of terminal output: a tab as `\t`, every control character, line break
// and bidirectional override escaped (textbound.Printable). The runner's ids, answers and lines pass through it.
func oneLine(s string) string { return textbound.Printable(strings.ReplaceAll(s, "\t", `\t`)) }
