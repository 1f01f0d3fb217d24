package check

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
)

// maxIDsFileLine bounds one line of an --ids-file.
const maxIDsFileLine = 1 << 20

// requestedIDs reads the requested case ids from exactly one of --eval, --ids and --ids-file. With --eval it also
// returns the parsed eval file. Duplicate and empty ids are usage errors.
func requestedIDs(cfg *config) ([]string, *evalfile.File, error) {
	var ids []string
	var file *evalfile.File
	switch {
	case cfg.evalPath != "":
		data, err := os.ReadFile(cfg.evalPath)
		if err != nil {
			return nil, nil, fmt.Errorf("reading the eval file: %w", err)
		}
		judging, err := loadJudging(cfg)
		if err != nil {
			return nil, nil, err
		}
		// The suite's other files (a 4.42 suite's tests files and assertion templates) are read from the bundle,
		// confined to its root.
		b, err := bundleDir(cfg.bundle, cfg.evalPath)
		if err != nil {
			return nil, nil, err
		}
		root, err := os.OpenRoot(b.Root)
		if err != nil {
			return nil, nil, fmt.Errorf("the eval bundle: %w", err)
		}
		defer func() { _ = root.Close() }()
		// data is read here and used nowhere else: the File may refer to it instead of a copy.
		file, err = evalfile.Parse(data, evalfile.WithDefaultEvaluators(judging.Evaluators), evalfile.WithOwnedData(),
			evalfile.WithFiles(root.FS(), b.EvalFile))
		if err != nil {
			return nil, nil, fmt.Errorf("eval file %s: %w", cfg.evalPath, err)
		}
		ids = file.CaseIDs()
	case cfg.idsFile != "":
		var err error
		if ids, err = readIDsFile(cfg.idsFile); err != nil {
			return nil, nil, err
		}
	default:
		for _, id := range strings.Split(cfg.ids, ",") {
			if id = strings.TrimSpace(id); id != "" {
				ids = append(ids, id)
			}
		}
	}
	if len(ids) == 0 {
		return nil, nil, usageError("no case ids to check")
	}
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		if seen[id] {
			return nil, nil, usageError(fmt.Sprintf("case id %q is given more than once", id))
		}
		seen[id] = true
	}
	if cfg.mode == modeSingle && len(ids) != 1 {
		return nil, nil, usageError(fmt.Sprintf("single mode checks exactly one case id, got %d", len(ids)))
	}
	return ids, file, nil
}

// readIDsFile reads one id per line; surrounding whitespace and blank lines are ignored.
func readIDsFile(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading the ids file: %w", err)
	}
	defer func() { _ = f.Close() }()
	var ids []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), maxIDsFileLine)
	for first := true; sc.Scan(); first = false {
		line := sc.Bytes()
		if first {
			line = bytes.TrimPrefix(line, []byte("\xEF\xBB\xBF"))
		}
		if id := strings.TrimSpace(string(line)); id != "" {
			ids = append(ids, id)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading the ids file %s: %w", path, err)
	}
	return ids, nil
}
