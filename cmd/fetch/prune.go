package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fetch-dev/fetch/internal/store"
)

const pruneUsage = `Usage: fetch prune [--dry-run]

Removes what Fetch keeps and no longer needs once it is older than
FETCH_KEEP (default 90d): delivered messages, the agent's folded history,
and the events and patches of tasks that ended (a task keeps its summary,
files, commits and branch). The audit log is always kept (fetch audit
reads it). fetch serve does this at start and daily.

  --dry-run   say what would be removed; remove nothing
`

// pruneEvery is how often fetch serve prunes.
const pruneEvery = 24 * time.Hour

func runPrune(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("fetch prune", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dry := fs.Bool("dry-run", false, "")
	help := fs.Bool("help", false, "")
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		err, *help = nil, true
	}
	if err == nil && fs.NArg() > 0 {
		err = fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if *help {
		fmt.Fprint(stdout, pruneUsage)
		return nil
	}
	cfg, err := loadConfig(getenv)
	if err != nil {
		return err
	}
	if cfg.Keep == 0 {
		fmt.Fprintf(stdout, "FETCH_KEEP is 0: everything is kept, nothing pruned.\n")
		return nil
	}
	_, _, db, err := openBase(ctx, cfg, stderr, slog.LevelWarn)
	if err != nil {
		return err
	}
	defer db.Close()
	p, err := prune(ctx, cfg, db, *dry)
	if err != nil {
		return err
	}
	verb := "Pruned"
	if *dry {
		verb = "Would prune"
	}
	fmt.Fprintf(stdout, "%s what ended before %s (FETCH_KEEP %s): %s. The audit log is kept.\n",
		verb, cutoff(cfg).In(cfg.Location).Format("2006-01-02 15:04 MST"), keepText(cfg.Keep), prunedText(p))
	return nil
}

// cutoff is the time before which what is done with goes.
func cutoff(cfg Config) time.Time { return time.Now().Add(-cfg.Keep) }

// prune prunes the database and removes the patch files of the tasks
// whose patches went.
func prune(ctx context.Context, cfg Config, db *store.DB, dry bool) (store.Pruned, error) {
	p, err := db.Prune(ctx, cutoff(cfg), dry)
	if err != nil || dry {
		return p, err
	}
	dir := filepath.Join(cfg.DataDir, "patches")
	var errs []error
	for _, id := range p.PatchTasks {
		// Task ids are Fetch's own; Base keeps a strange one in dir.
		if err := os.Remove(filepath.Join(dir, filepath.Base(id)+".patch")); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return p, fmt.Errorf("prune: patch files: %w", err)
	}
	return p, nil
}

// prunedText is "3 messages, 0 agent turns, …".
func prunedText(p store.Pruned) string {
	var parts []string
	for _, k := range []string{"messages", "agent turns", "task events", "patches"} {
		parts = append(parts, fmt.Sprintf("%d %s", p.Counts[k], k))
	}
	return strings.Join(parts, ", ")
}

func keepText(d time.Duration) string {
	if d%(24*time.Hour) == 0 {
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	}
	return d.String()
}

// startPruner prunes now and then every pruneEvery until ctx ends or the
// returned stop is called; stop waits for it. With FETCH_KEEP 0 it does
// nothing.
func startPruner(ctx context.Context, cfg Config, db *store.DB, log *slog.Logger) (stop func()) {
	if cfg.Keep == 0 {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(pruneEvery)
		defer tick.Stop()
		for {
			if p, err := prune(ctx, cfg, db, false); err != nil {
				log.Warn("prune what FETCH_KEEP no longer keeps", "err", err)
			} else {
				log.Info("pruned what FETCH_KEEP no longer keeps", "keep", keepText(cfg.Keep), "removed", prunedText(p))
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}
