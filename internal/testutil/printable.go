package testutil

import (
	"strings"
	"testing"
)

// HostileText is text a runner controls (an answer, an id, a stderr line, a termination message): a terminal
// escape that clears the screen and prints a green PASS, a forged line break, bidi overrides and a C1 control.
const HostileText = "\x1b[2J\x1b[32mPASS\r\nSucceeded \u202eSSAP\u202c \u2066x\u2069 \u009b31m"

// AssertPrintable fails t when s, shown to people, carries a raw control character or bidi override of
// HostileText, or does not show HostileText's escape sequence escaped (textbound.Printable).
func AssertPrintable(t testing.TB, what, s string) {
	t.Helper()
	if strings.ContainsAny(s, "\x1b\r\n\u202e\u202c\u2066\u2069\u009b") {
		t.Errorf("%s carries raw control characters: %q", what, s)
	}
	if !strings.Contains(s, `\x1b[2J\x1b[32mPASS`) || !strings.Contains(s, `\u202eSSAP`) {
		t.Errorf("%s does not show the runner's bytes escaped: %q", what, s)
	}
}
