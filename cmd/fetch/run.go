package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/fetch-dev/fetch/instincts"
	"github.com/fetch-dev/fetch/internal/access"
	"github.com/fetch-dev/fetch/internal/attach"
	"github.com/fetch-dev/fetch/internal/chat"
	"github.com/fetch-dev/fetch/internal/code"
	"github.com/fetch-dev/fetch/internal/conversation"
	"github.com/fetch-dev/fetch/internal/metrics"
	"github.com/fetch-dev/fetch/internal/progress"
	"github.com/fetch-dev/fetch/internal/redact"
	"github.com/fetch-dev/fetch/internal/store"
	"github.com/fetch-dev/fetch/internal/task"
	"github.com/fetch-dev/fetch/internal/term"
	"github.com/fetch-dev/fetch/internal/workspace"
	"github.com/fetch-dev/fetch/kennel"
)

// Exit codes.
const (
	exitOK     = 0
	exitFailed = 1
	exitUsage  = 2
	// exitInterrupted is the shell's convention for a SIGINT.
	exitInterrupted = 130
)

const usage = `Fetch: a personal coding orchestrator you talk to.

Usage:
  fetch chat       talk to Fetch in this terminal (reads lines from stdin)
  fetch serve      run Fetch as a Discord bot (DMs from the owner and allowed users)
  fetch task       run, list, show, follow and cancel coding tasks (fetch task help)
  fetch doctor     check everything Fetch needs and say how to fix what is missing
  fetch page       print a signed link to the task page (the list, or one task)
  fetch audit      print the audit log: decisions, approvals and who made them
  fetch prune      remove old delivered messages and ended tasks' events and patches (FETCH_KEEP)
  fetch workspace  add, clone, list, show and remove workspaces (fetch workspace help)
  fetch version    print the version
  fetch help       show this help

Run "fetch COMMAND --help" for a command's help.

` + configHelp + "\n"

const chatUsage = `Usage: fetch chat

Talk to Fetch in the terminal: each line you type (or pipe in) is a message
from the owner, and Fetch's replies are printed as they come. Commands such
as /status, /help and /stop work without any key; requests in plain words
need OPENROUTER_API_KEY. History and modes are kept in $FETCH_DATA_DIR/fetch.db.

It serves the read-only task page while it runs, as "fetch serve" does, on
FETCH_PAGE_ADDR (default 127.0.0.1:8686; off turns it off); each task's
messages show a signed link to it, and "fetch page" prints one. When that
address is taken (by another Fetch), the chat goes on without the page and
says so once.

Example:
  echo /status | fetch chat
`

// run is the whole program: main only adds the process's environment.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	cmd, rest := args[0], args[1:]
	if wantsHelp(rest) {
		switch cmd {
		case "chat":
			fmt.Fprint(stdout, chatUsage)
			return exitOK
		case "serve":
			fmt.Fprint(stdout, serveUsage)
			return exitOK
		case "page":
			fmt.Fprint(stdout, pageUsage)
			return exitOK
		case "version":
			fmt.Fprintln(stdout, "Usage: fetch version")
			return exitOK
		case "doctor":
			fmt.Fprint(stdout, doctorUsage)
			return exitOK
		}
	}
	var err error
	switch cmd {
	case "help", "-h", "--help", "-help":
		fmt.Fprint(stdout, usage)
		return exitOK
	case "version", "--version":
		fmt.Fprintln(stdout, version())
		return exitOK
	case "chat":
		if len(rest) > 0 {
			usageError(stderr, "chat", fmt.Sprintf("unexpected argument %q", rest[0]))
			return exitUsage
		}
		err = runChat(ctx, getenv, stdin, stdout, stderr)
	case "serve":
		if len(rest) > 0 {
			usageError(stderr, "serve", fmt.Sprintf("unexpected argument %q", rest[0]))
			return exitUsage
		}
		err = runServe(ctx, getenv, stderr)
	case "task":
		err = runTask(ctx, rest, getenv, stdout, stderr)
	case "doctor":
		err = runDoctor(ctx, rest, getenv, stdout, stderr)
	case "page":
		err = runPage(ctx, rest, getenv, stdout)
	case "audit":
		err = runAudit(ctx, rest, getenv, stdout, stderr)
	case "prune":
		err = runPrune(ctx, rest, getenv, stdout, stderr)
	case "workspace", "workspaces", "ws":
		cmd = "workspace"
		err = runWorkspace(ctx, rest, getenv, stdin, stdout, stderr)
	default:
		fmt.Fprintf(stderr, "fetch: unknown command %q\nRun \"fetch help\" for the commands.\n", cmd)
		return exitUsage
	}
	var cfgErr *ConfigError
	var exit *exitError
	var sub *cmdError
	if errors.As(err, &sub) {
		cmd = sub.name
	}
	switch {
	case errors.As(err, &exit):
		return exit.code
	case ctx.Err() != nil:
		return exitInterrupted
	case err == nil:
		return exitOK
	case errors.As(err, &cfgErr):
		fmt.Fprintf(stderr, "fetch %s: %v\n\nRun \"fetch help\" for the configuration variables.\n", cmd, err)
		return exitUsage
	case errors.Is(err, errUsage):
		// One line says what is wrong; the help is one command away.
		msg, _, _ := strings.Cut(err.Error(), "\n\n")
		usageError(stderr, cmd, strings.TrimPrefix(msg, errUsage.Error()+": "))
		return exitUsage
	}
	fmt.Fprintf(stderr, "fetch %s: %v\n", cmd, err)
	if errors.Is(err, workspace.ErrNotFound) {
		fmt.Fprint(stderr, workspaceHint)
	}
	return exitFailed
}

// usageError tells that command (such as "task run") was used wrongly:
// one line saying what is wrong, and where its help is.
func usageError(stderr io.Writer, command, what string) {
	fmt.Fprintf(stderr, "fetch %s: %s\nSee \"fetch %s --help\".\n", command, what, command)
}

// cmdError is the error of a subcommand ("task run"), which run names
// when it prints it.
type cmdError struct {
	name string
	err  error
}

func (e *cmdError) Error() string { return e.err.Error() }
func (e *cmdError) Unwrap() error { return e.err }

func wantsHelp(args []string) bool {
	for _, a := range args {
		if a == "-h" || a == "--help" || a == "-help" || a == "help" {
			return true
		}
	}
	return false
}

func version() string {
	v, rev := "(devel)", ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				rev = " " + s.Value[:12]
			}
		}
	}
	return fmt.Sprintf("fetch %s%s %s %s/%s", v, rev, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// openBase is what every command starts with: its logger (level fallback
// when FETCH_LOG_LEVEL is unset) with the redactor behind it, and the
// database. The caller closes the database.
func openBase(ctx context.Context, cfg Config, stderr io.Writer, fallback slog.Level) (*slog.Logger, *redact.Redactor, *store.DB, error) {
	log, red, err := newLogger(stderr, cfg, fallback)
	if err != nil {
		return nil, nil, nil, err
	}
	db, err := openStore(ctx, cfg, red)
	if err != nil {
		return nil, nil, nil, err
	}
	return log, red, db, nil
}

// openStore creates the data directory and opens the database in it;
// every text written to it is redacted first.
func openStore(ctx context.Context, cfg Config, red *redact.Redactor) (*store.DB, error) {
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	return store.Open(ctx, filepath.Join(cfg.DataDir, "fetch.db"), store.WithScrub(red.String))
}

// newLogger is every command's logger: text to w at the configured level
// (fallback when unset), every record passing through the redactor it
// returns too, which removes the configured secrets and credential
// patterns.
func newLogger(w io.Writer, cfg Config, fallback slog.Level) (*slog.Logger, *redact.Redactor, error) {
	red, err := redact.New(cfg.Secrets...)
	if err != nil {
		return nil, nil, err
	}
	return slog.New(redact.NewHandler(slog.NewTextHandler(w, &slog.HandlerOptions{Level: cfg.level(fallback)}), red)), red, nil
}

// noAgentReply answers requests while no LLM is configured.
const noAgentReply = "I can't work on requests yet: no LLM is configured. Set " + envOpenRouter + " (and optionally " + envModel + ") and restart Fetch. Commands such as /status and /help work now."

// conversations is what every channel shares: the task engine and the
// feed it publishes on, the agent, the conversations (with the outbox that
// delivers their replies), and the proactive parts (scheduler, watcher). fetch chat
// and fetch serve run the same pipeline; only the senders and who is
// admitted differ.
//
// At run time everything flows one way: the engine publishes task updates
// on the feed; the Manager routes them to the conversation they belong to,
// whose goroutine alone changes its mode and decides what to send; what
// anyone sends is stored and queued on the outbox, whose pump per
// conversation delivers it. Nothing below calls back up.
type conversations struct {
	tasks   *task.Engine
	brain   *brain
	mgr     *conversation.Manager
	pro     *proactive
	release func()
	// metrics serves the metrics (nil: FETCH_METRICS_ADDR is unset).
	metrics *metricsServer
	// sleeper stops idle kennels (FETCH_KENNEL_IDLE).
	sleeper *kennel.Sleeper
}

// newConversations builds the runtime, each part from the parts before
// it. Nothing touches Docker before a task runs, so the conversations
// work without it.
func newConversations(cfg Config, db *store.DB, log *slog.Logger, senders map[string]chat.Sender, roleOf func(channel, userID string) chat.Role, x runtimeExtras) (*conversations, error) {
	updates := task.NewFeed()
	ks, err := newKennels(context.Background(), cfg, db, log, true)
	if err != nil {
		return nil, err
	}
	if x.metrics != nil {
		ks.pool.Measure(x.metrics)
	}
	release := ks.release
	engine, shipper, err := newEngine(cfg, db, log, ks, observe(updates, x.metrics), true, x.relay)
	if err != nil {
		release()
		return nil, err
	}
	workspaces := ks.workspaces
	chk := newChecks(cfg, db, log, ks.pool)
	b, err := newBrain(cfg, db, log, brainDeps{
		workspaces: shippedWorkspaces{Registry: workspaces, shipper: shipper, automerge: automergeSettings(cfg, db), checks: chk, log: log},
		code:       code.New(workspaces),
		tasks:      engine,
		running:    runningTasks{engine},
		metrics:    x.metrics,
	})
	if err != nil {
		release()
		return nil, err
	}
	pro := newProactive(cfg, db, log, ks.pool, x.metrics)
	attachments, err := newAttachments(cfg, db)
	if err != nil {
		release()
		return nil, err
	}
	c := conversation.Config{
		Store:       db,
		Senders:     senders,
		NoAgent:     noAgentReply,
		Tasks:       engine,
		Steering:    engine,
		Updates:     updates,
		Attachments: attachments,
		RoleOf:      roleOf,
		Logger:      log,
		IdleAfter:   cfg.IdleAfter,
		Scheduler:   pro.sched,
		Watcher:     pro.watch,
		Shipping:    shipper,
		Engines:     ks.describe,
		Location:    cfg.Location,
		Scrub:       db.Scrub,
		DaySpend: func(ctx context.Context) (*instincts.DaySpend, error) {
			usd, err := db.DaySpend(ctx, store.Day(time.Now()))
			if err != nil {
				return nil, err
			}
			return &instincts.DaySpend{USD: usd, Budget: cfg.DailyBudgetUSD}, nil
		},
		Limits: func(ctx context.Context) string {
			ls, err := db.CLILimits(ctx, "")
			if err != nil {
				log.Warn("read the coding CLIs' usage windows", "err", err)
				return ""
			}
			return progress.Limits(ls, time.Now())
		},
		TaskLink: x.taskLink,
		// /use selects from the same registry as the agent's
		// workspace_select.
		Workspaces: workspaces,
		Allowed:    x.allowed,
		Hosts:      chatHosts(cfg, db),
		AutoMerge:  automergeSettings(cfg, db),
		Checks:     chk,
	}
	if x.metrics != nil {
		c.Metrics = x.metrics
	}
	b.wire(&c)
	mgr := conversation.New(c)
	return &conversations{tasks: engine, brain: b, mgr: mgr, pro: pro, sleeper: ks.sleeper, release: release, metrics: newMetricsServer(cfg, x.metrics, log)}, nil
}

// runtimeExtras are what only some commands give the runtime.
type runtimeExtras struct {
	// taskLink, when not nil, is the task page's link to a task, which
	// each task's result carries.
	taskLink func(string) string
	// allowed are the users /allow manages, besides FETCH_ALLOWED_IDS.
	allowed *access.List
	// metrics counts what happens (FETCH_METRICS_ADDR); nil: nothing.
	metrics *metrics.Metrics
	// relay takes the requests of terminal tasks to the owner in this
	// chat; nil: they are not taken.
	relay *task.Relay
}

// runningTasks is the agent's view of a conversation's running task.
type runningTasks struct{ e *task.Engine }

func (r runningTasks) Running(ctx context.Context, conversationID string) (*instincts.Task, error) {
	return conversation.RunningTask(ctx, r.e, conversationID)
}

// open starts the parts in order: the agent (the Manager may hand it
// replayed messages), the Manager (its outbox replays what was not
// delivered, prompts left open expire, unhandled messages are handled), the
// engine (reconciling tasks after a restart publishes updates), then the
// proactive parts. On failure, what was opened is closed again.
func (rt *conversations) open(ctx context.Context) error {
	closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), closeTimeout)
	defer cancel()
	var closers []func(context.Context) error
	fail := func(err error) error {
		for i := len(closers) - 1; i >= 0; i-- {
			err = errors.Join(err, closers[i](closeCtx))
		}
		rt.release()
		return err
	}
	if err := rt.brain.open(ctx); err != nil {
		return fail(err)
	}
	closers = append(closers, rt.brain.close)
	// Closed also when its Open fails half way (its outbox may be open).
	closers = append(closers, rt.mgr.Close)
	if err := rt.mgr.Open(ctx); err != nil {
		return fail(err)
	}
	if err := rt.tasks.Open(ctx); err != nil {
		return fail(err)
	}
	closers = append(closers, rt.tasks.Close)
	// After the engine's reconciling: the kennels of runs it follows
	// again are busy.
	if err := rt.sleeper.Open(ctx); err != nil {
		return fail(err)
	}
	closers = append(closers, rt.sleeper.Close)
	if err := rt.pro.open(ctx, rt.mgr); err != nil {
		return fail(err)
	}
	closers = append(closers, rt.pro.close)
	if err := rt.metrics.open(ctx); err != nil {
		return fail(err)
	}
	return nil
}

// close stops what open started, in reverse: the proactive parts, the
// engine (the runs it stops are published), the Manager (which still
// handles those updates and delivers what was queued, within ctx), and the
// agent last.
func (rt *conversations) close(ctx context.Context) error {
	err := errors.Join(rt.metrics.close(ctx), rt.pro.close(ctx), rt.sleeper.Close(ctx), rt.tasks.Close(ctx), rt.mgr.Close(ctx), rt.brain.close(ctx))
	rt.release()
	return err
}

// localUser is the terminal user's id when no owner id is configured.
const localUser = "local"

func runChat(ctx context.Context, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	cfg, err := loadConfig(getenv)
	if err != nil {
		return err
	}
	warnNotReady(ctx, cfg, stderr)
	log, red, db, err := openBase(ctx, cfg, stderr, slog.LevelWarn)
	if err != nil {
		return err
	}
	defer db.Close()

	owner := cfg.OwnerID
	if owner == "" {
		owner = localUser
	}
	// A person at a terminal gets a prompt and a greeting; piped input
	// stays a deterministic script.
	prompt := ""
	if isTerminal(stdin) {
		prompt = "> "
	}
	tty := term.New(stdout, owner, prompt)
	// closeAll stops what was started, in order, within a bound of its
	// own (ctx may have ended).
	closeAll := func(closers ...func(context.Context) error) error {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), closeTimeout)
		defer cancel()
		var err error
		for _, c := range closers {
			err = errors.Join(err, c(cctx))
		}
		return err
	}
	// The task page listens first, as fetch serve's: the results of tasks
	// carry its links. A taken address leaves it out, said once.
	pg, err := chatPage(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	// /allow here manages who may talk to fetch serve on Discord (which
	// sees the change at its next start).
	allowed, err := discordAccess(ctx, cfg, db)
	if err != nil {
		return errors.Join(err, closeAll(pg.close))
	}
	rt, err := newConversations(cfg, db, log, map[string]chat.Sender{term.Channel: tty}, func(channel, userID string) chat.Role {
		// The terminal is the owner's: whoever runs fetch chat on this
		// data directory.
		if channel == term.Channel && userID == owner {
			return chat.Owner
		}
		return ""
	}, runtimeExtras{taskLink: pg.link(), allowed: allowed, metrics: newMetrics(cfg, db), relay: &task.Relay{Channel: term.Channel, UserID: owner}})
	if err != nil {
		return errors.Join(err, closeAll(pg.close))
	}
	if err := rt.open(ctx); err != nil {
		return errors.Join(err, closeAll(pg.close))
	}
	if err := pg.open(ctx, cfg, rt.tasks, red, log); err != nil {
		return errors.Join(err, closeAll(rt.close))
	}
	if prompt != "" {
		fmt.Fprint(stdout, greeting(cfg, pg))
	}
	runErr := tty.Run(ctx, stdin, rt.mgr)
	if err := closeAll(pg.close, rt.close); err != nil && runErr == nil {
		runErr = err
	}
	return runErr
}

// greeting is what fetch chat says first at a terminal: where its data
// is, whether it can work on requests, where its task page is, and where
// the commands are.
func greeting(cfg Config, pg *page) string {
	llm := "LLM: " + cfg.Model + " through OpenRouter: tell me what to do in plain words."
	if cfg.OpenRouter == "" {
		llm = "LLM: not set, so only commands work; set " + envOpenRouter + " (and " + envModel + ") for requests in plain words."
	}
	tasks := ""
	if pg != nil {
		tasks = "Task page: served here at " + pg.addr() + "; fetch page prints its link.\n"
	}
	return fmt.Sprintf("Fetch: data in %s, workspaces in %s.\n%s\n%s/help lists the commands; Ctrl-D ends.\n", cfg.DataDir, cfg.Workspaces, llm, tasks)
}

// discordFileHosts are the hosts Discord serves attachments from.
var discordFileHosts = []string{"cdn.discordapp.com", "media.discordapp.net"}

// newAttachments takes the files that come with messages into
// DataDir/attachments, from Discord's file hosts (and the host of
// FETCH_DISCORD_URL, which a local fake serves over http), checked by
// type, size and for secrets like any text Fetch stores.
func newAttachments(cfg Config, db *store.DB) (*attach.Fetcher, error) {
	hosts := slices.Clone(discordFileHosts)
	var insecure []string
	if u, err := url.Parse(cfg.DiscordURL); err == nil && u.Hostname() != "" {
		if u.Scheme == "http" {
			insecure = append(insecure, u.Hostname())
		} else {
			hosts = append(hosts, u.Hostname())
		}
	}
	return attach.New(attach.Config{
		Dir: filepath.Join(cfg.DataDir, "attachments"), Hosts: hosts, Insecure: insecure,
		MaxBytes: int64(cfg.AttachMaxBytes), Types: cfg.AttachTypes,
		Secret: func(text string) bool { return db.Scrub(text) != text },
	})
}
