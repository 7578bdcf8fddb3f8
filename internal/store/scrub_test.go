package store_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fetch-dev/fetch/internal/store"
)

// planted are secrets written through every kind of write; the last ones
// hold JSON's special characters, so that a JSON value holding them is
// scrubbed in its decoded form.
var planted = []string{"sk-or-v1-planted0123456789", "discord.planted.token-xyz", `pl"anted\sec/ret`, "nplanted-after-escape"}

func scrubPlanted(s string) string {
	for _, p := range planted {
		s = strings.ReplaceAll(s, p, "[REDACTED]")
	}
	return s
}

func TestNoSecretAtRest(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	path := filepath.Join(dir, "fetch.db")
	db, err := store.Open(ctx, path, store.WithScrub(scrubPlanted))
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(planted, " and ")
	extra, _ := json.Marshal(map[string]any{"text": all, all: []any{1, "x\n" + planted[3], true}})
	writes := []struct {
		name  string
		write func(context.Context) error
	}{
		{"conversation", func(ctx context.Context) error {
			_, err := db.EnsureConversation(ctx, "c1", "term", "u1")
			return err
		}},
		{"inbound", func(ctx context.Context) error {
			_, _, err := db.AddInbound(ctx, store.NewInbound{ConversationID: "c1", ExternalID: "e1", UserID: "u1", Body: "my key is " + all, InHistory: true})
			return err
		}},
		{"outbound with extra", func(ctx context.Context) error {
			_, err := db.AddOutbound(ctx, "c1", store.Outgoing{Body: "reply " + all, Extra: string(extra)})
			return err
		}},
		{"refusal", func(ctx context.Context) error {
			_, _, err := db.Refuse(ctx, store.NewInbound{ConversationID: "c1", ExternalID: "e2", UserID: "u1", Body: all}, store.Outgoing{Body: "no " + all})
			return err
		}},
		{"audit", func(ctx context.Context) error {
			return db.Audit(ctx, store.AuditEntry{ConversationID: "c1", Actor: "u1", Action: "run", Detail: all})
		}},
		{"prompt", func(ctx context.Context) error {
			id, err := db.AddPrompt(ctx, store.Prompt{ConversationID: "c1", Kind: store.Question, Body: all, Action: string(extra)})
			if err != nil {
				return err
			}
			return db.ResolvePrompt(ctx, id, "answer "+all)
		}},
		{"mode", func(ctx context.Context) error {
			return db.ChangeMode(ctx, store.ModeChange{ConversationID: "c1", To: "working", Event: "task", Reason: all})
		}},
		{"SQL()", func(ctx context.Context) error {
			if _, err := db.SQL().ExecContext(ctx, "CREATE TABLE side (body TEXT, data BLOB)"); err != nil {
				return err
			}
			_, err := db.SQL().ExecContext(ctx, "INSERT INTO side (body, data) VALUES (?, ?)", all, []byte(all))
			return err
		}},
		{"Tx", func(ctx context.Context) error {
			return db.Tx(ctx, func(tx *sql.Tx) error {
				_, err := tx.ExecContext(ctx, "INSERT INTO side (body) VALUES (?)", string(extra))
				return err
			})
		}},
		{"prepared", func(ctx context.Context) error {
			st, err := db.SQL().PrepareContext(ctx, "INSERT INTO side (body) VALUES (?) RETURNING rowid")
			if err != nil {
				return err
			}
			defer st.Close()
			var id int64
			return st.QueryRowContext(ctx, all).Scan(&id)
		}},
	}
	for _, w := range writes {
		if err := w.write(ctx); err != nil {
			t.Fatalf("%s: %v", w.name, err)
		}
	}

	// What is read back is the scrubbed text; JSON stays JSON.
	var got string
	if err := db.SQL().QueryRowContext(ctx, "SELECT extra FROM messages WHERE extra != ''").Scan(&got); err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(got), &v); err != nil {
		t.Fatalf("extra is no longer JSON: %v\n%s", err, got)
	}
	if !strings.Contains(got, "[REDACTED]") {
		t.Errorf("extra not scrubbed: %s", got)
	}
	if db.Scrub("x "+planted[0]) != "x [REDACTED]" {
		t.Errorf("Scrub(%q) = %q", "x "+planted[0], db.Scrub("x "+planted[0]))
	}

	// Grep the files while the database is open (the log holds the
	// writes) and after Close (folded into the database).
	grep(t, dir)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	grep(t, dir)
}

// grep fails for every planted secret found in a file of dir, in any of
// the forms it is stored in (as is, JSON-escaped).
func grep(t *testing.T, dir string) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range planted {
			quoted, _ := json.Marshal(p)
			for _, form := range [][]byte{[]byte(p), quoted[1 : len(quoted)-1]} {
				if bytes.Contains(data, form) {
					t.Errorf("%s holds %q", filepath.Base(f), form)
				}
			}
		}
	}
}

func TestWithoutScrubTextIsKept(t *testing.T) {
	db := open(t)
	if got := db.Scrub("sk-or-v1-planted0123456789"); got != "sk-or-v1-planted0123456789" {
		t.Errorf("Scrub without a scrubber = %q", got)
	}
}
