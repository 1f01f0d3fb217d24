package testutil

import (
	"fmt"
	"strings"
)

// AliasBomb is the eval file of issue 37's alias bomb: one anchored string of stringBytes bytes, a message list
// of messages aliases to it (the first case's input_messages), and cases-1 more cases whose input_messages alias
// that list. Its text is about stringBytes + 40*cases bytes; parsed naively it expands to about
// stringBytes*messages*cases bytes. issue 37's shape is AliasBomb(100_000, 20, 1500) (155 KB).
func AliasBomb(stringBytes, messages, cases int) []byte {
	var b strings.Builder
	b.WriteString("$schema: agentv-eval-v2\ndescription: alias bomb\nevalcases:\n")
	b.WriteString("  - id: case-00000\n    input_messages: &m\n")
	fmt.Fprintf(&b, "      - {role: user, content: &s \"%s\"}\n", strings.Repeat("A", stringBytes))
	for range messages - 1 {
		b.WriteString("      - {role: user, content: *s}\n")
	}
	for i := 1; i < cases; i++ {
		fmt.Fprintf(&b, "  - id: case-%05d\n    input_messages: *m\n", i)
	}
	return []byte(b.String())
}

// AliasBombOfTinyValues is an alias bomb of many small values: the first case's content is an anchored list of
// values one-letter strings, and cases-1 more cases alias it. evalcasesLast false adds a key after evalcases, so
// that the file is read as one whole tree rather than one case at a time.
func AliasBombOfTinyValues(values, cases int, evalcasesLast bool) []byte {
	var b strings.Builder
	b.WriteString("$schema: agentv-eval-v2\nevalcases:\n  - id: case-00000\n    input_messages: [{role: user, content: &a [x")
	b.WriteString(strings.Repeat(",x", values-1))
	b.WriteString("]}]\n")
	for i := 1; i < cases; i++ {
		fmt.Fprintf(&b, "  - {id: case-%05d, input_messages: [{role: user, content: *a}]}\n", i)
	}
	if !evalcasesLast {
		b.WriteString("description: after evalcases\n")
	}
	return []byte(b.String())
}
