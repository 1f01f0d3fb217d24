package podwire

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// The frame that ends the stream is the launcher's, whatever runner processes wrote before it.
func TestDecodeFrameAfterHostileBytes(t *testing.T) {
	report := []byte(`{"batching":"Batched","exitCode":7}`)
	forged := EncodeFrame(FrameEnd, []byte(`{"exitCode":0}`))
	tests := []struct {
		name   string
		before []byte
	}{
		{"nothing", nil},
		{"garbage without a newline", []byte("\x00\xff garbage")},
		{"a forged frame", forged},
		{"a forged frame cut short", forged[:len(forged)-5]},
		{"a trailer line without a payload", []byte("\n" + frameMagic + " end 999999 abcd\n")},
		{"a partial trailer", []byte("\n" + frameMagic + " end ")},
		{"a huge length", []byte("\n" + frameMagic + " end 4194304 00\n")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stream := append(bytes.Clone(tc.before), EncodeFrame(FrameEnd, report)...)
			kind, payload, err := DecodeFrame(stream)
			if err != nil || kind != FrameEnd {
				t.Fatalf("DecodeFrame: %q, %v", kind, err)
			}
			if diff := cmp.Diff(string(report), string(payload)); diff != "" {
				t.Errorf("payload (-want +got):\n%s", diff)
			}
		})
	}
}

// A stream that does not end with an intact frame has no report: the reader never takes earlier bytes for one.
func TestDecodeFrameRefusesBrokenEnds(t *testing.T) {
	good := EncodeFrame(FrameEnd, []byte(`{"exitCode":0}`))
	flipped := bytes.Clone(good)
	flipped[2] ^= 1
	tests := map[string][]byte{
		"empty":                   nil,
		"a frame then garbage":    append(bytes.Clone(good), "junk"...),
		"a frame then a newline":  append(bytes.Clone(good), '\n'),
		"a changed payload byte":  flipped,
		"a frame without its end": good[:len(good)-1],
		"an unknown kind":         []byte("{}\n" + frameMagic + " maybe 2 44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a\n"),
		"a padded length":         []byte("{}\n" + frameMagic + " end 02 44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a\n"),
	}
	for name, stream := range tests {
		t.Run(name, func(t *testing.T) {
			if _, _, err := DecodeFrame(stream); !errors.Is(err, ErrNoFrame) {
				t.Errorf("DecodeFrame: %v, want ErrNoFrame", err)
			}
		})
	}
}

func FuzzDecodeFrame(f *testing.F) {
	f.Add([]byte("x"), []byte(`{"exitCode":1}`))
	f.Add(EncodeFrame(FrameStuck, []byte("{}")), []byte(`{}`))
	f.Fuzz(func(t *testing.T, before, payload []byte) {
		if len(payload) > MaxFramePayload {
			return
		}
		// Whatever comes before, the last frame decodes to its payload.
		kind, got, err := DecodeFrame(append(bytes.Clone(before), EncodeFrame(FrameEnd, payload)...))
		if err != nil || kind != FrameEnd || !bytes.Equal(got, payload) {
			t.Fatalf("DecodeFrame: %q %q %v", kind, got, err)
		}
		// Hostile bytes alone never panic.
		_, _, _ = DecodeFrame(before)
	})
}

// Through the FIFO: runner processes write junk (more than the pipe holds) and a forged frame; the launcher's
// frame, written last, is what the watch reads; a stuck frame is delivered while the FIFO stays open.
func TestRunnerEndWatchReadsTheLastFrame(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runner-end")
	if err := CreateRunnerEnd(path); err != nil {
		t.Fatal(err)
	}
	w := WatchRunnerEnd(path, false)
	fd, err := HoldRunnerEnd(t.Context(), path, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	runner, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runner.Write(append(bytes.Repeat([]byte("junk "), 40000), EncodeFrame(FrameEnd, []byte(`{"forged":true}`))...)); err != nil {
		t.Fatal(err)
	}
	_ = runner.Close()
	if err := WriteRunnerEnd(fd, EncodeFrame(FrameStuck, []byte(`{"survivors":1}`)), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	select {
	case p := <-w.Stuck:
		if string(p) != `{"survivors":1}` {
			t.Errorf("stuck payload %q", p)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no stuck frame delivered while the FIFO stays open")
	}
	if err := WriteRunnerEnd(fd, EncodeFrame(FrameEnd, []byte(`{"exitCode":7}`)), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	_ = unix.Close(fd)
	select {
	case <-w.Ended:
	case <-time.After(5 * time.Second):
		t.Fatal("no end-of-file")
	}
	kind, payload, err := w.Final()
	if err != nil || kind != FrameEnd || string(payload) != `{"exitCode":7}` {
		t.Errorf("final frame %q %q %v, want the launcher's", kind, payload, err)
	}
}
