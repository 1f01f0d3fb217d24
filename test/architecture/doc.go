// Package architecture checks the documents against the tree: ARCHITECTURE.md's package map lists every Go package
// under internal/, cmd/, test/, api/ and hack/ (its folder, or a parent folder the map names for it), exactly the
// folders directly under internal/ and cmd/ (both directions), and no folder that is gone; every package under
// internal/ has a package doc comment; and every relative link of README.md, ARCHITECTURE.md and docs/ names a file
// of the tree, and its anchor a heading of that page.
package architecture
