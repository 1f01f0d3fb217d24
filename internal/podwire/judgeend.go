package podwire

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
	"k8s.io/apimachinery/pkg/util/wait"
)

// The judge-end FIFOs carry the code judges' verdicts from each judge container's judge runner to the collector,
// and nothing else does. install makes one per judge container in the bin volume, mode RunnerEndMode: any uid may
// write, only the collector (the owner) may read. A judge runner (its container's non-dumpable PID 1) opens the
// write end once the collector has opened the read end, which it does only after the runner container's last
// process is gone and before it tells the judges that the snapshot is ready: no code_judge script exists yet,
// so the first line is the judge runner's own, a random key that then exists only in its memory and the
// collector's. Every later message is a frame of chunks, each one atomic write (under PIPE_BUF) authenticated
// with that key (HMAC-SHA256) and numbered, written while the judge runner is the only process of its container.
// A script, of this judge container or another, can write into the FIFO (its bytes are skipped, never parsed as
// verdicts, and cannot split a chunk) or hold it open (the collector stops reading at the authenticated end
// frame anyway), but it can neither read it nor forge, reorder or replay a chunk.

const (
	judgeKeyPrefix   = "evalrun-judge-key "
	judgeChunkPrefix = "evalrun-verdicts "
	// MaxJudgeFrameBytes bounds one frame (one case's code_judge results).
	MaxJudgeFrameBytes = 16 << 20
	// maxChunkData is the payload of one chunk: with its header it stays under PIPE_BUF (4096 bytes), so each
	// chunk is one atomic write that no other writer's bytes can split.
	maxChunkData = 3800
	// maxChunkHeader bounds a chunk's header line: "\n" prefix seq last size mac "\n".
	maxChunkHeader = 160
	// readSize is how much one read of the FIFO takes.
	readSize = 16 << 10
)

// JudgeEndWriter is the judge runner's end of its judge-end FIFO.
type JudgeEndWriter struct {
	fd  int
	key []byte
	seq uint64
}

// OpenJudgeEnd opens the FIFO's write end once the collector reads it, then writes a fresh key. It polls until
// the collector has opened the read end, stop returns true (nil, nil), or ctx ends. The descriptor is
// close-on-exec, so no code_judge script inherits it.
func OpenJudgeEnd(ctx context.Context, path string, stop func() bool) (*JudgeEndWriter, error) {
	fd, stopped := -1, false
	err := wait.PollUntilContextCancel(ctx, 20*time.Millisecond, true, func(context.Context) (bool, error) {
		var err error
		if fd, err = openWriteEnd(path); err != nil {
			return false, fmt.Errorf("open the judge-end FIFO %s: %w", path, err)
		}
		stopped = fd < 0 && stop != nil && stop()
		return fd >= 0 || stopped, nil
	})
	if err != nil || stopped {
		return nil, err
	}
	w := &JudgeEndWriter{fd: fd, key: make([]byte, 32)}
	if _, err := rand.Read(w.key); err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("make the judge-end key: %w", err)
	}
	if err := unix.SetNonblock(fd, false); err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("open the judge-end FIFO %s: %w", path, err)
	}
	if err := w.write([]byte(judgeKeyPrefix + hex.EncodeToString(w.key) + "\n")); err != nil {
		_ = w.Close()
		return nil, err
	}
	return w, nil
}

// Send writes v (JSON) as one frame: chunks of at most maxChunkData bytes, each one atomic write with a header
// that numbers it, says whether it is the frame's last, and authenticates it.
func (w *JudgeEndWriter) Send(v any) error {
	payload, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode a judge frame: %w", err)
	}
	if len(payload) > MaxJudgeFrameBytes {
		return fmt.Errorf("a judge frame of %d bytes is over %d", len(payload), MaxJudgeFrameBytes)
	}
	for off := 0; ; {
		n := min(maxChunkData, len(payload)-off)
		data, last := payload[off:off+n], off+n == len(payload)
		w.seq++
		// The leading newline ends whatever partial line a script left in the FIFO.
		chunk := fmt.Appendf(nil, "\n%s%d %d %d %s\n", judgeChunkPrefix, w.seq, boolDigit(last), n,
			hex.EncodeToString(chunkMAC(w.key, w.seq, last, data)))
		if err := w.write(append(chunk, data...)); err != nil {
			return err
		}
		if off += n; last {
			return nil
		}
	}
}

func boolDigit(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (w *JudgeEndWriter) write(b []byte) error {
	for len(b) > 0 {
		n, err := unix.Write(w.fd, b)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return fmt.Errorf("write the judge-end FIFO: %w", err)
		}
		b = b[n:]
	}
	return nil
}

// Close closes the write end.
func (w *JudgeEndWriter) Close() error { return unix.Close(w.fd) }

func chunkMAC(key []byte, seq uint64, last bool, data []byte) []byte {
	m := hmac.New(sha256.New, key)
	_, _ = fmt.Fprintf(m, "%d %d %d\n", seq, boolDigit(last), len(data)) // a hash.Hash never fails a write
	m.Write(data)
	return m.Sum(nil)
}

// JudgeEndReader is the collector's end of one judge-end FIFO.
type JudgeEndReader struct {
	f   *os.File
	buf []byte
	eof bool
	key []byte
	seq uint64
	// Skipped counts the runs of bytes that were not the judge runner's (a script's writes).
	Skipped int
}

// OpenJudgeEndReader opens the read end and reads the judge runner's key. It blocks until the judge runner has
// opened the write end and written its key: call it before any code_judge script can exist, and give up on it
// (never reading a key later) once scripts may run.
func OpenJudgeEndReader(path string) (*JudgeEndReader, error) {
	f, err := os.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("open the judge-end FIFO: %w", err)
	}
	st, err := f.Stat()
	if err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		_ = f.Close()
		return nil, fmt.Errorf("%s is not the judge-end FIFO", path)
	}
	return newJudgeEndReader(f)
}

// newJudgeEndReader reads the key from f, the read end of a judge-end FIFO (or of a pipe).
func newJudgeEndReader(f *os.File) (*JudgeEndReader, error) {
	r := &JudgeEndReader{f: f}
	for bytes.IndexByte(r.buf, '\n') < 0 && !r.eof && len(r.buf) < 256 {
		if err := r.fill(); err != nil {
			_ = f.Close()
			return nil, fmt.Errorf("the judge runner's key did not arrive: %w", err)
		}
	}
	line, rest, _ := bytes.Cut(r.buf, []byte("\n"))
	key, ok := strings.CutPrefix(string(line), judgeKeyPrefix)
	var err error
	if r.key, err = hex.DecodeString(key); !ok || err != nil || len(r.key) != 32 {
		_ = f.Close()
		return nil, errors.New("the judge-end FIFO did not start with the judge runner's key")
	}
	r.buf = append([]byte(nil), rest...)
	return r, nil
}

// Next returns the next frame's payload, assembled from the judge runner's chunks; everything else in the FIFO
// is skipped. It returns io.EOF once every writer has closed the FIFO, and an error at deadline.
func (r *JudgeEndReader) Next(deadline time.Time) ([]byte, error) {
	if err := r.f.SetReadDeadline(deadline); err != nil {
		return nil, err
	}
	var frame []byte
	for {
		seq, last, data, err := r.nextChunk()
		if err != nil {
			return nil, err
		}
		if seq != r.seq+1 {
			return nil, fmt.Errorf("the judge runner's chunk %d came after %d", seq, r.seq)
		}
		r.seq = seq
		if frame = append(frame, data...); len(frame) > MaxJudgeFrameBytes {
			return nil, fmt.Errorf("a judge frame is over %d bytes", MaxJudgeFrameBytes)
		}
		if last {
			return frame, nil
		}
	}
}

// nextChunk returns the next authenticated chunk. A chunk is one atomic write, so once its header is in the
// buffer its data follows without a gap: the first candidate header whose data is complete and authentic is the
// judge runner's, and a candidate whose data is still incomplete is decided only when more arrives, unless an
// authentic chunk after it shows it was not the runner's.
func (r *JudgeEndReader) nextChunk() (uint64, bool, []byte, error) {
	for {
		undecided := -1
		for i := 0; ; {
			j := bytes.Index(r.buf[i:], []byte(judgeChunkPrefix))
			if j < 0 {
				break
			}
			j += i
			i = j + 1
			nl := bytes.IndexByte(r.buf[j:], '\n')
			if nl < 0 {
				if len(r.buf)-j <= maxChunkHeader && undecided < 0 {
					undecided = j
				}
				break
			}
			seq, last, size, mac, ok := parseChunkHeader(string(r.buf[j+len(judgeChunkPrefix) : j+nl]))
			if !ok {
				continue
			}
			start := j + nl + 1
			if start+size > len(r.buf) {
				if undecided < 0 {
					undecided = j
				}
				continue
			}
			data := r.buf[start : start+size]
			if !hmac.Equal(mac, chunkMAC(r.key, seq, last, data)) {
				continue
			}
			if len(bytes.Trim(r.buf[:j], "\n")) > 0 {
				r.Skipped++
			}
			out := append([]byte(nil), data...)
			r.buf = append(r.buf[:0], r.buf[start+size:]...)
			return seq, last, out, nil
		}
		// Nothing authentic yet: keep only what may still start the runner's next chunk.
		keep := max(len(r.buf)-len(judgeChunkPrefix), 0)
		if undecided >= 0 {
			keep = undecided
		}
		if len(bytes.Trim(r.buf[:keep], "\n")) > 0 {
			r.Skipped++
		}
		r.buf = append(r.buf[:0], r.buf[keep:]...)
		if r.eof {
			if len(bytes.Trim(r.buf, "\n")) > 0 {
				r.Skipped++
			}
			r.buf = r.buf[:0]
			return 0, false, nil, io.EOF
		}
		if err := r.fill(); err != nil {
			return 0, false, nil, err
		}
	}
}

// fill reads what the FIFO has (at least one byte, or end-of-file).
func (r *JudgeEndReader) fill() error {
	var tmp [readSize]byte
	n, err := r.f.Read(tmp[:])
	r.buf = append(r.buf, tmp[:n]...)
	if errors.Is(err, io.EOF) {
		r.eof = true
		return nil
	}
	return err
}

func parseChunkHeader(s string) (seq uint64, last bool, size int, mac []byte, ok bool) {
	f := strings.Fields(s)
	if len(f) != 4 || (f[1] != "0" && f[1] != "1") {
		return 0, false, 0, nil, false
	}
	seq, err := strconv.ParseUint(f[0], 10, 64)
	if err != nil {
		return 0, false, 0, nil, false
	}
	size, err = strconv.Atoi(f[2])
	if err != nil || size < 0 || size > maxChunkData {
		return 0, false, 0, nil, false
	}
	mac, err = hex.DecodeString(f[3])
	if err != nil || len(mac) != sha256.Size {
		return 0, false, 0, nil, false
	}
	return seq, f[1] == "1", size, mac, true
}

// Close closes the read end.
func (r *JudgeEndReader) Close() error { return r.f.Close() }

// CreateJudgeEnds makes the judge-end FIFOs of n judge containers (install runs it, as the collector's user).
func CreateJudgeEnds(paths []string) error {
	for _, p := range paths {
		if err := CreateRunnerEnd(p); err != nil {
			return fmt.Errorf("judge-end FIFO: %w", err)
		}
	}
	return nil
}
