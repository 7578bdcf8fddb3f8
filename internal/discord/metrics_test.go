package discord_test

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/internal/chat"
	"github.com/fetch-dev/fetch/internal/conversation"
	"github.com/fetch-dev/fetch/internal/discord"
	"github.com/fetch-dev/fetch/internal/store"
	"github.com/fetch-dev/fetch/internal/testkit"
)

// limits records the rate limits the bot reports.
type limits struct {
	mu    sync.Mutex
	n     int
	waits time.Duration
}

func (l *limits) RateLimited(wait time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.n++
	l.waits += wait
}

// Each 429 Discord answers is reported with the wait it asked for, and
// the message still goes out after it.
func TestRateLimitsAreReported(t *testing.T) {
	red, err := sharedRedactor()
	if err != nil {
		t.Fatal(err)
	}
	d := testkit.NewDiscord(t, token)
	d.SetChannelLimit(2, time.Second)
	db, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "fetch.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	roleOf := func(channel, user string) chat.Role {
		if channel == discord.Channel && user == owner {
			return chat.Owner
		}
		return ""
	}
	m := &limits{}
	bot, err := discord.New(discord.Config{Token: token, BaseURL: d.URL(), Store: db, Redactor: red, RoleOf: roleOf, Logger: log, Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	mgr := conversation.New(conversation.Config{Store: db, Senders: map[string]chat.Sender{discord.Channel: bot}, NoAgent: "no agent", RoleOf: roleOf, Logger: log})
	if err := mgr.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := bot.Open(t.Context(), mgr); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx := context.WithoutCancel(t.Context())
		bot.Close(ctx)
		mgr.Close(ctx)
	})
	d.WaitConnected(t, 1, 0)
	ch := d.DMChannel(owner)
	conv := discord.ConversationID(ch)
	if _, err := db.EnsureConversation(t.Context(), conv, discord.Channel, owner); err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"one", "two", "three"} {
		if err := mgr.Notify(t.Context(), conv, chat.Text(text)); err != nil {
			t.Fatal(err)
		}
	}
	d.WaitMessages(t, ch, 3)
	if d.RateLimited() == 0 {
		t.Fatal("the fake never answered 429")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.n != d.RateLimited() || m.waits <= 0 {
		t.Fatalf("reported %d rate limits waiting %v; Discord answered 429 %d times", m.n, m.waits, d.RateLimited())
	}
}
