// Package records keeps each case's record as the runner wrote it, with the digest of the case's inputs as the
// runner saw them, so that a later run (spec.rejudge) can judge the case again without running the runner
// (docs/rejudge.md). A record is one line of gzip'd JSONL chunks stored next to the result chunks: in the run's
// record ConfigMaps or in its bucket, within a storage budget; the records beyond it are counted, not kept.
//
// What is kept is what the collector's parser read (jsonlresult.Response.Raw): a batch line, or a single-case
// output file's bytes, with its mode, so that the same parser reads it again to the same response. The digest
// (Digest) is over the case's runner view (evalfile.File.CaseView) and the content digests of its input files:
// a re-judge judges a case only when its own eval file gives the same digest.
//
// It is pure Go: the collector and the manager do the I/O.
package records

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/klauspost/compress/gzip"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/jsonenc"
	"github.com/evalrun-operator/evalrun-operator/internal/jsonlresult"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
)

// Mode is how a record was read from the runner's output, and so how it is read again.
type Mode string

const (
	// ModeLine is one line of a JSONL batch file (target.batching Batched).
	ModeLine Mode = "jsonl"
	// ModeSingle is one case's whole output file (target.batching PerCase), read in single-case mode.
	ModeSingle Mode = "single"
)

// MaxLineBytes bounds one encoded record (a line of a chunk): a record whose encoding is longer is not kept. The
// parser's own bound on a batch line or a single-case file is 16 MiB; JSON escaping may grow it.
const MaxLineBytes = 32 << 20

// Record is one kept record: a line of a records chunk.
type Record struct {
	// ID is the case id the collector claimed the record for.
	ID string `json:"id"`
	// ViewSHA256 is the digest of the case's inputs as the runner saw them (Digest).
	ViewSHA256 string `json:"viewSha256"`
	// Mode says how the record is read again.
	Mode Mode `json:"mode"`
	// Text is the record when it is valid UTF-8; Base64 otherwise (exactly one is set, Text possibly empty).
	Text   string `json:"text,omitempty"`
	Base64 []byte `json:"base64,omitempty"`
}

// New returns the record of case id, read in mode, with the bytes data.
func New(id, viewSHA256 string, mode Mode, data []byte) Record {
	r := Record{ID: id, ViewSHA256: viewSHA256, Mode: mode}
	if utf8.Valid(data) {
		r.Text = string(data)
	} else {
		r.Base64 = bytes.Clone(data)
	}
	return r
}

// Data is the record's bytes, as the runner wrote them.
func (r *Record) Data() []byte {
	if r.Base64 != nil {
		return r.Base64
	}
	return []byte(r.Text)
}

// AppendJSON appends the record's encoding (one JSON object, no newline) to b: what an encoding/json Encoder with
// SetEscapeHTML(false) writes (the record is data, never HTML: it is kept as written).
func (r *Record) AppendJSON(b []byte) []byte {
	return appendRecord(b, r.ID, []byte(r.ViewSHA256), r.Mode, r.Text, r.Base64)
}

// AppendLine appends the encoding of the record of case id, read in mode, with the bytes data and the view digest
// d, to b: Record.AppendJSON's bytes for New(id, d.String(), mode, data), without building the Record (no copy of
// data but its encoding).
func AppendLine(b []byte, id string, d ViewDigest, mode Mode, data []byte) []byte {
	var hexDigest [2 * sha256.Size]byte
	hex.Encode(hexDigest[:], d[:])
	if utf8.Valid(data) {
		// Read only while it is encoded.
		return appendRecord(b, id, hexDigest[:], mode, unsafe.String(unsafe.SliceData(data), len(data)), nil)
	}
	return appendRecord(b, id, hexDigest[:], mode, "", data)
}

// appendRecord appends a record's encoding to b, its fields in Record's order: text when b64 is nil (omitted when
// empty), base64 otherwise.
func appendRecord(b []byte, id string, viewSHA256 []byte, mode Mode, text string, b64 []byte) []byte {
	b = append(b, `{"id":`...)
	b = jsonenc.AppendStringNoHTML(b, id)
	b = append(b, `,"viewSha256":`...)
	b = jsonenc.AppendStringNoHTML(b, unsafe.String(unsafe.SliceData(viewSHA256), len(viewSHA256)))
	b = append(b, `,"mode":`...)
	b = jsonenc.AppendStringNoHTML(b, string(mode))
	switch {
	case b64 != nil:
		b = append(b, `,"base64":"`...)
		b = base64.StdEncoding.AppendEncode(b, b64)
		b = append(b, '"')
	case text != "":
		b = append(b, `,"text":`...)
		b = jsonenc.AppendStringNoHTML(b, text)
	}
	return append(b, '}')
}

// Response parses the record again, as the collector parsed it when the runner wrote it. It fails when the record
// does not read as the record of its own id: a batch line that is not a valid record or claims another id.
func (r *Record) Response() (*jsonlresult.Response, error) {
	data := r.Data()
	switch r.Mode {
	case ModeSingle:
		return jsonlresult.ParseSingle(r.ID, data), nil
	case ModeLine:
		if bytes.ContainsAny(data, "\n") {
			return nil, errors.New("the record is more than one line")
		}
		// As ParseBatch reads the record alone, requesting its id only, without its reading pipeline (a
		// buffer and two goroutines per record).
		got, msg := jsonlresult.ParseLine(data, jsonlresult.Options{})
		switch {
		case got != nil && got.ID == r.ID:
			return got, nil
		case got != nil:
			return nil, errors.New("it is the record of another case")
		case msg != "":
			return nil, errors.New(msg)
		}
		return nil, errors.New("it is not a valid record of this case")
	}
	return nil, fmt.Errorf("unknown record mode %q", r.Mode)
}

// InputFile is one input file of a case as the runner got it: its reference in the eval file, and its path and
// content digest in the eval bundle ("" for a run without a bundle, whose input files are in the runner's image).
type InputFile struct {
	Ref, Path, SHA256 string
}

// digestVersion starts every digest's input, so that a change of what it covers never matches an old one.
const digestVersion = "evalrun-records-view-v1\n"

// ViewDigest is the SHA-256 of a case's inputs as the runner saw them (Sum).
type ViewDigest [sha256.Size]byte

// String is the digest in lower-case hex, as a record's viewSha256 has it.
func (d ViewDigest) String() string { return hex.EncodeToString(d[:]) }

// Digest is the hex SHA-256 of a case's inputs as the runner saw them (Sum(view, files).String()).
func Digest(view []byte, files []InputFile) string { return Sum(view, files).String() }

// Sum is the SHA-256 of a case's inputs as the runner saw them: its runner view (evalfile.File.CaseView) and its
// input files, each by reference, bundle path and content digest, in order. It is safe for concurrent use and
// allocates nothing (its hashers are pooled).
func Sum(view []byte, files []InputFile) ViewDigest {
	h := hashers.Get().(*hasher)
	defer hashers.Put(h)
	h.h.Reset()
	_, _ = h.h.Write(digestVersionBytes)
	h.field(view)
	for _, f := range files {
		h.field([]byte(f.Ref))
		h.field([]byte(f.Path))
		h.field([]byte(f.SHA256))
	}
	return ViewDigest(h.h.Sum(h.sum[:0]))
}

// digestVersionBytes is digestVersion, converted once.
var digestVersionBytes = []byte(digestVersion)

// hasher is a SHA-256 state with room for a field's length and the sum (a hash.Hash's arguments escape).
type hasher struct {
	h   hash.Hash
	n   [8]byte
	sum [sha256.Size]byte
}

var hashers = sync.Pool{New: func() any { return &hasher{h: sha256.New()} }}

// field writes b with its length, so that no two sequences of fields hash alike.
func (h *hasher) field(b []byte) {
	binary.BigEndian.PutUint64(h.n[:], uint64(len(b)))
	_, _ = h.h.Write(h.n[:])
	_, _ = h.h.Write(b)
}

// Keeper gathers a shard's records, in order, into chunks within the storage budget: the destinations (record
// ConfigMaps, or the shard's one bucket object) and each chunk's bound. What does not fit is counted, not kept.
type Keeper struct {
	where   evalsv1alpha1.RecordsLocation
	w       *results.ChunkWriter
	tooLong int
	buf     []byte
}

// NewKeeper returns a Keeper that writes chunks to destinations, each shorter than maxChunkBytes, and says the
// records are where.
func NewKeeper(where evalsv1alpha1.RecordsLocation, destinations []string, maxChunkBytes int) *Keeper {
	return &Keeper{where: where, w: results.NewChunkWriter(destinations, maxChunkBytes)}
}

// Add keeps a record, if it fits the budget.
func (k *Keeper) Add(r *Record) error {
	k.buf = r.AppendJSON(k.buf[:0])
	return k.AddLine(k.buf)
}

// AddLine keeps an encoded record (Record.AppendJSON, AppendLine), if it fits the budget; it keeps nothing of line
// once it returns.
func (k *Keeper) AddLine(line []byte) error {
	if len(line) > MaxLineBytes {
		k.tooLong++
		return nil
	}
	return k.w.Add(line)
}

// Finish returns the chunks to store and the records' status.
func (k *Keeper) Finish() ([]results.Chunk, *evalsv1alpha1.RecordsStatus, error) {
	chunks, err := k.w.Finish()
	if err != nil {
		return nil, nil, err
	}
	st := &evalsv1alpha1.RecordsStatus{Kept: clamp(k.w.Stored()), NotKept: clamp(k.w.Dropped() + k.tooLong), Where: k.where}
	for _, c := range chunks {
		st.Bytes += int64(len(c.Data))
	}
	return chunks, st, nil
}

func clamp(n int) int32 {
	if n > 1<<31-1 {
		return 1<<31 - 1
	}
	return int32(n)
}

// Each calls f with every record of a stored chunk (gzip'd JSONL), in order. A line that does not decode is an
// error: the chunks are the collector's own, so a broken one is not a record to skip.
func Each(chunk []byte, f func(*Record) error) error {
	zr, err := gzip.NewReader(bytes.NewReader(chunk))
	if err != nil {
		return fmt.Errorf("open a records chunk: %w", err)
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLineBytes+1)
	for sc.Scan() {
		line := sc.Bytes()
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var r Record
		if err := json.Unmarshal(line, &r); err != nil {
			return fmt.Errorf("decode a kept record: %w", err)
		}
		if err := f(&r); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read a records chunk: %w", err)
	}
	return nil
}
