package store

import "errors"

var (
	// ErrNotFound is returned when the row asked for does not exist.
	ErrNotFound = errors.New("not found")
	// ErrConflict is returned when a change was based on a state that is no
	// longer current (another writer changed it first).
	ErrConflict = errors.New("conflict")
)
