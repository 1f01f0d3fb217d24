package jsonlresult

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
	"strings"
	"sync"

	"github.com/evalrun-operator/evalrun-operator/internal/idindex"
	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
)

// Defaults of Options.
const (
	DefaultMaxLineBytes   = 16 << 20
	DefaultMaxParseErrors = 100
	DefaultMaxListedIDs   = 1000
)

const (
	// defaultChunkBytes is how much of the file one worker parses at a time.
	defaultChunkBytes = 256 << 10
	// maxUnexpectedTracked bounds the set of unexpected ids remembered to detect their duplicates, so that a file
	// full of ids nobody asked for cannot grow memory without limit. Duplicates of unexpected ids beyond it are
	// not reported; they are still counted as unexpected.
	maxUnexpectedTracked = 100_000
	// excerptHeadBytes is how much of an over-long line is kept for its excerpt: a byte-order mark (dropped from
	// the first line), ExcerptBytes and one more byte to tell that the line was cut.
	excerptHeadBytes = len("\xEF\xBB\xBF") + ExcerptBytes + 1
	// maxIDExcerptBytes bounds an id quoted in a message.
	maxIDExcerptBytes = 80
	// errorSummaryItems bounds how many ids and line errors BatchResult.Err names.
	errorSummaryItems = 10
)

// ErrNoOutputFile is wrapped by the errors returned when the runner wrote no output file.
var ErrNoOutputFile = errors.New("the runner wrote no output file")

// Options bound the parser. Zero values mean defaults.
type Options struct {
	// MaxLineBytes is the longest line accepted, not counting its newline (default 16 MiB); a longer line is a
	// line error.
	MaxLineBytes int
	// MaxParseErrors is how many line errors are listed (default 100); all are counted.
	MaxParseErrors int
	// MaxListedIDs is how many missing and how many unexpected ids are listed (default 1000); all are counted.
	MaxListedIDs int
	// Workers is how many goroutines decode records (0 means GOMAXPROCS).
	Workers int

	// chunkBytes overrides defaultChunkBytes (tests use small chunks to exercise lines that span reads).
	chunkBytes int
}

func (o Options) WithDefaults() Options {
	if o.MaxLineBytes <= 0 {
		o.MaxLineBytes = DefaultMaxLineBytes
	}
	if o.MaxParseErrors <= 0 {
		o.MaxParseErrors = DefaultMaxParseErrors
	}
	if o.MaxListedIDs <= 0 {
		o.MaxListedIDs = DefaultMaxListedIDs
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	if o.chunkBytes <= 0 {
		o.chunkBytes = defaultChunkBytes
	}
	return o
}

// BatchResult is everything but the responses themselves, which stream through the callback of ParseBatch.
type BatchResult struct {
	// Requested is the number of distinct requested ids.
	Requested int
	// Present is the number of requested ids that have a valid record.
	Present int
	// MissingIDs are requested ids without a valid record, in request order (at most Options.MaxListedIDs);
	// MissingCount counts all of them.
	MissingIDs   []string
	MissingCount int
	// UnexpectedIDs are ids of valid records nobody requested, in file order (bounded like MissingIDs);
	// UnexpectedCount counts all of them.
	UnexpectedIDs   []string
	UnexpectedCount int
	// ParseErrors are the line errors in line order (at most Options.MaxParseErrors); ParseErrorCount counts all.
	ParseErrors     []LineError
	ParseErrorCount int
	// OutputSHA256 is the hex SHA-256 of the bytes read.
	OutputSHA256 string
}

// OK reports whether the batch succeeded: every requested id has a record and no line has an error.
func (r *BatchResult) OK() bool {
	return r.MissingCount == 0 && r.ParseErrorCount == 0
}

// BatchError is the error of a failed batch; it names a bounded number of missing ids and line errors.
type BatchError struct {
	MissingIDs      []string
	MissingCount    int
	ParseErrors     []LineError
	ParseErrorCount int
}

func (e *BatchError) Error() string {
	var b strings.Builder
	b.WriteString("batch output failed: ")
	if e.MissingCount > 0 {
		fmt.Fprintf(&b, "%d requested %s missing (", e.MissingCount, plural(e.MissingCount, "id is", "ids are"))
		for i, id := range e.MissingIDs[:min(len(e.MissingIDs), errorSummaryItems)] {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(textbound.Head(id, maxIDExcerptBytes))
		}
		if more := e.MissingCount - min(len(e.MissingIDs), errorSummaryItems); more > 0 {
			fmt.Fprintf(&b, " and %d more", more)
		}
		b.WriteString(")")
	}
	if e.ParseErrorCount > 0 {
		if e.MissingCount > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%d %s (", e.ParseErrorCount, plural(e.ParseErrorCount, "line error", "line errors"))
		for i, le := range e.ParseErrors[:min(len(e.ParseErrors), errorSummaryItems)] {
			if i > 0 {
				b.WriteString("; ")
			}
			fmt.Fprintf(&b, "line %d: %s", le.Line, le.Message)
		}
		if more := e.ParseErrorCount - min(len(e.ParseErrors), errorSummaryItems); more > 0 {
			fmt.Fprintf(&b, "; and %d more", more)
		}
		b.WriteString(")")
	}
	return b.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Err returns nil when the batch succeeded, else a *BatchError naming the missing ids and the line errors (both
// bounded) with their line numbers.
func (r *BatchResult) Err() error {
	if r.OK() {
		return nil
	}
	return &BatchError{
		MissingIDs:      r.MissingIDs,
		MissingCount:    r.MissingCount,
		ParseErrors:     r.ParseErrors,
		ParseErrorCount: r.ParseErrorCount,
	}
}

// ParseBatchFile is ParseBatch on a file. When the file does not exist the error wraps ErrNoOutputFile. It opens
// whatever is at path, following symbolic links, so it is for files the caller trusts (the check command's own
// arguments, the collector's own snapshot); a runner's files are only ever opened through internal/safefile.
func ParseBatchFile(path string, requested []string, opts Options, fn func(*Response) error) (*BatchResult, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s does not exist", ErrNoOutputFile, path)
		}
		return nil, fmt.Errorf("opening the output file: %w", err)
	}
	defer func() { _ = f.Close() }()
	return ParseBatch(f, requested, opts, fn)
}

// ParseBatch streams the JSONL batch output r. It calls fn once per valid record whose id was requested, in file
// order, on the calling goroutine; fn may retain the *Response. It returns an error only when reading fails or fn
// returns an error (then the result is nil); problems with the content are reported in the result (see
// BatchResult.Err). Memory stays bounded by the chunks in flight, whatever the size of r, plus the set of ids.
func ParseBatch(r io.Reader, requested []string, opts Options, fn func(*Response) error) (*BatchResult, error) {
	idx := idindex.New(requested)
	if idx == nil {
		return nil, fmt.Errorf("%d requested ids are too many", len(requested))
	}
	return ParseBatchIndex(r, idx, opts, fn)
}

// ParseBatchIndex is ParseBatch with the requested ids given as an index of them (idindex.New(requested)), for a
// caller that looks them up too.
func ParseBatchIndex(r io.Reader, requested *idindex.Index, opts Options, fn func(*Response) error) (*BatchResult, error) {
	opts = opts.WithDefaults()
	c := newCollector(requested, opts)
	p := startPipeline(r, opts)
	defer p.stop()
	for ch := range p.order {
		<-ch.done
		if ch.err != nil {
			return nil, fmt.Errorf("reading the output: %w", ch.err)
		}
		if err := c.chunk(ch, fn); err != nil {
			return nil, err
		}
		p.recycle(ch)
	}
	res := c.finish()
	res.OutputSHA256 = hex.EncodeToString(p.sum)
	return res, nil
}

// outcome is what a worker made of one non-blank line of a chunk.
type outcome struct {
	rel        int64 // 0-based line index within the chunk
	start, end int   // the line's bytes in the chunk
	resp       *Response
	msg        string // the line error, when resp is nil
}

// chunk is a run of whole lines of the input, or one line that is too long (oversize > 0), or a read error.
type chunk struct {
	data     []byte
	first    bool  // the chunk starts the input (a byte-order mark may lead it)
	oversize int64 // length of an over-long line whose first bytes are in data
	err      error
	done     chan struct{}

	// Filled in by the worker.
	lines int64
	outs  []outcome
}

// pipeline reads the input into chunks of whole lines on one goroutine and parses them on worker goroutines; the
// consumer receives chunks on order in input order, each ready once done is closed.
type pipeline struct {
	opts  Options
	order chan *chunk
	work  chan *chunk
	quit  chan struct{}
	free  chan []byte
	wg    sync.WaitGroup
	sum   []byte // set by the reader before it closes order
}

func startPipeline(r io.Reader, opts Options) *pipeline {
	inflight := 2*opts.Workers + 2
	p := &pipeline{
		opts:  opts,
		order: make(chan *chunk, inflight),
		work:  make(chan *chunk, inflight),
		quit:  make(chan struct{}),
		free:  make(chan []byte, inflight+2),
	}
	p.wg.Add(1 + opts.Workers)
	go p.read(r)
	for range opts.Workers {
		go p.parse()
	}
	return p
}

// stop ends the goroutines (after an early return) and waits for them.
func (p *pipeline) stop() {
	close(p.quit)
	p.wg.Wait()
}

// recycle returns a standard-size chunk buffer for reuse; responses never alias it.
func (p *pipeline) recycle(ch *chunk) {
	if cap(ch.data) != p.opts.chunkBytes || ch.oversize > 0 {
		return
	}
	select {
	case p.free <- ch.data[:0]:
	default:
	}
}

func (p *pipeline) buffer() []byte {
	select {
	case b := <-p.free:
		return b
	default:
		return make([]byte, 0, p.opts.chunkBytes)
	}
}

// emit hands a chunk to the consumer and, when it needs parsing, to a worker. It returns false when the consumer
// has gone.
func (p *pipeline) emit(ch *chunk, parse bool) bool {
	ch.done = make(chan struct{})
	if !parse {
		close(ch.done)
	}
	select {
	case p.order <- ch:
	case <-p.quit:
		return false
	}
	if !parse {
		return true
	}
	select {
	case p.work <- ch:
		return true
	case <-p.quit:
		return false
	}
}

// read splits the input into chunks that end on a newline, hashing every byte.
func (p *pipeline) read(r io.Reader) {
	defer p.wg.Done()
	defer close(p.work)
	defer close(p.order)
	h := sha256.New()
	maxLine := p.opts.MaxLineBytes
	buf := p.buffer()
	first := true
	// skipping > 0 while discarding the rest of an over-long line; head keeps its first bytes for the excerpt.
	var skipping int64
	var head []byte
	for {
		if len(buf) == cap(buf) {
			// A full buffer without a newline holds the start of a line longer than the buffer.
			if len(buf) > maxLine {
				skipping, head = int64(len(buf)), append([]byte(nil), buf[:min(len(buf), excerptHeadBytes)]...)
				buf = buf[:0]
			} else {
				bigger := make([]byte, len(buf), min(2*cap(buf), maxLine+1))
				copy(bigger, buf)
				buf = bigger
			}
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		if n > 0 {
			newData := buf[len(buf) : len(buf)+n]
			h.Write(newData)
			if skipping > 0 {
				nl := bytes.IndexByte(newData, '\n')
				lineData := newData
				if nl >= 0 {
					lineData = newData[:nl]
				}
				if room := excerptHeadBytes - len(head); room > 0 {
					head = append(head, lineData[:min(room, len(lineData))]...)
				}
				skipping += int64(len(lineData))
				if nl < 0 {
					continue
				}
				if !p.emit(&chunk{data: head, first: first, oversize: skipping}, false) {
					return
				}
				first, skipping, head = false, 0, nil
				buf = buf[:copy(buf[:cap(buf)], newData[nl+1:])]
			} else {
				buf = buf[:len(buf)+n]
			}
			// A full buffer goes to the workers up to its last newline; the partial line after it starts the next.
			if len(buf) == cap(buf) {
				if nl := bytes.LastIndexByte(buf, '\n'); nl >= 0 {
					next := append(p.buffer(), buf[nl+1:]...)
					if !p.emit(&chunk{data: buf[:nl+1], first: first}, true) {
						return
					}
					first, buf = false, next
				}
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			p.emit(&chunk{err: err}, false)
			return
		}
	}
	switch {
	case skipping > 0:
		if !p.emit(&chunk{data: head, first: first, oversize: skipping}, false) {
			return
		}
	case len(buf) > 0:
		if !p.emit(&chunk{data: buf, first: first}, true) {
			return
		}
	}
	p.sum = h.Sum(nil)
}

// parse is a worker: it turns the lines of chunks into outcomes.
func (p *pipeline) parse() {
	defer p.wg.Done()
	var rp recordParser
	for ch := range p.work {
		select {
		case <-p.quit:
			close(ch.done)
			continue
		default:
		}
		rp.chunk(ch, p.opts.MaxLineBytes)
		close(ch.done)
	}
}

var bom = []byte("\xEF\xBB\xBF")

// chunk parses every line of a chunk.
func (rp *recordParser) chunk(ch *chunk, maxLine int) {
	data := ch.data
	ch.outs = ch.outs[:0]
	var rel int64
	for pos := 0; pos < len(data); rel++ {
		end := len(data)
		next := len(data)
		if nl := bytes.IndexByte(data[pos:], '\n'); nl >= 0 {
			end, next = pos+nl, pos+nl+1
		}
		start := pos
		pos = next
		length := end - start
		if rel == 0 && ch.first && bytes.HasPrefix(data[start:end], bom) {
			start += len(bom)
		}
		if length > maxLine {
			ch.outs = append(ch.outs, outcome{rel: rel, start: start, end: end,
				msg: tooLongMessage(int64(length), maxLine)})
			continue
		}
		if end > start && data[end-1] == '\r' {
			end--
		}
		if isBlank(data[start:end]) {
			continue
		}
		resp, msg := rp.parseLine(data[start:end])
		ch.outs = append(ch.outs, outcome{rel: rel, start: start, end: end, resp: resp, msg: msg})
	}
	ch.lines = rel
}

func tooLongMessage(n int64, maxLine int) string {
	return fmt.Sprintf("line is %d bytes long, over the limit of %d bytes", n, maxLine)
}

func isBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}

// collector is the in-order bookkeeping of ParseBatch: ids, duplicates, counts and bounded lists.
type collector struct {
	opts Options
	// index finds requested ids: the position of their first occurrence among the requested ids.
	index      *idindex.Index
	firstLine  []int64          // line of the valid record of each requested id's first occurrence (0: none yet)
	unexpected map[string]int64 // unexpected id -> line of its first record (bounded)
	base       int64            // lines before the current chunk
	// next is where the next record's id is expected among the requested ids (records in request order).
	next int
	res  BatchResult
}

func newCollector(requested *idindex.Index, opts Options) *collector {
	return &collector{
		opts:       opts,
		index:      requested,
		firstLine:  make([]int64, requested.Len()),
		unexpected: make(map[string]int64),
	}
}

func (c *collector) lineError(line int64, text []byte, msg string) {
	c.res.ParseErrorCount++
	if len(c.res.ParseErrors) < c.opts.MaxParseErrors {
		c.res.ParseErrors = append(c.res.ParseErrors, LineError{Line: line, Excerpt: textbound.HeadBytes(text, ExcerptBytes), Message: msg})
	}
}

// chunk books the outcomes of one chunk, in order, and hands the requested responses to fn.
func (c *collector) chunk(ch *chunk, fn func(*Response) error) error {
	if ch.oversize > 0 {
		head := ch.data
		if ch.first {
			head = bytes.TrimPrefix(head, bom)
		}
		c.base++
		c.lineError(c.base, head, tooLongMessage(ch.oversize, c.opts.MaxLineBytes))
		return nil
	}
	for i := range ch.outs {
		o := &ch.outs[i]
		line := c.base + o.rel + 1
		if o.resp == nil {
			c.lineError(line, ch.data[o.start:o.end], o.msg)
			continue
		}
		id := o.resp.ID
		if idx, ok := c.index.Find(id, c.next); ok {
			c.next = idx + 1
			if prev := c.firstLine[idx]; prev != 0 {
				c.lineError(line, ch.data[o.start:o.end], duplicateMessage(id, prev))
				continue
			}
			c.firstLine[idx] = line
			c.res.Present++
			o.resp.Line = line
			if err := fn(o.resp); err != nil {
				return err
			}
			continue
		}
		if prev, seen := c.unexpected[id]; seen {
			c.lineError(line, ch.data[o.start:o.end], duplicateMessage(id, prev))
			continue
		}
		if len(c.unexpected) < maxUnexpectedTracked {
			c.unexpected[id] = line
		}
		c.res.UnexpectedCount++
		if len(c.res.UnexpectedIDs) < c.opts.MaxListedIDs {
			c.res.UnexpectedIDs = append(c.res.UnexpectedIDs, id)
		}
	}
	// Drop the references so that a recycled chunk does not keep responses alive.
	clear(ch.outs)
	c.base += ch.lines
	return nil
}

func duplicateMessage(id string, first int64) string {
	return fmt.Sprintf("duplicate id %q (first seen on line %d)", textbound.Head(id, maxIDExcerptBytes), first)
}

func (c *collector) finish() *BatchResult {
	res := c.res
	distinct := c.index.Distinct()
	for i := range c.index.Len() {
		id := c.index.ID(i)
		if !distinct {
			if first, _ := c.index.Find(id, i); first != i {
				continue // a requested id given again
			}
		}
		res.Requested++
		if c.firstLine[i] != 0 {
			continue
		}
		res.MissingCount++
		if len(res.MissingIDs) < c.opts.MaxListedIDs {
			res.MissingIDs = append(res.MissingIDs, id)
		}
	}
	return &res
}
