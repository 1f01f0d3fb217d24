// Command screening-runner is the sample batch runner of the screening example (the seeds' "Batch CLI
// Evaluation Guide"): it reads an agentv-eval-v2 eval file, takes the structured user content of every case (a
// screening request and a transaction row), decides CLEAR or REVIEW, and writes one JSONL record per case with the
// decision as JSON text and the tool calls it made as output_messages.
//
//	screening-runner --eval {EVAL_FILE} --output {OUTPUT_FILE}
//	screening-runner --eval {EVAL_FILE} --case {EVAL_ID} --output {OUTPUT_FILE}     (PerCase: one JSON object)
//	screening-runner --healthcheck
//
// Rows it cannot screen (no amount) are skipped with a note on stderr, so their ids are missing from the output;
// with --case such a row makes the runner exit 3.
//
// Failure knobs for the end-to-end tests (flags, or the SCREENING_* environment variables of the same name):
//
//	--fail-after N     write N records, then print an error to stderr and exit with --exit-code (default 1)
//	--invalid-line     also write a line that is not JSON and a second record for the first case's id
//	--oom-after N      write N records, then allocate memory until the kernel kills the process
//	--hang-after N     write N records, then sleep forever
//	--delay-ms D       sleep D milliseconds before each record
//	--synthetic N      ignore the eval file's cases and write N records with ids synthetic-00001...
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// options are the command-line flags.
type options struct {
	evalFile    string
	output      string
	caseID      string
	healthcheck bool
	failAfter   int
	failOnCase  string
	flipCase    string
	exitCode    int
	invalidLine bool
	oomAfter    int
	hangAfter   int
	delay       time.Duration
	synthetic   int
}

// flips reports whether case id is one of --flip-case's ids.
func (o options) flips(id string) bool {
	return o.flipCase != "" && slices.Contains(strings.Split(o.flipCase, ","), id)
}

func envInt(name string, def int) int {
	if v, ok := os.LookupEnv(name); ok {
		if n, err := strconv.Atoi(v); err == nil {
			return n
		}
	}
	return def
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	var delayMS int
	fs := flag.NewFlagSet("screening-runner", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.evalFile, "eval", os.Getenv("EVAL_FILE"), "eval file (agentv-eval-v2 YAML)")
	fs.StringVar(&o.output, "output", os.Getenv("OUTPUT_FILE"), "JSONL output file")
	fs.StringVar(&o.caseID, "case", "", "screen only this case and write it as one JSON object (PerCase mode)")
	fs.BoolVar(&o.healthcheck, "healthcheck", false, "print a health line and exit 0")
	fs.IntVar(&o.failAfter, "fail-after", envInt("SCREENING_FAIL_AFTER", -1), "exit with --exit-code after writing this many records")
	fs.IntVar(&o.exitCode, "exit-code", envInt("SCREENING_EXIT_CODE", 1), "exit code for --fail-after and --fail-on-case")
	fs.StringVar(&o.failOnCase, "fail-on-case", os.Getenv("SCREENING_FAIL_ON_CASE"), "exit with --exit-code on reaching this case id")
	fs.StringVar(&o.flipCase, "flip-case", os.Getenv("SCREENING_FLIP_CASE"), "answer these case ids (comma-separated) with the opposite decision")
	fs.BoolVar(&o.invalidLine, "invalid-line", os.Getenv("SCREENING_INVALID_LINE") == "1", "also write an invalid line and a duplicate id")
	fs.IntVar(&o.oomAfter, "oom-after", envInt("SCREENING_OOM_AFTER", -1), "allocate memory until killed after this many records")
	fs.IntVar(&o.hangAfter, "hang-after", envInt("SCREENING_HANG_AFTER", -1), "sleep forever after this many records")
	fs.IntVar(&delayMS, "delay-ms", envInt("SCREENING_DELAY_MS", 0), "milliseconds to sleep before each record")
	fs.IntVar(&o.synthetic, "synthetic", envInt("SCREENING_SYNTHETIC", 0), "write this many synthetic records instead of the eval file's")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	o.delay = time.Duration(delayMS) * time.Millisecond
	if o.healthcheck {
		return o, nil
	}
	if o.output == "" {
		return o, errors.New("--output (or OUTPUT_FILE) is required")
	}
	if o.evalFile == "" && o.synthetic <= 0 {
		return o, errors.New("--eval (or EVAL_FILE) is required")
	}
	return o, nil
}

func run(args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			_, _ = fmt.Fprintf(stderr, "screening-runner: %v\n", err)
		}
		return 2
	}
	if o.healthcheck {
		_, _ = fmt.Fprintln(stdout, "screening-runner: healthy")
		return 0
	}
	var cases []evalCase
	if o.synthetic > 0 {
		cases = syntheticCases(o.synthetic)
	} else {
		if cases, err = readCases(o.evalFile); err != nil {
			_, _ = fmt.Fprintf(stderr, "screening-runner: %v\n", err)
			return 1
		}
	}
	if o.caseID != "" {
		return runOne(o, cases, stdout, stderr)
	}
	f, err := os.Create(o.output)
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "screening-runner: %v\n", err)
		return 1
	}
	w := bufio.NewWriter(f)
	flush := func() {
		if err := w.Flush(); err != nil {
			_, _ = fmt.Fprintf(stderr, "screening-runner: writing %s: %v\n", o.output, err)
		}
		_ = f.Sync()
	}
	written := 0
	for _, c := range cases {
		if stop := o.knob(written, flush, stderr); stop >= 0 {
			_ = f.Close()
			return stop
		}
		if o.failOnCase != "" && c.ID == o.failOnCase {
			flush()
			_ = f.Close()
			_, _ = fmt.Fprintf(stderr, "screening-runner: simulated failure at %s: upstream screening service unavailable\n", c.ID)
			return o.exitCode
		}
		if o.delay > 0 {
			flush()
			time.Sleep(o.delay)
		}
		rec, skip := screen(c, o.flips(c.ID))
		if skip != "" {
			_, _ = fmt.Fprintf(stderr, "screening-runner: skipping %s: %s\n", c.ID, skip)
			continue
		}
		if err := writeRecord(w, rec); err != nil {
			_, _ = fmt.Fprintf(stderr, "screening-runner: %v\n", err)
			return 1
		}
		written++
		if o.invalidLine && written == 1 {
			_, _ = fmt.Fprintln(w, `{"id": "broken-line", "text": not json`)
			dup := rec
			dup.Text = `{"decision":"DUPLICATE"}`
			if err := writeRecord(w, dup); err != nil {
				_, _ = fmt.Fprintf(stderr, "screening-runner: %v\n", err)
				return 1
			}
		}
	}
	if stop := o.knob(written, flush, stderr); stop >= 0 {
		_ = f.Close()
		return stop
	}
	flush()
	if err := f.Close(); err != nil {
		_, _ = fmt.Fprintf(stderr, "screening-runner: %v\n", err)
		return 1
	}
	_, _ = fmt.Fprintf(stdout, "screening-runner: wrote %d records to %s\n", written, o.output)
	return 0
}

// runOne screens one case and writes it as a single JSON object (the single-case output contract).
func runOne(o options, cases []evalCase, stdout, stderr io.Writer) int {
	for _, c := range cases {
		if c.ID != o.caseID {
			continue
		}
		if o.delay > 0 {
			time.Sleep(o.delay)
		}
		rec, skip := screen(c, o.flips(c.ID))
		if skip != "" {
			_, _ = fmt.Fprintf(stderr, "screening-runner: cannot screen %s: %s\n", c.ID, skip)
			return 3
		}
		var buf strings.Builder
		if err := writeRecord(&buf, rec); err != nil {
			_, _ = fmt.Fprintf(stderr, "screening-runner: %v\n", err)
			return 1
		}
		if err := os.WriteFile(o.output, []byte(buf.String()), 0o644); err != nil {
			_, _ = fmt.Fprintf(stderr, "screening-runner: %v\n", err)
			return 1
		}
		_, _ = fmt.Fprintf(stdout, "screening-runner: wrote %s\n", c.ID)
		return 0
	}
	_, _ = fmt.Fprintf(stderr, "screening-runner: case %q is not in the eval file\n", o.caseID)
	return 2
}

// knob applies the failure knobs once `written` records are out; it returns the exit code to stop with, or -1.
func (o options) knob(written int, flush func(), stderr io.Writer) int {
	switch {
	case o.failAfter >= 0 && written == o.failAfter:
		flush()
		_, _ = fmt.Fprintf(stderr, "screening-runner: simulated failure after %d records: upstream screening service unavailable\n", written)
		return o.exitCode
	case o.oomAfter >= 0 && written == o.oomAfter:
		flush()
		_, _ = fmt.Fprintf(stderr, "screening-runner: allocating memory until killed after %d records\n", written)
		allocateForever()
	case o.hangAfter >= 0 && written == o.hangAfter:
		flush()
		_, _ = fmt.Fprintf(stderr, "screening-runner: hanging after %d records\n", written)
		for {
			time.Sleep(time.Hour)
		}
	}
	return -1
}

// sink keeps allocations reachable so the memory cannot be reclaimed.
var sink [][]byte

func allocateForever() {
	for {
		b := make([]byte, 16<<20)
		for i := range b {
			b[i] = byte(i)
		}
		sink = append(sink, b)
	}
}

// evalCase is the part of an eval case the runner reads.
type evalCase struct {
	ID            string
	InputMessages []message
}

type message struct {
	Role    string `yaml:"role"`
	Content any    `yaml:"content"`
}

type evalFile struct {
	EvalCases []struct {
		ID            string    `yaml:"id"`
		InputMessages []message `yaml:"input_messages"`
	} `yaml:"evalcases"`
}

func readCases(path string) ([]evalCase, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading eval file: %w", err)
	}
	var f evalFile
	if err := yaml.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("parsing eval file %s: %w", path, err)
	}
	if len(f.EvalCases) == 0 {
		return nil, fmt.Errorf("eval file %s has no evalcases", path)
	}
	cases := make([]evalCase, len(f.EvalCases))
	for i, c := range f.EvalCases {
		cases[i] = evalCase{ID: c.ID, InputMessages: c.InputMessages}
	}
	return cases, nil
}

func syntheticCases(n int) []evalCase {
	cases := make([]evalCase, n)
	for i := range cases {
		id := fmt.Sprintf("synthetic-%05d", i+1)
		cases[i] = evalCase{ID: id, InputMessages: []message{{Role: "user", Content: map[string]any{
			"request": map[string]any{"type": "screening_check", "jurisdiction": "AU"},
			"row":     map[string]any{"id": id, "name": "Synthetic " + strconv.Itoa(i+1), "amount": 100 + i%5000, "origin_country": "NZ"},
		}}}}
	}
	return cases
}

// record is one JSONL output line.
type record struct {
	ID             string          `json:"id"`
	Text           string          `json:"text"`
	OutputMessages []outputMessage `json:"output_messages"`
	DurationMs     float64         `json:"duration_ms"`
}

type outputMessage struct {
	Role      string     `json:"role"`
	ToolCalls []toolCall `json:"tool_calls,omitempty"`
	Content   any        `json:"content,omitempty"`
}

type toolCall struct {
	Tool   string `json:"tool"`
	Input  any    `json:"input"`
	Output any    `json:"output"`
}

func writeRecord(w io.Writer, r record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encoding record %s: %w", r.ID, err)
	}
	b = append(b, '\n')
	if _, err := w.Write(b); err != nil {
		return fmt.Errorf("writing record %s: %w", r.ID, err)
	}
	return nil
}
