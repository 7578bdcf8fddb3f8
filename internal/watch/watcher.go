package watch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fetch-dev/fetch/internal/chat"
	"github.com/fsnotify/fsnotify"
)

// ignoredDir tells whether a directory name is noise: version control,
// dependencies and build output.
func ignoredDir(name string) bool {
	switch name {
	case ".git", ".hg", ".svn", "node_modules", "vendor", "build", "dist", "target", "__pycache__", ".venv", ".cache", ".idea", ".gradle":
		return true
	}
	return false
}

// ignored tells whether a path relative to the workspace is noise.
func ignored(rel string) bool {
	parts := strings.Split(filepath.ToSlash(rel), "/")
	for _, p := range parts[:len(parts)-1] {
		if ignoredDir(p) {
			return true
		}
	}
	base := parts[len(parts)-1]
	return ignoredDir(base) || strings.HasSuffix(base, "~") || strings.HasSuffix(base, ".swp") || strings.HasSuffix(base, ".swx") || base == "4913" || strings.HasPrefix(base, ".#")
}

// watcher watches one workspace.
type watcher struct {
	m      *Manager
	name   string
	dir    string
	conv   string
	fsw    *fsnotify.Watcher
	n      Notifier
	log    *slog.Logger
	cancel context.CancelFunc

	wg   sync.WaitGroup
	done chan struct{}
}

// run starts the watcher's goroutines: file events, and git when an
// interval is set. done is closed when both returned.
func (w *watcher) run(ctx context.Context) {
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		defer w.fsw.Close()
		w.files(ctx)
	}()
	if w.m.cfg.GitInterval > 0 {
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			w.git(ctx)
		}()
	}
	go func() {
		w.wg.Wait()
		close(w.done)
	}()
}

func (w *watcher) wait(ctx context.Context) error {
	select {
	case <-w.done:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// addTree watches dir and the directories below it that are not noise;
// with b, the files found are recorded as created (a directory made or
// moved in during a burst).
func (w *watcher) addTree(dir string, b *burst) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == dir {
				return err
			}
			return nil // vanished meanwhile
		}
		rel, _ := filepath.Rel(w.dir, path)
		if path != w.dir && ignored(rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if err := w.fsw.Add(path); err != nil {
				return fmt.Errorf("watch %s: %w", rel, err)
			}
			return nil
		}
		if b != nil {
			b.add(rel, created)
		}
		return nil
	})
}

// files gathers file events into bursts and reports each.
func (w *watcher) files(ctx context.Context) {
	b := newBurst()
	quiet := time.NewTimer(time.Hour)
	quiet.Stop()
	defer quiet.Stop()
	flush := func() {
		if b.empty() {
			return
		}
		text := b.summary(w.name)
		b = newBurst()
		if err := w.n.Notify(ctx, w.conv, chat.Text(text)); err != nil && ctx.Err() == nil {
			w.log.Error("watch: send changes", "err", err)
		}
	}
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.fsw.Events:
			if !ok {
				return
			}
			w.event(ev, b)
			switch {
			case b.empty():
			case time.Since(b.started) >= maxBurst:
				flush()
			default:
				quiet.Reset(w.m.cfg.Debounce)
			}
		case err, ok := <-w.fsw.Errors:
			if !ok {
				return
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				b.overflow = true
			}
			w.log.Warn("watch: file events", "err", err)
		case <-quiet.C:
			flush()
		}
	}
}

// event records one file event in the burst.
func (w *watcher) event(ev fsnotify.Event, b *burst) {
	rel, err := filepath.Rel(w.dir, ev.Name)
	if err != nil || rel == "." || ignored(rel) {
		return
	}
	switch {
	case ev.Has(fsnotify.Create):
		if fi, err := statDir(ev.Name); err == nil && fi {
			if err := w.addTree(ev.Name, b); err != nil {
				w.log.Warn("watch: new directory", "dir", rel, "err", err)
			}
			return
		}
		b.add(rel, created)
	case ev.Has(fsnotify.Write):
		b.add(rel, changed)
	case ev.Has(fsnotify.Remove), ev.Has(fsnotify.Rename):
		b.add(rel, removed)
	}
}
