package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/fetch-dev/fetch/internal/chat"
	"github.com/fetch-dev/fetch/internal/conversation"
	"github.com/fetch-dev/fetch/internal/progress"
	"github.com/fetch-dev/fetch/internal/store"
	"github.com/fetch-dev/fetch/internal/term"
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
  fetch task       run, list, show, follow and cancel coding tasks (fetch task help)
  fetch version    print the version
  fetch help       show this help

Run "fetch COMMAND --help" for a command's help.

` + configHelp + "\n"

const chatUsage = `Usage: fetch chat

Talk to Fetch in the terminal: each line you type (or pipe in) is a message
from the owner, and Fetch's replies are printed as they come. Commands such
as /status, /help and /stop work without any key; requests in plain words
need OPENROUTER_API_KEY. History and modes are kept in $FETCH_DATA_DIR/fetch.db.

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
		case "version":
			fmt.Fprintln(stdout, "Usage: fetch version")
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
			fmt.Fprintf(stderr, "fetch chat: unexpected argument %q\n\n%s", rest[0], chatUsage)
			return exitUsage
		}
		err = runChat(ctx, getenv, stdin, stdout, stderr)
	case "task":
		err = runTask(ctx, rest, getenv, stdout, stderr)
	default:
		fmt.Fprintf(stderr, "fetch: unknown command %q\n\n%s", cmd, usage)
		return exitUsage
	}
	var cfgErr *ConfigError
	var exit *exitError
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
		fmt.Fprintf(stderr, "fetch %s: %v\n", cmd, err)
		return exitUsage
	}
	fmt.Fprintf(stderr, "fetch %s: %v\n", cmd, err)
	return exitFailed
}

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

// openStore creates the data directory and opens the database in it.
func openStore(ctx context.Context, cfg Config) (*store.DB, error) {
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	return store.Open(ctx, filepath.Join(cfg.DataDir, "fetch.db"))
}

func newLogger(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}

// noAgentReply answers requests while no LLM is configured.
const noAgentReply = "I can't work on requests yet: no LLM is configured. Set " + envOpenRouter + " (and optionally " + envModel + ") and restart Fetch. Commands such as /status and /help work now."

// localUser is the terminal user's id when no owner id is configured.
const localUser = "local"

func runChat(ctx context.Context, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	cfg, err := loadConfig(getenv)
	if err != nil {
		return err
	}
	log := newLogger(stderr, cfg.level(slog.LevelWarn))
	db, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer db.Close()

	owner := cfg.OwnerID
	if owner == "" {
		owner = localUser
	}
	prompt := ""
	if f, ok := stdin.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			prompt = "> "
		}
	}
	tty := term.New(stdout, owner, prompt)

	// The task engine, the conversations and the progress reporter refer
	// to each other: the reporter speaks through the manager, the manager
	// asks the engine (through the reporter's adapters), the engine tells
	// the reporter. conv is filled in once the manager exists.
	conv := &struct{ *conversation.Manager }{}
	engine, release, err := newEngine(cfg, db, log, true)
	if err != nil {
		return err
	}
	defer release()
	reporter := progress.New(progress.Config{Chat: conv, Store: db, Tasks: engine, Logger: log})
	engine.Observe(reporter)
	pro := newProactive(cfg, db, log)
	conv.Manager = conversation.New(conversation.Config{
		Store:    db,
		Senders:  map[string]chat.Sender{term.Channel: tty},
		NoAgent:  noAgentReply,
		Tasks:    progress.Running{Tasks: engine},
		Resolver: reporter,
		RoleOf: func(channel, userID string) chat.Role {
			// The terminal is the owner's: whoever runs fetch chat on
			// this data directory.
			if channel == term.Channel && userID == owner {
				return chat.Owner
			}
			return ""
		},
		Logger:    log,
		IdleAfter: cfg.IdleAfter,
		Scheduler: pro.sched,
		Watcher:   pro.watch,
		Location:  cfg.Location,
	})
	mgr := conv.Manager
	if err := mgr.Open(ctx); err != nil {
		return err
	}
	closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	// After the manager: reconciling tasks may tell conversations.
	if err := engine.Open(ctx); err != nil {
		mgr.Close(closeCtx)
		return err
	}
	if err := pro.open(ctx, mgr); err != nil {
		engine.Close(closeCtx)
		mgr.Close(closeCtx)
		return err
	}
	runErr := tty.Run(ctx, stdin, mgr)
	// The engine first, so that what it reports on closing still reaches
	// the conversations.
	for _, err := range []error{engine.Close(closeCtx), pro.close(closeCtx), mgr.Close(closeCtx)} {
		if err != nil && runErr == nil {
			runErr = err
		}
	}
	return runErr
}
