package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/jsonlresult"
)

// Source is where the runner's responses come from: Batch or PerCase, chosen by SourceFor.
type Source interface {
	// read hands every response of the requested ids to r (Run).
	read(ctx context.Context, r *run) error
	// each calls fn with the response of each of ids the output has (Responses).
	each(ids []string, fn func(*jsonlresult.Response) error) error
}

// Output is where a runner's responses are, as SourceFor reads them.
type Output struct {
	// Batching is the shape of the output: PerCase is one file per case, read through ReadCase; anything else
	// (Batched, the default) is the JSONL batch file at BatchPath.
	Batching evalsv1alpha1.BatchingMode
	// BatchPath is the batch file (Batched); see Batch for the trust it needs.
	BatchPath string
	// ReadCase reads one case's output (PerCase); see PerCase for its errors.
	ReadCase func(id string) ([]byte, error)
}

// PerCase reports whether the output is one file per case.
func (o Output) PerCase() bool { return o.Batching == evalsv1alpha1.BatchingPerCase }

// SourceFor is the one choice between the two shapes of a runner's output, made alike by the collector, the judge
// runner and `collector check`.
func SourceFor(o Output) Source {
	if o.PerCase() {
		return PerCase{Read: o.ReadCase}
	}
	return Batch{Path: o.BatchPath}
}

// Responses calls fn, on the calling goroutine, with the response of each of ids that src has, without judging
// anything (the judge runner's share of the cases): in output order for a batch file, in the order of ids for one
// file per case. A case without output or whose output cannot be read is left out, and so is every case when the
// batch file does not exist. It reads to the end unless fn fails; it returns fn's error, or the error opening or
// reading the batch file (wrapping neither).
func Responses(src Source, ids []string, fn func(*jsonlresult.Response) error) error {
	return src.each(ids, fn)
}

// maxParseWorkers bounds the batch parser's decoding goroutines (see Batch): with 16 MiB lines, one line is decoded
// while the workers judge and encode the one before (BenchmarkGatherLongLines: 20 such lines peak at 439 MiB RSS
// under the collector's 512Mi limit with one parse worker, 534 MiB with two).
const maxParseWorkers = 1

// Batch is a JSONL batch output file. The path is opened as it is (symbolic links followed), so it must be a
// file the caller trusts: the check command's argument or the collector's own snapshot, never the runner's volume.
type Batch struct {
	Path    string
	Options jsonlresult.Options
}

// PerCase is one output file per requested case, read through Read. Read returns an error satisfying
// errors.Is(err, os.ErrNotExist) for a case without output (the case is missing); any other error is that case's
// read error, judged as an error and listed with the parse errors.
type PerCase struct {
	Read func(id string) ([]byte, error)
}

// open opens the batch file; nil, nil when it does not exist.
func (b Batch) open() (*os.File, error) {
	f, err := os.Open(b.Path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("opening the output file: %w", err)
	}
	return f, nil
}

// options are the parser's options: b.Options with the parse workers bounded.
func (b Batch) options() jsonlresult.Options {
	opts := b.Options
	if opts.Workers <= 0 {
		// Each parse worker may hold a chunk with a line of up to 16 MiB and its decoded record: the parser's
		// memory grows with its workers, so their number does not follow the node's core count.
		opts.Workers = min(runtime.GOMAXPROCS(0), maxParseWorkers)
	}
	return opts
}

func (b Batch) read(ctx context.Context, r *run) error {
	f, err := b.open()
	if err != nil {
		return err
	}
	if f == nil {
		r.res.NoOutput = true
		r.res.NoOutputErr = fmt.Errorf("%w: %s does not exist", jsonlresult.ErrNoOutputFile, b.Path)
		return nil
	}
	// Read-only: a close error cannot lose data.
	defer func() { _ = f.Close() }()
	var br *jsonlresult.BatchResult
	if r.ids != nil {
		br, err = jsonlresult.ParseBatchIndex(ctxReader{ctx, f}, r.ids, b.options(), r.respond)
	} else {
		br, err = jsonlresult.ParseBatch(ctxReader{ctx, f}, r.in.IDs, b.options(), r.respond)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", b.Path, err)
	}
	r.res.OutputSHA256 = br.OutputSHA256
	r.res.ParseErrors, r.res.ParseErrorCount = br.ParseErrors, br.ParseErrorCount
	r.res.UnexpectedIDs, r.res.UnexpectedCount = br.UnexpectedIDs, br.UnexpectedCount
	return nil
}

func (b Batch) each(ids []string, fn func(*jsonlresult.Response) error) error {
	if len(ids) == 0 {
		return nil
	}
	f, err := b.open()
	if err != nil || f == nil {
		return err
	}
	// Read-only: a close error cannot lose data.
	defer func() { _ = f.Close() }()
	_, err = jsonlresult.ParseBatch(f, ids, b.options(), fn)
	return err
}

func (p PerCase) read(ctx context.Context, r *run) error {
	h := sha256.New()
	var lenBuf [8]byte
	for i, id := range r.in.IDs {
		if err := ctx.Err(); err != nil {
			return err
		}
		data, err := p.Read(id)
		if errors.Is(err, os.ErrNotExist) {
			continue // missing
		}
		h.Write([]byte(id))
		binary.BigEndian.PutUint64(lenBuf[:], uint64(len(data)))
		h.Write(lenBuf[:])
		h.Write(data)
		if err != nil {
			if err := r.caseError(i, id, err); err != nil {
				return err
			}
			continue
		}
		if err := r.respond(jsonlresult.ParseSingle(id, data)); err != nil {
			return err
		}
	}
	r.res.OutputSHA256 = hex.EncodeToString(h.Sum(nil))
	return nil
}

func (p PerCase) each(ids []string, fn func(*jsonlresult.Response) error) error {
	for _, id := range ids {
		data, err := p.Read(id)
		if err != nil {
			continue // missing or unreadable: no response
		}
		if err := fn(jsonlresult.ParseSingle(id, data)); err != nil {
			return err
		}
	}
	return nil
}

// ReadBounded reads the file at path, at most max bytes: a larger file is an error (with its first max bytes).
// It follows symbolic links: for files the caller trusts.
func ReadBounded(path string, max int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	// Read-only: a close error cannot lose data.
	defer func() { _ = f.Close() }()
	data, err := io.ReadAll(io.LimitReader(f, int64(max)+1))
	if err != nil {
		return nil, fmt.Errorf("read the output file: %w", err)
	}
	if len(data) > max {
		return data[:max], fmt.Errorf("the output file is larger than the limit of %d bytes", max)
	}
	return data, nil
}

// ctxReader stops reading once the context is done.
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
