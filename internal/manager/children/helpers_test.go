package children

import (
	"crypto/sha256"
	"encoding/hex"
)

// hash8 is the 8-hex-digit sha256 prefix childName appends to cut names, computed independently.
func hash8(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:4])
}
