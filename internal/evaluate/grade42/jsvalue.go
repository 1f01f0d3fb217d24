package grade42

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/evalrun-operator/evalrun-operator/internal/evaluate"
)

// JSON values as AgentV's JavaScript holds them, for the payloads and prompts that show them (JSON.stringify):
// objects keep their key order (orderedObject), numbers are float64 (encoding/json writes them as JavaScript
// does), arrays are []any; marshalled with evaluate.MarshalNoEscape, indented with evaluate.Stringify.

// kv is one member of an orderedObject.
type kv struct {
	key   string
	value any
}

// orderedObject is a JSON object whose members keep their order.
type orderedObject []kv

// MarshalJSON writes the members in order.
func (o orderedObject) MarshalJSON() ([]byte, error) {
	return evaluate.MarshalObject(len(o), func(i int) (string, any) { return o[i].key, o[i].value })
}

// Keys and values of AgentV's JSON that its prompts and payloads spell in many places.
const (
	keyRole       = "role"
	keyContent    = "content"
	keyName       = "name"
	keyType       = "type"
	keyInput      = "input"
	keyOutput     = "output"
	keyMetadata   = "metadata"
	keyTokenUsage = "tokenUsage"
	keyDuration   = "durationMs"
	keyToolCalls  = "tool_calls"
	roleAssistant = "assistant"
	jsonNull      = "null"
	// kindText and kindFile are the types of text and file segments and content blocks.
	kindText = "text"
	kindFile = "file"
)

// maxJSONDepth bounds the nesting parseOrdered accepts: a runner's output may be hostile.
const maxJSONDepth = 1000

// parseOrdered decodes one JSON value, object keys in their order (a repeated key keeps its first place and its
// last value, as JSON.parse does).
func parseOrdered(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	v, err := decodeOrdered(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("text after the JSON value")
	}
	return v, nil
}

func decodeOrdered(dec *json.Decoder, depth int) (any, error) {
	if depth > maxJSONDepth {
		return nil, fmt.Errorf("JSON nested deeper than %d", maxJSONDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			obj := orderedObject{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := decodeOrdered(dec, depth+1)
				if err != nil {
					return nil, err
				}
				obj = obj.set(k, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return obj, nil
		case '[':
			arr := []any{}
			for dec.More() {
				v, err := decodeOrdered(dec, depth+1)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return arr, nil
		}
		return nil, fmt.Errorf("unexpected %v", t)
	case json.Number:
		f, err := t.Float64()
		if err != nil {
			return nil, err
		}
		return f, nil
	}
	return tok, nil
}

// set sets key to v: in its place when o has it, else at the end (JavaScript's object spread).
func (o orderedObject) set(key string, v any) orderedObject {
	for i := range o {
		if o[i].key == key {
			o[i].value = v
			return o
		}
	}
	return append(o, kv{key, v})
}

// get returns the value of key.
func (o orderedObject) get(key string) (any, bool) {
	for _, m := range o {
		if m.key == key {
			return m.value, true
		}
	}
	return nil, false
}

// snakeDeep is AgentV's toSnakeCaseDeep: every object key at every depth written snake_case (a key that starts
// with an upper-case letter stays).
func snakeDeep(v any) any {
	switch t := v.(type) {
	case orderedObject:
		out := make(orderedObject, 0, len(t))
		for _, m := range t {
			out = out.set(snakeCase(m.key), snakeDeep(m.value))
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = snakeDeep(x)
		}
		return out
	case json.RawMessage:
		parsed, err := parseOrdered(t)
		if err != nil {
			return t
		}
		return snakeDeep(parsed)
	}
	return v
}

// snakeCase is AgentV's toSnakeCase: each upper-case ASCII letter becomes "_" and its lower case, unless the key
// starts with one.
func snakeCase(s string) string {
	if s == "" || (s[0] >= 'A' && s[0] <= 'Z') {
		return s
	}
	if !strings.ContainsAny(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			b.WriteByte('_')
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}

// jsString is JSON.stringify(v): compact, no HTML escaping, U+2028 and U+2029 as they are.
func jsString(v any) string {
	b, err := evaluate.MarshalNoEscape(v)
	if err != nil {
		return jsonNull
	}
	s := strings.ReplaceAll(string(b), `\u2028`, "\u2028")
	return strings.ReplaceAll(s, `\u2029`, "\u2029")
}
