package code

import "errors"

// ErrRefused is a path the tools will not read: outside the workspace,
// through a link, or in .git or .fetch. Its message is for the model.
var ErrRefused = errors.New("refused")
