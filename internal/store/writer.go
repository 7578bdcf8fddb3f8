package store

import (
	"context"
	"database/sql/driver"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-sqlite3"
)

// This process writes through one writer at a time.
//
// SQLite lets one connection write at a time; a second one that wants to
// write while the first does gets SQLITE_BUSY and its busy handler sleeps
// (1 ms, then longer) before it tries again. Two writes of the same
// process that meet — the next message stored while the last reply is
// marked sent — would pay that sleep. So every connection this package
// opens takes writeLock, a token handed over in Go, before it writes:
// writes of this process queue for each other in microseconds and only a
// writer in another process (fetch task beside fetch serve) is waited out
// by SQLite's busy timeout.
//
// The lock lives in the driver connection, not in the store's methods, so
// that packages writing through SQL() (tasks, schedules, discord state)
// are serialized without changing. It is held:
//
//   - for a transaction, from BEGIN (IMMEDIATE: SQLite's write lock is
//     taken there too) to COMMIT or ROLLBACK;
//   - for a statement outside a transaction that writes, while it runs (a
//     query that writes, such as INSERT … RETURNING, until its rows are
//     closed).
//
// Statements outside a transaction that only read take no lock (WAL
// readers never wait for the writer). Which statements write is decided by
// SQLite itself (sqlite3_stmt_readonly) for prepared statements and by the
// leading keyword otherwise (SELECT, WITH, VALUES, EXPLAIN and PRAGMA read);
// a misjudged statement costs only the busy wait this lock avoids, never
// correctness: SQLite's own locking is still there beneath it.
//
// Waiting for the token is bounded like SQLite's own wait: after
// busyTimeout (or when ctx ends) the writer gives up with SQLITE_BUSY, as
// it would have without the lock, so a transaction that writes through a
// second connection while it holds the first fails as before instead of
// deadlocking.
type writeLock struct {
	token chan struct{}
	// wait is how long acquire waits before it reports SQLITE_BUSY.
	wait time.Duration
}

func newWriteLock(wait time.Duration) *writeLock {
	return &writeLock{token: make(chan struct{}, 1), wait: wait}
}

// errWriterBusy is what a writer that waited busyTimeout for this process's
// other writer gets: the error SQLite would have returned.
var errWriterBusy = sqlite3.Error{Code: sqlite3.ErrBusy}

func (l *writeLock) acquire(ctx context.Context) error {
	select {
	case l.token <- struct{}{}:
		return nil
	default:
	}
	t := time.NewTimer(l.wait)
	defer t.Stop()
	select {
	case l.token <- struct{}{}:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("wait for this process's writer: %w", context.Cause(ctx))
	case <-t.C:
		return fmt.Errorf("waited %s for this process's writer: %w", l.wait, errWriterBusy)
	}
}

func (l *writeLock) release() { <-l.token }

// conn is a SQLite connection that takes the write lock before it writes.
// database/sql uses a connection from one goroutine at a time.
type conn struct {
	*sqlite3.SQLiteConn
	lock *writeLock
	// scrub cleans the text arguments of statements that write (scrub.go).
	scrub func(string) string
	// held is set while the connection's transaction holds the lock.
	held bool
}

var (
	_ driver.ConnBeginTx        = (*conn)(nil)
	_ driver.ExecerContext      = (*conn)(nil)
	_ driver.QueryerContext     = (*conn)(nil)
	_ driver.ConnPrepareContext = (*conn)(nil)
)

// inTx tells whether the connection is inside a transaction (which, if it
// was begun through BeginTx, holds the lock already).
func (c *conn) inTx() bool { return c.held || !c.SQLiteConn.AutoCommit() }

func (c *conn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if err := c.lock.acquire(ctx); err != nil {
		return nil, err
	}
	t, err := c.SQLiteConn.BeginTx(ctx, opts)
	if err != nil {
		c.lock.release()
		return nil, err
	}
	c.held = true
	return &tx{Tx: t, c: c}, nil
}

// Begin is BeginTx for callers of the pre-context API.
func (c *conn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

func (c *conn) end() {
	if c.held {
		c.held = false
		c.lock.release()
	}
}

func (c *conn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	if !reads(query) {
		args = scrubArgs(c.scrub, args)
	}
	if c.inTx() || reads(query) {
		return c.SQLiteConn.ExecContext(ctx, query, args)
	}
	if err := c.lock.acquire(ctx); err != nil {
		return nil, err
	}
	defer c.lock.release()
	return c.SQLiteConn.ExecContext(ctx, query, args)
}

// Exec is ExecContext for callers of the pre-context API.
func (c *conn) Exec(query string, args []driver.Value) (driver.Result, error) {
	return c.ExecContext(context.Background(), query, named(args))
}

func (c *conn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if !reads(query) {
		args = scrubArgs(c.scrub, args)
	}
	if c.inTx() || reads(query) {
		return c.SQLiteConn.QueryContext(ctx, query, args)
	}
	if err := c.lock.acquire(ctx); err != nil {
		return nil, err
	}
	r, err := c.SQLiteConn.QueryContext(ctx, query, args)
	if err != nil {
		c.lock.release()
		return nil, err
	}
	return &rows{SQLiteRows: r.(*sqlite3.SQLiteRows), release: c.lock.release}, nil
}

// Query is QueryContext for callers of the pre-context API.
func (c *conn) Query(query string, args []driver.Value) (driver.Rows, error) {
	return c.QueryContext(context.Background(), query, named(args))
}

func (c *conn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	s, err := c.SQLiteConn.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	return &stmt{SQLiteStmt: s.(*sqlite3.SQLiteStmt), c: c}, nil
}

// Prepare is PrepareContext for callers of the pre-context API.
func (c *conn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

// Close closes the connection, giving the lock back if a transaction was
// left open on it.
func (c *conn) Close() error {
	c.end()
	return c.SQLiteConn.Close()
}

// tx gives the lock back when the transaction ends, however it ends.
type tx struct {
	driver.Tx
	c *conn
}

func (t *tx) Commit() error {
	defer t.c.end()
	return t.Tx.Commit()
}

func (t *tx) Rollback() error {
	defer t.c.end()
	return t.Tx.Rollback()
}

// stmt is a prepared statement that takes the lock when it writes outside
// a transaction.
type stmt struct {
	*sqlite3.SQLiteStmt
	c *conn
}

var (
	_ driver.StmtExecContext  = (*stmt)(nil)
	_ driver.StmtQueryContext = (*stmt)(nil)
)

func (s *stmt) writes() bool { return !s.c.inTx() && !s.SQLiteStmt.Readonly() }

// scrubbed returns args scrubbed when the statement writes.
func (s *stmt) scrubbed(args []driver.NamedValue) []driver.NamedValue {
	if s.SQLiteStmt.Readonly() {
		return args
	}
	return scrubArgs(s.c.scrub, args)
}

func (s *stmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	args = s.scrubbed(args)
	if !s.writes() {
		return s.SQLiteStmt.ExecContext(ctx, args)
	}
	if err := s.c.lock.acquire(ctx); err != nil {
		return nil, err
	}
	defer s.c.lock.release()
	return s.SQLiteStmt.ExecContext(ctx, args)
}

func (s *stmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	args = s.scrubbed(args)
	if !s.writes() {
		return s.SQLiteStmt.QueryContext(ctx, args)
	}
	if err := s.c.lock.acquire(ctx); err != nil {
		return nil, err
	}
	r, err := s.SQLiteStmt.QueryContext(ctx, args)
	if err != nil {
		s.c.lock.release()
		return nil, err
	}
	return &rows{SQLiteRows: r.(*sqlite3.SQLiteRows), release: s.c.lock.release}, nil
}

// Exec is ExecContext for callers of the pre-context API.
func (s *stmt) Exec(args []driver.Value) (driver.Result, error) {
	return s.ExecContext(context.Background(), named(args))
}

// Query is QueryContext for callers of the pre-context API.
func (s *stmt) Query(args []driver.Value) (driver.Rows, error) {
	return s.QueryContext(context.Background(), named(args))
}

// rows are the rows of a query that writes: SQLite holds its write lock
// until they are closed, and so does this process.
type rows struct {
	*sqlite3.SQLiteRows
	once    sync.Once
	release func()
}

func (r *rows) Close() error {
	err := r.SQLiteRows.Close()
	r.once.Do(r.release)
	return err
}

// reads tells a statement that only reads by its leading keyword.
func reads(query string) bool {
	q := strings.TrimLeft(query, " \t\r\n(")
	for _, kw := range readKeywords {
		if len(q) >= len(kw) && strings.EqualFold(q[:len(kw)], kw) {
			return true
		}
	}
	return false
}

// readKeywords start statements that do not write. PRAGMA is among them:
// the pragmas Fetch runs outside a transaction are queries and the
// checkpointer's wal_checkpoint, which never blocks a writer and must not
// make one wait.
var readKeywords = []string{"SELECT", "WITH", "VALUES", "EXPLAIN", "PRAGMA"}

func named(args []driver.Value) []driver.NamedValue {
	out := make([]driver.NamedValue, len(args))
	for i, a := range args {
		out[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
	}
	return out
}
