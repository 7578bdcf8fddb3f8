package store

import (
	"context"
	"time"
)

// OpenWaiting opens the database at path with SQLite's busy timeout and
// the wait for this process's writer set, for tests of the write lock.
func OpenWaiting(ctx context.Context, path string, busy, writer time.Duration) (*DB, error) {
	return open(ctx, path, waits{busy: busy, writer: writer})
}
