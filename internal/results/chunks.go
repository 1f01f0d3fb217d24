package results

import (
	"bytes"
	"fmt"

	"github.com/klauspost/compress/gzip"
)

// Chunk is one result ConfigMap's payload: gzip'd JSONL, one full case result per line.
type Chunk struct {
	// Destination is the result ConfigMap (a name) or bucket object (an s3:// URI) the chunk belongs in.
	Destination string
	// Data is the gzip stream; always shorter than the chunk limit.
	Data []byte
	// Cases is the number of lines in the chunk.
	Cases int
}

// stagedBytes is how many bytes of lines the writer gathers before compressing them.
const stagedBytes = 64 << 10

// gzipSlack covers the gzip trailer, the final deflate block and a sync-flush marker.
const gzipSlack = 1024

// chunkWriter splits JSONL lines into gzip streams, each shorter than max bytes, assigned in order to names. The
// split depends only on the lines, so the same lines always give the same chunks.
type chunkWriter struct {
	names []string
	max   int

	buf bytes.Buffer
	gz  *gzip.Writer
	// staged are lines not yet handed to gz: one Write per stagedBytes instead of two per line (each Write has its
	// own checksum and bookkeeping). pending counts the uncompressed bytes since the last flush, staged included.
	staged   []byte
	pending  int
	curCases int

	chunks  []Chunk
	stored  int
	dropped int
	full    bool
}

func newChunkWriter(names []string, max int) *chunkWriter {
	return &chunkWriter{names: names, max: max, full: len(names) == 0}
}

func (w *chunkWriter) fits(extra int) bool {
	return w.buf.Len()+w.pending+extra+gzipSlack+(w.pending+extra)/100 < w.max
}

// add appends one line. A line that does not fit any remaining ConfigMap is dropped and counted.
func (w *chunkWriter) add(line []byte) error {
	if w.full {
		w.dropped++
		return nil
	}
	if w.gz == nil {
		w.open()
	}
	need := len(line) + 1
	if !w.fits(need) && w.pending > 0 {
		if err := w.flush(); err != nil {
			return err
		}
	}
	if !w.fits(need) && w.curCases > 0 {
		if err := w.closeChunk(); err != nil {
			return err
		}
		if w.full {
			w.dropped++
			return nil
		}
		w.open()
	}
	if err := w.write(line); err != nil {
		return err
	}
	if w.curCases == 1 && !w.fits(0) {
		// A single line larger than the estimate allows: measure it exactly.
		if err := w.flush(); err != nil {
			return err
		}
		if w.buf.Len()+gzipSlack >= w.max {
			// Even alone and compressed it does not fit a ConfigMap.
			w.buf.Reset()
			w.gz.Reset(&w.buf)
			w.staged = w.staged[:0]
			w.curCases, w.pending = 0, 0
			w.stored--
			w.dropped++
		}
	}
	return nil
}

func (w *chunkWriter) open() {
	w.buf.Reset()
	if w.gz == nil {
		w.gz, _ = gzip.NewWriterLevel(&w.buf, gzip.BestSpeed)
	} else {
		w.gz.Reset(&w.buf)
	}
	w.staged = w.staged[:0]
	w.pending, w.curCases = 0, 0
}

func (w *chunkWriter) write(line []byte) error {
	if len(w.staged) > 0 && len(w.staged)+len(line)+1 > stagedBytes {
		if err := w.compressStaged(); err != nil {
			return err
		}
	}
	if w.staged == nil {
		w.staged = make([]byte, 0, stagedBytes)
	}
	w.staged = append(append(w.staged, line...), '\n')
	w.pending += len(line) + 1
	w.curCases++
	w.stored++
	return nil
}

// compressStaged hands the staged lines to the gzip stream.
func (w *chunkWriter) compressStaged() error {
	if len(w.staged) == 0 {
		return nil
	}
	if _, err := w.gz.Write(w.staged); err != nil {
		return fmt.Errorf("compress results: %w", err)
	}
	w.staged = w.staged[:0]
	if cap(w.staged) > stagedBytes {
		w.staged = nil // grown for a long line: not kept for the short ones
	}
	return nil
}

func (w *chunkWriter) flush() error {
	if err := w.compressStaged(); err != nil {
		return err
	}
	if err := w.gz.Flush(); err != nil {
		return fmt.Errorf("compress results: %w", err)
	}
	w.pending = 0
	return nil
}

// closeChunk finishes the current chunk; after the last name the writer is full.
func (w *chunkWriter) closeChunk() error {
	if err := w.compressStaged(); err != nil {
		return err
	}
	if err := w.gz.Close(); err != nil {
		return fmt.Errorf("compress results: %w", err)
	}
	if w.buf.Len() >= w.max {
		return fmt.Errorf("result chunk %d is %d bytes, over the %d-byte limit", len(w.chunks), w.buf.Len(), w.max)
	}
	w.chunks = append(w.chunks, Chunk{
		Destination: w.names[len(w.chunks)],
		Data:        bytes.Clone(w.buf.Bytes()),
		Cases:       w.curCases,
	})
	w.curCases, w.pending = 0, 0
	w.full = len(w.chunks) == len(w.names)
	return nil
}

// finish closes the last chunk, if it holds anything, and returns all chunks.
func (w *chunkWriter) finish() ([]Chunk, error) {
	if w.gz != nil && w.curCases > 0 && !w.full {
		if err := w.closeChunk(); err != nil {
			return nil, err
		}
	}
	w.gz = nil
	return w.chunks, nil
}

// ChunkWriter splits JSONL lines into gzip'd chunks, each shorter than a bound, assigned in order to named
// destinations (ConfigMaps or bucket objects), exactly as the result chunks are split; a line that fits no
// remaining destination is dropped and counted. The kept records (internal/records) are written through it.
type ChunkWriter struct {
	w *chunkWriter
}

// NewChunkWriter returns a ChunkWriter over names, each chunk shorter than maxBytes.
func NewChunkWriter(names []string, maxBytes int) *ChunkWriter {
	return &ChunkWriter{w: newChunkWriter(names, maxBytes)}
}

// Add appends one line (without its newline); it is dropped when it fits no remaining destination.
func (c *ChunkWriter) Add(line []byte) error { return c.w.add(line) }

// Finish closes the last chunk and returns the non-empty chunks, in destination order.
func (c *ChunkWriter) Finish() ([]Chunk, error) { return c.w.finish() }

// Stored is the number of lines in the chunks; Dropped the number that fit no destination.
func (c *ChunkWriter) Stored() int { return c.w.stored }

// Dropped is the number of lines that fit no destination.
func (c *ChunkWriter) Dropped() int { return c.w.dropped }
