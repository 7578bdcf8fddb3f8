package task

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/fetch-dev/fetch/harness"
	"github.com/fetch-dev/fetch/internal/policy"
	"github.com/fetch-dev/fetch/internal/redact"
	"github.com/fetch-dev/fetch/internal/store"
	"github.com/fetch-dev/fetch/internal/workspace"
)

// Defaults of Config.
const (
	DefaultTimeout     = 30 * time.Minute
	DefaultMaxParallel = 4
	// DefaultOutputCap bounds the events stored for one task, in bytes of
	// their JSON; a run that goes over is stopped and fails.
	DefaultOutputCap = 8 << 20
)

// Runner runs harness tasks in the kennel. cmd/fetch gives the engine one
// backed by harness.Run and the kennel (KennelRunner).
type Runner interface {
	// Run runs t with the harness until the CLI ends, calling onEvent for
	// each event in order, from one goroutine. Cancelling ctx stops the
	// run. If the calling process dies, the run goes on in the kennel and
	// Attach finds it again.
	Run(ctx context.Context, h harness.Name, t harness.Task, onEvent func(harness.Event)) (harness.Outcome, error)
	// Attach follows a run that an earlier process started, through its
	// log in the kennel, until it ends (at once when it has ended). It
	// returns an error wrapping ErrGone when the kennel has no trace of
	// the run.
	Attach(ctx context.Context, h harness.Name, t harness.Task, onEvent func(harness.Event)) (harness.Outcome, error)
	// Stop stops the run t.ID and returns once its processes are gone.
	// Stopping a run that ended or never started is success.
	Stop(ctx context.Context, t harness.Task) error
	// Status tells whether the kennel knows the run t.ID and whether its
	// process is alive.
	Status(ctx context.Context, t harness.Task) (RunStatus, error)
	// Forget drops what the kennel keeps of an ended run (its log).
	Forget(ctx context.Context, t harness.Task) error
}

// ErrGone: the kennel has no trace of a run (its container was removed,
// or it never started).
var ErrGone = errors.New("run gone from the kennel")

// Observer is told what happens to tasks. TaskUpdate is called from the
// goroutine running the task, in order per task: it must not block, write
// to the database or call back into the engine. Long-lived processes give
// the engine a *Feed, which queues updates for the conversation layer.
type Observer interface {
	TaskUpdate(ctx context.Context, u Update)
}

// UpdateKind says what an Update reports.
type UpdateKind string

const (
	// Started: the task began running (or resumed after an answer).
	Started UpdateKind = "started"
	// Progress: the harness reported an event (Update.Event).
	Progress UpdateKind = "progress"
	// Asked: the task waits for the owner's answer (Task.Question).
	Asked UpdateKind = "asked"
	// Ended: the task reached a terminal state.
	Ended UpdateKind = "ended"
	// Reattached: after a restart, the task's run was found still going
	// and is followed again.
	Reattached UpdateKind = "reattached"
	// Unreachable: the task's run lost its stream and its Docker engine
	// (Update.Engine) does not answer; the run is followed again when it
	// does. Published once per outage, and once more, with
	// Task.CancelRequested, when a cancel has to wait for the engine.
	Unreachable UpdateKind = "unreachable"
)

// Update is one thing that happened to a task.
type Update struct {
	Kind UpdateKind
	Task Task
	// Event is the harness event of a Progress update.
	Event *harness.Event
	// Recovered: the update comes from reconciling after a restart.
	Recovered bool
	// Engine names the Docker engine of an Unreachable update, and of a
	// Reattached one after it ("" for the local engine, and for a
	// Reattached update after a restart that found the run going).
	Engine string
	// Err says why an action the owner asked for (ship, merge, close)
	// failed, for Shipped and PRChanged updates.
	Err string
	// Review is the pull request's reviews, for a Reviewed update.
	Review string
	// Request is the CLI's request of a Requested or RequestClosed update.
	Request *CLIRequest
	// Message is the owner's message of a Requeued update.
	Message *Message
	// NearLimit, on a Started update, says the task's CLI reported its
	// subscription near a limit (limits.go); "" when not.
	NearLimit string
}

// Config is what an Engine needs. Store, Workspaces, Runner and Logger are
// required.
type Config struct {
	Store      *store.DB
	Workspaces *workspace.Registry
	Runner     Runner
	// Harnesses are the adapters known; harness.NewRegistry() when nil.
	Harnesses *harness.Registry
	// DefaultHarness is used when a request names none (claude when empty).
	DefaultHarness harness.Name
	// MaxParallel bounds the tasks running at once across workspaces;
	// more are queued. DefaultMaxParallel when 0.
	MaxParallel int
	// Timeout bounds one run's wall time. DefaultTimeout when 0.
	Timeout time.Duration
	// OutputCap bounds the event log of one task, in bytes.
	// DefaultOutputCap when 0.
	OutputCap int
	// TaskBudgetUSD holds a running task whose cost (its CLI's runs and
	// the orchestrator's calls attributed to it) passes it: a
	// conversation's two-way run is paused for the owner (budget.go),
	// any other run is stopped and the task fails with a message naming
	// TaskBudgetSetting (the setting that raises it, e.g.
	// FETCH_TASK_BUDGET_USD). 0 means no cap.
	TaskBudgetUSD     float64
	TaskBudgetSetting string
	// PatchDir receives ID.patch for every task that changed something.
	PatchDir string
	// OutDir keeps the files a run's CLI left for the owner in its
	// worktree's out folder (harness.OutDir), as OutDir/ID/RUN/NAME; they
	// go with the task's result (outfiles.go). Empty: none are taken.
	// OutMaxFiles and OutMaxBytes bound them: the files one result takes
	// and the size of one (DefaultOutMaxFiles, DefaultOutMaxBytes when 0).
	OutDir      string
	OutMaxFiles int
	OutMaxBytes int64
	// Secrets finds secrets in the work before it is committed; work that
	// holds any is not committed and the task needs attention. nil scans
	// nothing.
	Secrets SecretFinder
	// Repos is Fetch's own repository per workspace (*mirror.Mirror): each
	// task's branch is kept there when its work is recorded. nil keeps
	// none.
	Repos Repos
	// Shipper pushes branches and opens pull requests; nil ships nothing.
	Shipper Shipper
	// ShipOnSuccess ships every task that succeeds (when its workspace is
	// on GitHub and not local); otherwise tasks ship only when asked
	// (Ship). It needs a GitHub token.
	ShipOnSuccess bool
	// CheckLimit is the time the workspace's checks may take in one
	// shipment (checks.Runner.Limit); a shipment's time bound is
	// shipTimeout plus it.
	CheckLimit time.Duration
	// PRPoll is how often an adopting engine polls open pull requests;
	// DefaultPRPoll when 0.
	PRPoll time.Duration
	// ReconnectMin and ReconnectMax bound the wait between looks at a run
	// whose engine does not answer (it doubles from one to the other);
	// DefaultReconnectMin and DefaultReconnectMax when 0.
	ReconnectMin, ReconnectMax time.Duration
	// ApprovalTTL is how long a two-way CLI's request waits for the
	// owner before it is denied; DefaultApprovalTTL when 0.
	ApprovalTTL time.Duration
	// Observer is told of updates; nil when nobody listens.
	Observer Observer
	// Adopt is for the long-lived processes (fetch chat, fetch serve): Open
	// follows the runs that processes which died left, and queued tasks
	// are started whenever a slot frees. Without it, an engine runs only
	// the tasks it is asked to (Create, Start, Wait, Respond).
	Adopt bool
	// Relay, for a Fetch that serves a chat, takes the requests of tasks
	// started from the terminal to the owner there (relay.go); nil: it
	// takes none.
	Relay  *Relay
	Logger *slog.Logger
	// Now is the clock (time.Now when nil); NewID makes task ids.
	Now   func() time.Time
	NewID func() string
}

// Engine runs tasks. Its state is in the store, shared with other Fetch
// processes on the same data directory.
type Engine struct {
	cfg   Config
	store *store.DB
	db    *sql.DB
	log   *slog.Logger
	now   func() time.Time
	newID func() string
	owner string

	mu     sync.Mutex
	ctx    context.Context
	cancel context.CancelCauseFunc
	wg     sync.WaitGroup
	closed bool
	// runs are the tasks this process follows, by id.
	runs map[string]*run
	// forgets are the kennel logs of ended runs still to drop.
	forgets forgets
	// steering answers the requests of two-way runs (twoway.go).
	steering steering
}

// run is a task this process follows.
type run struct {
	// cancel stops the run (with errCancelled for a Cancel).
	cancel context.CancelCauseFunc
	done   chan struct{}
}

// New builds an Engine; it starts nothing (see Open).
func New(cfg Config) *Engine {
	if cfg.Harnesses == nil {
		cfg.Harnesses = harness.NewRegistry()
	}
	if cfg.DefaultHarness == "" {
		cfg.DefaultHarness = harness.Claude
	}
	if cfg.MaxParallel <= 0 {
		cfg.MaxParallel = DefaultMaxParallel
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.OutputCap <= 0 {
		cfg.OutputCap = DefaultOutputCap
	}
	if cfg.ReconnectMin <= 0 {
		cfg.ReconnectMin = DefaultReconnectMin
	}
	if cfg.ReconnectMax < cfg.ReconnectMin {
		cfg.ReconnectMax = max(DefaultReconnectMax, cfg.ReconnectMin)
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	newID := cfg.NewID
	if newID == nil {
		newID = randomID
	}
	// A registry without a kennel of its own runs its git in the runner's:
	// git on a workspace never runs on the host (package gitrun).
	if kr, ok := cfg.Runner.(*KennelRunner); ok && kr.Kennel != nil && cfg.Workspaces != nil && !cfg.Workspaces.HasKennel() {
		cfg.Workspaces.InKennel(kr.Kennel)
	}
	return &Engine{cfg: cfg, store: cfg.Store, db: cfg.Store.SQL(), log: cfg.Logger, now: now, newID: newID, owner: newOwner(), runs: map[string]*run{},
		steering: steering{guard: policy.NewLoopGuard(policy.DefaultLoopLimit)}}
}

// randomID is eight hex digits: short enough to type, valid as a file
// name, a branch name and a kennel run id.
func randomID() string {
	b := make([]byte, 4)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// Open reconciles the tasks other processes left (see recover.go) and
// starts queued tasks that can run. The runs it starts or adopts last
// until they end or Close.
func (e *Engine) Open(ctx context.Context) error {
	e.mu.Lock()
	if e.ctx != nil {
		e.mu.Unlock()
		return errors.New("task: already open")
	}
	e.ctx, e.cancel = context.WithCancelCause(context.WithoutCancel(ctx))
	e.mu.Unlock()
	if !e.cfg.Adopt {
		return nil
	}
	// Ends recorded before this start first; the runs reconciled below
	// publish their own.
	e.retell(ctx)
	e.expireStale(ctx)
	if err := e.reconcile(ctx); err != nil {
		return fmt.Errorf("task: open: %w", err)
	}
	if pruned, err := e.Prune(ctx); err != nil {
		e.log.Warn("prune worktrees", "err", err)
	} else if len(pruned) > 0 {
		e.log.Info("removed the worktrees of merged or pushed tasks", "tasks", pruned)
	}
	e.startQueued(ctx)
	if err := e.openRelay(ctx); err != nil {
		return err
	}
	if e.cfg.Shipper != nil {
		e.live(e.followPRs)
	}
	return nil
}

// live runs work on a goroutine of the engine for as long as it is open:
// Close cancels work's context and waits for it.
func (e *Engine) live(work func(ctx context.Context)) {
	e.mu.Lock()
	bg := e.ctx
	e.wg.Add(1)
	e.mu.Unlock()
	go func() {
		defer e.wg.Done()
		work(bg)
	}()
}

// retellWithin is how far back Open tells again of tasks that ended.
const retellWithin = 24 * time.Hour

// retell publishes again the ends of conversations' tasks that ended in
// the last retellWithin: a crash between recording a task's end and its
// conversation queueing the result would otherwise lose the message. The
// conversation sends each result once (it keys it by the task).
func (e *Engine) retell(ctx context.Context) {
	ended, err := e.list(ctx, Filter{States: []State{Succeeded, Failed, Cancelled, NeedsAttention}, Limit: 200})
	if err != nil {
		e.log.Warn("list ended tasks to retell", "err", err)
		return
	}
	for i := len(ended) - 1; i >= 0; i-- { // oldest first
		t := ended[i]
		if t.ConversationID == "" || e.now().Sub(t.EndedAt) > retellWithin {
			continue
		}
		e.withOut(ctx, &t)
		e.notify(ctx, Update{Kind: Ended, Task: t, Recovered: true})
	}
}

// Close stops the runs this process follows (the kennel stops a run whose
// follower goes away), records them cancelled, and waits for the
// goroutines. Only a process that dies without Close leaves runs going in
// the kennel, for the next Open to follow again.
func (e *Engine) Close(ctx context.Context) error {
	e.mu.Lock()
	e.closed = true
	cancel := e.cancel
	e.mu.Unlock()
	if cancel == nil {
		return nil
	}
	e.closeRelay(ctx)
	cancel(errDetached)
	done := make(chan struct{})
	go func() { e.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		return fmt.Errorf("task: close: %w", context.Cause(ctx))
	}
	for ws, ids := range e.forgets.all() {
		p, err := e.cfg.Workspaces.Path(ws)
		if err != nil {
			continue
		}
		for _, id := range ids {
			if err := e.cfg.Runner.Forget(ctx, harness.Task{Workspace: p, ID: id}); err != nil {
				e.log.Warn("forget a run in the kennel", "workspace", ws, "run", id, "err", err)
			}
		}
	}
	return nil
}

// Create validates a request and starts the task, or queues it when the
// parallel limit is reached or (with Queue) its workspace is busy. A busy
// workspace without Queue is refused with a *BusyError naming the task
// that holds it. Nothing is created when the request is refused.
func (e *Engine) Create(ctx context.Context, req Request) (Task, error) {
	name := harness.Name(req.Harness)
	if name == "" {
		name = e.cfg.DefaultHarness
	}
	adapter, err := e.cfg.Harnesses.Get(name)
	if err != nil {
		return Task{}, fmt.Errorf("task: create: unknown harness %q (the harnesses: %s): %w", req.Harness, harnessList(e.cfg.Harnesses.Names()), ErrInvalid)
	}
	if err := checkAttachments(req.Attachments); err != nil {
		return Task{}, fmt.Errorf("task: create: %w", err)
	}
	if err := harness.CheckModel(name, req.Model); err != nil {
		return Task{}, fmt.Errorf("task: create: %w (%w)", err, ErrInvalid)
	}
	switch req.Mode {
	case "", Work:
		req.Mode = Work
	case Ask:
		if !adapter.Traits().ReadOnly {
			return Task{}, fmt.Errorf("task: create: harness %s has no read-only mode, so it cannot answer questions; these can: %s: %w", name, harnessList(e.readOnlyHarnesses()), ErrInvalid)
		}
	default:
		return Task{}, fmt.Errorf("task: create: unknown mode %q (work or ask): %w", req.Mode, ErrInvalid)
	}
	// The goal is stored, shown and handed to the CLI inert and
	// redacted: Fetch's own secrets never enter the kennel, nor does a
	// credential the owner typed.
	req.Goal = e.store.Scrub(redact.StripControl(req.Goal))
	if err := ValidateGoal(req.Goal); err != nil {
		return Task{}, fmt.Errorf("task: create: %w", err)
	}
	if _, err := e.cfg.Workspaces.Path(req.Workspace); err != nil {
		return Task{}, fmt.Errorf("task: create: %w (%w)", err, ErrInvalid)
	}
	if err := e.checkShipAs(ctx, req); err != nil {
		return Task{}, err
	}
	if !e.isOpen() {
		return Task{}, fmt.Errorf("task: create: %w", ErrClosed)
	}
	now := e.now()
	t := Task{
		ID: e.newID(), ConversationID: req.ConversationID, Workspace: req.Workspace, Goal: req.Goal,
		Harness: string(name), Model: req.Model, Attachments: req.Attachments, State: Queued, Mode: req.Mode, Timeout: e.cfg.Timeout, ExitCode: -1, CreatedAt: now, UpdatedAt: now,
		ShipAs: req.ShipAs,
	}
	if t.Mode == Work {
		t.Branch = workspace.BranchPrefix + t.ID
	}
	err = e.tx(ctx, func(tx *sql.Tx) error {
		t.State, t.StartedAt, t.Owner = Queued, time.Time{}, ""
		var holder string
		var holderState State
		err := tx.QueryRowContext(ctx, "SELECT id, state FROM "+tasksTable+" WHERE workspace = ? AND state IN ('running', 'waiting_input')", t.Workspace).Scan(&holder, &holderState)
		switch {
		case err == nil && !req.Queue:
			return &BusyError{Workspace: t.Workspace, TaskID: holder, State: holderState}
		case err == nil:
			// Queued behind the holder.
		case errors.Is(err, sql.ErrNoRows):
			var running int
			if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM "+tasksTable+" WHERE state = 'running'").Scan(&running); err != nil {
				return err
			}
			if running < e.cfg.MaxParallel && !req.Defer {
				t.State, t.StartedAt, t.Owner = Running, now, e.owner
			}
		default:
			return err
		}
		if err := e.insert(ctx, tx, t); err != nil {
			return err
		}
		if t.Owner != "" {
			_, err := tx.ExecContext(ctx, "UPDATE "+tasksTable+" SET owner = ? WHERE id = ?", t.Owner, t.ID)
			return err
		}
		return nil
	})
	if err != nil {
		if isBusyConflict(err) {
			// Another process took the workspace between the look and
			// the insert.
			return Task{}, fmt.Errorf("task: create: workspace %s: %w", t.Workspace, ErrBusy)
		}
		return Task{}, fmt.Errorf("task: create: %w", err)
	}
	e.log.Info("task created", "task", t.ID, "workspace", t.Workspace, "harness", t.Harness, "mode", t.Mode, "state", t.State)
	if t.State == Running {
		e.follow(t, false)
	}
	return t, nil
}

// readOnlyHarnesses lists the harnesses that can run Ask tasks.
func (e *Engine) readOnlyHarnesses() []harness.Name {
	var out []harness.Name
	for _, n := range e.cfg.Harnesses.Names() {
		if a, err := e.cfg.Harnesses.Get(n); err == nil && a.Traits().ReadOnly {
			out = append(out, n)
		}
	}
	return out
}

// harnessList is names as a person reads them: "claude, codex, gemini".
func harnessList(names []harness.Name) string {
	s := make([]string, len(names))
	for i, n := range names {
		s[i] = string(n)
	}
	return strings.Join(s, ", ")
}

// lifetime is the engine's context: Close ends it.
func (e *Engine) lifetime() context.Context {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.ctx
}

func (e *Engine) isOpen() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.ctx != nil && !e.closed
}

// Get returns a task.
func (e *Engine) Get(ctx context.Context, id string) (Task, error) {
	t, err := e.get(ctx, e.db, id)
	if err != nil {
		return Task{}, fmt.Errorf("task: get: %w", err)
	}
	return t, nil
}

// List returns tasks, newest first.
func (e *Engine) List(ctx context.Context, f Filter) ([]Task, error) {
	ts, err := e.list(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("task: list: %w", err)
	}
	return ts, nil
}

// Active returns the conversation's tasks that hold a workspace (running
// or waiting for an answer).
func (e *Engine) Active(ctx context.Context, conversationID string) ([]Task, error) {
	return e.List(ctx, Filter{ConversationID: conversationID, States: []State{Running, WaitingInput}})
}

// Cancel stops a task and waits for it: a queued or waiting task is
// cancelled at once; a running one is stopped through the kennel (this
// returns once its processes are gone) and ends cancelled, keeping what it
// changed on its branch. Cancelling a task that ended is ErrState.
func (e *Engine) Cancel(ctx context.Context, id string) error {
	done, err := e.RequestCancel(ctx, id)
	if err != nil {
		return err
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("task: cancel %s: %w", id, context.Cause(ctx))
	}
}

// RequestCancel starts stopping a task and returns without waiting for
// its processes: done is closed once the task has ended (at once for a
// queued or waiting task). Its end is published to the Observer as for any
// task. A run of another process is stopped in the kennel by a goroutine
// of this engine; that process sees the flag and records the end.
// Cancelling a task that ended is ErrState.
func (e *Engine) RequestCancel(ctx context.Context, id string) (done <-chan struct{}, err error) {
	t, err := e.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	switch t.State {
	case Queued, WaitingInput:
		if t.Worktree == "" {
			if err := e.cancelIdle(ctx, t); err != nil {
				return nil, err
			}
			return closedChan, nil
		}
		// Recording the work of a task that asked (a commit) takes a
		// while: it is done in the background.
		return e.background(ctx, id, func(ctx context.Context) error { return e.cancelIdle(ctx, t) })
	case Running:
	default:
		return nil, fmt.Errorf("task: cancel %s: it already %s: %w", id, t.State, ErrState)
	}
	if _, err := e.db.ExecContext(ctx, "UPDATE "+tasksTable+" SET cancel_requested = 1 WHERE id = ?", id); err != nil {
		return nil, fmt.Errorf("task: cancel %s: %w", id, err)
	}
	// A run followed here is stopped through its context: the kennel then
	// stops it even when the stop races its start.
	if r := e.local(id); r != nil {
		r.cancel(errCancelled)
		return r.done, nil
	}
	// Another process's run is stopped in the kennel, in the background.
	return e.background(ctx, id, func(ctx context.Context) error { return e.stopElsewhere(ctx, id) })
}

// cancelIdle cancels a task that no run holds (queued, or waiting for an
// answer), keeping what its worktree holds on its branch.
func (e *Engine) cancelIdle(ctx context.Context, t Task) error {
	from := t.State
	t.State, t.EndedAt, t.Error, t.Owner = Cancelled, e.now(), "cancelled by the owner", ""
	if t.Worktree != "" {
		if err := e.record(ctx, &t); err != nil {
			e.log.Warn("record a cancelled task's work", "task", t.ID, "err", err)
		}
	}
	if err := e.save(ctx, t, from, "cancelled by the owner"); err != nil {
		if errors.Is(err, ErrState) {
			// It moved meanwhile: try again from where it is.
			return e.Cancel(ctx, t.ID)
		}
		return fmt.Errorf("task: cancel: %w", err)
	}
	e.notify(ctx, Update{Kind: Ended, Task: t})
	if e.cfg.Adopt {
		e.startQueued(ctx)
	}
	return nil
}

// background runs a cancel's work on a goroutine of the engine, bounded by
// cleanupTimeout; done is closed when it returns.
func (e *Engine) background(ctx context.Context, id string, work func(context.Context) error) (<-chan struct{}, error) {
	e.mu.Lock()
	if e.closed || e.ctx == nil {
		e.mu.Unlock()
		return nil, fmt.Errorf("task: cancel %s: %w", id, ErrClosed)
	}
	bg := e.ctx
	e.wg.Add(1)
	e.mu.Unlock()
	done := make(chan struct{})
	go func() {
		defer e.wg.Done()
		defer close(done)
		wctx, cancel := context.WithTimeout(context.WithoutCancel(bg), cleanupTimeout)
		defer cancel()
		if err := work(wctx); err != nil {
			e.log.Error("cancel a task", "task", id, "err", err)
		}
	}()
	return done, nil
}

// closedChan is the done channel of a cancel that is complete at once.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// stopElsewhere stops the run of a task this process does not follow and,
// when no live process follows it either, records its end.
func (e *Engine) stopElsewhere(ctx context.Context, id string) error {
	t, err := e.Get(ctx, id)
	if err != nil {
		return err
	}
	if t.RunID != "" {
		if err := e.cfg.Runner.Stop(ctx, e.harnessTask(t)); err != nil {
			return fmt.Errorf("task: cancel %s: %w", id, err)
		}
	}
	if t.Owner != "" && t.Owner != e.owner && ownerAlive(t.Owner) {
		return nil
	}
	return e.settleOrphan(ctx, t)
}

// Respond answers the question a waiting task asked and resumes the
// harness's session with the answer.
func (e *Engine) Respond(ctx context.Context, id, answer string) error {
	// Like a goal, the answer reaches the CLI inert and redacted.
	answer = e.store.Scrub(redact.StripControl(answer))
	if err := ValidateGoal(answer); err != nil {
		return fmt.Errorf("task: respond: answer: %w", err)
	}
	if !e.isOpen() {
		return fmt.Errorf("task: respond: %w", ErrClosed)
	}
	t, err := e.Get(ctx, id)
	if err != nil {
		return err
	}
	if t.State != WaitingInput {
		return fmt.Errorf("task: respond %s: it is %s, not waiting for an answer: %w", id, t.State, ErrState)
	}
	if t.AtBudget {
		return e.answerAtBudget(ctx, t, answer)
	}
	t.State, t.Answer, t.Question, t.Owner = Running, answer, "", e.owner
	if err := e.save(ctx, t, WaitingInput, "answered"); err != nil {
		return fmt.Errorf("task: respond: %w", err)
	}
	e.follow(t, false)
	return nil
}

// crossProcessPoll is how often Wait looks at a task that another process
// runs or that waits in the queue: SQLite tells no one of another
// process's writes, so that case is polled.
const crossProcessPoll = time.Second

// Wait blocks until the task is terminal or waits for an answer, and
// returns it.
func (e *Engine) Wait(ctx context.Context, id string) (Task, error) {
	for {
		t, err := e.Get(ctx, id)
		if err != nil {
			return Task{}, err
		}
		if t.State.Terminal() || t.State == WaitingInput {
			return t, nil
		}
		if t.State == Queued && e.isOpen() {
			// Waiting for a queued task means running it once it can.
			started, err := e.claimQueued(ctx, t)
			if err != nil {
				return t, fmt.Errorf("task: wait %s: %w", id, err)
			}
			if started.State == Running {
				e.follow(started, false)
			}
		}
		var done <-chan struct{}
		if r := e.local(id); r != nil {
			done = r.done
		}
		poll := time.NewTimer(crossProcessPoll)
		select {
		case <-done:
		case <-poll.C:
		case <-ctx.Done():
			poll.Stop()
			return t, fmt.Errorf("task: wait %s: %w", id, context.Cause(ctx))
		}
		poll.Stop()
	}
}

func (e *Engine) local(id string) *run {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.runs[id]
}

func (e *Engine) notify(ctx context.Context, u Update) {
	if e.cfg.Observer != nil {
		e.cfg.Observer.TaskUpdate(context.WithoutCancel(ctx), u)
	}
}

// startQueued starts queued tasks whose workspace is free, oldest first,
// while the parallel limit allows. Only an adopting engine does, and only
// for tasks of a conversation: a task from the command line is started by
// the command waiting for it (Wait), so that a short fetch chat session
// does not take it over and stop it when it exits.
func (e *Engine) startQueued(ctx context.Context) {
	if !e.isOpen() || !e.cfg.Adopt {
		return
	}
	queued, err := e.list(ctx, Filter{States: []State{Queued}, Limit: 1000})
	if err != nil {
		e.log.Error("list queued tasks", "err", err)
		return
	}
	for i := len(queued) - 1; i >= 0; i-- { // oldest first
		t := queued[i]
		if t.ConversationID == "" {
			continue
		}
		started, err := e.claimQueued(ctx, t)
		if err != nil {
			e.log.Error("start queued task", "task", t.ID, "err", err)
			continue
		}
		if started.State == Running {
			e.follow(started, false)
		}
	}
}

// claimQueued moves a queued task to running when its workspace is free and
// a slot is, in one transaction.
func (e *Engine) claimQueued(ctx context.Context, t Task) (Task, error) {
	now := e.now()
	queued := t
	err := e.tx(ctx, func(tx *sql.Tx) error {
		t = queued
		var busy, running int
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM "+tasksTable+" WHERE workspace = ? AND state IN ('running', 'waiting_input')", t.Workspace).Scan(&busy); err != nil {
			return err
		}
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM "+tasksTable+" WHERE state = 'running'").Scan(&running); err != nil {
			return err
		}
		if busy > 0 || running >= e.cfg.MaxParallel {
			return nil
		}
		res, err := tx.ExecContext(ctx, "UPDATE "+tasksTable+" SET state = 'running', owner = ?, started_at = ?, updated_at = ? WHERE id = ? AND state = 'queued'",
			e.owner, store.FormatTime(now), store.FormatTime(now), t.ID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		t.State, t.Owner, t.StartedAt = Running, e.owner, now
		return appendState(ctx, tx, t.ID, now, Queued, Running, "its turn came")
	})
	if isBusyConflict(err) {
		return t, nil
	}
	return t, err
}
