package discord_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/internal/chat"
	"github.com/fetch-dev/fetch/internal/conversation"
	"github.com/fetch-dev/fetch/internal/discord"
	"github.com/fetch-dev/fetch/internal/redact"
	"github.com/fetch-dev/fetch/internal/store"
	"github.com/fetch-dev/fetch/internal/testkit"
	"go.uber.org/goleak"
)

const (
	token = "test-bot-token-0123456789"
	owner = "100000000000000001"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var sharedRedactor = sync.OnceValues(func() (*redact.Redactor, error) { return redact.New(token) })

// env is a Bot on the fake Discord with a real conversation runtime and
// store behind it.
type env struct {
	d   *testkit.Discord
	db  *store.DB
	bot *discord.Bot
	mgr *conversation.Manager
	ch  string
}

func start(t *testing.T, editInterval time.Duration, agent conversation.Agent) *env {
	t.Helper()
	red, err := sharedRedactor()
	if err != nil {
		t.Fatal(err)
	}
	d := testkit.NewDiscord(t, token)
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
	bot, err := discord.New(discord.Config{
		Token: token, BaseURL: d.URL(), Store: db, Redactor: red, RoleOf: roleOf,
		EditInterval: editInterval, Logger: log,
	})
	if err != nil {
		t.Fatal(err)
	}
	mgr := conversation.New(conversation.Config{
		Store: db, Senders: map[string]chat.Sender{discord.Channel: bot}, Agent: agent, NoAgent: "no agent",
		RoleOf: roleOf, Logger: log,
	})
	if err := mgr.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := bot.Open(t.Context(), mgr); err != nil {
		t.Fatal(err)
	}
	e := &env{d: d, db: db, bot: bot, mgr: mgr, ch: d.DMChannel(owner)}
	t.Cleanup(func() { e.close(t) })
	d.WaitConnected(t, 1, 0)
	return e
}

func (e *env) close(t *testing.T) {
	t.Helper()
	if e.bot == nil {
		return
	}
	ctx := context.WithoutCancel(t.Context())
	if err := e.bot.Close(ctx); err != nil {
		t.Error(err)
	}
	if err := e.mgr.Close(ctx); err != nil {
		t.Error(err)
	}
	e.bot = nil
}

func (e *env) conv() string { return discord.ConversationID(e.ch) }

func TestStatusEditsAreCoalesced(t *testing.T) {
	// With an interval longer than the test, every edit after the first
	// message waits: only the newest is made, when the bot closes.
	e := start(t, time.Hour, nil)
	e.d.SetChannelLimit(5, 5*time.Second)
	if _, err := e.db.EnsureConversation(t.Context(), e.conv(), discord.Channel, owner); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		r := chat.Reply{Key: "task-1", Text: "step " + strings.Repeat("▮", i+1)}
		if err := e.mgr.Notify(t.Context(), e.conv(), r); err != nil {
			t.Fatal(err)
		}
	}
	ms := e.d.WaitMessages(t, e.ch, 1)
	if len(ms) != 1 || ms[0].Content != "step ▮" || len(ms[0].Edits) != 0 {
		t.Fatalf("before close: %d messages, first %q with %d edits", len(ms), ms[0].Content, len(ms[0].Edits))
	}
	e.close(t)
	ms = e.d.Messages(e.ch)
	if len(ms) != 1 || len(ms[0].Edits) != 1 || ms[0].Content != "step "+strings.Repeat("▮", 20) {
		t.Fatalf("after close: %d messages, %d edits, content %q", len(ms), len(ms[0].Edits), ms[0].Content)
	}
	if n := e.d.RateLimited(); n != 0 {
		t.Fatalf("%d requests hit Discord's rate limit", n)
	}
	if unsent, _ := e.db.Unsent(t.Context(), discord.Channel); len(unsent) != 0 {
		t.Fatalf("%d notifications left unsent", len(unsent))
	}
}

func TestPendingEditIsKeptInTheStore(t *testing.T) {
	e := start(t, time.Hour, nil)
	// Another process (never opened, then gone) sent a status message and
	// queued an edit of it: the edit is in the store, and the running bot
	// makes it (here when it closes, the interval being an hour).
	red, _ := sharedRedactor()
	other, err := discord.New(discord.Config{
		Token: token, BaseURL: e.d.URL(), Store: e.db, Redactor: red,
		RoleOf: func(string, string) chat.Role { return "" }, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"one", "two"} {
		if err := other.Send(t.Context(), e.conv(), chat.Reply{Key: "k", Text: text}); err != nil {
			t.Fatal(err)
		}
	}
	if err := other.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if ms := e.d.Messages(e.ch); len(ms) != 1 || ms[0].Content != "one" {
		t.Fatalf("before: %q", ms[0].Content)
	}
	e.close(t)
	if ms := e.d.Messages(e.ch); len(ms) != 1 || ms[0].Content != "two" || len(ms[0].Edits) != 1 {
		t.Fatalf("after: %d messages, %q", len(ms), ms[0].Content)
	}
}

func TestSendIsExactlyOnce(t *testing.T) {
	e := start(t, 0, nil)
	conv := e.conv()
	r := chat.Reply{ID: 41, Text: strings.Repeat("a line of a long reply\n", 200)} // 3 parts
	e.d.FailNextMessages(1, testkit.FailReject)
	if err := e.bot.Send(t.Context(), conv, r); err == nil {
		t.Fatal("send through a failing Discord succeeded")
	}
	if n := len(e.d.Messages(e.ch)); n != 0 {
		t.Fatalf("%d messages after a rejected first part", n)
	}
	// The second part's answer is lost after Discord created it.
	e.d.FailNextMessages(1, testkit.FailNone)
	e.d.FailNextMessages(1, testkit.FailAfterCreate)
	if err := e.bot.Send(t.Context(), conv, r); err == nil {
		t.Fatal("send with a lost answer succeeded")
	}
	if n := len(e.d.Messages(e.ch)); n != 2 {
		t.Fatalf("%d messages; want the first two parts", n)
	}
	for range 2 {
		if err := e.bot.Send(t.Context(), conv, r); err != nil {
			t.Fatal(err)
		}
	}
	ms := e.d.Messages(e.ch)
	if len(ms) != 3 {
		t.Fatalf("%d messages after resending; want each of the 3 parts once", len(ms))
	}
	if err := e.bot.Send(t.Context(), "term:local", r); err == nil {
		t.Fatal("send to a terminal conversation succeeded")
	}
}

func TestCleansWhatIsSent(t *testing.T) {
	e := start(t, 0, nil)
	ghp := "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
	err := e.bot.Send(t.Context(), e.conv(), chat.Reply{
		Text:    "\x1b[32mok\x1b[0m token " + token,
		Actions: []chat.Action{{Label: "Use " + ghp, Send: "yes"}},
		Files:   []chat.File{{Name: "log.txt", Data: []byte("\x1b[1mexport GH=" + ghp + "\n")}},
	})
	if err != nil {
		t.Fatal(err)
	}
	m := e.d.Messages(e.ch)[0]
	if m.Content != "ok token [REDACTED]" {
		t.Errorf("content %q", m.Content)
	}
	if got := m.Components[0].Components[0].Label; strings.Contains(got, ghp) {
		t.Errorf("label %q", got)
	}
	if got := string(m.Files[0].Data); got != "export GH=[REDACTED]\n" {
		t.Errorf("file %q", got)
	}
}

func TestSendsPicturesAsTheyAre(t *testing.T) {
	e := start(t, 0, nil)
	// A PNG whose bytes hold an escape and what looks like a token: a
	// picture is not text to clean.
	png := append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x1b[1m"), "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"...)
	if err := e.bot.Send(t.Context(), e.conv(), chat.Reply{Text: "shot", Files: []chat.File{{Name: "shot.png", Data: png}, {Name: "fake.png", Data: []byte("\x1b[1mtext")}}}); err != nil {
		t.Fatal(err)
	}
	m := e.d.Messages(e.ch)[0]
	if len(m.Files) != 2 {
		t.Fatalf("%d files; want 2", len(m.Files))
	}
	if f := m.Files[0]; f.ContentType != "image/png" || !bytes.Equal(f.Data, png) {
		t.Errorf("picture sent as %q, %q; want image/png, unchanged", f.ContentType, f.Data)
	}
	if f := m.Files[1]; string(f.Data) != "text" {
		t.Errorf("text named as a picture sent as %q; want it cleaned", f.Data)
	}
}

// slowAgent answers when released, so that a turn takes a while.
type slowAgent struct{ release chan struct{} }

func (a slowAgent) Respond(ctx context.Context, t conversation.Turn) ([]chat.Reply, error) {
	select {
	case <-a.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return []chat.Reply{chat.Text("done: " + t.Text)}, nil
}

func TestTypingWhileTheAgentWorks(t *testing.T) {
	agent := slowAgent{release: make(chan struct{})}
	e := start(t, 0, agent)
	e.d.DM(owner, "/status")
	e.d.WaitMessages(t, e.ch, 1)
	e.d.DM(owner, "add a health check endpoint to the API")
	e.d.WaitFor(t, "a typing indicator", func() bool { return e.d.Typing(e.ch) > 0 })
	close(agent.release)
	ms := e.d.WaitMessages(t, e.ch, 2)
	if ms[1].Content != "done: add a health check endpoint to the API" {
		t.Fatalf("reply %q", ms[1].Content)
	}
}

func TestExpiredButtonIsRefused(t *testing.T) {
	e := start(t, 0, nil)
	if err := e.bot.Send(t.Context(), e.conv(), chat.Text("hi")); err != nil {
		t.Fatal(err)
	}
	m := e.d.WaitMessages(t, e.ch, 1)[0]
	in := e.d.Click(owner, m.ID, "fetch:b:999")
	e.d.WaitFor(t, "the acknowledgement", func() bool { return !e.d.Interaction(in).Acked.IsZero() })
	got := e.d.Interaction(in)
	if got.AckType != 4 || !strings.Contains(got.AckContent, "no longer works") {
		t.Fatalf("interaction %+v", got)
	}
	if h, _ := e.db.History(t.Context(), e.conv(), 0); len(h) != 0 {
		t.Fatalf("history has %d messages; the click must not be handled", len(h))
	}
}

func TestFailedReplyGoesOutAfterReconnect(t *testing.T) {
	e := start(t, 0, nil)
	if _, err := e.db.EnsureConversation(t.Context(), e.conv(), discord.Channel, owner); err != nil {
		t.Fatal(err)
	}
	e.d.FailNextMessages(1, testkit.FailReject)
	if err := e.mgr.Notify(t.Context(), e.conv(), chat.Text("the build is green")); err != nil {
		t.Fatal(err)
	}
	if unsent, _ := e.db.Unsent(t.Context(), discord.Channel); len(unsent) != 1 {
		t.Fatalf("%d unsent; want the failed notification", len(unsent))
	}
	e.d.Drop()
	e.d.WaitConnected(t, 1, 1)
	ms := e.d.WaitMessages(t, e.ch, 1)
	e.close(t)
	if len(e.d.Messages(e.ch)) != 1 || ms[0].Content != "the build is green" {
		t.Fatalf("messages %d, first %q", len(e.d.Messages(e.ch)), ms[0].Content)
	}
	if unsent, _ := e.db.Unsent(t.Context(), discord.Channel); len(unsent) != 0 {
		t.Fatalf("%d unsent after the resend", len(unsent))
	}
}
