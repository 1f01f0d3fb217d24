package yamltree

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Values are written back as YAML in block style (the runner view of an eval file): collections on the lines
// after their key, scalars that could mean anything else double-quoted with every character YAML might not keep
// escaped, so that the text reads back (through the YAML parser or ReadItem) to the same values.

// AppendMember appends key: v at column col (key as written: a plain key the caller knows to be safe).
func AppendMember(b []byte, col int, key string, v *Value) []byte {
	b = AppendSpaces(b, col)
	b = append(b, key...)
	b = append(b, ':')
	return appendBlockValue(b, v, col+2)
}

// appendBlockValue appends v as the value of a key or a sequence entry whose indicator (":" or "-") was just
// written: a scalar or an empty collection on the same line, a collection on the following lines at column col.
func appendBlockValue(b []byte, v *Value, col int) []byte {
	switch {
	case v.Kind == KindObject && len(v.Keys) > 0:
		b = append(b, '\n')
		return appendMembers(b, v, col, false)
	case v.Kind == KindArray && len(v.Vals) > 0:
		b = append(b, '\n')
		return appendItems(b, v, col)
	}
	b = append(b, ' ')
	b = appendScalar(b, v)
	return append(b, '\n')
}

// appendMembers appends an object's members at column col; the first one on the current line when inline (after
// a sequence entry's "- ").
func appendMembers(b []byte, v *Value, col int, inline bool) []byte {
	for i, k := range v.Keys {
		if i > 0 || !inline {
			b = AppendSpaces(b, col)
		}
		if len(k) > maxViewImplicitKey {
			// YAML's implicit keys end at 1024 characters: an explicit key has no bound.
			b = append(b, "? "...)
			b = appendQuoted(b, k)
			b = append(b, '\n')
			b = AppendSpaces(b, col)
		} else {
			b = AppendScalarString(b, k)
		}
		b = append(b, ':')
		b = appendBlockValue(b, v.Vals[i], col+2)
	}
	return b
}

// maxViewImplicitKey is the longest key written as an implicit key (YAML allows 1024 characters; ReadItem reads up
// to maxFastKey).
const maxViewImplicitKey = maxFastKey

// appendItems appends an array's items at column col.
func appendItems(b []byte, v *Value, col int) []byte {
	for _, item := range v.Vals {
		b = AppendSpaces(b, col)
		if item.Kind == KindObject && len(item.Keys) > 0 {
			b = append(b, "- "...)
			b = appendMembers(b, item, col+2, true)
			continue
		}
		b = append(b, '-')
		b = appendBlockValue(b, item, col+2)
	}
	return b
}

// appendScalar appends a scalar, or an empty collection, in flow style.
func appendScalar(b []byte, v *Value) []byte {
	switch v.Kind {
	case KindNull:
		return append(b, "null"...)
	case KindBool:
		return strconv.AppendBool(b, v.Bool)
	case KindNumber:
		return append(b, v.Num...)
	case KindString:
		return AppendScalarString(b, v.Str)
	case KindObject:
		return append(b, "{}"...)
	default:
		return append(b, "[]"...)
	}
}

// AppendScalarString appends s as a plain scalar when every YAML reader takes it for that same string, else
// double-quoted.
func AppendScalarString(b []byte, s string) []byte {
	if plainSafe(s) {
		return append(b, s...)
	}
	return appendQuoted(b, s)
}

// plainSafe reports whether s can be written plain: it starts with a letter, holds only letters, digits, spaces
// and "_.,-" (no space at either end), and is not a word that YAML 1.1 or 1.2 reads as a boolean or null.
func plainSafe(s string) bool {
	if s == "" || len(s) > 256 || (s[0] < 'a' || s[0] > 'z') && (s[0] < 'A' || s[0] > 'Z') || s[len(s)-1] == ' ' {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '_' || c == '.' || c == '-' || c == ',':
		case c == ' ' && s[i-1] != ' ':
		default:
			return false
		}
	}
	if len(s) > 5 {
		return true
	}
	// Compared without case, without building the lower-case string.
	for _, word := range [...]string{"y", "n", "yes", "no", "true", "false", "on", "off", "null"} {
		if strings.EqualFold(s, word) {
			return false
		}
	}
	return true
}

// appendQuoted appends s as a YAML double-quoted scalar on one line. Printable ASCII and the non-ASCII characters
// every YAML reader keeps as they are stay; '"', '\\', line breaks, control characters, DEL, C1 controls, the
// Unicode line and paragraph separators, byte-order marks and non-characters are escaped (escapes YAML 1.1 and
// 1.2 share).
func appendQuoted(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\t':
				b = append(b, '\\', 't')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c < 0x20 || c == 0x7f:
				b = append(b, '\\', 'x', lowerHex[c>>4], lowerHex[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			b = append(b, `\ufffd`...)
		case r < 0xa0, r == 0x2028, r == 0x2029, r == 0xfeff, r == 0xfffe, r == 0xffff:
			b = append(b, '\\', 'u', lowerHex[r>>12&0xf], lowerHex[r>>8&0xf], lowerHex[r>>4&0xf], lowerHex[r&0xf])
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

const lowerHex = "0123456789abcdef"

// AppendSpaces appends n spaces (indentation).
func AppendSpaces(b []byte, n int) []byte {
	for range n {
		b = append(b, ' ')
	}
	return b
}
