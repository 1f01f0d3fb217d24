package podwire

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
)

// The launcher's report travels through the runner-end FIFO, not through a file: every path the launcher could
// write is one the runner (same uid, same mounts) could take first, with a directory, a FIFO or a symlink. The
// FIFO's write end is open to any uid, so runner processes may write into it too; what makes the launcher's
// frame its own is where it is: the launcher writes it after every other process of the container is gone (or,
// when some survive SIGKILL, as the only frame of kind FrameStuck a reader acts on, which can only make the
// outcome worse), so the bytes that end the stream are the launcher's. A reader therefore looks only at the end
// of the stream: a trailer line names the kind, the length and the sha256 of the payload just before it, so
// bytes a runner wrote earlier can neither break the frame nor be read as part of it.

// Frame kinds.
const (
	// FrameEnd is the launcher's last word: every process of the runner is gone, the FIFO closes next.
	FrameEnd = "end"
	// FrameStuck says that processes of the runner survived SIGKILL for the launcher's grace period: the
	// launcher keeps the FIFO open (and keeps killing) until they are gone.
	FrameStuck = "stuck"
)

// frameMagic starts a trailer line.
const frameMagic = "evalrun-launcher-report/v1"

// MaxFramePayload bounds a frame's payload (the launcher's report holds at most a few hundred bounded tails).
const MaxFramePayload = 4 << 20

// maxTrailer bounds the trailer line: "\n" magic kind length sha256 "\n".
const maxTrailer = 1 + len(frameMagic) + 1 + 8 + 1 + 10 + 1 + 64 + 1

// MaxFrameBytes bounds a whole frame; a reader keeps this many bytes of the stream's end.
const MaxFrameBytes = MaxFramePayload + maxTrailer

// EncodeFrame frames payload as kind.
func EncodeFrame(kind string, payload []byte) []byte {
	sum := sha256.Sum256(payload)
	out := make([]byte, 0, len(payload)+maxTrailer)
	out = append(out, payload...)
	return fmt.Appendf(out, "\n%s %s %d %s\n", frameMagic, kind, len(payload), hex.EncodeToString(sum[:]))
}

// ErrNoFrame says that the stream does not end with a frame.
var ErrNoFrame = errors.New("the stream does not end with the launcher's report")

// DecodeFrame reads the frame that ends b: its kind and payload. Anything before the frame is ignored.
func DecodeFrame(b []byte) (kind string, payload []byte, err error) {
	if len(b) == 0 || b[len(b)-1] != '\n' {
		return "", nil, ErrNoFrame
	}
	body := b[:len(b)-1]
	nl := bytes.LastIndexByte(body, '\n')
	if nl < 0 || len(body)-nl > maxTrailer {
		return "", nil, ErrNoFrame
	}
	fields := bytes.Split(body[nl+1:], []byte{' '})
	if len(fields) != 4 || string(fields[0]) != frameMagic {
		return "", nil, ErrNoFrame
	}
	kind = string(fields[1])
	if kind != FrameEnd && kind != FrameStuck {
		return "", nil, fmt.Errorf("%w: unknown kind %q", ErrNoFrame, kind)
	}
	n, err := strconv.Atoi(string(fields[2]))
	if err != nil || n < 0 || n > MaxFramePayload || n > nl || strconv.Itoa(n) != string(fields[2]) {
		return "", nil, fmt.Errorf("%w: bad length", ErrNoFrame)
	}
	payload = body[nl-n : nl]
	sum := sha256.Sum256(payload)
	if hex.EncodeToString(sum[:]) != string(fields[3]) {
		return "", nil, fmt.Errorf("%w: checksum mismatch", ErrNoFrame)
	}
	return kind, payload, nil
}

// endsWithFrameOf reports cheaply whether b may end with a frame of kind (the trailer's words only).
func endsWithFrameOf(b []byte, kind string) bool {
	if len(b) == 0 || b[len(b)-1] != '\n' {
		return false
	}
	start := max(0, len(b)-maxTrailer-1)
	tail := b[start : len(b)-1]
	nl := bytes.LastIndexByte(tail, '\n')
	return nl >= 0 && bytes.HasPrefix(tail[nl+1:], []byte(frameMagic+" "+kind+" "))
}
