package launcher

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"sync"

	"github.com/evalrun-operator/evalrun-operator/internal/jsonlresult"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/safefile"
)

// The cost budget (spec.target.maxCostUSD): the launcher adds up the cost_usd the runner's records report while
// the runner runs and stops it once the sum passes the pod's budget. It reads the runner's output as hostile data
// (safefile: no symlinks, regular files only; bounded lines) and may only ever stop the runner early: nothing it
// reads reaches a verdict, which the collector takes from its own snapshot of the final output.

// costTally is the cost the runner's records reported so far: each requested case counted once, at the most any
// of its records reported (a record rewritten or a file truncated never takes back what was reported), summed in
// nanodollars with saturation. Ids nobody requested are not counted, as status.cost does not count them. It is
// safe for concurrent use (PerCase workers).
type costTally struct {
	mu     sync.Mutex
	budget int64
	// seen is the most each requested case reported, -1 before it reported a cost.
	seen  map[string]int64
	total int64
	cases int
}

// newCostTally is a tally of the cases ids against budget (nanodollars).
func newCostTally(budget int64, ids []string) *costTally {
	seen := make(map[string]int64, len(ids))
	for _, id := range ids {
		seen[id] = -1
	}
	return &costTally{budget: budget, seen: seen}
}

// add records that a record of id reported nanos and reports whether the sum has now passed the budget.
func (c *costTally) add(id string, nanos int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	prev, ok := c.seen[id]
	if ok && nanos > prev {
		if prev < 0 {
			c.cases++
			prev = 0
		}
		c.seen[id] = nanos
		c.total = satAdd(c.total, nanos-prev)
	}
	return c.total > c.budget
}

// passed reports whether the sum has passed the budget.
func (c *costTally) passed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total > c.budget
}

// stop is the report's account of the budget's stop.
func (c *costTally) stop() *podwire.CostBudgetStop {
	c.mu.Lock()
	defer c.mu.Unlock()
	return &podwire.CostBudgetStop{CostNanoUSD: c.total, MaxCostNanoUSD: c.budget, Cases: c.cases}
}

// satAdd is a + b for non-negative a and b, at most the largest int64.
func satAdd(a, b int64) int64 {
	if b > (1<<63-1)-a {
		return 1<<63 - 1
	}
	return a + b
}

// addRecord adds the cost of one line of a batch output (without its line ending), when it is a valid record of
// a requested case that reports one, and reports whether the sum has passed the budget.
func (c *costTally) addRecord(line []byte) bool {
	line = bytes.TrimSuffix(line, []byte("\r"))
	if len(bytes.TrimSpace(line)) == 0 {
		return c.passed()
	}
	id, cost, ok := jsonlresult.RecordCost(line)
	if !ok || cost == nil {
		return c.passed()
	}
	return c.add(id, jsonlresult.CostNanos(*cost))
}

// addCase adds the cost a PerCase invocation's output reports (read as the collector reads it: a regular file
// beneath out, bounded, the single-case rules) and reports whether the sum has passed the budget. An output that
// is missing, refused or unreadable reports nothing.
func (c *costTally) addCase(out *safefile.Dir, id string) bool {
	data, err := out.ReadFile(podwire.CaseOutputName(id), jsonlresult.DefaultMaxSingleBytes)
	if err != nil {
		return c.passed()
	}
	r := jsonlresult.ParseSingle(id, data)
	if r.CostUSD == nil {
		return c.passed()
	}
	return c.add(id, jsonlresult.CostNanos(*r.CostUSD))
}

// Bounds of the batch output's tail.
const (
	// tailReadBytes is how much of the file one read takes.
	tailReadBytes = 64 << 10
	// tailPollBytes bounds how much one poll reads, so that a runner writing faster than the launcher reads
	// cannot keep a poll from returning.
	tailPollBytes = 64 << 20
)

// batchTail reads the Batched output file as the runner appends to it, one poll at a time, and adds each complete
// line's cost to its tally. Every poll opens the file anew beneath the output directory (safefile): a file that is
// not the one read so far (replaced, or a symlink, FIFO or device put there) or that shrank (truncated) is read
// again from its start; the tally keeps the most each case reported, so nothing is counted twice and nothing
// reported is taken back. A line longer than maxLine (ParseBatch's bound) is skipped without being held.
type batchTail struct {
	dir     *safefile.Dir
	name    string
	maxLine int
	tally   *costTally

	f       *safefile.File
	fi      fs.FileInfo
	offset  int64
	pending []byte // the incomplete last line
	// skipping: the current line is longer than maxLine; its bytes are dropped up to its newline.
	skipping bool
	buf      []byte
}

// newBatchTail tails name beneath dir.
func newBatchTail(dir *safefile.Dir, name string, maxLine int, tally *costTally) *batchTail {
	return &batchTail{dir: dir, name: name, maxLine: maxLine, tally: tally, buf: make([]byte, tailReadBytes)}
}

// close releases the file held between polls.
func (t *batchTail) close() {
	if t.f != nil {
		_ = t.f.Close() // read-only: nothing to lose
		t.f = nil
	}
}

// poll reads what was appended since the last poll (at most tailPollBytes) and reports whether the tally has
// passed its budget.
func (t *batchTail) poll() bool {
	f, err := t.dir.Open(t.name, 0)
	if err != nil {
		return t.tally.passed() // not written yet, or refused: it reports nothing
	}
	fi, err := f.Stat()
	switch {
	case err != nil:
		_ = f.Close()
		return t.tally.passed()
	case t.f != nil && os.SameFile(fi, t.fi) && fi.Size() >= t.offset:
		_ = f.Close() // the same file, grown or not: go on with the one held
	default:
		t.close()
		t.f, t.fi, t.offset, t.pending, t.skipping = f, fi, 0, t.pending[:0], false
	}
	for read := 0; read < tailPollBytes; {
		n, err := t.f.Read(t.buf)
		if n > 0 {
			read += n
			if t.consume(t.buf[:n]) {
				return true
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.close() // read again from the start at the next poll
			}
			break
		}
	}
	return t.tally.passed()
}

// consume splits data into lines, adding each complete one to the tally; it reports whether the tally passed
// its budget.
func (t *batchTail) consume(data []byte) bool {
	for len(data) > 0 {
		start := t.offset
		nl := bytes.IndexByte(data, '\n')
		part := data
		if nl >= 0 {
			part = data[:nl]
		}
		t.offset += int64(len(part))
		if nl >= 0 {
			t.offset++
			data = data[nl+1:]
		} else {
			data = nil
		}
		if !t.skipping && len(t.pending)+len(part) > t.maxLine {
			t.skipping, t.pending = true, t.pending[:0]
		}
		if !t.skipping {
			t.pending = append(t.pending, part...)
		}
		if nl < 0 {
			return false
		}
		line := t.pending
		if start-int64(len(t.pending)-len(part)) == 0 {
			line = bytes.TrimPrefix(line, []byte("\xEF\xBB\xBF")) // the file's first line may start with a BOM
		}
		skipped := t.skipping
		t.pending, t.skipping = t.pending[:0], false
		if !skipped && t.tally.addRecord(line) {
			return true
		}
	}
	return false
}
