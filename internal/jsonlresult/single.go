package jsonlresult

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// DefaultMaxSingleBytes is the default size limit of a single-case output file.
const DefaultMaxSingleBytes = 16 << 20

// ParseSingle parses one case's whole output under the single-case rules. A JSON object with text gives that text;
// one without text but with an assistant output message that has content gives the last such content; anything
// else (not JSON, an array or scalar, an object with neither, empty output) is the answer as written, a leading
// byte-order mark removed. The trace, output messages and metrics of a JSON object are kept in every case. Bytes
// that are not valid UTF-8 become U+FFFD.
func ParseSingle(id string, data []byte) *Response {
	data = bytes.TrimPrefix(data, bom)
	owned := ownedCopy(data)
	p := recordParser{alone: true}
	rec, err := p.object(owned)
	if err != nil {
		return &Response{ID: id, Text: string(owned)}
	}
	r := rec.resp
	r.ID = id
	if !rec.hasText {
		text, ok := lastAssistantContent(r.OutputMessages)
		if !ok {
			text = string(owned)
		}
		r.Text = text
	}
	return r
}

// ParseSingleFile reads and parses one case's output file. It returns an error wrapping ErrNoOutputFile when the
// file does not exist, and an error when it is larger than maxBytes (0 means DefaultMaxSingleBytes). Like
// ParseBatchFile it trusts path.
func ParseSingleFile(id, path string, maxBytes int) (*Response, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxSingleBytes
	}
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("case %q: %w: %s does not exist", id, ErrNoOutputFile, path)
		}
		return nil, fmt.Errorf("case %q: opening the output file: %w", id, err)
	}
	defer func() { _ = f.Close() }()
	data, err := io.ReadAll(io.LimitReader(f, int64(maxBytes)+1))
	if err != nil {
		return nil, fmt.Errorf("case %q: reading the output file: %w", id, err)
	}
	if len(data) > maxBytes {
		return nil, fmt.Errorf("case %q: the output file %s is larger than the limit of %d bytes", id, path, maxBytes)
	}
	return ParseSingle(id, data), nil
}
