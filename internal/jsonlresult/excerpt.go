package jsonlresult

// ExcerptBytes bounds the excerpts in LineError, in bytes (textbound.Head: valid UTF-8, marked when cut).
const ExcerptBytes = 120
