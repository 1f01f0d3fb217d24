// Package architecture checks ARCHITECTURE.md's package map against the tree: every Go package under internal/,
// cmd/ and test/ is listed (its folder, or a parent folder the map names for it), every listed folder exists, and
// every package under internal/ has a package doc comment.
package architecture
