package testutil

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"io"
	"testing"
)

// GunzipLines returns the lines of a gzip'd JSONL payload (a stored result chunk), failing the test when it is
// not a complete gzip stream. Lines may be up to 1 MiB. It is for the tests of the chunk writer, which must end
// every stream; tests that read what a run stored read it as the product does, with results.EachLine (which
// takes a stream cut short and cannot be imported here: the results package's own tests use this one).
func GunzipLines(t testing.TB, data []byte) []string {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("open the gzip stream: %v", err)
	}
	text, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("read the gzip stream: %v", err)
	}
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("split the lines: %v", err)
	}
	return lines
}
