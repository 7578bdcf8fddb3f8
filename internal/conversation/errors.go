package conversation

import "errors"

var (
	// ErrStopped is the cause of a turn cancelled by a stop.
	ErrStopped = errors.New("stopped by the owner")
	// ErrClosed is returned by Receive after Close.
	ErrClosed = errors.New("conversation manager closed")
)
