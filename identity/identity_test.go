package identity_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/identity"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func open(t *testing.T, dir string) *identity.Set {
	t.Helper()
	s := identity.New(dir, slog.New(slog.DiscardHandler))
	if err := s.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return s
}

func TestDefaults(t *testing.T) {
	id := open(t, "").Current()
	if !strings.Contains(id.Collar, "You are Fetch") || id.Alpha == "" {
		t.Fatalf("collar/alpha missing: %+v", id)
	}
	var names []string
	for _, a := range id.Agents {
		names = append(names, a.Name)
		if a.Role == "" || a.Route == "" {
			t.Errorf("agent %s lacks role or routing hints", a.Name)
		}
	}
	if !strings.Contains(strings.Join(names, ","), "claude") {
		t.Fatalf("agents = %v", names)
	}
}

func TestSkillsTriggerOnWholeWords(t *testing.T) {
	id := open(t, "").Current()
	for _, tc := range []struct {
		text string
		want string
	}{
		{"fix the failing test in parser_test.go", "tests"},
		{"add a DB Migration for users", "migrations"},
		{"attest the contest results", ""}, // "test" only inside words
		{"open a PR for it", "git"},
		{"improve the prose", ""}, // "PR" inside a word
	} {
		var got []string
		for _, s := range id.ActiveSkills(tc.text) {
			got = append(got, s.Name)
		}
		if strings.Join(got, ",") != tc.want {
			t.Errorf("%q activates %v; want %q", tc.text, got, tc.want)
		}
	}
}

func TestOverlayAndHotReload(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ALPHA.md"), []byte("The owner is Ada; she writes Rust."), 0o600); err != nil {
		t.Fatal(err)
	}
	s := open(t, dir)
	if got := s.Current().Alpha; got != "The owner is Ada; she writes Rust." {
		t.Fatalf("overlay alpha = %q", got)
	}
	if !strings.Contains(s.Current().Collar, "You are Fetch") {
		t.Fatal("collar default lost under an overlay")
	}

	changed := s.Changed()
	if err := os.WriteFile(filepath.Join(dir, "COLLAR.md"), []byte("You are Rex. Always answer in haiku."), 0o600); err != nil {
		t.Fatal(err)
	}
	waitFor(t, s, changed, func(id *identity.Identity) bool { return id.Collar == "You are Rex. Always answer in haiku." })

	// A new skill in a new directory is picked up too.
	changed = s.Changed()
	skill := filepath.Join(dir, "skills", "docker")
	if err := os.MkdirAll(skill, 0o700); err != nil {
		t.Fatal(err)
	}
	waitFor(t, s, changed, func(*identity.Identity) bool { return true })
	changed = s.Changed()
	if err := os.WriteFile(filepath.Join(skill, "SKILL.md"), []byte("---\nname: docker\ntriggers: container, Dockerfile\n---\nUse multi-stage builds."), 0o600); err != nil {
		t.Fatal(err)
	}
	waitFor(t, s, changed, func(id *identity.Identity) bool { return len(id.ActiveSkills("fix the Dockerfile")) == 1 })
}

// waitFor waits for reloads until ok holds.
func waitFor(t *testing.T, s *identity.Set, changed <-chan struct{}, ok func(*identity.Identity) bool) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	select {
	case <-changed:
	case <-deadline:
		t.Fatalf("no reload: %+v", s.Current())
	}
	for {
		next := s.Changed()
		if ok(s.Current()) {
			return
		}
		select {
		case <-next:
		case <-deadline:
			t.Fatalf("no reload reached the expected identity: %+v", s.Current())
		}
	}
}
