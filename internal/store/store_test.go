package store_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/internal/store"
	"github.com/google/go-cmp/cmp"
)

func open(t testing.TB) *store.DB {
	t.Helper()
	db, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "fetch.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestOpenTwiceKeepsData(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fetch.db")
	db, err := store.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.EnsureConversation(t.Context(), "c1", "term", "u"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db, err = store.Open(t.Context(), path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer db.Close()
	if _, err := db.Conversation(t.Context(), "c1"); err != nil {
		t.Fatalf("conversation lost across reopen: %v", err)
	}
	var mode string
	if err := db.SQL().QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal_mode = %q, %v; want wal", mode, err)
	}
	var fk int
	if err := db.SQL().QueryRow("PRAGMA foreign_keys").Scan(&fk); err != nil || fk != 1 {
		t.Fatalf("foreign_keys = %d, %v; want 1", fk, err)
	}
}

func TestOpenBadDatabases(t *testing.T) {
	dir := t.TempDir()
	corrupt := filepath.Join(dir, "corrupt.db")
	if err := os.WriteFile(corrupt, []byte(strings.Repeat("this is not sqlite\n", 500)), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := store.Open(t.Context(), corrupt)
	if err == nil || !strings.Contains(err.Error(), corrupt) || !strings.Contains(err.Error(), "not a valid Fetch database") {
		t.Fatalf("corrupt: err = %v; want a clear error naming %s", err, corrupt)
	}

	missingDir := filepath.Join(dir, "no", "such", "dir", "fetch.db")
	if _, err := store.Open(t.Context(), missingDir); err == nil || !strings.Contains(err.Error(), missingDir) {
		t.Fatalf("missing dir: err = %v; want an error naming the path", err)
	}
}

// TestOpenReadOnly opens a database file its process may not write. Root
// writes anything, so the opening process is this test binary re-run as
// the unprivileged user nobody when the test runs as root.
func TestOpenReadOnly(t *testing.T) {
	if path := os.Getenv("FETCH_STORE_OPEN"); path != "" {
		t.Skip("helper mode")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "fetch.db")
	db, err := store.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		os.Chmod(p, 0o444)
	}
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o755) })

	if os.Geteuid() != 0 {
		_, err = store.Open(t.Context(), path)
	} else {
		err = openAsNobody(t, path)
	}
	if err == nil || !strings.Contains(err.Error(), "cannot write") || !strings.Contains(err.Error(), path) {
		t.Fatalf("read-only: err = %v; want a clear read-only error naming the path", err)
	}
}

// openAsNobody runs TestHelperOpen in a copy of this test binary as user
// nobody and returns the error it printed.
func openAsNobody(t *testing.T, path string) error {
	t.Helper()
	for d := filepath.Dir(path); d != "/"; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil && fi.Mode().Perm()&0o005 != 0o005 {
			os.Chmod(d, fi.Mode().Perm()|0o005)
		}
	}
	bin := filepath.Join(t.TempDir(), "store.test")
	exe, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, exe, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Dir(bin), 0o755)
	cmd := exec.CommandContext(t.Context(), bin, "-test.run=^TestHelperOpen$")
	cmd.Env = []string{"FETCH_STORE_OPEN=" + path, "HOME=/tmp"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper as nobody: %v\n%s", err, out)
	}
	_, msg, ok := strings.Cut(string(out), "OPEN-ERROR: ")
	if !ok {
		return nil
	}
	msg, _, _ = strings.Cut(msg, "\n")
	return errors.New(msg)
}

func TestHelperOpen(t *testing.T) {
	path := os.Getenv("FETCH_STORE_OPEN")
	if path == "" {
		t.Skip("only run as a helper process")
	}
	db, err := store.Open(context.Background(), path)
	if err != nil {
		fmt.Printf("OPEN-ERROR: %v\n", err)
		return
	}
	db.Close()
}

func TestOpenLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fetch.db")
	db, err := store.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	// Another connection takes an exclusive lock and holds it.
	other, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(t.Context(), "BEGIN EXCLUSIVE"); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(context.Background(), "ROLLBACK")
	_, err = store.Open(t.Context(), path)
	if err == nil || !strings.Contains(err.Error(), "locked") || !strings.Contains(err.Error(), path) {
		t.Fatalf("locked: err = %v; want a clear lock error naming the path", err)
	}
}

func TestInboxAndOutbox(t *testing.T) {
	db := open(t)
	ctx := t.Context()
	if _, err := db.EnsureConversation(ctx, "c1", "discord", "42"); err != nil {
		t.Fatal(err)
	}
	id, dup, err := db.AddInbound(ctx, store.NewInbound{ConversationID: "c1", ExternalID: "m1", UserID: "42", Body: "hello", InHistory: true})
	if err != nil || dup {
		t.Fatalf("add: %v dup=%v", err, dup)
	}
	again, dup, err := db.AddInbound(ctx, store.NewInbound{ConversationID: "c1", ExternalID: "m1", UserID: "42", Body: "hello"})
	if err != nil || !dup || again != id {
		t.Fatalf("duplicate: id=%d dup=%v err=%v; want %d true nil", again, dup, err, id)
	}
	un, err := db.Unhandled(ctx)
	if err != nil || len(un) != 1 || un[0].ID != id {
		t.Fatalf("unhandled = %+v, %v", un, err)
	}
	outs, err := db.Complete(ctx, id, []store.Outgoing{{Body: "hi"}, {Body: "there", Extra: `{"key":"k"}`}})
	if err != nil || len(outs) != 2 {
		t.Fatalf("complete: %v %v", outs, err)
	}
	if _, err := db.Complete(ctx, id, []store.Outgoing{{Body: "again"}}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("second complete: %v; want ErrConflict", err)
	}
	un, _ = db.Unhandled(ctx)
	if len(un) != 0 {
		t.Fatalf("still unhandled: %+v", un)
	}
	unsent, err := db.Unsent(ctx, "discord")
	if err != nil || len(unsent) != 2 || unsent[0].Body != "hi" || unsent[1].Body != "there" || unsent[1].Extra != `{"key":"k"}` {
		t.Fatalf("unsent = %+v, %v", unsent, err)
	}
	if other, _ := db.Unsent(ctx, "term"); len(other) != 0 {
		t.Fatalf("unsent for another channel = %+v", other)
	}
	if err := db.MarkSent(ctx, outs[0]); err != nil {
		t.Fatal(err)
	}
	unsent, _ = db.Unsent(ctx, "")
	if len(unsent) != 1 || unsent[0].ID != outs[1] {
		t.Fatalf("after mark sent: %+v", unsent)
	}
	hist, err := db.History(ctx, "c1", 2)
	if err != nil {
		t.Fatal(err)
	}
	var bodies []string
	for _, m := range hist {
		bodies = append(bodies, m.Body)
	}
	if diff := cmp.Diff([]string{"hi", "there"}, bodies); diff != "" {
		t.Fatalf("history window (-want +got):\n%s", diff)
	}
	if err := db.ClearHistory(ctx, "c1"); err != nil {
		t.Fatal(err)
	}
	if hist, _ := db.History(ctx, "c1", 0); len(hist) != 0 {
		t.Fatalf("history after clear: %+v", hist)
	}
}

func TestModeChanges(t *testing.T) {
	db := open(t)
	ctx := t.Context()
	if _, err := db.EnsureConversation(ctx, "c1", "term", "u"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Mode(ctx, "c1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("fresh mode: %v; want ErrNotFound", err)
	}
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	steps := []store.ModeChange{
		{ConversationID: "c1", From: "", To: "ALERT", Event: "init", Reason: "new", At: at},
		{ConversationID: "c1", From: "ALERT", To: "WORKING", Event: "start", Reason: "task 1", At: at.Add(time.Minute)},
	}
	for _, s := range steps {
		if err := db.ChangeMode(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	stale := store.ModeChange{ConversationID: "c1", From: "ALERT", To: "RESTING", Event: "idle", At: at}
	if err := db.ChangeMode(ctx, stale); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("stale change: %v; want ErrConflict", err)
	}
	cur, err := db.Mode(ctx, "c1")
	if err != nil {
		t.Fatal(err)
	}
	if cur.Mode != "WORKING" || cur.Previous != "ALERT" || !cur.Since.Equal(at.Add(time.Minute)) || cur.Reason != "task 1" {
		t.Fatalf("current = %+v", cur)
	}
	hist, err := db.ModeHistory(ctx, "c1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(steps, hist); diff != "" {
		t.Fatalf("history (-want +got):\n%s", diff)
	}
}

func TestPrompts(t *testing.T) {
	db := open(t)
	ctx := t.Context()
	if _, err := db.EnsureConversation(ctx, "c1", "term", "u"); err != nil {
		t.Fatal(err)
	}
	exp := time.Now().Add(time.Hour)
	id, err := db.AddPrompt(ctx, store.Prompt{ConversationID: "c1", Kind: store.Approval, Body: "delete demo?", Action: `{"tool":"workspace_delete"}`, ExpiresAt: &exp})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.AddPrompt(ctx, store.Prompt{ConversationID: "c1", Kind: store.Question, Body: "which?"}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("second open prompt: %v; want ErrConflict", err)
	}
	p, err := db.OpenPrompt(ctx, "c1")
	if err != nil || p.ID != id || p.Kind != store.Approval || p.Expired(time.Now()) || !p.Expired(exp) {
		t.Fatalf("open prompt = %+v, %v", p, err)
	}
	if err := db.ResolvePrompt(ctx, id, "no"); err != nil {
		t.Fatal(err)
	}
	if err := db.ResolvePrompt(ctx, id, "yes"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("resolve twice: %v; want ErrNotFound", err)
	}
	if _, err := db.OpenPrompt(ctx, "c1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("after resolve: %v", err)
	}
}

func TestAudit(t *testing.T) {
	db := open(t)
	ctx := t.Context()
	for _, a := range []string{"stop", "clear"} {
		if err := db.Audit(ctx, store.AuditEntry{ConversationID: "c1", Actor: "owner", Action: a}); err != nil {
			t.Fatal(err)
		}
	}
	log, err := db.AuditLog(ctx, "c1")
	if err != nil || len(log) != 2 || log[0].Action != "stop" || log[1].Action != "clear" || log[0].At.IsZero() {
		t.Fatalf("audit log = %+v, %v", log, err)
	}
}

// TestCheckpointKeepsLogSmall checks that writes never checkpoint on their
// own and that the checkpointer (and Close) fold the log into the file.
func TestCheckpointKeepsLogSmall(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fetch.db")
	db, err := store.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	var auto int
	if err := db.SQL().QueryRow("PRAGMA wal_autocheckpoint").Scan(&auto); err != nil || auto != 0 {
		t.Fatalf("wal_autocheckpoint = %d, %v; want 0", auto, err)
	}
	if _, err := db.EnsureConversation(t.Context(), "c", "term", "u"); err != nil {
		t.Fatal(err)
	}
	for i := range 300 {
		if err := db.Audit(t.Context(), store.AuditEntry{Actor: "t", Action: fmt.Sprint("a", i), Detail: strings.Repeat("x", 2000)}); err != nil {
			t.Fatal(err)
		}
	}
	if fi, err := os.Stat(path + "-wal"); err != nil || fi.Size() < 500_000 {
		t.Fatalf("log after 300 writes: %v, %v; want it to hold them (no automatic checkpoint)", fi, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
	if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() > 0 {
		t.Fatalf("log is %d bytes after Close; want it folded into the file", fi.Size())
	}
}
