package yamltree

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
)

// DecodeJSON reads JSON text (as Value.Raw encodes it: object keys in document order) into a value (Line 0).
func DecodeJSON(raw []byte) (*Value, error) {
	d := jsonDecoder{s: raw}
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	if d.skip(); d.i != len(d.s) {
		return nil, errors.New("content after the JSON value")
	}
	return v, nil
}

// jsonDecoder is a small JSON reader that keeps object keys in order (encoding/json's maps do not).
type jsonDecoder struct {
	s []byte
	i int
}

func (d *jsonDecoder) skip() {
	for d.i < len(d.s) && (d.s[d.i] == ' ' || d.s[d.i] == '\n' || d.s[d.i] == '\t' || d.s[d.i] == '\r') {
		d.i++
	}
}

func (d *jsonDecoder) value(depth int) (*Value, error) {
	if depth > MaxDepth {
		return nil, errors.New("nested too deeply")
	}
	d.skip()
	if d.i >= len(d.s) {
		return nil, errors.New("unexpected end of JSON")
	}
	switch d.s[d.i] {
	case '{':
		d.i++
		v := &Value{Kind: KindObject}
		d.skip()
		if d.i < len(d.s) && d.s[d.i] == '}' {
			d.i++
			return v, nil
		}
		for {
			d.skip()
			k, err := d.str()
			if err != nil {
				return nil, err
			}
			d.skip()
			if d.i >= len(d.s) || d.s[d.i] != ':' {
				return nil, errors.New("expected ':' in a JSON object")
			}
			d.i++
			m, err := d.value(depth + 1)
			if err != nil {
				return nil, err
			}
			v.Keys, v.Vals = append(v.Keys, k), append(v.Vals, m)
			if done, err := d.next('}'); err != nil || done {
				return v, err
			}
		}
	case '[':
		d.i++
		v := &Value{Kind: KindArray}
		d.skip()
		if d.i < len(d.s) && d.s[d.i] == ']' {
			d.i++
			return v, nil
		}
		for {
			item, err := d.value(depth + 1)
			if err != nil {
				return nil, err
			}
			v.Vals = append(v.Vals, item)
			if done, err := d.next(']'); err != nil || done {
				return v, err
			}
		}
	case '"':
		s, err := d.str()
		return &Value{Kind: KindString, Str: s}, err
	default:
		start := d.i
		for d.i < len(d.s) && strings.IndexByte(",]} \n\t\r", d.s[d.i]) < 0 {
			d.i++
		}
		lit := string(d.s[start:d.i])
		switch lit {
		case "null":
			return &Value{Kind: KindNull}, nil
		case "true", "false":
			return &Value{Kind: KindBool, Bool: lit == "true"}, nil
		}
		f, err := strconv.ParseFloat(lit, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) || !json.Valid([]byte(lit)) {
			return nil, fmt.Errorf("invalid JSON literal %q", textbound.Head(lit, 40))
		}
		return &Value{Kind: KindNumber, Num: lit, Float: f}, nil
	}
}

// next consumes the separator after a member or item: ok true at the closing bracket.
func (d *jsonDecoder) next(closing byte) (bool, error) {
	d.skip()
	if d.i >= len(d.s) {
		return false, errors.New("unexpected end of JSON")
	}
	switch d.s[d.i] {
	case ',':
		d.i++
		return false, nil
	case closing:
		d.i++
		return true, nil
	}
	return false, fmt.Errorf("unexpected %q in JSON", d.s[d.i])
}

// str reads a JSON string.
func (d *jsonDecoder) str() (string, error) {
	if d.i >= len(d.s) || d.s[d.i] != '"' {
		return "", errors.New("expected a JSON string")
	}
	escaped := false
	for j := d.i + 1; j < len(d.s); j++ {
		switch d.s[j] {
		case '\\':
			escaped = true
			j++
		case '"':
			text := d.s[d.i : j+1]
			d.i = j + 1
			if !escaped {
				return string(text[1 : len(text)-1]), nil
			}
			var s string
			if err := json.Unmarshal(text, &s); err != nil {
				return "", err
			}
			return s, nil
		}
	}
	return "", errors.New("unterminated JSON string")
}

// FromAny converts a decoded JSON value (as in RunConfig.DefaultEvaluators) to a tree value. Object keys are
// sorted, since Go maps have no order.
func FromAny(x any) *Value {
	switch t := x.(type) {
	case nil:
		return &Value{Kind: KindNull}
	case bool:
		return &Value{Kind: KindBool, Bool: t}
	case string:
		return &Value{Kind: KindString, Str: t}
	case float64:
		return Number(t)
	case float32:
		return Number(float64(t))
	case int:
		return &Value{Kind: KindNumber, Float: float64(t), Num: strconv.Itoa(t)}
	case int32:
		return &Value{Kind: KindNumber, Float: float64(t), Num: strconv.FormatInt(int64(t), 10)}
	case int64:
		return &Value{Kind: KindNumber, Float: float64(t), Num: strconv.FormatInt(t, 10)}
	case []any:
		v := &Value{Kind: KindArray, Vals: make([]*Value, len(t))}
		for i, item := range t {
			v.Vals[i] = FromAny(item)
		}
		return v
	case []map[string]any:
		v := &Value{Kind: KindArray, Vals: make([]*Value, len(t))}
		for i, item := range t {
			v.Vals[i] = FromAny(item)
		}
		return v
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		v := &Value{Kind: KindObject, Keys: keys, Vals: make([]*Value, len(keys))}
		for i, k := range keys {
			v.Vals[i] = FromAny(t[k])
		}
		return v
	}
	// Values JSON cannot carry (the spec's evaluators come from JSON) are kept as their text.
	return &Value{Kind: KindString, Str: fmt.Sprint(x)}
}

// Number is the value of the number f, encoded as encoding/json encodes it; a string for Inf and NaN, which JSON
// cannot carry.
func Number(f float64) *Value {
	b, err := json.Marshal(f)
	if err != nil { // Inf or NaN: not a JSON number
		return &Value{Kind: KindString, Str: strconv.FormatFloat(f, 'g', -1, 64)}
	}
	return &Value{Kind: KindNumber, Float: f, Num: string(b)}
}
