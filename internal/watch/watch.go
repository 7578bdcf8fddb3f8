package watch

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/fetch-dev/fetch/instincts"
	"github.com/fetch-dev/fetch/internal/chat"
	"github.com/fetch-dev/fetch/internal/gitrun"
	"github.com/fetch-dev/fetch/internal/store"
	"github.com/fsnotify/fsnotify"
)

const (
	// DefaultDebounce is the quiet period that ends a burst of changes.
	DefaultDebounce = 2 * time.Second
	// maxBurst is the longest a burst is gathered before it is reported,
	// for changes that never pause.
	maxBurst = time.Minute
)

// Notifier sends a message to a conversation.
type Notifier interface {
	Notify(ctx context.Context, conversationID string, r chat.Reply) error
}

// Config is what a Manager needs. Store, Root and Logger are required.
type Config struct {
	Store *store.DB
	// Root is the workspaces directory; a workspace is a directory in it.
	Root   string
	Logger *slog.Logger
	// Debounce is the quiet period that ends a burst; DefaultDebounce
	// when 0.
	Debounce time.Duration
	// GitInterval is how often the upstream is fetched and compared; 0
	// checks nothing.
	GitInterval time.Duration
	// Kennel runs the upstream check's git in the workspace's kennel
	// (*kennel.Kennel): the host never runs git in a tree the kennel
	// writes. Required when GitInterval is set.
	Kennel gitrun.Exec
}

// Manager runs the watchers of the watched workspaces.
type Manager struct {
	cfg Config
	log *slog.Logger
	git *gitrun.Git // nil: no upstream check

	mu      sync.Mutex
	ctx     context.Context // set by Open
	cancel  context.CancelFunc
	n       Notifier
	running map[string]*watcher // by workspace
}

// New builds a Manager. It starts nothing: call Open.
func New(cfg Config) *Manager {
	if cfg.Debounce == 0 {
		cfg.Debounce = DefaultDebounce
	}
	m := &Manager{cfg: cfg, log: cfg.Logger, running: map[string]*watcher{}}
	if cfg.Kennel != nil {
		m.git = gitrun.New(cfg.Kennel)
	} else {
		m.cfg.GitInterval = 0
	}
	return m
}

// Open watches the stored workspaces again, telling n about them, until
// Close. A workspace that can no longer be watched (deleted) is logged and
// skipped.
func (m *Manager) Open(ctx context.Context, n Notifier) error {
	m.mu.Lock()
	if m.ctx != nil {
		m.mu.Unlock()
		return errors.New("watch: already open")
	}
	m.ctx, m.cancel = context.WithCancel(context.WithoutCancel(ctx))
	m.n = n
	m.mu.Unlock()

	rows, err := m.cfg.Store.SQL().QueryContext(ctx, "SELECT workspace, conversation_id FROM watches ORDER BY workspace")
	if err != nil {
		return fmt.Errorf("watch: open: %w", err)
	}
	type stored struct{ ws, conv string }
	var all []stored
	for rows.Next() {
		var s stored
		if err := rows.Scan(&s.ws, &s.conv); err != nil {
			rows.Close()
			return fmt.Errorf("watch: open: %w", err)
		}
		all = append(all, s)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("watch: open: %w", err)
	}
	for _, s := range all {
		if err := m.start(s.ws, s.conv); err != nil {
			m.log.Error("watch: cannot watch stored workspace", "workspace", s.ws, "err", err)
		}
	}
	return nil
}

// Close stops every watcher and waits for them.
func (m *Manager) Close(ctx context.Context) error {
	m.mu.Lock()
	cancel := m.cancel
	ws := make([]*watcher, 0, len(m.running))
	for name, w := range m.running {
		ws = append(ws, w)
		delete(m.running, name)
	}
	m.mu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	for _, w := range ws {
		if err := w.wait(ctx); err != nil {
			return fmt.Errorf("watch: close: %w", err)
		}
	}
	return nil
}

// ErrNoWorkspace: the workspace directory does not exist.
var ErrNoWorkspace = errors.New("no such workspace")

// dir is a workspace's directory, checked to exist.
func (m *Manager) dir(workspace string) (string, error) {
	if !filepath.IsLocal(workspace) || filepath.Base(workspace) != workspace {
		return "", fmt.Errorf("watch: %q: %w", workspace, ErrNoWorkspace)
	}
	dir := filepath.Join(m.cfg.Root, workspace)
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		return "", fmt.Errorf("watch: %q: %w", workspace, ErrNoWorkspace)
	}
	return dir, nil
}

// Watch starts watching a workspace for a conversation and stores it so
// that it is watched again after a restart. A workspace watched for
// another conversation moves to this one.
func (m *Manager) Watch(ctx context.Context, conversationID, workspace string) error {
	if _, err := m.dir(workspace); err != nil {
		return err
	}
	m.unwatch(workspace)
	if err := m.start(workspace, conversationID); err != nil {
		return err
	}
	err := m.cfg.Store.Tx(ctx, func(tx *sql.Tx) error { return m.store(ctx, tx, conversationID, workspace) })
	if err != nil {
		m.unwatch(workspace)
		return err
	}
	return nil
}

func (m *Manager) store(ctx context.Context, tx *sql.Tx, conversationID, workspace string) error {
	_, err := tx.ExecContext(ctx,
		"INSERT INTO watches (workspace, conversation_id, created_at) VALUES (?, ?, ?) ON CONFLICT (workspace) DO UPDATE SET conversation_id = excluded.conversation_id",
		workspace, conversationID, store.FormatTime(m.cfg.Store.Now()))
	if err != nil {
		return fmt.Errorf("watch: store %s: %w", workspace, err)
	}
	return nil
}

// Unwatch stops watching a workspace; it tells whether it was watched.
func (m *Manager) Unwatch(ctx context.Context, workspace string) (bool, error) {
	var stored bool
	err := m.cfg.Store.Tx(ctx, func(tx *sql.Tx) error {
		var err error
		stored, err = m.forget(ctx, tx, workspace)
		return err
	})
	if err != nil {
		return false, err
	}
	running := m.unwatch(workspace)
	return stored || running, nil
}

// forget removes a workspace's row; it tells whether there was one.
func (m *Manager) forget(ctx context.Context, tx *sql.Tx, workspace string) (bool, error) {
	res, err := tx.ExecContext(ctx, "DELETE FROM watches WHERE workspace = ?", workspace)
	if err != nil {
		return false, fmt.Errorf("watch: unwatch %s: %w", workspace, err)
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// Watching tells which conversation a workspace's changes go to; "" when
// it is not watched.
func (m *Manager) Watching(workspace string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if w := m.running[workspace]; w != nil {
		return w.conv
	}
	return ""
}

// start runs a watcher for workspace once the Manager is open.
func (m *Manager) start(workspace, conversationID string) error {
	dir, err := m.dir(workspace)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ctx == nil || m.ctx.Err() != nil {
		return errors.New("watch: not open")
	}
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watch: %s: %w", workspace, err)
	}
	w := &watcher{
		m: m, name: workspace, dir: dir, conv: conversationID, fsw: fsw, n: m.n,
		log:  m.log.With("workspace", workspace),
		done: make(chan struct{}),
	}
	// Watch the tree before returning, so that a change made right after
	// /watch on is seen.
	if err := w.addTree(dir, nil); err != nil {
		fsw.Close()
		return fmt.Errorf("watch: %s: %w", workspace, err)
	}
	ctx, cancel := context.WithCancel(m.ctx)
	w.cancel = cancel
	m.running[workspace] = w
	w.run(ctx)
	return nil
}

// unwatch stops a running watcher and waits for it; it tells whether one
// ran.
func (m *Manager) unwatch(workspace string) bool {
	m.mu.Lock()
	w := m.running[workspace]
	delete(m.running, workspace)
	m.mu.Unlock()
	if w == nil {
		return false
	}
	w.cancel()
	w.wait(context.Background())
	return true
}

// Apply carries out /watch on|off for a conversation in a transaction of
// its own and returns the reply; refusals the owner can act on are
// replies, the error is for failures of Fetch's own.
func (m *Manager) Apply(ctx context.Context, conversationID, userID string, r instincts.Response) (string, error) {
	var reply string
	var after func()
	err := m.cfg.Store.Tx(ctx, func(tx *sql.Tx) error {
		var err error
		reply, after, err = m.ApplyTx(ctx, tx, conversationID, userID, r)
		return err
	})
	if err != nil {
		return "", err
	}
	after()
	return reply, nil
}

// ApplyTx is Apply inside the caller's transaction — the one that marks
// the command's message handled (store.DB.CompleteWith) — so that the
// watch is stored or removed exactly when the message counts as handled.
// It writes only the watches row; after, to be called once tx committed
// (never after a rollback), starts or stops the workspace's watcher. after
// is never nil and does no more than Watch and Unwatch do in memory: it
// walks the workspace's tree to watch it (so that a change made once the
// reply is out is seen) or waits for the stopped watcher's goroutines; it
// never touches the database or calls out. A watcher that cannot start
// after all is logged; its row stays and is watched again at the next Open.
func (m *Manager) ApplyTx(ctx context.Context, tx *sql.Tx, conversationID, _ string, r instincts.Response) (reply string, after func(), err error) {
	switch r.Effect {
	case instincts.WatchOn:
		if m.Watching(r.Workspace) == conversationID {
			return fmt.Sprintf("I'm already watching %s.", r.Workspace), nothing, nil
		}
		if _, err := m.dir(r.Workspace); errors.Is(err, ErrNoWorkspace) {
			return fmt.Sprintf("There is no workspace %s. Nothing is watched.", r.Workspace), nothing, nil
		}
		if err := m.store(ctx, tx, conversationID, r.Workspace); err != nil {
			return "", nil, err
		}
		reply := fmt.Sprintf("👀 Watching %s: I'll tell you when files change there (one message per burst; .git, vendor, build and node_modules are ignored)", r.Workspace)
		if m.cfg.GitInterval > 0 {
			reply += fmt.Sprintf(" and when its branch falls behind upstream (fetched every %s)", m.cfg.GitInterval)
		}
		after := func() {
			m.unwatch(r.Workspace)
			if err := m.start(r.Workspace, conversationID); err != nil {
				m.log.Error("watch: cannot watch workspace; stored, retried at the next start", "workspace", r.Workspace, "err", err)
			}
		}
		return reply + ". /watch off " + r.Workspace + " stops it.", after, nil
	case instincts.WatchOff:
		stored, err := m.forget(ctx, tx, r.Workspace)
		if err != nil {
			return "", nil, err
		}
		after := func() { m.unwatch(r.Workspace) }
		if !stored && m.Watching(r.Workspace) == "" {
			return fmt.Sprintf("%s is not being watched.", r.Workspace), after, nil
		}
		return fmt.Sprintf("Stopped watching %s.", r.Workspace), after, nil
	}
	return "", nil, fmt.Errorf("watch: apply: effect %q is not a watch effect", r.Effect)
}

// nothing is the after of a command that changed nothing.
func nothing() {}
