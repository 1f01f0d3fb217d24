// Package confine confines a code_judge script (and whatever it runs, an answer's code included) with Landlock:
// the judge runner builds a Ruleset per case (read and execute beneath the image's own directories and the
// bundle's files that are no case's key, read the case's own key files, write its scratch directories, open the
// few devices a shell needs; no TCP connect or bind; no signal and no abstract unix socket outside the script's
// domain) and starts every script through a shim, its own binary re-executed as "<self> ShimMode -- argv...",
// which restricts itself with the ruleset inherited on fd 3 and execs the script. The judge runner itself stays
// unrestricted. Landlock restricts a thread and what it execs, never its parent: a script cannot lift it.
//
// ABI reports the running kernel's Landlock ABI (0: none); a ruleset handles every access right of that ABI
// (best effort below 4 for the network and below 6 for scoping), and the caller reports which ABI it applied.
package confine
