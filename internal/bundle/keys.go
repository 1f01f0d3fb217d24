package bundle

import (
	"fmt"
	"strings"
)

// MaxKeyLen is the longest ConfigMap key the API server accepts.
const MaxKeyLen = 253

// A bundle in a ConfigMap holds one file per key. A key cannot hold "/" (nor most other characters), so each key
// is its file's bundle path written with one escape: every byte other than an ASCII letter, a digit, "-" or "."
// (and a "." that would start the key) is written "_" and two upper-case hex digits. "prompts/judge.md" is the
// key "prompts_2Fjudge.md", "my_notes.txt" is "my_5Fnotes.txt", "ä.md" is "_C3_A4.md". Every key of such a
// ConfigMap is a file of the bundle; a key that is not the escape of a bundle path is refused when the run is
// pinned, naming it.

// KeyFor returns the ConfigMap key of bundle path p, or an error when p is not a bundle path or its key would be
// longer than MaxKeyLen.
func KeyFor(p string) (string, error) {
	if err := CheckPath(p); err != nil {
		return "", err
	}
	var b strings.Builder
	for i := range len(p) {
		c := p[i]
		if plainKeyByte(c) && (c != '.' || i > 0) {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "_%02X", c)
	}
	if b.Len() > MaxKeyLen {
		return "", fmt.Errorf("%q cannot be a ConfigMap key: escaped it is %d bytes, more than %d (put the bundle in a bucket)", p, b.Len(), MaxKeyLen)
	}
	return b.String(), nil
}

// PathOf returns the bundle path a ConfigMap key escapes (KeyFor's inverse), or an error naming the key.
func PathOf(key string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(key); i++ {
		c := key[i]
		switch {
		case c == '_':
			if i+2 >= len(key) || !upperHex(key[i+1]) || !upperHex(key[i+2]) {
				return "", fmt.Errorf("ConfigMap key %q is not an eval bundle key: %q at byte %d is not \"_\" and two upper-case hex digits "+
					"(write \"_5F\" for \"_\")", key, key[i:min(i+3, len(key))], i)
			}
			b.WriteByte(hexVal(key[i+1])<<4 | hexVal(key[i+2]))
			i += 2
		case plainKeyByte(c):
			b.WriteByte(c)
		default:
			return "", fmt.Errorf("ConfigMap key %q is not an eval bundle key: byte %d is %q", key, i, c)
		}
	}
	p := b.String()
	if err := CheckPath(p); err != nil {
		return "", fmt.Errorf("ConfigMap key %q: %w", key, err)
	}
	if k, _ := KeyFor(p); k != key {
		return "", fmt.Errorf("ConfigMap key %q is not an eval bundle key: %q is written %q", key, p, k)
	}
	return p, nil
}

func plainKeyByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.'
}

func upperHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'A' && c <= 'F' }

func hexVal(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c - 'A' + 10
}
