package review

import _ "embed"

// rubric is the reviewer's system prompt: the short rubric it reviews by.
//
//go:embed rubric.md
var rubric string
