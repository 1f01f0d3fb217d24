package jsonlresult

import "bytes"

// DefaultMaxSingleBytes is the default size limit of a single-case output file.
const DefaultMaxSingleBytes = 16 << 20

// ParseSingle parses one case's whole output under the single-case rules. A JSON object with text gives that text;
// one without text but with an assistant output message that has content gives the last such content; anything
// else (not JSON, an array or scalar, an object with neither, empty output) is the answer as written, a leading
// byte-order mark removed. The trace, output messages and metrics of a JSON object are kept in every case. Bytes
// that are not valid UTF-8 become U+FFFD.
func ParseSingle(id string, data []byte) *Response {
	raw := data
	data = bytes.TrimPrefix(data, bom)
	owned := ownedCopy(data)
	p := recordParser{alone: true}
	rec, err := p.object(owned)
	if err != nil {
		return &Response{ID: id, Text: string(owned), Raw: raw}
	}
	r := rec.resp
	r.ID, r.Raw = id, raw
	if !rec.hasText {
		text, ok := lastAssistantContent(r.OutputMessages)
		if !ok {
			text = string(owned)
		}
		r.Text = text
	}
	return r
}

// ParseLine parses line as the whole of a batch file, as ParseBatch parses it (a leading byte-order mark skipped,
// a trailing carriage return ignored, a line over opts.MaxLineBytes an error), without ParseBatch's reading
// pipeline: it returns the line's response (Line unset), or the message of its line error; neither for a blank
// line. The caller checks that line holds no newline (a line each). A kept record is read again through it.
func ParseLine(line []byte, opts Options) (*Response, string) {
	opts = opts.WithDefaults()
	p := recordParser{alone: true}
	ch := chunk{data: line, first: true}
	p.chunk(&ch, opts.MaxLineBytes)
	if len(ch.outs) == 0 {
		return nil, ""
	}
	return ch.outs[0].resp, ch.outs[0].msg
}
