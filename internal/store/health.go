package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strings"

	"github.com/mattn/go-sqlite3"
)

// Health is what Check found of a database file.
type Health struct {
	// Exists: the file is there (a missing one is made at the first start).
	Exists bool
	// Integrity is PRAGMA integrity_check's answer: "ok", or the problems
	// it lists, joined by "; ".
	Integrity string
	// Size and WALSize are the sizes of the database file and of its
	// write-ahead log, in bytes.
	Size, WALSize int64
}

// Check looks at the database at path without changing it: read-only, no
// migration. It runs PRAGMA integrity_check and reads the sizes of the file
// and its write-ahead log.
func Check(ctx context.Context, path string) (Health, error) {
	var h Health
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return h, nil
	}
	if err != nil {
		return h, fmt.Errorf("store: check %s: %w", path, err)
	}
	h.Exists, h.Size = true, fi.Size()
	if wal, err := os.Stat(path + "-wal"); err == nil {
		h.WALSize = wal.Size()
	}
	q := url.Values{}
	q.Set("mode", "ro")
	q.Set("_busy_timeout", "5000")
	db := sql.OpenDB(readOnly{dsn: "file:" + path + "?" + q.Encode(), driver: &sqlite3.SQLiteDriver{}})
	defer db.Close()
	rows, err := db.QueryContext(ctx, "PRAGMA integrity_check")
	if err != nil {
		return h, fmt.Errorf("store: check %s: %w", path, err)
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return h, fmt.Errorf("store: check %s: %w", path, err)
		}
		problems = append(problems, s)
	}
	if err := rows.Err(); err != nil {
		return h, fmt.Errorf("store: check %s: %w", path, err)
	}
	h.Integrity = strings.Join(problems, "; ")
	return h, nil
}

// readOnly opens plain read-only connections: no write lock, no scrub.
type readOnly struct {
	dsn    string
	driver *sqlite3.SQLiteDriver
}

func (c readOnly) Connect(context.Context) (driver.Conn, error) { return c.driver.Open(c.dsn) }
func (c readOnly) Driver() driver.Driver                        { return c.driver }
