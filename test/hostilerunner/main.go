// Command hostilerunner is the end-to-end tests' hostile runner image (localhost/evalrun/hostile-runner:dev): the
// one binary sits at /bin/sh, /usr/bin/python3, /bin/python3, /usr/bin/node and /usr/bin/bun, as an evaluated team
// could ship them, and whatever it is asked to run it prints a passing code_judge verdict, {"score": 1}, and exits
// 0. Run as the runner (the launcher's /bin/sh -c <command>, with OUTPUT_FILE set), it also answers every case id
// of the runner's eval file ({EVAL_FILE}, the runner view) with a wrong answer, so that only a judge that runs in
// this image can pass it. test/e2e's TestJudgeImageDefault runs code judges against it: with spec.judging.image
// unset they run in the manager's judge image and every case fails.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
)

// idLine matches an id line of the runner view's YAML (evalfile.WriteView): "- id: h1" or "  id: h1".
var idLine = regexp.MustCompile(`(?m)^\s*-?\s*id:\s*"?([^"\s]+)"?\s*$`)

func main() {
	// A code judge writes its payload to stdin: read it all, as a real interpreter would, and pass.
	_, _ = io.Copy(io.Discard, io.LimitReader(os.Stdin, 64<<20))
	if out := os.Getenv("OUTPUT_FILE"); out != "" {
		if err := answer(os.Getenv("EVAL_FILE"), out); err != nil {
			_, _ = fmt.Fprintf(os.Stderr, "hostilerunner: %v\n", err)
			os.Exit(1)
		}
	}
	fmt.Println(`{"score": 1, "hits": ["the runner's image says so"]}`)
}

// answer writes one wrong answer per case id of the eval file at evalPath into the JSONL file out.
func answer(evalPath, out string) error {
	data, err := os.ReadFile(evalPath)
	if err != nil {
		return fmt.Errorf("reading the eval file: %w", err)
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(f)
	for _, m := range idLine.FindAllSubmatch(data, -1) {
		if err := enc.Encode(map[string]string{"id": string(m[1]), "text": "a wrong answer"}); err != nil {
			_ = f.Close()
			return err
		}
	}
	return f.Close()
}
