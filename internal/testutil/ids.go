package testutil

import "strings"

// CaseIDs are n distinct case ids of a few bytes each ("ca", "cxb", "cxxc", ...).
func CaseIDs(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = "c" + strings.Repeat("x", i%3) + string(rune('a'+i%26))
	}
	return ids
}
