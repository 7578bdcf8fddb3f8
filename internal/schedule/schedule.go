package schedule

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/fetch-dev/fetch/instincts"
	"github.com/fetch-dev/fetch/internal/chat"
	"github.com/fetch-dev/fetch/internal/store"
)

const (
	// DefaultMaxActive is how many active (or paused) jobs a user may have.
	DefaultMaxActive = 20
	// lateAfter is how late a run may be and still count as on time.
	lateAfter = time.Minute
	// maxSleep bounds one wait of the runner, so that a wall-clock jump or
	// a suspended machine is noticed within this period.
	maxSleep = 5 * time.Minute
	// maxMissedCount bounds the counting of missed runs for the log.
	maxMissedCount = 10_000
)

// State is a job's state.
type State string

const (
	Active  State = "active"
	Paused  State = "paused"
	Done    State = "done"
	Removed State = "removed"
)

// Clock is the time source: time.Now and time.After in production, a
// test clock in tests.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Deliverer is what the runner needs of the conversation runtime.
type Deliverer interface {
	// NotifyOnce sends a reminder to a conversation, once per key: a
	// reminder handed over again (after a crash) is dropped.
	NotifyOnce(ctx context.Context, conversationID, key string, r chat.Reply) error
	// Receive hands a run's text to the pipeline as a message.
	Receive(ctx context.Context, msg chat.Message) error
}

// Config is what a Scheduler needs. Store and Logger are required.
type Config struct {
	Store *store.DB
	// Location is the owner's time zone; UTC when nil.
	Location *time.Location
	// Clock is the time source; the real clock when nil.
	Clock  Clock
	Logger *slog.Logger
	// MaxActive is how many active or paused jobs a user may have;
	// DefaultMaxActive when 0.
	MaxActive int
	// Metrics is told how late each job was handed over; nil: nobody.
	Metrics Metrics
}

// Metrics is told how late the scheduler handed over each reminder or run
// after its due time, by kind (instincts.Reminder, instincts.Run). Fired
// never blocks.
type Metrics interface {
	Fired(kind string, lag time.Duration)
}

// Entry is a stored reminder or schedule.
type Entry struct {
	ID             int64
	ConversationID string
	UserID         string
	Kind           instincts.JobKind
	// Spec is the cron spec; empty for a one-shot reminder.
	Spec  string
	Text  string
	State State
	// Next is the next run; zero once there is none.
	Next time.Time
	// Last is the last run; zero before the first.
	Last time.Time
}

// Scheduler stores jobs and runs them when they come due.
type Scheduler struct {
	db    *store.DB
	loc   *time.Location
	clock Clock
	log   *slog.Logger
	max   int
	// metrics is nil when nothing is measured.
	metrics Metrics
	// wake tells the runner that the earliest next run may have changed.
	// One pending wake is enough, so the send never blocks.
	wake chan struct{}

	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

// New builds a Scheduler. It starts nothing: call Open.
func New(cfg Config) *Scheduler {
	s := &Scheduler{db: cfg.Store, loc: cfg.Location, clock: cfg.Clock, log: cfg.Logger, max: cfg.MaxActive, metrics: cfg.Metrics, wake: make(chan struct{}, 1)}
	if s.loc == nil {
		s.loc = time.UTC
	}
	if s.clock == nil {
		s.clock = realClock{}
	}
	if s.max == 0 {
		s.max = DefaultMaxActive
	}
	return s
}

// Open starts the runner, which first fires what came due while Fetch was
// not running (see the package doc for the missed-run policy) and
// delivers through d until Close.
func (s *Scheduler) Open(ctx context.Context, d Deliverer) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancel != nil {
		return errors.New("schedule: already open")
	}
	ctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	s.done = make(chan struct{})
	go func() {
		defer close(s.done)
		s.run(ctx, d)
	}()
	return nil
}

// Close stops the runner and waits for it.
func (s *Scheduler) Close(ctx context.Context) error {
	s.mu.Lock()
	cancel, done := s.cancel, s.done
	s.mu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("schedule: close: %w", context.Cause(ctx))
	}
}

func (s *Scheduler) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Add stores a job for a user's conversation. A user with MaxActive
// active or paused jobs gets ErrLimit.
func (s *Scheduler) Add(ctx context.Context, conversationID, userID string, j instincts.Job) (Entry, error) {
	var e Entry
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		var err error
		e, err = s.add(ctx, tx, conversationID, userID, j)
		return err
	})
	if err != nil {
		return Entry{}, fmt.Errorf("schedule: add: %w", err)
	}
	s.poke()
	return e, nil
}

// add is Add in tx, without waking the runner.
func (s *Scheduler) add(ctx context.Context, tx *sql.Tx, conversationID, userID string, j instincts.Job) (Entry, error) {
	now := s.clock.Now()
	e := Entry{ConversationID: conversationID, UserID: userID, Kind: j.Kind, Spec: j.Spec, Text: j.Text, State: Active, Next: j.At}
	switch {
	case j.Kind != instincts.Reminder && j.Kind != instincts.Run:
		return Entry{}, fmt.Errorf("unknown kind %q", j.Kind)
	case j.Text == "":
		return Entry{}, errors.New("empty text")
	case j.Spec != "":
		sched, err := instincts.ParseSpec(j.Spec)
		if err != nil {
			return Entry{}, err
		}
		if e.Next = instincts.NextRun(sched, now, s.loc); e.Next.IsZero() {
			return Entry{}, fmt.Errorf("%q never comes due", j.Spec)
		}
	case j.At.IsZero():
		return Entry{}, errors.New("a job needs a time or a spec")
	}
	var n int
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM schedules WHERE user_id = ? AND state IN ('active', 'paused')", userID).Scan(&n); err != nil {
		return Entry{}, err
	}
	if n >= s.max {
		return Entry{}, ErrLimit
	}
	at := store.FormatTime(now)
	res, err := tx.ExecContext(ctx,
		"INSERT INTO schedules (conversation_id, user_id, kind, spec, body, state, next_run, created_at, updated_at) VALUES (?, ?, ?, ?, ?, 'active', ?, ?, ?)",
		conversationID, userID, string(e.Kind), e.Spec, e.Text, store.FormatTime(e.Next), at, at)
	if err != nil {
		return Entry{}, err
	}
	e.ID, err = res.LastInsertId()
	return e, err
}

// List returns the user's active and paused jobs, oldest first.
func (s *Scheduler) List(ctx context.Context, userID string) ([]Entry, error) {
	es, err := s.query(ctx, "user_id = ? AND state IN ('active', 'paused') ORDER BY id", userID)
	if err != nil {
		return nil, fmt.Errorf("schedule: list: %w", err)
	}
	return es, nil
}

// Get returns one of the user's jobs, in any state.
func (s *Scheduler) Get(ctx context.Context, userID string, id int64) (Entry, error) {
	es, err := s.query(ctx, "user_id = ? AND id = ?", userID, id)
	switch {
	case err != nil:
		return Entry{}, fmt.Errorf("schedule: get %d: %w", id, err)
	case len(es) == 0:
		return Entry{}, fmt.Errorf("schedule: get %d: %w", id, ErrNotFound)
	}
	return es[0], nil
}

// Remove removes one of the user's active or paused jobs.
func (s *Scheduler) Remove(ctx context.Context, userID string, id int64) (Entry, error) {
	return s.change(ctx, "remove", userID, id, []State{Active, Paused}, Removed)
}

// Pause stops one of the user's active jobs from running until resumed.
func (s *Scheduler) Pause(ctx context.Context, userID string, id int64) (Entry, error) {
	return s.change(ctx, "pause", userID, id, []State{Active}, Paused)
}

// Resume lets a paused job run again. A recurring job carries on from its
// next run after now (runs while paused are not made up); a reminder that
// came due while paused fires at once.
func (s *Scheduler) Resume(ctx context.Context, userID string, id int64) (Entry, error) {
	return s.change(ctx, "resume", userID, id, []State{Paused}, Active)
}

func (s *Scheduler) change(ctx context.Context, op, userID string, id int64, from []State, to State) (Entry, error) {
	var e Entry
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		var err error
		e, err = s.changeTx(ctx, tx, userID, id, from, to)
		return err
	})
	if err != nil {
		return Entry{}, fmt.Errorf("schedule: %s %d: %w", op, id, err)
	}
	if to == Active {
		s.poke()
	}
	return e, nil
}

// changeTx is change in tx, without waking the runner. Refusals
// (ErrNotFound, ErrState) write nothing.
func (s *Scheduler) changeTx(ctx context.Context, tx *sql.Tx, userID string, id int64, from []State, to State) (Entry, error) {
	es, err := queryTx(ctx, tx, "user_id = ? AND id = ?", userID, id)
	if err != nil {
		return Entry{}, err
	}
	if len(es) == 0 || es[0].State == Removed || es[0].State == Done {
		return Entry{}, ErrNotFound
	}
	e := es[0]
	if !slices.Contains(from, e.State) {
		return e, ErrState
	}
	next := e.Next
	if to == Active && e.Spec != "" {
		sched, err := instincts.ParseSpec(e.Spec)
		if err != nil {
			return Entry{}, err
		}
		next = instincts.NextRun(sched, s.clock.Now(), s.loc)
	}
	_, err = tx.ExecContext(ctx, "UPDATE schedules SET state = ?, next_run = ?, updated_at = ? WHERE id = ?",
		string(to), nullTime(next), store.FormatTime(s.clock.Now()), id)
	if err != nil {
		return Entry{}, err
	}
	e.State, e.Next = to, next
	return e, nil
}

const entryColumns = "id, conversation_id, user_id, kind, spec, body, state, COALESCE(next_run, ''), COALESCE(last_run, '')"

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func (s *Scheduler) query(ctx context.Context, where string, args ...any) ([]Entry, error) {
	return queryTx(ctx, s.db.SQL(), where, args...)
}

func queryTx(ctx context.Context, q querier, where string, args ...any) ([]Entry, error) {
	rows, err := q.QueryContext(ctx, "SELECT "+entryColumns+" FROM schedules WHERE "+where, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Entry
	for rows.Next() {
		var e Entry
		var kind, state, next, last string
		if err := rows.Scan(&e.ID, &e.ConversationID, &e.UserID, &kind, &e.Spec, &e.Text, &state, &next, &last); err != nil {
			return nil, err
		}
		e.Kind, e.State = instincts.JobKind(kind), State(state)
		if next != "" {
			e.Next, _ = store.ParseTime(next)
		}
		if last != "" {
			e.Last, _ = store.ParseTime(last)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return store.FormatTime(t)
}
