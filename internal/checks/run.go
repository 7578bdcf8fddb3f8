package checks

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/fetch-dev/fetch/instincts"
	"github.com/fetch-dev/fetch/internal/redact"
	"github.com/fetch-dev/fetch/internal/store"
	"github.com/fetch-dev/fetch/kennel"
)

// Exec runs a program in a workspace's kennel; *kennel.Pool implements
// it.
type Exec interface {
	Exec(ctx context.Context, spec kennel.ExecSpec, fn kennel.LineHandler) (kennel.Result, error)
}

// DefaultLimit is the time all the checks of one shipment share when the
// configuration sets none.
const DefaultLimit = 10 * time.Minute

// Bounds of what is kept of a check's output.
const (
	tailLines = 40
	lineMax   = 300
)

// env is the checks' environment besides the image's: CI=true keeps test
// runners from waiting on a terminal.
var env = []string{"CI=true"}

// Config is what a Runner needs; Store and Kennel are required.
type Config struct {
	Store  *store.DB
	Kennel Exec
	// Limit is the time all the checks of one shipment share
	// (FETCH_CHECK_TIMEOUT); DefaultLimit when 0.
	Limit  time.Duration
	Logger *slog.Logger
	Now    func() time.Time
}

// Runner runs workspaces' checks and carries out /checks.
type Runner struct{ cfg Config }

// New builds a Runner.
func New(cfg Config) *Runner {
	if cfg.Limit <= 0 {
		cfg.Limit = DefaultLimit
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Runner{cfg: cfg}
}

// Limit is the time the checks of one shipment may take.
func (r *Runner) Limit() time.Duration { return r.cfg.Limit }

// Target is where a task's checks run: the workspace (Path, its host path,
// selects the kennel) and the task's worktree in it.
type Target struct {
	Workspace string
	Path, Dir string
}

// Run runs the workspace's checks in its kennel, in the task's worktree,
// one after the other within the time limit. A check that fails is in the
// Report; an error is Fetch's own (the store, the kennel), or ctx ended.
func (r *Runner) Run(ctx context.Context, t Target) (Report, error) {
	st, err := readSettings(ctx, r.cfg.Store.SQL(), t.Workspace)
	if err != nil {
		return Report{}, err
	}
	rep := Report{Source: st.Source, Limit: r.cfg.Limit, OnFail: st.OnFail}
	var lines []string
	switch st.Source {
	case Off:
		return rep, nil
	case Owner:
		lines = st.Commands
	case Detect:
		if lines, err = r.detect(ctx, t); err != nil {
			return rep, err
		}
	}
	deadline := r.cfg.Now().Add(r.cfg.Limit)
	for _, line := range lines {
		res := Result{Command: line, Source: st.Source}
		argv, perr := Parse(line)
		left := deadline.Sub(r.cfg.Now())
		switch {
		case perr != nil:
			// Stored by an older Fetch, or detected: refused again here.
			res.Outcome, res.Exit, res.Tail = Failed, -1, perr.Error()
		case left <= 0:
			res.Outcome = Skipped
		default:
			if res, err = r.one(ctx, t, line, argv, left); err != nil {
				return rep, err
			}
			res.Source = st.Source
		}
		if res.Outcome == Failed && res.Exit == 127 && st.Source == Detect {
			res.Outcome, res.Tail = Missing, ""
		}
		rep.Results = append(rep.Results, res)
	}
	return rep, nil
}

// one runs one check with the time it has left.
func (r *Runner) one(ctx context.Context, t Target, line string, argv []string, left time.Duration) (Result, error) {
	res := Result{Command: line}
	tail := &tailBuf{}
	start := r.cfg.Now()
	out, err := r.cfg.Kennel.Exec(ctx, kennel.ExecSpec{Workspace: t.Path, Dir: t.Dir, Argv: argv, Env: env, Timeout: left}, tail.add)
	res.Took = r.cfg.Now().Sub(start)
	res.Tail = r.cfg.Store.Scrub(tail.String())
	switch {
	case out.TimedOut || errors.Is(err, kennel.ErrTimeout):
		res.Outcome = TimedOut
		return res, nil
	case err != nil:
		return res, fmt.Errorf("checks: run %s in the kennel: %w", argv[0], err)
	case out.ExitCode == 0:
		res.Outcome, res.Tail = Passed, ""
	default:
		res.Outcome, res.Exit = Failed, out.ExitCode
		if res.Tail == "" {
			res.Tail = strings.TrimSpace(r.cfg.Store.Scrub(redact.StripControl(string(out.StderrTail))))
		}
	}
	r.cfg.Logger.Info("check ran", "workspace", t.Workspace, "command", line, "outcome", string(res.Outcome), "exit", out.ExitCode, "took", res.Took)
	return res, nil
}

// detect finds the worktree's checks from its files, read in the kennel.
func (r *Runner) detect(ctx context.Context, t Target) ([]string, error) {
	var out boundedBuf
	out.max = maxDetectOut
	argv := append([]string{"sh", "-c", detectScript, "detect"}, detectFiles...)
	res, err := r.cfg.Kennel.Exec(ctx, kennel.ExecSpec{Workspace: t.Path, Dir: t.Dir, Argv: argv, Stdout: &out, Timeout: time.Minute}, nil)
	if err != nil {
		return nil, fmt.Errorf("checks: read the worktree's files: %w", err)
	}
	if res.ExitCode != 0 {
		return nil, fmt.Errorf("checks: read the worktree's files: exit %d: %s", res.ExitCode, strings.TrimSpace(string(res.StderrTail)))
	}
	return detect(splitFiles(out.Bytes())), nil
}

// tailBuf keeps the last lines of a check's output (both streams), each
// cut and stripped of control characters.
type tailBuf struct {
	mu    sync.Mutex
	lines []string
}

func (b *tailBuf) add(_ kennel.Stream, line []byte) {
	s := redact.StripControl(string(line))
	if r := []rune(s); len(r) > lineMax {
		s = string(r[:lineMax-1]) + "…"
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.lines = append(b.lines, s)
	if len(b.lines) > tailLines {
		b.lines = b.lines[len(b.lines)-tailLines:]
	}
}

func (b *tailBuf) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.TrimSpace(strings.Join(b.lines, "\n"))
}

// boundedBuf keeps the first max bytes written to it and drops the rest.
type boundedBuf struct {
	bytes.Buffer
	max int
}

func (b *boundedBuf) Write(p []byte) (int, error) {
	if room := b.max - b.Len(); room > 0 {
		b.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

var _ io.Writer = (*boundedBuf)(nil)

// Settings returns a workspace's checks as set.
func (r *Runner) Settings(ctx context.Context, ws string) (Settings, error) {
	return readSettings(ctx, r.cfg.Store.SQL(), ws)
}

// Forget drops a deleted workspace's settings.
func (r *Runner) Forget(ctx context.Context, ws string) error {
	if _, err := r.cfg.Store.SQL().ExecContext(ctx, `DELETE FROM workspace_checks WHERE workspace = ?`, ws); err != nil {
		return fmt.Errorf("checks: forget %s: %w", ws, err)
	}
	return nil
}

// ApplyTx carries out /checks inside tx, the transaction that marks the
// owner's command handled: it shows or changes r.Workspace's checks
// (instincts.Checks, with r.Checks the action and its argument). A bad
// command line is refused with why, and nothing changes.
func (r *Runner) ApplyTx(ctx context.Context, tx *sql.Tx, conversationID, userID string, resp instincts.Response) (string, func(), error) {
	none := func() {}
	ws := resp.Workspace
	if ws == "" {
		return "", nil, fmt.Errorf("checks: %s without a workspace", resp.Effect)
	}
	st, err := readSettings(ctx, tx, ws)
	if err != nil {
		return "", nil, err
	}
	action, arg := resp.ChecksAction, strings.TrimSpace(resp.ChecksArg)
	switch action {
	case "":
		return r.describe(st), none, nil
	case "set", "add":
		argv, err := Parse(arg)
		if err != nil {
			return fmt.Sprintf("Not changed: %s.", strings.TrimSuffix(err.Error(), ": "+ErrCommand.Error())), none, nil
		}
		line := Quote(argv)
		if action == "set" || st.Source != Owner {
			st.Commands = nil
		}
		if len(st.Commands) >= MaxCommands {
			return fmt.Sprintf("Not changed: %s has %d checks already, the most it may have.", ws, MaxCommands), none, nil
		}
		st.Source, st.Commands = Owner, append(st.Commands, line)
	case "auto":
		st.Source, st.Commands = Detect, nil
	case "off":
		st.Source, st.Commands = Off, nil
	case "failing":
		f, ok := ParseOnFail(arg)
		if !ok {
			return fmt.Sprintf("%q is not what a failing check does: draft (open the pull request as a draft) or hold (open none).", arg), none, nil
		}
		st.OnFail = f
	default:
		return "", nil, fmt.Errorf("checks: unknown action %q", action)
	}
	if err := writeSettings(ctx, tx, st, store.FormatTime(r.cfg.Now())); err != nil {
		return "", nil, err
	}
	detail := strings.TrimSpace(ws + " " + action + " " + arg)
	if err := r.cfg.Store.AuditTx(ctx, tx, store.AuditEntry{ConversationID: conversationID, Actor: userID, Action: "checks", Detail: detail}); err != nil {
		return "", nil, err
	}
	return "Changed. " + r.describe(st), none, nil
}

// describe says a workspace's checks, for /checks.
func (r *Runner) describe(st Settings) string {
	var b strings.Builder
	switch st.Source {
	case Off:
		fmt.Fprintf(&b, "%s runs no checks before a pull request (/checks auto detects them again).", st.Workspace)
	case Owner:
		fmt.Fprintf(&b, "%s's checks, run in its kennel before each pull request or merge:", st.Workspace)
		for _, c := range st.Commands {
			fmt.Fprintf(&b, "\n- %s", c)
		}
	default:
		fmt.Fprintf(&b, "%s's checks are detected from the task's files before each pull request or merge (go test ./..., npm test, pytest, cargo test, make test); /checks set COMMAND sets your own.", st.Workspace)
	}
	onFail := "its pull request is opened as a draft"
	if st.OnFail == Hold {
		onFail = "no pull request is opened"
	}
	fmt.Fprintf(&b, "\nAll of them together may take %s. When one fails, %s, and it is never merged on its own (/checks failing draft|hold).", r.cfg.Limit, onFail)
	return b.String()
}
