package podfiles

import (
	"bufio"
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
)

// The judge-end FIFOs carry the code judges' verdicts from each judge container's judge runner to the collector,
// and nothing else does. install makes one per judge container in the bin volume, mode RunnerEndMode: any uid may
// write, only the collector (the owner) may read. A judge runner (its container's non-dumpable PID 1) opens the
// write end once the collector has opened the read end, which it does only after the runner container's last
// process is gone and before it tells the judges that the snapshot is ready: no code_judge script exists yet,
// so the first line is the judge runner's own, a random key that then exists only in its memory and the
// collector's. Every later message is a frame authenticated with that key (HMAC-SHA256), written while the judge
// runner is the only process of its container. A script can write into the FIFO (its bytes are skipped, never
// parsed as verdicts) or hold it open (the collector stops reading at the authenticated end frame anyway), but it
// can neither read it nor forge a frame.

const (
	judgeKeyPrefix   = "evalrun-judge-key "
	judgeFramePrefix = "evalrun-verdicts "
	// MaxJudgeFrameBytes bounds one frame (one case's code_judge results).
	MaxJudgeFrameBytes = 64 << 20
	// maxJudgeLineBytes bounds a header line; longer lines (a script's bytes) are skipped.
	maxJudgeLineBytes = 512
)

// JudgeEndWriter is the judge runner's end of its judge-end FIFO.
type JudgeEndWriter struct {
	fd  int
	key []byte
}

// OpenJudgeEnd opens the FIFO's write end once the collector reads it, then writes a fresh key. It polls until
// the collector has opened the read end, stop returns true, or ctx ends. The descriptor is close-on-exec, so no
// code_judge script inherits it.
func OpenJudgeEnd(ctx context.Context, path string, stop func() bool) (*JudgeEndWriter, error) {
	for {
		fd, err := unix.Open(path, unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err == nil {
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
		if !errors.Is(err, unix.ENXIO) && !errors.Is(err, unix.EINTR) {
			return nil, fmt.Errorf("open the judge-end FIFO %s: %w", path, err)
		}
		if stop != nil && stop() {
			return nil, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Send writes v (JSON) as one authenticated frame.
func (w *JudgeEndWriter) Send(v any) error {
	payload, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode a judge frame: %w", err)
	}
	if len(payload) > MaxJudgeFrameBytes {
		return fmt.Errorf("a judge frame of %d bytes is over %d", len(payload), MaxJudgeFrameBytes)
	}
	// The leading newline ends whatever partial line a script left in the FIFO.
	header := fmt.Sprintf("\n%s%d %s\n", judgeFramePrefix, len(payload), hex.EncodeToString(frameMAC(w.key, payload)))
	return w.write(append([]byte(header), payload...))
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

func frameMAC(key, payload []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(payload)
	return m.Sum(nil)
}

// JudgeEndReader is the collector's end of one judge-end FIFO.
type JudgeEndReader struct {
	f   *os.File
	br  *bufio.Reader
	key []byte
	// Skipped counts the bytes and frames that were not the judge runner's (a script's writes).
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
	r := &JudgeEndReader{f: f, br: bufio.NewReaderSize(f, 64<<10)}
	line, err := r.br.ReadSlice('\n')
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("the judge runner's key did not arrive: %w", err)
	}
	key, ok := strings.CutPrefix(strings.TrimSuffix(string(line), "\n"), judgeKeyPrefix)
	if r.key, err = hex.DecodeString(key); !ok || err != nil || len(r.key) != 32 {
		_ = f.Close()
		return nil, errors.New("the judge-end FIFO did not start with the judge runner's key")
	}
	return r, nil
}

// Next returns the next authenticated frame's payload, skipping anything else; io.EOF once every writer has
// closed the FIFO. Reads end with an error at deadline.
func (r *JudgeEndReader) Next(deadline time.Time) ([]byte, error) {
	if err := r.f.SetReadDeadline(deadline); err != nil {
		return nil, err
	}
	for {
		line, err := r.readLine()
		if err != nil {
			return nil, err
		}
		rest, ok := strings.CutPrefix(line, judgeFramePrefix)
		if !ok {
			if line != "" {
				r.Skipped++
			}
			continue
		}
		size, mac, ok := parseFrameHeader(rest)
		if !ok {
			r.Skipped++
			continue
		}
		payload := make([]byte, size)
		n, err := io.ReadFull(r.br, payload)
		if err == nil && hmac.Equal(mac, frameMAC(r.key, payload)) {
			return payload, nil
		}
		// Not the judge runner's: look for its frames in what was read as this one's payload.
		r.Skipped++
		r.br = bufio.NewReaderSize(io.MultiReader(bytes.NewReader(payload[:n]), r.br), 64<<10)
		if err != nil && n == 0 {
			return nil, err
		}
	}
}

// readLine returns the next line without its newline; lines longer than a header are skipped whole.
func (r *JudgeEndReader) readLine() (string, error) {
	line, err := r.br.ReadSlice('\n')
	if err == nil {
		return strings.TrimSuffix(string(line), "\n"), nil
	}
	if errors.Is(err, bufio.ErrBufferFull) || len(line) > maxJudgeLineBytes {
		for errors.Is(err, bufio.ErrBufferFull) {
			_, err = r.br.ReadSlice('\n')
		}
		if err != nil {
			return "", err
		}
		r.Skipped++
		return "", nil
	}
	if len(line) > 0 && errors.Is(err, io.EOF) {
		r.Skipped++
	}
	return "", err
}

func parseFrameHeader(s string) (int, []byte, bool) {
	sizeText, macText, ok := strings.Cut(s, " ")
	if !ok {
		return 0, nil, false
	}
	size, err := strconv.Atoi(sizeText)
	if err != nil || size < 0 || size > MaxJudgeFrameBytes {
		return 0, nil, false
	}
	mac, err := hex.DecodeString(macText)
	if err != nil || len(mac) != sha256.Size {
		return 0, nil, false
	}
	return size, mac, true
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
