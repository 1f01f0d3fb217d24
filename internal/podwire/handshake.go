package podwire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// PollInterval is how often the judge and the collector look for each other's marker files.
const PollInterval = 100 * time.Millisecond

// WriteJSONAtomic encodes v and writes it to path atomically, creating the directory.
func WriteJSONAtomic(path string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Base(path), err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create directory for %s: %w", path, err)
	}
	return WriteBytesAtomic(path, append(data, '\n'))
}

// ReadJSON decodes path into v. A missing file returns an error satisfying errors.Is(err, os.ErrNotExist). Only
// for files of the trusted side: the runner's files are read through the safefile package.
func ReadJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("decode %s: %w", path, err)
	}
	return nil
}

// WaitForFile polls for path until it exists, ctx ends or timeout passes (0: no timeout). It returns nil once the
// file exists.
func WaitForFile(ctx context.Context, path string, timeout time.Duration) error {
	var deadline <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		deadline = t.C
	}
	tick := time.NewTicker(PollInterval)
	defer tick.Stop()
	for {
		if _, err := os.Stat(path); err == nil {
			return nil
		} else if !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("stat %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline:
			return fmt.Errorf("%s did not appear within %s", filepath.Base(path), timeout)
		case <-tick.C:
		}
	}
}
