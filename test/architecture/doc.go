// Package architecture checks the documents against the tree: ARCHITECTURE.md's package map lists every Go package
// under internal/, cmd/, test/, api/ and hack/ (its folder, or a parent folder the map names for it), exactly the
// folders directly under internal/ and cmd/ and under each group or family of packages (both directions), and no
// folder that is gone; every package under internal/ has a package doc comment; the import rules of the map's
// processes hold (imports_test.go: among them, every binary that reads eval files links every format's reader); and
// every relative link of README.md, ARCHITECTURE.md and docs/ names a file of the tree, and its anchor a heading of
// that page.
package architecture
