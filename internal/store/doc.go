// Package store is Fetch's single source of truth: a SQLite database
// (github.com/mattn/go-sqlite3) opened in WAL mode with a busy timeout and
// foreign keys, whose schema is a list of embedded migrations applied at Open.
//
// It holds conversations, the inbox and outbox (messages in both
// directions with their handled and sent state), each conversation's mode
// with its history, open prompts (questions and approvals), and an audit log.
//
// Store imports nothing of Fetch's own: the packages above it define the
// interfaces they need and this package satisfies them with plain types.
// A *DB is safe for concurrent use by many goroutines and by several
// processes on the same file (fetch chat, fetch serve and fetch task share
// one database); every multi-statement change runs in one transaction.
// This process's writes, including those made through SQL(), queue for one
// another in Go (writer.go) instead of meeting in SQLite, whose busy
// handler sleeps a millisecond or more; only writers of other processes are
// waited out by SQLite's busy timeout.
//
// No secret is stored: every text value any package writes passes through
// the scrubber given to Open (WithScrub), JSON values string by string
// (scrub.go).
package store
