package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-sqlite3"
)

//go:embed migrations/*.sql
var migrations embed.FS

// timeLayout is how every timestamp is stored: UTC, fixed width, so that
// text order is time order.
const timeLayout = "2006-01-02T15:04:05.000000000Z"

// busyTimeout is how long a statement waits for another writer (possibly
// another fetch process) before it fails with "database is locked".
const busyTimeout = 5 * time.Second

// checkpointEvery is how often the checkpointer folds the write-ahead log
// back into the database file. Connections never checkpoint on their own
// (wal_autocheckpoint = 0): an automatic checkpoint runs inside whichever
// commit crosses the threshold and puts an fsync on the message path.
const checkpointEvery = 2 * time.Second

// DB is an open Fetch database.
type DB struct {
	db   *sql.DB
	path string
	// Now is the clock used for every timestamp written. Tests replace it.
	Now func() time.Time
	// scrub cleans every text value written (WithScrub); nil keeps text
	// as it is.
	scrub func(string) string

	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
	closeErr  error
}

// connector opens SQLite connections without registering a driver
// globally, running setup on each new connection; every connection takes
// the process's write lock before it writes (see writer.go).
type connector struct {
	dsn    string
	driver *sqlite3.SQLiteDriver
	lock   *writeLock
	scrub  func(string) string
}

func (c connector) Connect(context.Context) (driver.Conn, error) {
	dc, err := c.driver.Open(c.dsn)
	if err != nil {
		return nil, err
	}
	return &conn{SQLiteConn: dc.(*sqlite3.SQLiteConn), lock: c.lock, scrub: c.scrub}, nil
}

func (c connector) Driver() driver.Driver { return c.driver }

// Open opens (creating if needed) the database at path, applies pending
// migrations and starts the checkpointer, which Close stops. A corrupt,
// locked or read-only database is reported as an error that names the
// path.
func Open(ctx context.Context, path string, opts ...Option) (*DB, error) {
	return open(ctx, path, waits{busy: busyTimeout, writer: busyTimeout}, opts...)
}

// waits are how long a writer waits: for another process's writer
// (SQLite's busy timeout) and for this process's (the write lock).
type waits struct {
	busy, writer time.Duration
}

func open(ctx context.Context, path string, w waits, opts ...Option) (*DB, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	q := url.Values{}
	q.Set("_journal_mode", "WAL")
	q.Set("_busy_timeout", fmt.Sprint(w.busy.Milliseconds()))
	q.Set("_foreign_keys", "on")
	q.Set("_synchronous", "NORMAL")
	q.Set("_txlock", "immediate")
	sqldb := sql.OpenDB(connector{
		dsn: "file:" + path + "?" + q.Encode(),
		driver: &sqlite3.SQLiteDriver{ConnectHook: func(c *sqlite3.SQLiteConn) error {
			_, err := c.Exec("PRAGMA wal_autocheckpoint = 0", nil)
			return err
		}},
		lock:  newWriteLock(w.writer),
		scrub: o.scrub,
	})
	db := &DB{db: sqldb, path: path, Now: time.Now, scrub: o.scrub, stop: make(chan struct{}), done: make(chan struct{})}
	if err := db.check(ctx); err != nil {
		sqldb.Close()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	if err := db.migrate(ctx); err != nil {
		sqldb.Close()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	go db.checkpointer()
	return db, nil
}

// checkpointer folds the log into the database file off the message path,
// until Close.
func (db *DB) checkpointer() {
	defer close(db.done)
	t := time.NewTicker(checkpointEvery)
	defer t.Stop()
	for {
		select {
		case <-db.stop:
			return
		case <-t.C:
			// PASSIVE never waits for readers or writers; what it cannot
			// fold now is folded next time. An error here (the file is
			// busy in another process) is not worth more than a retry.
			db.db.Exec("PRAGMA wal_checkpoint(PASSIVE)")
		}
	}
}

// check makes sure the file is a database that this process can write.
func (db *DB) check(ctx context.Context) error {
	var mode string
	if err := db.db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return describe(err)
	}
	var result string
	if err := db.db.QueryRowContext(ctx, "PRAGMA quick_check").Scan(&result); err != nil {
		return describe(err)
	}
	if result != "ok" {
		return fmt.Errorf("database is corrupt: %s", result)
	}
	// An immediate transaction takes the write lock: it fails on a
	// read-only file and waits out (then reports) a lock held elsewhere.
	tx, err := db.db.BeginTx(ctx, nil)
	if err != nil {
		return describe(err)
	}
	if _, err := tx.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS schema_migrations (version TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"); err != nil {
		tx.Rollback()
		return describe(err)
	}
	return describe(tx.Commit())
}

// describe turns SQLite's error codes into errors a person can act on,
// keeping the original wrapped.
func describe(err error) error {
	var se sqlite3.Error
	if !errors.As(err, &se) || errors.Is(err, errWriterBusy) {
		// errWriterBusy says itself which writer it waited for.
		return err
	}
	switch se.Code {
	case sqlite3.ErrNotADB, sqlite3.ErrCorrupt:
		return fmt.Errorf("not a valid Fetch database (corrupt or another kind of file): %w", err)
	case sqlite3.ErrReadonly, sqlite3.ErrPerm, sqlite3.ErrCantOpen:
		return fmt.Errorf("cannot write the database (read-only file or directory?): %w", err)
	case sqlite3.ErrBusy, sqlite3.ErrLocked:
		return fmt.Errorf("database is locked by another process: %w", err)
	}
	return err
}

func (db *DB) migrate(ctx context.Context) error {
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	sort.Strings(names)
	for _, name := range names {
		version := strings.TrimSuffix(strings.TrimPrefix(name, "migrations/"), ".sql")
		body, err := migrations.ReadFile(name)
		if err != nil {
			return fmt.Errorf("migrate %s: %w", version, err)
		}
		err = db.tx(ctx, func(tx *sql.Tx) error {
			var n int
			if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM schema_migrations WHERE version = ?", version).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return nil
			}
			if _, err := tx.ExecContext(ctx, string(body)); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, "INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)", version, db.now())
			return err
		})
		if err != nil {
			return fmt.Errorf("migrate %s: %w", version, describe(err))
		}
	}
	return nil
}

// Path is the database file's path.
func (db *DB) Path() string { return db.path }

// Close stops the checkpointer, folds the log into the database file and
// closes the database. Closing twice is harmless.
func (db *DB) Close() error {
	db.closeOnce.Do(func() {
		close(db.stop)
		<-db.done
		db.db.Exec("PRAGMA wal_checkpoint(TRUNCATE)")
		if err := db.db.Close(); err != nil {
			db.closeErr = fmt.Errorf("store: close: %w", err)
		}
	})
	return db.closeErr
}

// SQL gives packages that own tables of their own (tasks, schedules) the
// underlying handle. They must keep to the same conventions: timestamps via
// FormatTime, multi-statement changes in one transaction via Tx. Their
// writes queue behind this process's other writers like the store's own
// (see writer.go); a transaction must not write through a second
// connection (SQL() or another Tx) while it is open: that waits for
// itself and fails after the busy timeout.
func (db *DB) SQL() *sql.DB { return db.db }

// Tx runs fn in one transaction, committing when it returns nil.
func (db *DB) Tx(ctx context.Context, fn func(*sql.Tx) error) error {
	return db.tx(ctx, fn)
}

func (db *DB) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := db.db.BeginTx(ctx, nil)
	if err != nil {
		return describe(err)
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return describe(tx.Commit())
}

func (db *DB) now() string { return FormatTime(db.Now()) }

// FormatTime is the stored form of a timestamp.
func FormatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

// ParseTime reads a stored timestamp.
func ParseTime(s string) (time.Time, error) { return time.Parse(timeLayout, s) }

func parseTime(s string) time.Time {
	t, _ := ParseTime(s)
	return t
}

func parseNullTime(s sql.NullString) *time.Time {
	if !s.Valid {
		return nil
	}
	t := parseTime(s.String)
	return &t
}
