package evaluate

import "bytes"

// JSON as AgentV's JavaScript writes it (JSON.stringify) in the prompts and payloads of both formats' judges:
// objects keep their members' order, nothing is HTML-escaped. agentv-eval-v2's ordered object and its helpers are
// in promptinputs.go; AgentV 4.42's graders (internal/evaluate/grade42) hold their own ordered values and marshal
// them with these.

// MarshalObject writes a JSON object of n members in order: member(i) is the i-th member's key and value, each
// written as MarshalNoEscape writes it.
func MarshalObject(n int, member func(i int) (key string, value any)) ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		key, value := member(i)
		k, err := marshalNoEscape(key)
		if err != nil {
			return nil, err
		}
		v, err := marshalNoEscape(value)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// MarshalNoEscape is v as JSON, compact, without HTML escaping (JSON.stringify(v) but for U+2028 and U+2029,
// which it escapes).
func MarshalNoEscape(v any) ([]byte, error) { return marshalNoEscape(v) }

// Stringify is JSON.stringify(v, null, 2): indented by two spaces, no HTML escaping, key order kept; "null" when v
// cannot be marshalled.
func Stringify(v any) string { return jsJSON(v) }
