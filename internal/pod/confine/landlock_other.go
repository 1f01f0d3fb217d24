//go:build !linux

package confine

import (
	"errors"
	"os"
)

// ABI is 0 outside Linux: there is no Landlock.
func ABI() int { return 0 }

// Ruleset is a Landlock ruleset; none exists outside Linux.
type Ruleset struct{ ABI int }

// File is nil outside Linux.
func (r *Ruleset) File() *os.File { return nil }

// Close does nothing outside Linux.
func (r *Ruleset) Close() error { return nil }

// Enforces is nothing outside Linux.
func (r *Ruleset) Enforces() (files, tcp, scopes bool) { return false, false, false }

// ErrUnsupported is returned by Build outside Linux.
var ErrUnsupported = errors.New("Landlock exists only on Linux")

// Build fails outside Linux.
func Build(Policy) (*Ruleset, error) { return nil, ErrUnsupported }

// Shim fails outside Linux: it never runs a command unrestricted.
func Shim(_ []string, stderr *os.File) int {
	_, _ = stderr.WriteString("confined-exec: Landlock exists only on Linux\n")
	return 126
}
