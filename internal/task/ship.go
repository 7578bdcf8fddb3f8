package task

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/fetch-dev/fetch/harness"
	"github.com/fetch-dev/fetch/internal/mirror"
	"github.com/fetch-dev/fetch/internal/redact"
	"github.com/fetch-dev/fetch/internal/ship"
	"github.com/fetch-dev/fetch/internal/workspace"
)

// Shipper takes a succeeded task's branch off the machine (push and pull
// request) and follows the pull request; *ship.Shipper implements it.
type Shipper interface {
	Ship(ctx context.Context, w ship.Work) (ship.Result, error)
	Poll(ctx context.Context, ws string, number int) (ship.PR, bool, error)
	Merge(ctx context.Context, ws string, number int, sha string) error
	Close(ctx context.Context, ws string, number int) error
	Cleanup(ctx context.Context, ws, branch string, merged bool) error
	// Review returns a pull request's reviews and review comments as one
	// text, and how many there are.
	Review(ctx context.Context, ws string, number int) (string, int, error)
	// SendBase fetches the latest base of the workspace's repository and
	// puts it in the workspace's repository in the kennel as ref; it
	// returns the base's commit and branch.
	SendBase(ctx context.Context, w ship.Work, ref string) (sha, branch string, err error)
	// Allows tells whether a task of the workspace may ship as asked;
	// the error names the setting that would allow it
	// (ship.ErrNotAllowed).
	Allows(ctx context.Context, ws string, a ship.As) error
}

// More update kinds, for shipping.
const (
	// Shipped: the task's branch was pushed and its pull request opened
	// (Task.PR), or shipping it failed (Task.ShipError).
	Shipped UpdateKind = "shipped"
	// PRChanged: the task's pull request was merged or closed
	// (Task.PR.State); its worktree and branch are gone.
	PRChanged UpdateKind = "pr_changed"
	// Reviewed: the task's pull request got reviews (Update.Review).
	Reviewed UpdateKind = "reviewed"
)

// Defaults of shipping.
const (
	// shipTimeout bounds one shipment (a fetch, a rebase, a push and a
	// few API calls).
	shipTimeout = 3 * time.Minute
	// DefaultPRPoll is how often open pull requests are polled.
	DefaultPRPoll = time.Minute
)

// testCommand matches the command lines that run tests.
var testCommand = regexp.MustCompile(`(?i)\b(go test|pytest|py\.test|jest|vitest|mocha|cargo test|npm (run )?test|yarn test|pnpm test|mvn (-\S+ )*test|gradle\S* test|rspec|phpunit|ctest|make (check|test))\b`)

// maxTests bounds the test commands a pull request's body lists.
const maxTests = 5

// testResults lists the test commands the CLI reported running in the
// task and how each last ended ("`go test ./...`: passed").
func (e *Engine) testResults(ctx context.Context, id string) []string {
	var order []string
	last := map[string]int{}
	// A CLI may report a command when it starts (with its command line)
	// and again when it ends (with its exit code), paired by tool id.
	started := map[string]string{}
	err := e.Log(ctx, id, func(le LogEntry) error {
		if le.Kind != string(harness.KindCommand) {
			return nil
		}
		var ev harness.Event
		if json.Unmarshal(le.Data, &ev) != nil {
			return nil
		}
		if ev.Command == "" {
			ev.Command = started[ev.ToolID]
		} else if ev.ToolID != "" {
			started[ev.ToolID] = ev.Command
		}
		if ev.ExitCode == nil || !testCommand.MatchString(ev.Command) {
			return nil
		}
		cmd := strings.Join(strings.Fields(ev.Command), " ")
		if _, ok := last[cmd]; !ok {
			order = append(order, cmd)
		}
		last[cmd] = *ev.ExitCode
		return nil
	})
	if err != nil {
		e.log.Warn("read a task's test commands", "task", id, "err", err)
	}
	if len(order) > maxTests {
		order = order[len(order)-maxTests:]
	}
	out := make([]string, 0, len(order))
	for _, cmd := range order {
		verdict := "passed"
		if code := last[cmd]; code != 0 {
			verdict = fmt.Sprintf("failed (exit %d)", code)
		}
		out = append(out, fmt.Sprintf("`%s`: %s", clipRunes(cmd, 200), verdict))
	}
	return out
}

func clipRunes(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// shipWork is what the shipper needs of a task.
func (e *Engine) shipWork(t Task) ship.Work {
	w := ship.Work{TaskID: t.ID, Workspace: t.Workspace, ConversationID: t.ConversationID, Dir: t.Worktree, Branch: t.Branch, Base: t.Base, Goal: t.Goal, Summary: t.Summary}
	if p, err := e.cfg.Workspaces.Path(t.Workspace); err == nil {
		w.Path = p
	}
	for _, f := range t.Files {
		w.Files = append(w.Files, fmt.Sprintf("%s +%d -%d", f.Path, f.Added, f.Removed))
	}
	return w
}

// autoMerge tells whether the owner's autonomy level in the task's
// conversation lets Fetch merge on its own ("autonomous"); a task from the
// command line is never merged on its own.
func (e *Engine) autoMerge(ctx context.Context, t Task) bool {
	if t.ConversationID == "" {
		return false
	}
	c, err := e.store.Conversation(ctx, t.ConversationID)
	return err == nil && c.Autonomy == "autonomous"
}

// shipAtEnd ships a task that just succeeded, when shipping is configured
// and the workspace is on GitHub and not local. A conflict with the latest
// base or a secret in the work makes the task need attention; any other
// failure leaves it succeeded with ShipError saying what to do. It
// returns the state the task ends in.
func (e *Engine) shipAtEnd(ctx context.Context, t *Task) State {
	if e.cfg.Shipper == nil || !e.cfg.ShipOnSuccess || t.Mode != Work || len(t.Commits) == 0 {
		return Succeeded
	}
	// Bounded, and given up when the engine closes (the task then stays
	// succeeded, not shipped: "/pr ship" tries again); a stop of the run
	// that just ended does not reach it.
	e.mu.Lock()
	base := e.ctx
	e.mu.Unlock()
	if base == nil {
		base = context.WithoutCancel(ctx)
	}
	ctx, cancel := context.WithTimeout(base, e.shipTimeout())
	defer cancel()
	res, err := e.cfg.Shipper.Ship(ctx, e.work(ctx, *t))
	switch {
	case errors.Is(err, ship.ErrLocal), errors.Is(err, ship.ErrNoRemote):
		return Succeeded
	}
	return e.applyShip(t, res, err, Succeeded)
}

// applyShip records a shipment's result on t and returns its state: ok,
// or NeedsAttention for a conflict or secrets.
func (e *Engine) applyShip(t *Task, res ship.Result, err error, ok State) State {
	var conflict *ship.ConflictError
	var secrets *ship.SecretsError
	var held *ship.ChecksError
	t.ShipError = ""
	if s := res.Checks.Summary(); s != "" || err == nil {
		t.Checks = e.store.Scrub(s)
	}
	switch {
	case err == nil:
		t.Pushed, t.PR = res.Pushed, res.PR
		// Fetch's own reviews are not news to tell the owner of.
		t.PRReviews += res.Reviews
		if res.Checks.Failed() {
			t.ShipError = checksPrefix + ": its pull request is a draft and is not merged on its own"
			if !res.PR.Draft {
				t.ShipError = checksPrefix + ", and it was shipped anyway; it is not merged on its own"
			}
		}
		return ok
	case errors.As(err, &held):
		t.Checks = e.store.Scrub(held.Report.Summary())
		t.ShipError = held.Error() // starts with checksPrefix
		t.Error = fmt.Sprintf("Continue the task to fix its work, or ship it anyway (/pr anyway %s).", t.ID)
		return NeedsAttention
	case errors.As(err, &conflict):
		files := e.store.Scrub(strings.Join(conflict.Files, ", "))
		t.ShipError = conflictPrefix + conflict.Base + " in " + files
		t.Error = fmt.Sprintf("the work conflicts with the latest %s in %s; nothing was pushed. Say \"/pr resolve %s\" to have the coding CLI rebase it and resolve the conflicts.",
			conflict.Base, files, t.ID)
		return NeedsAttention
	case errors.As(err, &secrets):
		t.Error = secrets.Error()
		return NeedsAttention
	}
	t.ShipError = e.store.Scrub(shipAdvice(err))
	e.log.Warn("ship a task", "task", t.ID, "err", t.ShipError)
	return ok
}

// checksPrefix starts the ShipError of a task whose checks failed at its
// last shipment.
const checksPrefix = "a check failed"

// ChecksFailed tells a task whose checks failed at its last shipment:
// its pull request is a draft, or (Held) none was opened.
func (t Task) ChecksFailed() bool { return strings.HasPrefix(t.ShipError, checksPrefix) }

// Held tells a task whose failing checks opened no pull request: the
// owner may ship it anyway (ShipAnyway).
func (t Task) Held() bool {
	return t.ChecksFailed() && t.State == NeedsAttention && t.PR.Number == 0
}

// shipTimeout bounds one shipment with the workspace's checks.
func (e *Engine) shipTimeout() time.Duration { return shipTimeout + e.cfg.CheckLimit }

// ShipAsError refuses a task asked to ship in a way its workspace (or
// this Fetch) does not allow; Reason says which setting would allow it.
// It is ErrInvalid and ship.ErrNotAllowed.
type ShipAsError struct{ Reason string }

func (e *ShipAsError) Error() string { return "task: create: " + e.Reason }

// Unwrap makes it ErrInvalid and ship.ErrNotAllowed.
func (e *ShipAsError) Unwrap() []error { return []error{ErrInvalid, ship.ErrNotAllowed} }

// checkShipAs refuses a request to ship its task in a way the engine or
// the workspace does not allow, saying which setting would.
func (e *Engine) checkShipAs(ctx context.Context, req Request) error {
	if req.ShipAs == ship.AsWorkspace {
		return nil
	}
	if _, ok := ship.ParseAs(string(req.ShipAs)); !ok {
		return fmt.Errorf("task: create: %q is not a way to ship (push or draft): %w", req.ShipAs, ErrInvalid)
	}
	if req.Mode == Ask {
		return fmt.Errorf("task: create: a question ships nothing: %w", ErrInvalid)
	}
	if e.cfg.Shipper == nil || !e.cfg.ShipOnSuccess {
		return &ShipAsError{Reason: "this Fetch ships nothing: a GitHub token (FETCH_GITHUB_TOKEN) would allow it"}
	}
	if err := e.cfg.Shipper.Allows(ctx, req.Workspace, req.ShipAs); errors.Is(err, ship.ErrNotAllowed) {
		return &ShipAsError{Reason: strings.TrimSuffix(err.Error(), ": "+ship.ErrNotAllowed.Error())}
	} else if err != nil {
		return fmt.Errorf("task: create: %w", err)
	}
	return nil
}

// conflictPrefix starts the ShipError of a task whose branch conflicts
// with the latest base ("conflict with the latest main in a.go, b.go").
const conflictPrefix = "conflict with the latest "

// Conflicted tells a task that did not ship because its branch conflicts
// with the latest base: Resolve can take it on.
func (t Task) Conflicted() bool {
	return t.State == NeedsAttention && strings.HasPrefix(t.ShipError, conflictPrefix)
}

// resolveRef is the ref in the workspace's repository (in the kennel) that
// holds the latest base for a task's resolve run.
func resolveRef(id string) string { return "refs/fetch/base/" + id }

// Resolve starts a follow-up run of a task whose branch conflicts with the
// latest base: the base is brought into the workspace's repository in the
// kennel (resolveRef) and the coding CLI is asked to rebase the branch
// onto it and resolve the conflicts. When that run succeeds, the task
// ships again. It fails with a *BusyError when another task holds the
// workspace.
func (e *Engine) Resolve(ctx context.Context, id string) error {
	if e.cfg.Shipper == nil {
		return fmt.Errorf("task: resolve %s: shipping is not configured in this Fetch: %w", id, ErrInvalid)
	}
	if !e.isOpen() {
		return fmt.Errorf("task: resolve: %w", ErrClosed)
	}
	t, err := e.Get(ctx, id)
	if err != nil {
		return err
	}
	if !t.Conflicted() || t.Worktree == "" {
		return fmt.Errorf("task: resolve %s: it has no conflict with its base to resolve: %w", id, ErrState)
	}
	base, branch, err := e.cfg.Shipper.SendBase(ctx, e.shipWork(t), resolveRef(id))
	if err != nil {
		return fmt.Errorf("task: resolve %s: %w", id, err)
	}
	files := strings.TrimPrefix(t.ShipError, conflictPrefix)
	if _, f, ok := strings.Cut(files, " in "); ok {
		files = f
	}
	t.Base, t.BaseBranch = base, branch
	prompt := fmt.Sprintf("The base branch %s moved since this work began, and the work conflicts with it in: %s. "+
		"Rebase the current branch onto %s (git rebase %s), resolve each conflict so that both the work's intent and the base's changes are kept, "+
		"and finish the rebase (git add, then git rebase --continue). Do not push.", branch, files, resolveRef(id), resolveRef(id))
	return e.followUp(ctx, t, prompt, "resolve the conflict with "+branch)
}

// followUp runs an ended task again on its own branch with prompt (the
// harness's session resumed when it has one): a conflict to resolve, a
// review to address. The run ends like any other; one that succeeds ships
// again.
func (e *Engine) followUp(ctx context.Context, t Task, prompt, reason string, atts ...Attachment) error {
	from := t.State
	t.State, t.Owner, t.Error, t.ShipError = Running, e.owner, "", ""
	t.Attachments = atts
	if t.Base == "" {
		// Its worktree was planned but never made (stopped first): the
		// run makes it.
		t.Worktree = ""
	}
	t.Answer = e.store.Scrub(redact.StripControl(prompt))
	t.RunStartedAt = e.now()
	if err := e.save(ctx, t, from, reason); err != nil {
		if isBusyConflict(err) {
			return fmt.Errorf("task: %s: workspace %s: %w", t.ID, t.Workspace, ErrBusy)
		}
		return fmt.Errorf("task: %s: %w", t.ID, err)
	}
	// A stop asked of an earlier run is not this run's.
	if _, err := e.db.ExecContext(ctx, "UPDATE "+tasksTable+" SET cancel_requested = 0 WHERE id = ? AND state = ?", t.ID, string(Running)); err != nil {
		e.log.Warn("clear an earlier run's stop", "task", t.ID, "err", err)
	}
	t.CancelRequested = false
	e.follow(t, false)
	return nil
}

// AddressReview runs a shipped task again to address the reviews and
// review comments on its open pull request; when the run succeeds the
// branch is pushed again, which updates the pull request.
func (e *Engine) AddressReview(ctx context.Context, id string) error {
	if e.cfg.Shipper == nil {
		return fmt.Errorf("task: review %s: shipping is not configured in this Fetch: %w", id, ErrInvalid)
	}
	if !e.isOpen() {
		return fmt.Errorf("task: review: %w", ErrClosed)
	}
	t, err := e.Get(ctx, id)
	if err != nil {
		return err
	}
	if t.State != Succeeded || t.PR.Number == 0 || t.PR.State != "open" || t.Worktree == "" {
		return fmt.Errorf("task: review %s: it has no open pull request with its worktree: %w", id, ErrState)
	}
	review, _, err := e.cfg.Shipper.Review(ctx, t.Workspace, t.PR.Number)
	if err != nil {
		return fmt.Errorf("task: review %s: %w", id, err)
	}
	if strings.TrimSpace(review) == "" {
		return fmt.Errorf("task: review %s: pull request #%d has no review to address: %w", id, t.PR.Number, ErrState)
	}
	prompt := fmt.Sprintf("Your pull request #%d got this review:\n%s\nAddress it in the code on the current branch and commit. Do not push.", t.PR.Number, review)
	if len(prompt) > MaxGoalLen*4 {
		prompt = prompt[:MaxGoalLen*4] + "\n[review cut]"
	}
	return e.followUp(ctx, t, prompt, fmt.Sprintf("address the review of #%d", t.PR.Number))
}

// shipAdvice is a shipping failure as the owner reads it.
func shipAdvice(err error) string { return "not pushed: " + ship.Advice(err) }

// Ship pushes an ended task's branch and opens its pull request (or finds
// the one open): `fetch task pr ID`, the task_ship tool and "/pr ship ID".
// The task must have succeeded (or need attention after a conflict that
// was resolved since). It returns the task as recorded afterwards and
// publishes a Shipped update.
func (e *Engine) Ship(ctx context.Context, id string) (Task, error) {
	t, err := e.shippable(ctx, id)
	if err != nil {
		return t, err
	}
	return e.shipNow(ctx, t)
}

// shippable loads task id, which must be a finished Work task with its
// branch and worktree.
func (e *Engine) shippable(ctx context.Context, id string) (Task, error) {
	if e.cfg.Shipper == nil {
		return Task{}, fmt.Errorf("task: ship %s: shipping is not configured in this Fetch: %w", id, ErrInvalid)
	}
	t, err := e.Get(ctx, id)
	switch {
	case err != nil:
		return Task{}, err
	case t.Mode != Work || (t.State != Succeeded && t.State != NeedsAttention):
		return t, fmt.Errorf("task: ship %s: it is %s; only a finished task with its branch can ship: %w", id, t.State, ErrState)
	case t.Worktree == "":
		return t, fmt.Errorf("task: ship %s: its worktree is gone: %w", id, ErrState)
	case len(t.Commits) == 0:
		return t, fmt.Errorf("task: ship %s: its branch holds no commit: %w", id, ErrState)
	}
	return t, nil
}

// work is what the shipper needs of t, with the owner's autonomy and the
// tests the CLI ran.
func (e *Engine) work(ctx context.Context, t Task) ship.Work {
	w := e.shipWork(t)
	w.AutoMerge = e.autoMerge(ctx, t)
	w.Tests = e.testResults(ctx, t.ID)
	w.As = t.ShipAs
	return w
}

// shipNow ships t, records the outcome on it and publishes a Shipped
// update (with Update.Err when the outcome could not be recorded).
func (e *Engine) shipNow(ctx context.Context, t Task) (Task, error) {
	return e.shipWith(ctx, t, false)
}

// shipWith is shipNow, with anyway: the owner ships it although a check
// failed.
func (e *Engine) shipWith(ctx context.Context, t Task, anyway bool) (Task, error) {
	sctx, cancel := context.WithTimeout(ctx, e.shipTimeout())
	defer cancel()
	w := e.work(ctx, t)
	w.Anyway = anyway
	res, serr := e.cfg.Shipper.Ship(sctx, w)
	from := t.State
	t.State = e.applyShip(&t, res, serr, from)
	if serr == nil && from == NeedsAttention {
		t.State, t.Error = Succeeded, ""
	}
	if err := e.save(ctx, t, from, "shipped"); err != nil {
		e.notify(ctx, Update{Kind: Shipped, Task: t, Err: err.Error()})
		return t, err
	}
	e.notify(ctx, Update{Kind: Shipped, Task: t})
	if serr != nil {
		return t, fmt.Errorf("task: ship %s: %w", t.ID, serr)
	}
	return t, nil
}

// PRAction is what the owner does to a task's pull request from chat.
type PRAction string

const (
	MergePR PRAction = "merge"
	ClosePR PRAction = "close"
	// ResolvePR runs the task again to resolve its conflict with the
	// latest base (Resolve).
	ResolvePR PRAction = "resolve"
	// ReviewPR runs the task again to address its pull request's review
	// (AddressReview).
	ReviewPR PRAction = "review"
	// ShipAnyway ships a task whose failing checks held it back: its
	// pull request opens, or its draft is marked ready; it is not merged
	// on its own.
	ShipAnyway PRAction = "anyway"
)

// ActOnPR merges or closes a task's open pull request; the follow loop
// then sees it change and cleans up.
func (e *Engine) ActOnPR(ctx context.Context, id string, a PRAction) (Task, error) {
	if e.cfg.Shipper == nil {
		return Task{}, fmt.Errorf("task: %s the pull request of %s: shipping is not configured: %w", a, id, ErrInvalid)
	}
	t, err := e.Get(ctx, id)
	if err != nil {
		return Task{}, err
	}
	if t.PR.Number == 0 || t.PR.State != "open" {
		return t, fmt.Errorf("task: %s has no open pull request: %w", id, ErrState)
	}
	switch a {
	case MergePR:
		err = e.cfg.Shipper.Merge(ctx, t.Workspace, t.PR.Number, t.Pushed)
	case ClosePR:
		err = e.cfg.Shipper.Close(ctx, t.Workspace, t.PR.Number)
	default:
		err = fmt.Errorf("unknown action %q: %w", a, ErrInvalid)
	}
	if err != nil {
		return t, fmt.Errorf("task: %s the pull request of %s: %w", a, id, err)
	}
	return e.followPR(ctx, t)
}

// followPRs polls the open pull requests of tasks until the engine
// closes. Only an adopting engine (fetch serve, fetch chat) runs it.
func (e *Engine) followPRs(ctx context.Context) {
	every := e.cfg.PRPoll
	if every <= 0 {
		every = DefaultPRPoll
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		open, err := e.openPRs(ctx)
		if err != nil {
			e.log.Warn("list open pull requests", "err", err)
			continue
		}
		for _, t := range open {
			if _, err := e.followPR(ctx, t); err != nil && ctx.Err() == nil {
				e.log.Warn("follow a pull request", "task", t.ID, "pr", t.PR.Number, "err", err)
			}
		}
	}
}

// followPR reads a task's pull request once; when it was merged or closed
// it removes the task's worktree and branch, records the state and
// publishes PRChanged.
func (e *Engine) followPR(ctx context.Context, t Task) (Task, error) {
	if t.PR.State != "open" {
		// Merged or closed before its worktree was removed (merged when
		// shipped, or Fetch stopped in between): clean up now.
		return e.prEnded(ctx, t)
	}
	pr, _, err := e.cfg.Shipper.Poll(ctx, t.Workspace, t.PR.Number)
	if err != nil {
		return t, err
	}
	if pr.State == t.PR.State {
		return e.followReviews(ctx, t)
	}
	t.PR.State = pr.State
	return e.prEnded(ctx, t)
}

// prEnded removes the worktree and branch of a task whose pull request was
// merged or closed (t.PR.State), records it and publishes PRChanged.
func (e *Engine) prEnded(ctx context.Context, t Task) (Task, error) {
	if t.PR.State != "open" {
		merged := t.PR.State == "merged"
		if err := e.cfg.Shipper.Cleanup(ctx, t.Workspace, t.Branch, merged); err != nil {
			e.log.Warn("clean up a shipped branch", "task", t.ID, "err", err)
		}
		if t.Worktree != "" {
			err := e.cfg.Workspaces.RemoveWorktree(ctx, t.worktree(), true)
			if err != nil && !errors.Is(err, workspace.ErrNotFound) {
				return t, fmt.Errorf("remove the worktree of %s: %w", t.ID, err)
			}
			t.Worktree = ""
		}
	}
	if err := e.save(ctx, t, t.State, ""); err != nil {
		return t, err
	}
	e.notify(ctx, Update{Kind: PRChanged, Task: t})
	return t, nil
}

// openPRs lists the ended tasks whose pull request is open, or ended with
// their worktree still there. A task running again (a resolve, a review)
// is looked at once it ends.
func (e *Engine) openPRs(ctx context.Context) ([]Task, error) {
	return e.query(ctx, "WHERE (pr_state = 'open' OR (pr_state IN ('merged', 'closed') AND worktree != ''))"+
		" AND state NOT IN ('queued', 'running', 'waiting_input') ORDER BY created_at LIMIT 200")
}

// spawn runs work on a goroutine of the engine (Close waits for it),
// bounded by shipTimeout.
func (e *Engine) spawn(work func(ctx context.Context)) error {
	e.mu.Lock()
	if e.closed || e.ctx == nil {
		e.mu.Unlock()
		return ErrClosed
	}
	bg := e.ctx
	e.wg.Add(1)
	e.mu.Unlock()
	go func() {
		defer e.wg.Done()
		ctx, cancel := context.WithTimeout(bg, e.shipTimeout())
		defer cancel()
		work(ctx)
	}()
	return nil
}

// RequestShip starts Ship in the background and returns: the conversation
// goroutine never waits on GitHub. What happened arrives as a Shipped
// update (Update.Err when its outcome could not be recorded).
func (e *Engine) RequestShip(ctx context.Context, id string) error {
	t, err := e.shippable(ctx, id)
	if err != nil {
		return err
	}
	return e.spawn(func(ctx context.Context) {
		if _, err := e.shipNow(ctx, t); err != nil {
			e.log.Warn("ship a task", "task", id, "err", err)
		}
	})
}

// RequestPRAction starts ActOnPR in the background; the change arrives as
// a PRChanged update, a failure as one with Update.Err.
func (e *Engine) RequestPRAction(ctx context.Context, id string, a PRAction) error {
	t, err := e.Get(ctx, id)
	if err != nil {
		return err
	}
	if a == ShipAnyway {
		if !t.Held() && !(t.ChecksFailed() && t.PR.Draft && t.PR.State == "open") {
			return fmt.Errorf("task %s has no work held back by a failing check: %w", id, ErrState)
		}
		if t, err = e.shippable(ctx, id); err != nil {
			return err
		}
		return e.spawn(func(ctx context.Context) {
			if _, err := e.shipWith(ctx, t, true); err != nil {
				e.log.Warn("ship a task anyway", "task", id, "err", err)
			}
		})
	}
	if a == ResolvePR || a == ReviewPR {
		run := e.Resolve
		if a == ReviewPR {
			run = e.AddressReview
		} else if !t.Conflicted() {
			return fmt.Errorf("task %s has no conflict with its base to resolve: %w", id, ErrState)
		}
		return e.spawn(func(ctx context.Context) {
			if err := run(ctx, id); err != nil {
				e.log.Warn("follow-up run of a task", "task", id, "action", a, "err", err)
				e.notify(ctx, Update{Kind: Shipped, Task: t, Err: ship.Advice(err)})
			}
		})
	}
	if t.PR.Number == 0 || t.PR.State != "open" {
		return fmt.Errorf("task %s has no open pull request: %w", id, ErrState)
	}
	return e.spawn(func(ctx context.Context) {
		if _, err := e.ActOnPR(ctx, id, a); err != nil {
			e.log.Warn("act on a pull request", "task", id, "action", a, "err", err)
			e.notify(ctx, Update{Kind: PRChanged, Task: t, Err: ship.Advice(err)})
		}
	})
}

// followReviews tells of reviews that came to a task's open pull request
// since the last look (Task.PRReviews counts those told).
func (e *Engine) followReviews(ctx context.Context, t Task) (Task, error) {
	text, n, err := e.cfg.Shipper.Review(ctx, t.Workspace, t.PR.Number)
	if err != nil || n <= t.PRReviews {
		return t, err
	}
	t.PRReviews = n
	if err := e.save(ctx, t, t.State, ""); err != nil {
		return t, err
	}
	e.notify(ctx, Update{Kind: Reviewed, Task: t, Review: e.store.Scrub(redact.StripControl(text))})
	return t, nil
}

// Repos is Fetch's own repository per workspace, where a task's work is
// taken in and read; *mirror.Mirror implements it.
type Repos interface {
	// Stage takes the objects of a bundle of branch, which crossed out
	// of the kennel, into a quarantine, and reads what the branch holds
	// over base; mirror.ErrMissingBase when the repository lacks what
	// the bundle builds on.
	Stage(ctx context.Context, ws, branch, base string, bundle io.Reader) (*mirror.Staged, mirror.Changes, error)
	// StageImport does the same with a bundle it asks of the kennel.
	StageImport(ctx context.Context, r mirror.Ref) (*mirror.Staged, mirror.Changes, error)
}
