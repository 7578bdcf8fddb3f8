package task

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fetch-dev/fetch/harness"
	"github.com/fetch-dev/fetch/internal/gitrun"
	"github.com/fetch-dev/fetch/internal/mirror"
	"github.com/fetch-dev/fetch/internal/redact"
	"github.com/fetch-dev/fetch/internal/store"
	"github.com/fetch-dev/fetch/internal/workspace"
	"github.com/fetch-dev/fetch/kennel/shim"
)

// eventBuffer is how many harness events wait for the event log writer.
// When it is full, the runner's callback waits: the CLI's output backs up
// in the kennel's pipes, and no event is dropped.
const eventBuffer = 256

// maxBatch bounds the events written in one transaction.
const maxBatch = 64

// Retrying a batch of events the database refused as busy.
const (
	maxWriteAttempts = 10
	writeBackoff     = 50 * time.Millisecond
)

// maxStoredPatch bounds the diff kept in the database; the patch file has
// all of it.
const maxStoredPatch = 1 << 20

// cleanupTimeout bounds the work after a run ended (git, the store) when
// the engine is closing.
const cleanupTimeout = 30 * time.Second

// follow starts the goroutine that runs (or, with attach, re-attaches to)
// a task in state Running owned by this process.
func (e *Engine) follow(t Task, attach bool) {
	e.mu.Lock()
	for {
		if e.closed || e.ctx == nil {
			e.mu.Unlock()
			return
		}
		prev, ok := e.runs[t.ID]
		if !ok {
			break
		}
		// The task's previous run (the one that asked the question being
		// answered) is still recording its end: wait for it.
		e.mu.Unlock()
		<-prev.done
		e.mu.Lock()
	}
	ctx, cancel := context.WithCancelCause(e.ctx)
	r := &run{cancel: cancel, done: make(chan struct{})}
	e.runs[t.ID] = r
	e.wg.Add(1)
	e.mu.Unlock()
	go func() {
		defer e.wg.Done()
		defer func() {
			e.mu.Lock()
			delete(e.runs, t.ID)
			e.mu.Unlock()
			cancel(nil)
			close(r.done)
		}()
		ended := e.drive(ctx, t, attach)
		if ended {
			e.startQueued(ctx)
		}
	}()
}

// drive runs one run of a task to its end and records the result. It
// reports whether the task released its workspace.
func (e *Engine) drive(ctx context.Context, t Task, attach bool) bool {
	log := e.log.With("task", t.ID, "workspace", t.Workspace)
	wsPath, err := e.cfg.Workspaces.Path(t.Workspace)
	if err != nil {
		return e.finish(ctx, t, Failed, "workspace: "+err.Error())
	}
	// before is the workspace as an Ask run found it, taken when this
	// process starts the run (nil when it follows one after a restart).
	var before *workspace.Fingerprint
	// plan is the worktree this run makes, when it makes one.
	var plan *workspace.WorktreePlan
	if !attach {
		if t.Mode == Ask {
			fp, err := e.cfg.Workspaces.Fingerprint(ctx, t.Workspace)
			if err != nil {
				log.Error("fingerprint the workspace", "err", err)
				return e.finish(ctx, t, Failed, "could not read the workspace's state before the run: "+err.Error())
			}
			before, t.Base = &fp, fp.Head
		}
		if t.Mode == Work && t.Worktree == "" {
			// The worktree is made in the run's own exec, before the CLI
			// starts (harness.Task.Prepare); its base is read from what
			// that printed when the run ends (readPrepared).
			p, err := e.cfg.Workspaces.PlanWorktree(ctx, t.Workspace, t.ID)
			if err != nil {
				log.Error("plan worktree", "err", err)
				return e.finish(ctx, t, Failed, "could not make the task's branch: "+err.Error())
			}
			plan = &p
			t.Worktree, t.Branch, t.Base, t.BaseBranch = p.Worktree.Path, p.Worktree.Branch, "", ""
		}
		t.Runs++
		t.RunID = runID(t.ID, t.Runs)
		t.RunStartedAt = e.now()
		if err := e.save(ctx, t, Running, ""); err != nil {
			log.Error("record run", "err", err)
			return false
		}
		if cur, err := e.Get(ctx, t.ID); err == nil && cur.CancelRequested {
			if plan != nil { // not made: nothing to record
				cur.Worktree, cur.Branch = "", ""
			}
			return e.finish(ctx, cur, Cancelled, "cancelled by the owner")
		}
		e.notify(ctx, Update{Kind: Started, Task: t, NearLimit: e.nearLimit(ctx, t)})
	}
	ht := e.harnessTask(t)
	ht.Workspace = wsPath
	if !attach && t.Mode == Work {
		// The owner's messages while it works (Tell); a run followed
		// again after a restart takes none (they wait for the next).
		ht.Mailbox = harness.NewMailbox()
	}
	if !attach {
		atts, err := e.giveAttachments(ctx, t, wsPath)
		if err != nil {
			log.Error("give the run its attachments", "err", err)
			return e.finish(ctx, t.unplannedIf(plan != nil), Failed, "could not give the coding CLI the files you attached: "+err.Error())
		}
		ht.Attachments = atts
	}
	if plan != nil {
		prog, err := gitrun.Program(plan.Steps)
		if err != nil {
			return e.finish(ctx, t.unplanned(), Failed, "could not make the task's branch: "+err.Error())
		}
		ht.Prepare = &prog
	}
	// A run followed again after a restart had its plan made by the
	// process that started it: the same plan reads what it printed.
	t.recorded = e.planRecord(t, plan != nil || attach && t.Base == "", !attach)
	if t.recorded != nil && !attach {
		ht.Record = &t.recorded.program
	}

	runCtx, cancelRun := context.WithCancelCause(ctx)
	defer cancelRun(nil)
	lim := &limits{}
	var stops sync.WaitGroup
	stop := func(reason *bool) {
		lim.mu.Lock()
		defer lim.mu.Unlock()
		if lim.over {
			return // the run ended meanwhile
		}
		*reason = true
		stops.Add(1)
		go func() {
			defer stops.Done()
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
			defer cancel()
			if err := e.cfg.Runner.Stop(sctx, ht); err != nil {
				log.Error("stop run", "err", err)
			}
		}()
	}
	remaining := t.Timeout - e.now().Sub(t.RunStartedAt)
	timer := time.AfterFunc(max(remaining, 0), func() { stop(&lim.timedOut) })
	defer timer.Stop()

	w := e.newEventWriter(ctx, t, func() { stop(&lim.capped) })
	w.scope, w.resumed = e.usageScope(t), t.Answer != "" && t.SessionID != ""
	var st *steer
	var grace *time.Timer
	w.onBudget = func(spent float64) {
		lim.mu.Lock()
		lim.spent = spent
		lim.mu.Unlock()
		if st.pauseAtBudget() {
			// A two-way run ends its turn and waits for the owner
			// (budget.go); a CLI that does not end it is stopped.
			lim.mu.Lock()
			lim.paused = true
			grace = time.AfterFunc(pauseGrace, func() { stop(&lim.budget) })
			lim.mu.Unlock()
			return
		}
		stop(&lim.budget)
	}
	st = e.newSteer(ctx, t, ht, cancelRun)
	c := &carrier{e: e, t: t, ht: ht, log: log, add: st.wrap(w.add), lim: lim, recovered: attach, steer: st}
	out, err, end := c.carry(runCtx, e.lifetime(), attach)
	timer.Stop()
	w.close()
	// A run stopped before its CLI reported its final figure cost at
	// least what it reported while it ran.
	if w.spend.CostUSD > out.Usage.CostUSD {
		out.Usage.CostUSD = w.spend.CostUSD
	}
	out.Usage.CostUnknown = out.Usage.CostUnknown || w.spend.CostUnknown
	out.Usage.PricedAs = cmp.Or(out.Usage.PricedAs, w.spend.PricedAs)
	lim.mu.Lock()
	lim.over = true
	if grace != nil {
		grace.Stop()
	}
	lim.mu.Unlock()
	stops.Wait()
	st.close()
	if len(out.Undelivered) > 0 {
		e.requeue(context.WithoutCancel(ctx), t, out.Undelivered)
	}

	// What follows must happen even when the engine is closing.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	cur, gerr := e.Get(cctx, t.ID)
	if gerr != nil {
		log.Error("reload task", "err", gerr)
		return false
	}
	cur.Worktree, cur.Branch, cur.Base, cur.BaseBranch, cur.RunID, cur.Runs, cur.RunStartedAt = t.Worktree, t.Branch, t.Base, t.BaseBranch, t.RunID, t.Runs, t.RunStartedAt
	cur.recorded = e.ranRecord(cur, t.recorded, out.Recorded)
	if cur.Mode == Work && cur.Worktree != "" && cur.Base == "" {
		made, err := e.readPrepared(cctx, cur, out)
		switch {
		case errors.Is(err, errNotPrepared):
			// The run ended (or its kennel lost it) before it said
			// what it made: the worktree and branch are kept as they
			// may be, unrecorded (no base to diff from); the end says
			// why.
			log.Warn("the run's worktree is unknown", "err", err)
		case err != nil:
			log.Error("make worktree", "err", err)
			cur.ExitCode, cur.StderrTail = out.ExitCode, e.store.Scrub(out.StderrTail)
			return e.finish(cctx, cur.unplanned(), Failed, "could not make the task's branch: "+err.Error())
		default:
			cur.Base, cur.BaseBranch = made.Base, made.BaseBranch
		}
		t.Worktree, t.Branch, t.Base, t.BaseBranch = cur.Worktree, cur.Branch, cur.Base, cur.BaseBranch
	}
	if next, again, reason := e.afterSteer(cctx, st, cur, out); again {
		return e.drive(ctx, next, false) // an approved plan, carried out
	} else if reason != "" {
		cur.ExitCode, cur.StderrTail = out.ExitCode, e.store.Scrub(out.StderrTail)
		return e.finish(cctx, cur, Failed, reason)
	}
	if ht.ResumeID != "" && end == endSeen && !cur.CancelRequested && harness.SessionLost(out) {
		// The session's files went with its kennel (it slept, or was
		// made anew): the follow-up goes on in a new session, told what
		// was done.
		log.Warn("the CLI's session is gone; the follow-up starts a new session", "session", ht.ResumeID)
		cur.SessionID, cur.Answer = "", sessionGonePrompt(cur.Answer)
		return e.drive(ctx, cur, false)
	}
	switch end {
	case endReleased:
		// Fetch closes while the run's engine is out of reach: the run
		// may still go there. The task stays running, for the next
		// adopting engine to follow again.
		log.Warn("engine closed while the run's Docker engine was out of reach; the task is left for the next start")
		cur.Owner = ""
		if err := e.save(cctx, cur, Running, ""); err != nil {
			log.Error("release task", "err", err)
		}
		return false
	case endGone:
		if !cur.CancelRequested && !errors.Is(context.Cause(ctx), errCancelled) {
			cur.ExitCode, cur.StderrTail = out.ExitCode, e.store.Scrub(out.StderrTail)
			return e.finish(cctx, cur, Failed, e.lostMessage(cctx, cur))
		}
		// A cancelled run the kennel lost: cancelled, as asked.
		err = nil
	case endSeen:
	}
	if errors.Is(context.Cause(ctx), errDetached) {
		// The kennel stops a run whose follower goes away.
		log.Info("engine closed while the task ran; its run was stopped")
		return e.finish(cctx, cur, Cancelled, "stopped: Fetch shut down while it ran")
	}
	if errors.Is(context.Cause(ctx), errCancelled) {
		// Cancel stopped the run through its context.
		cur.CancelRequested, err = true, nil
	}
	if err != nil && !errors.Is(err, ErrGone) {
		log.Error("run", "err", err)
	}
	if cur.Mode == Ask {
		changed, cerr := e.unchanged(cctx, cur, before)
		reason := "the harness was to answer read-only, but the workspace changed: " + changed
		if cerr != nil {
			log.Error("check the workspace after a read-only run", "err", cerr)
			changed, reason = cerr.Error(), "could not check that the read-only run left the workspace unchanged: "+cerr.Error()
		}
		if changed != "" {
			e.setCost(cctx, &cur, out)
			cur.ExitCode, cur.StderrTail, cur.Answer = out.ExitCode, e.store.Scrub(out.StderrTail), ""
			if out.SessionID != "" {
				cur.SessionID = out.SessionID
			}
			if out.Success {
				cur.Summary = e.store.Scrub(out.Summary)
			}
			return e.finish(cctx, cur, NeedsAttention, reason+". Nothing was committed; look at the workspace before you go on.")
		}
	}
	return e.conclude(cctx, cur, out, err, lim)
}

// errNotPrepared: the run printed nothing about its worktree.
var errNotPrepared = errors.New("the run ended before it made the worktree")

// readPrepared reads the worktree t's run made before its CLI started
// (harness.Outcome.Prepared) for its base. A run that printed nothing
// made nothing: it never started, or its kennel lost it.
func (e *Engine) readPrepared(ctx context.Context, t Task, out harness.Outcome) (workspace.Worktree, error) {
	printed := out.Prepared
	if oldShim(out) {
		return workspace.Worktree{}, gitrun.ErrOldShim
	}
	if printed == nil {
		return workspace.Worktree{}, errNotPrepared
	}
	plan, err := e.cfg.Workspaces.PlanWorktree(ctx, t.Workspace, t.ID)
	if err != nil {
		return workspace.Worktree{}, err
	}
	return plan.Read(printed)
}

// oldShim reports whether the run's kennel image has a fetch-shim older
// than this Fetch, which refused the run's command line: no prepare
// command, no --record or --sweep; or an image whose PID 1 is not the
// shim's init (shim.NoInitMessage).
func oldShim(out harness.Outcome) bool {
	return out.Prepared == nil && out.Recorded == nil &&
		(out.ExitCode == shim.ExitUsage && strings.Contains(out.StderrTail, "unknown command") ||
			out.ExitCode == shim.ExitShimFailed && (strings.Contains(out.StderrTail, "flag provided but not defined") ||
				strings.Contains(out.StderrTail, shim.NoInitMessage)))
}

// unchanged checks, in the kennel, that an Ask run left its workspace as
// it found it, and says what changed ("" when nothing did). before is the
// fingerprint taken when the run started; without one (the run was
// followed again after a restart) HEAD must still be the Base recorded
// then, and the work tree must be clean, or the check cannot tell.
func (e *Engine) unchanged(ctx context.Context, t Task, before *workspace.Fingerprint) (string, error) {
	after, err := e.cfg.Workspaces.Fingerprint(ctx, t.Workspace)
	if err != nil {
		return "", err
	}
	if before != nil {
		return before.Changes(after), nil
	}
	var parts []string
	if after.Head != t.Base {
		parts = append(parts, (workspace.Fingerprint{Head: t.Base}).Changes(workspace.Fingerprint{Head: after.Head}))
	}
	if !after.Clean() {
		parts = append(parts, "the run was followed again after a restart and the work tree has uncommitted changes, which may be the run's: "+(workspace.Fingerprint{}).Changes(workspace.Fingerprint{Status: after.Status}))
	}
	return strings.Join(parts, "; "), nil
}

// usageScope is how t's harness reports the usage of a resumed run.
func (e *Engine) usageScope(t Task) harness.UsageScope {
	if a, err := e.cfg.Harnesses.Get(harness.Name(t.Harness)); err == nil {
		return a.Traits().ResumeUsage
	}
	return harness.UsagePerRun
}

// cliCost is the CLI's part of the task's cost after a run that cost run:
// the sum of its runs, except for a harness whose resumed run reports the
// whole session (harness.UsageCumulative), whose last report is the total.
// t is the task as it was before the run (Answer and SessionID say whether
// the run resumed).
func cliCost(scope harness.UsageScope, t Task, run float64) float64 {
	resumed := t.Answer != "" && t.SessionID != ""
	return harness.TaskUsage(scope, harness.Usage{CostUSD: t.CLICostUSD}, harness.Usage{CostUSD: run}, resumed).CostUSD
}

// setCost records the cost of the run that came to out in t: the CLI's
// part, and the total with the orchestrator's calls attributed to it.
func (e *Engine) setCost(ctx context.Context, t *Task, out harness.Outcome) {
	if !out.Usage.Valid() {
		// The harness's tally skips such reports; an outcome from
		// elsewhere is held to the same rule.
		e.log.Warn("run usage refused: a negative, NaN or infinite figure; treated as not reported", "task", t.ID, "cost_usd", out.Usage.CostUSD)
		out.Usage = harness.Usage{}
	}
	t.CLICostUSD = cliCost(e.usageScope(*t), *t, out.Usage.CostUSD)
	t.CostUnknown = t.CostUnknown || out.Usage.CostUnknown
	t.CostPricedAs = cmp.Or(t.CostPricedAs, out.Usage.PricedAs)
	t.CostUSD = t.CLICostUSD + e.attributed(ctx, t.ID)
}

// limits records why the engine stopped a run.
type limits struct {
	mu       sync.Mutex
	timedOut bool
	capped   bool
	// budget: the task's cost passed the task budget; spent is what it
	// had cost then.
	budget bool
	spent  float64
	// paused: at the budget, a two-way run was asked to end its turn, to
	// wait for the owner (budget.go).
	paused bool
	// over: the run ended; nothing stops it any more.
	over bool
}

// conclude decides a run's end from its outcome and records it.
func (e *Engine) conclude(ctx context.Context, t Task, out harness.Outcome, runErr error, lim *limits) bool {
	lim.mu.Lock()
	timedOut, capped, budget, spent, paused := lim.timedOut, lim.capped, lim.budget, lim.spent, lim.paused
	lim.mu.Unlock()
	e.setCost(ctx, &t, out) // before Answer and SessionID change
	if out.SessionID != "" {
		t.SessionID = out.SessionID
	}
	t.ExitCode, t.StderrTail = out.ExitCode, e.store.Scrub(out.StderrTail)
	t.Answer = ""
	switch {
	case t.CancelRequested:
		return e.finish(ctx, t, Cancelled, "cancelled by the owner")
	case timedOut:
		t.TimedOut = true
		return e.finish(ctx, t, Failed, fmt.Sprintf("timed out after %s", t.Timeout))
	case capped:
		return e.finish(ctx, t, Failed, fmt.Sprintf("stopped: its output went over %d KiB", e.cfg.OutputCap>>10))
	case paused:
		return e.pauseAt(ctx, t, max(spent, t.CostUSD))
	case budget:
		return e.finish(ctx, t, Failed, e.budgetMessage(t, max(spent, t.CostUSD)))
	case errors.Is(runErr, ErrGone):
		return e.finish(ctx, t, Failed, "interrupted by restart: the run was gone from the kennel")
	case runErr != nil:
		return e.finish(ctx, t, Failed, "the run could not be carried out: "+runErr.Error())
	case oldShim(out):
		return e.finish(ctx, t, Failed, "the run could not be started: "+gitrun.ErrOldShim.Error())
	case out.Stopped:
		// Stopped by someone other than this engine: a cancel whose flag
		// this process did not see, or a stop in the kennel.
		return e.finish(ctx, t, Cancelled, "stopped")
	case out.Success && out.Question != "":
		t.Question = e.store.Scrub(out.Question)
		return e.finish(ctx, t, WaitingInput, "")
	case out.Success:
		t.Summary = e.store.Scrub(out.Summary)
		return e.finish(ctx, t, Succeeded, "")
	case !out.Terminal && out.ExitCode == 0:
		return e.finish(ctx, t, NeedsAttention, "the harness exited without a final result: "+out.Error)
	}
	return e.finish(ctx, t, Failed, out.Error)
}

// finish records the task's branch and diff and moves it to state to from
// Running. It reports whether the task released its workspace.
func (e *Engine) finish(ctx context.Context, t Task, to State, reason string) bool {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	if reason != "" {
		t.Error = e.store.Scrub(reason)
	}
	if t.Worktree != "" {
		err := e.record(ctx, &t)
		var secrets *SecretsError
		switch {
		case errors.As(err, &secrets) && to != WaitingInput:
			to, t.Error = NeedsAttention, secrets.Error()
		case errors.As(err, &secrets):
			// Asked a question: nothing is committed now; the run that
			// continues is scanned again when it ends.
			e.log.Warn("the work holds what look like secrets; not committed", "task", t.ID, "findings", len(secrets.Findings))
		case err != nil && to == Succeeded:
			to, t.Error = NeedsAttention, "the work could not be recorded on its branch: "+err.Error()
		case to == Succeeded:
			to = e.shipAtEnd(ctx, &t)
		}
	}
	t.State, t.Owner = to, ""
	if to.Terminal() {
		e.takeOut(ctx, &t)
		t.EndedAt = e.now()
		e.endSteer(ctx, t.ID)
	}
	if err := e.save(ctx, t, Running, reasonOr(reason, string(to))); err != nil {
		e.log.Error("record the end of a task", "task", t.ID, "err", err)
		return false
	}
	e.log.Info("task run ended", "task", t.ID, "state", t.State, "exit_code", t.ExitCode, "error", t.Error)
	if t.RunID != "" {
		// The run's log in the kennel is in the task's event log now: the
		// next batch of git in the workspace drops it.
		e.forgets.add(t.Workspace, t.RunID)
	}
	if to == WaitingInput {
		e.notify(ctx, Update{Kind: Asked, Task: t})
		return false
	}
	e.notify(ctx, Update{Kind: Ended, Task: t})
	// What waited for the end starts the next run, from a goroutine of
	// its own: the next run waits until this one is done.
	if err := e.spawn(func(ctx context.Context) { e.afterEnd(ctx, t) }); err != nil {
		e.log.Info("the messages that wait for a task wait for the next start", "task", t.ID, "err", err)
	}
	return true
}

func reasonOr(reason, def string) string {
	if reason != "" {
		return reason
	}
	return def
}

// record commits what the run left in the worktree to the task's branch
// and stores the branch's diff, files and commits, and the patch file.
// With Fetch's own repository (Config.Repos) the work crosses into it as a
// bundle and is read there (recordInRepo); without, it is read in the
// kennel. Work that holds secrets is not committed (a *SecretsError): the
// commit is undone, and nothing of it enters Fetch's repository. All of
// the git on the worktree runs in the workspace's kennel (package
// workspace).
func (e *Engine) record(ctx context.Context, t *Task) error {
	ran := t.recorded
	t.recorded = nil // it holds the bundle: not for the observers
	if t.Base == "" {
		return errNotPrepared
	}
	wt := t.worktree()
	if e.cfg.Workspaces.Local(ctx, t.Workspace) {
		// On another engine the worktree is in its kennel only; its
		// record fails there when it is gone.
		if _, err := os.Stat(wt.Path); err != nil {
			return fmt.Errorf("worktree: %w", err)
		}
	}
	if e.cfg.Repos != nil {
		return e.recordInRepo(ctx, t, wt, ran)
	}
	rec, err := e.cfg.Workspaces.Record(ctx, wt, e.commitMessage(*t), workspace.RecordOptions{Also: forgetSteps(e.forgets.take(t.Workspace))})
	if err != nil {
		return err
	}
	if err := e.scanWork(t, rec.Diff.Patch, rec.Diff.Truncated); err != nil {
		return e.uncommit(ctx, wt, rec.Committed, err)
	}
	return e.keepDiff(t, rec.Diff)
}

// recordInRepo records t's work through Fetch's own repository: the run
// committed it and bundled the branch in its own exec (ran, what it
// printed), or, when it did not, a batch of its own does; the bundle is
// staged into the repository (the whole history asked of the kennel when
// the repository lacks the base), the diff read there and every commit
// scanned (scanStaged), and only work scanned whole without secrets lands.
func (e *Engine) recordInRepo(ctx context.Context, t *Task, wt workspace.Worktree, ran *recorded) error {
	b, err := e.bundled(ctx, t, wt, ran)
	if err != nil {
		return err
	}
	if b.Tip == t.Base {
		// The branch adds nothing to its base.
		return e.keepDiff(t, workspace.Diff{})
	}
	var staged *mirror.Staged
	var ch mirror.Changes
	err = mirror.ErrMissingBase
	if b.Bundle != nil {
		staged, ch, err = e.cfg.Repos.Stage(ctx, t.Workspace, t.Branch, t.Base, bytes.NewReader(b.Bundle))
	}
	if errors.Is(err, mirror.ErrMissingBase) {
		// The repository lacks the base (a workspace's first task), or the
		// bundle did not cross: ask the kennel for the branch, with its
		// whole history when needed.
		p, perr := e.cfg.Workspaces.Path(t.Workspace)
		if perr != nil {
			return perr
		}
		staged, ch, err = e.cfg.Repos.StageImport(ctx, mirror.Ref{Workspace: t.Workspace, Path: p, Dir: wt.Path, Branch: t.Branch, Base: t.Base, Tip: b.Tip})
	}
	if err != nil {
		return fmt.Errorf("take the work into Fetch's repository: %w", err)
	}
	defer staged.Drop()
	d := workspace.ParseDiff(ch.Diff, ch.Log, ch.Truncated)
	if err := e.scanStaged(ctx, t, staged); err != nil {
		var secrets *SecretsError
		if errors.As(err, &secrets) {
			return e.uncommit(ctx, wt, b.Committed, err)
		}
		return err
	}
	if err := staged.Land(ctx); err != nil {
		return fmt.Errorf("keep the work in Fetch's repository: %w", err)
	}
	return e.keepDiff(t, d)
}

// bundled is the run's own record of its work when it made one that
// reads, else the record made now, in one exec.
func (e *Engine) bundled(ctx context.Context, t *Task, wt workspace.Worktree, ran *recorded) (workspace.Bundled, error) {
	if ran != nil {
		b, err := ran.read()
		if err == nil {
			return b, nil
		}
		e.log.Warn("the run's record of its work does not read; recording it again", "task", t.ID, "err", err)
		e.forgets.add(t.Workspace, ran.forgets...) // not dropped after all
	}
	return e.cfg.Workspaces.Bundle(ctx, e.cfg.Workspaces.PlanRecord(wt, t.Base, e.commitMessage(*t), forgetSteps(e.forgets.take(t.Workspace))))
}

// uncommit undoes the commit of work that holds secrets (found, the
// *SecretsError) when one was made, and returns found.
func (e *Engine) uncommit(ctx context.Context, wt workspace.Worktree, committed bool, found error) error {
	if !committed {
		return found
	}
	if err := e.cfg.Workspaces.Uncommit(ctx, wt); err != nil {
		return fmt.Errorf("undo the commit of work that holds secrets: %w", err)
	}
	return found
}

// keepDiff records d as t's files, commits and patch, and writes the
// patch file.
func (e *Engine) keepDiff(t *Task, d workspace.Diff) error {
	t.Files, t.Commits = d.Files, d.Commits
	// Redacted before it is cut or written: the patch file Fetch writes
	// holds no secret in the clear either.
	patch := e.store.Scrub(d.Patch)
	t.Patch = patch
	if len(t.Patch) > maxStoredPatch {
		t.Patch = t.Patch[:maxStoredPatch] + "\n[diff cut; the patch file has all of it]\n"
	}
	if patch != "" && e.cfg.PatchDir != "" {
		if err := os.MkdirAll(e.cfg.PatchDir, 0o700); err != nil {
			return fmt.Errorf("patch file: %w", err)
		}
		p := filepath.Join(e.cfg.PatchDir, t.ID+".patch")
		if err := os.WriteFile(p, []byte(patch), 0o600); err != nil {
			return fmt.Errorf("patch file: %w", err)
		}
		t.PatchPath = p
	}
	return nil
}

// commitMessage is the message of the commit that records t's work: made
// before the run, so it does not say how the task ended (the task does).
func (e *Engine) commitMessage(t Task) string {
	// The subject is what was asked (the goal); the body names the task
	// and its run (git log finds it by that) and what a later run was
	// asked.
	subject := firstLine(t.Goal)
	if r := []rune(subject); len(r) > maxSubject {
		subject = string(r[:maxSubject-1]) + "…"
	}
	body := "fetch: task " + t.ID
	if t.Runs > 1 {
		body = fmt.Sprintf("fetch: task %s, run %d", t.ID, t.Runs)
		if t.Answer != "" {
			body += "\n\nThis run was asked: " + t.Answer
		}
	}
	return e.store.Scrub(redact.StripControl(subject + "\n\n" + body + "\n\nGoal: " + t.Goal))
}

// maxSubject bounds a commit's subject line, in characters.
const maxSubject = 72

// recorded is a run's own record of its work: the plan its exec carries
// out after the CLI (harness.Task.Record), the forgets it takes with it,
// and what it printed.
type recorded struct {
	plan    workspace.RecordPlan
	program shim.Batch
	forgets []string
	printed []byte
}

// planRecord plans the record of the work t's run does in the run's own
// exec: a Work task's, through Fetch's own repository. prepared: the same
// run makes the worktree, so the base is what it reads. forget: the run
// takes the pending forgets of its workspace with it.
func (e *Engine) planRecord(t Task, prepared, forget bool) *recorded {
	if t.Mode != Work || t.Worktree == "" || e.cfg.Repos == nil {
		return nil
	}
	base := t.Base
	if prepared {
		base = workspace.PlannedBase
	}
	r := &recorded{}
	if forget {
		r.forgets = e.forgets.take(t.Workspace)
	}
	r.plan = e.cfg.Workspaces.PlanRecord(t.worktree(), base, e.commitMessage(t), forgetSteps(r.forgets))
	prog, err := gitrun.Program(r.plan.Steps)
	if err != nil {
		e.forgets.add(t.Workspace, r.forgets...)
		e.log.Error("plan the record of the run's work", "task", t.ID, "err", err)
		return nil
	}
	r.program = prog
	return r
}

// ranRecord is what t's run recorded of its work, when it had a plan and
// printed its result; nil otherwise (its work is then recorded in a batch
// of its own).
func (e *Engine) ranRecord(t Task, r *recorded, printed []byte) *recorded {
	if r == nil {
		return nil
	}
	if printed == nil {
		e.forgets.add(t.Workspace, r.forgets...) // not dropped
		return nil
	}
	out := *r
	out.printed = printed
	return &out
}

// read reads what the run printed.
func (r *recorded) read() (workspace.Bundled, error) { return r.plan.Read(r.printed) }

// harnessTask is the harness's view of the task's current run.
func (e *Engine) harnessTask(t Task) harness.Task {
	// A Work task's changes are measured when its work is recorded (the
	// branch's diff), not by snapshots around the run.
	ht := harness.Task{ID: t.RunID, Goal: t.Goal, Workdir: t.Worktree, Model: t.Model, ReadOnly: t.Mode == Ask, Measured: t.Mode == Work}
	if p, err := e.cfg.Workspaces.Path(t.Workspace); err == nil {
		ht.Workspace = p
	}
	switch {
	case t.Answer != "" && t.SessionID != "":
		ht.ResumeID, ht.Answer = t.SessionID, t.Answer
	case t.Answer != "":
		// No session to resume (a follow-up run, such as a resolve, of a
		// CLI that gave none): the goal carries what is asked now.
		ht.Goal = t.Goal + "\n\n" + t.Answer
	}
	return ht
}

// runID names the n-th run of a task in the kennel.
func runID(id string, n int) string {
	if n <= 1 {
		return id
	}
	return fmt.Sprintf("%s.%d", id, n)
}

// eventWriter appends a run's events to the task's log, in batches, on
// its own goroutine, and passes them to the observer. The budget is
// checked in add, on each event as the runner's callback hands it over,
// not when the writer reaches its batch: a writer behind a busy database
// would let the CLI spend on meanwhile.
type eventWriter struct {
	e      *Engine
	ctx    context.Context
	task   Task
	ch     chan harness.Event
	done   chan struct{}
	onCap  func()
	bytes  int
	capped bool
	// budget is the task's cap (Task.BudgetUSD, or Config.TaskBudgetUSD);
	// 0 means none.
	budget float64
	// The budget check, guarded by mu (add runs on the runner's callback,
	// write on the writer's goroutine): scope and resumed say how the
	// run's cost adds to the task's earlier runs; usage sums the run's
	// usage events, spend is its latest spend event; attributedUSD is the
	// orchestrator's cost for the task as last read; onBudget is called
	// once, from add, when the task's cost passes the budget.
	mu            sync.Mutex
	scope         harness.UsageScope
	resumed       bool
	usage         harness.Usage
	spend         harness.Usage
	attributedUSD float64
	onBudget      func(spent float64)
	overRun       bool
	// session is the session id the run told (keepSession).
	session string
}

func (e *Engine) newEventWriter(ctx context.Context, t Task, onCap func()) *eventWriter {
	w := &eventWriter{e: e, ctx: context.WithoutCancel(ctx), task: t, ch: make(chan harness.Event, eventBuffer), done: make(chan struct{}), onCap: onCap, session: t.SessionID,
		budget: e.budgetOf(t)}
	if w.budget > 0 {
		w.attributedUSD = e.attributed(w.ctx, t.ID)
	}
	go w.loop()
	return w
}

// add is the runner's callback: it checks the event against the budget
// and queues it for the log.
func (w *eventWriter) add(ev harness.Event) {
	w.refuseInvalidUsage(&ev)
	w.checkBudget(ev)
	w.ch <- ev
}

// close waits until every event added was written.
func (w *eventWriter) close() {
	close(w.ch)
	<-w.done
}

func (w *eventWriter) loop() {
	defer close(w.done)
	batch := make([]harness.Event, 0, maxBatch)
	for ev := range w.ch {
		batch = append(batch[:0], ev)
	more:
		for len(batch) < maxBatch {
			select {
			case ev, ok := <-w.ch:
				if !ok {
					break more
				}
				batch = append(batch, ev)
			default:
				break more
			}
		}
		w.write(batch)
	}
}

func (w *eventWriter) write(batch []harness.Event) {
	now := store.FormatTime(w.e.now())
	rows := make([][2]string, 0, len(batch))
	w.refreshAttributed(batch)
	for _, ev := range batch {
		data, err := json.Marshal(ev)
		if err != nil {
			w.e.log.Error("encode task event", "task", w.task.ID, "err", err)
			continue
		}
		if w.capped {
			continue
		}
		w.bytes += len(data)
		if w.bytes > w.e.cfg.OutputCap {
			w.capped = true
			w.onCap()
			continue
		}
		rows = append(rows, [2]string{string(ev.Kind), string(data)})
	}
	insert := func(tx *sql.Tx) error {
		for _, r := range rows {
			if _, err := tx.ExecContext(w.ctx, "INSERT INTO "+eventsTable+" (task_id, at, kind, data) VALUES (?, ?, ?, ?)", w.task.ID, now, r[0], r[1]); err != nil {
				return err
			}
		}
		return nil
	}
	if err := w.e.tx(w.ctx, insert); err != nil {
		w.e.log.Error("append task events; events lost", "task", w.task.ID, "events", len(rows), "err", err)
	}
	w.keepSession(batch)
	w.keepLimits(batch)
	for _, ev := range batch {
		if ev.Kind == harness.KindRaw && strings.TrimSpace(ev.Text) == "" {
			continue
		}
		// A copy: the batch is reused, an observer may keep the event.
		w.e.notify(w.ctx, Update{Kind: Progress, Task: w.task, Event: &ev})
	}
}

// refuseInvalidUsage takes out of an event the usage figures a CLI cannot
// truly report (harness.Usage.Valid: a negative, NaN or infinite cost, a
// negative token count): they would lower the task's cost and its budget
// use. The event stays, without figures, as if the CLI had reported none;
// the log says what came.
func (w *eventWriter) refuseInvalidUsage(ev *harness.Event) {
	if ev.Usage == nil || ev.Usage.Valid() {
		return
	}
	u := *ev.Usage
	w.e.log.Warn("usage report refused: a negative, NaN or infinite figure; treated as not reported", "task", w.task.ID, "harness", w.task.Harness, "kind", ev.Kind,
		"cost_usd", u.CostUSD, "input_tokens", u.InputTokens, "output_tokens", u.OutputTokens, "cache_read_tokens", u.CacheReadTokens, "cache_write_tokens", u.CacheWriteTokens, "premium_requests", u.PremiumRequests)
	ev.Usage = nil
}

// refreshAttributed reads again the orchestrator's cost attributed to the
// task when a batch reported usage, for the checks that follow.
func (w *eventWriter) refreshAttributed(batch []harness.Event) {
	if w.budget <= 0 {
		return
	}
	for _, ev := range batch {
		if ev.Usage != nil {
			a := w.e.attributed(w.ctx, w.task.ID)
			w.mu.Lock()
			w.attributedUSD = a
			w.mu.Unlock()
			return
		}
	}
}

// checkBudget adds what ev says the run cost and, when the task's cost
// (its earlier runs, this run so far, the orchestrator's calls attributed
// to it) passed the task budget, calls onBudget once. It runs as the event
// arrives, so a stop comes at most one CLI message after the cap.
func (w *eventWriter) checkBudget(ev harness.Event) {
	w.mu.Lock()
	switch {
	case ev.Usage == nil:
		w.mu.Unlock()
		return
	case ev.Kind == harness.KindUsage:
		w.usage = w.usage.Add(*ev.Usage)
	case ev.Kind == harness.KindSpend:
		w.spend = *ev.Usage
	default:
		w.mu.Unlock()
		return
	}
	if w.budget <= 0 || w.overRun || w.onBudget == nil {
		w.mu.Unlock()
		return
	}
	run := max(w.usage.CostUSD, w.spend.CostUSD)
	prior := w.task
	if !w.resumed {
		prior.Answer = ""
	}
	spent := cliCost(w.scope, prior, run) + w.attributedUSD
	over := spent > w.budget
	if over {
		w.overRun = true
	}
	onBudget := w.onBudget
	w.mu.Unlock()
	if over {
		w.e.log.Info("task over its budget", "task", w.task.ID, "spent_usd", spent, "budget_usd", w.budget)
		onBudget(spent)
	}
}

// keepSession stores the session id a run told as soon as it tells it, so
// that a run that ends without a word (Fetch stopped, the kennel lost it)
// can still be continued in its CLI's session.
func (w *eventWriter) keepSession(batch []harness.Event) {
	for _, ev := range batch {
		if ev.Kind != harness.KindSession || ev.SessionID == "" || ev.SessionID == w.session {
			continue
		}
		if _, err := w.e.db.ExecContext(w.ctx, "UPDATE "+tasksTable+" SET session_id = ? WHERE id = ?", ev.SessionID, w.task.ID); err != nil {
			w.e.log.Warn("keep the run's session id", "task", w.task.ID, "err", err)
			continue
		}
		w.session = ev.SessionID
	}
}
