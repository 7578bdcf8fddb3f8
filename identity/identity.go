package identity

import (
	"bufio"
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/fsnotify/fsnotify"
)

//go:embed defaults
var defaults embed.FS

// File names of the identity, relative to the overlay directory.
const (
	collarFile = "COLLAR.md"
	alphaFile  = "ALPHA.md"
	agentsDir  = "agents"
	skillsDir  = "skills"
	skillFile  = "SKILL.md"
)

// Agent is one harness of the pack.
type Agent struct {
	Name      string
	Role      string
	Strengths string
	Route     string
	Body      string
}

// Skill is guidance for the model, active when one of its trigger words
// appears in the owner's message.
type Skill struct {
	Name     string
	Triggers []string
	Body     string
	match    *regexp.Regexp
}

// Identity is one loaded identity. It is never changed after loading.
type Identity struct {
	Collar string
	Alpha  string
	Agents []Agent
	Skills []Skill
}

// ActiveSkills are the skills whose trigger words appear in text, as whole
// words, case-insensitively.
func (id *Identity) ActiveSkills(text string) []Skill {
	var out []Skill
	for _, s := range id.Skills {
		if s.match != nil && s.match.MatchString(text) {
			out = append(out, s)
		}
	}
	return out
}

// Set is the current identity, reloaded as the overlay changes.
type Set struct {
	dir string
	log *slog.Logger

	mu      sync.Mutex
	cur     *Identity
	changed chan struct{}

	watcher *fsnotify.Watcher
	done    chan struct{}
}

// New builds a Set over the overlay directory dir ("" for the embedded
// defaults only). It reads nothing: call Open.
func New(dir string, logger *slog.Logger) *Set {
	return &Set{dir: dir, log: logger, changed: make(chan struct{})}
}

// Open loads the identity and, with an overlay directory, creates it if
// needed and starts watching it.
func (s *Set) Open(ctx context.Context) error {
	id, err := load(s.dir)
	if err != nil {
		return fmt.Errorf("identity: open: %w", err)
	}
	s.set(id)
	if s.dir == "" {
		return nil
	}
	for _, d := range []string{s.dir, filepath.Join(s.dir, agentsDir), filepath.Join(s.dir, skillsDir)} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("identity: open: %w", err)
		}
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("identity: watch: %w", err)
	}
	s.watcher, s.done = w, make(chan struct{})
	s.watchTree()
	go s.watch()
	return nil
}

// Close stops watching and waits for the watcher to end.
func (s *Set) Close(ctx context.Context) error {
	if s.watcher == nil {
		return nil
	}
	err := s.watcher.Close()
	select {
	case <-s.done:
	case <-ctx.Done():
		return fmt.Errorf("identity: close: %w", context.Cause(ctx))
	}
	if err != nil {
		return fmt.Errorf("identity: close: %w", err)
	}
	return nil
}

// Current is the identity now in force.
func (s *Set) Current() *Identity {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur == nil {
		// Not opened: the defaults, which always load.
		id, _ := load("")
		return id
	}
	return s.cur
}

// Changed is closed at the next reload.
func (s *Set) Changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

func (s *Set) set(id *Identity) {
	s.mu.Lock()
	s.cur = id
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
}

// watchTree watches the overlay and its agents and skills directories.
func (s *Set) watchTree() {
	dirs := []string{s.dir, filepath.Join(s.dir, agentsDir), filepath.Join(s.dir, skillsDir)}
	if entries, err := os.ReadDir(filepath.Join(s.dir, skillsDir)); err == nil {
		for _, e := range entries {
			if e.IsDir() {
				dirs = append(dirs, filepath.Join(s.dir, skillsDir, e.Name()))
			}
		}
	}
	for _, d := range dirs {
		if err := s.watcher.Add(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
			s.log.Warn("identity: cannot watch", "dir", d, "err", err)
		}
	}
}

func (s *Set) watch() {
	defer close(s.done)
	for {
		select {
		case ev, ok := <-s.watcher.Events:
			if !ok {
				return
			}
			if ev.Has(fsnotify.Create) {
				// A new skill directory: watch it too (adding twice is harmless).
				s.watchTree()
			}
			id, err := load(s.dir)
			if err != nil {
				s.log.Error("identity: reload failed; keeping the last good identity", "err", err)
				continue
			}
			s.log.Info("identity reloaded", "file", ev.Name)
			s.set(id)
		case err, ok := <-s.watcher.Errors:
			if !ok {
				return
			}
			s.log.Warn("identity: watcher", "err", err)
		}
	}
}

// load reads the embedded defaults overlaid by dir.
func load(dir string) (*Identity, error) {
	files := map[string]string{}
	err := fs.WalkDir(defaults, "defaults", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := defaults.ReadFile(p)
		if err != nil {
			return err
		}
		files[strings.TrimPrefix(p, "defaults/")] = string(b)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if dir != "" {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return err
			}
			if d.IsDir() || !strings.HasSuffix(p, ".md") {
				return nil
			}
			rel, err := filepath.Rel(dir, p)
			if err != nil {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			files[filepath.ToSlash(rel)] = string(b)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	id := &Identity{Collar: strings.TrimSpace(files[collarFile]), Alpha: strings.TrimSpace(files[alphaFile])}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		meta, body := frontMatter(files[n])
		switch {
		case path.Dir(n) == agentsDir:
			a := Agent{Name: meta["name"], Role: meta["role"], Strengths: meta["strengths"], Route: meta["route"], Body: body}
			if a.Name == "" {
				a.Name = strings.TrimSuffix(path.Base(n), ".md")
			}
			id.Agents = append(id.Agents, a)
		case path.Dir(path.Dir(n)) == skillsDir && path.Base(n) == skillFile:
			sk := Skill{Name: meta["name"], Body: body}
			if sk.Name == "" {
				sk.Name = path.Base(path.Dir(n))
			}
			var words []string
			for _, t := range strings.Split(meta["triggers"], ",") {
				if t = strings.TrimSpace(t); t != "" {
					sk.Triggers = append(sk.Triggers, t)
					words = append(words, regexp.QuoteMeta(t))
				}
			}
			if len(words) > 0 {
				sk.match = regexp.MustCompile(`(?i)\b(?:` + strings.Join(words, "|") + `)\b`)
			}
			id.Skills = append(id.Skills, sk)
		}
	}
	return id, nil
}

// frontMatter splits "---\nkey: value\n---\nbody" into its keys and body.
func frontMatter(s string) (map[string]string, string) {
	meta := map[string]string{}
	rest, ok := strings.CutPrefix(s, "---\n")
	if !ok {
		return meta, strings.TrimSpace(s)
	}
	head, body, ok := strings.Cut(rest, "\n---")
	if !ok {
		return meta, strings.TrimSpace(s)
	}
	sc := bufio.NewScanner(strings.NewReader(head))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok {
			meta[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
		}
	}
	return meta, strings.TrimSpace(strings.TrimPrefix(body, "\n"))
}
