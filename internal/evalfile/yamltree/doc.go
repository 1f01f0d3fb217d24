// Package yamltree reads the YAML an eval file is written in into a tree of JSON values that keeps what a reader
// of eval files needs and a Go map would lose: object keys in document order, the line of every value, and the
// problems found, each with its path and line. It is the leaf under the eval file readers (internal/evalfile,
// which reads agentv-eval-v2, and internal/evalfile/suite42, AgentV 4.42 suites) and knows nothing of either
// format. Callers of evalfile see of it only Problem (evalfile.Problem is this type) and MaxExpansionBytes.
//
//   - Builder turns yaml.v3's node graph into Values, resolving aliases and merge keys within bounds (MaxNodes,
//     MaxDepth, MaxExpansionBytes: an alias bomb is a problem, never memory), items of a top-level sequence one at
//     a time (BuildItem, BuildNode);
//   - ReadItem reads a block sequence item written in plain YAML straight into Values held by an Arena, as yaml.v3
//     and the Builder would together, and declines anything else (fastyaml.go);
//   - Reader is the problem list and the member readers (OptString, OptBool, NonNegative, ...) every format's
//     reader embeds; SyntaxProblem is the problem of a text yaml.v3 refuses;
//   - AppendMember writes Values back as block YAML (the runner view), DecodeJSON reads JSON into Values with its
//     key order, FromAny converts decoded JSON, Resolver copies yaml.v3 nodes with their aliases resolved.
//
// It is pure Go: no I/O.
package yamltree
