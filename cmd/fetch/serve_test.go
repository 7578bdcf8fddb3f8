package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/internal/chat"
	"github.com/fetch-dev/fetch/internal/conversation"
	"github.com/fetch-dev/fetch/internal/discord"
	"github.com/fetch-dev/fetch/internal/store"
	"github.com/fetch-dev/fetch/internal/testkit"
)

// The end-to-end tests of fetch serve: run() in-process with the real
// discordgo client inside, against the fake Discord.

const (
	testToken  = "MTAwMDAwMDAwMDAwMDAwMDAx.GhJkLm.fake-bot-token-for-the-tests-0123456789"
	ownerID    = "100000000000000001"
	friendID   = "100000000000000002"
	strangerID = "100000000000000099"
)

// lockedBuffer collects fetch's log output from many goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// server is one run of fetch serve.
type server struct {
	cancel context.CancelFunc
	done   chan int
	log    *lockedBuffer
}

func serveVars(d *testkit.Discord, dir string) map[string]string {
	return map[string]string{
		"FETCH_DATA_DIR":      dir,
		"FETCH_DISCORD_TOKEN": testToken,
		"FETCH_DISCORD_URL":   d.URL(),
		"FETCH_OWNER_ID":      ownerID,
		"FETCH_ALLOWED_IDS":   friendID,
		"FETCH_IDLE_AFTER":    "0",
		"FETCH_LOG_LEVEL":     "debug",
		// Tests run side by side: the page's default port is one.
		"FETCH_PAGE_ADDR": "off",
	}
}

// startServe runs fetch serve until stop and waits until it is connected
// (its identifies-th IDENTIFY) with its commands registered.
func startServe(t *testing.T, d *testkit.Discord, vars map[string]string, identifies int) *server {
	cleanEgress(t, vars)
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	s := &server{cancel: cancel, done: make(chan int, 1), log: &lockedBuffer{}}
	go func() {
		s.done <- run(ctx, []string{"serve"}, envOf(vars), strings.NewReader(""), io.Discard, s.log)
	}()
	t.Cleanup(func() { s.stop(t) })
	deadline := time.After(30 * time.Second)
	for {
		changed := d.Changed()
		if ids, _ := d.Sessions(); ids >= identifies && len(d.Commands()) > 0 {
			break
		}
		select {
		case <-changed:
		case code := <-s.done:
			s.cancel = nil
			t.Fatalf("fetch serve exited with %d:\n%s", code, s.log.String())
		case <-deadline:
			t.Fatalf("fetch serve did not connect in 30s:\n%s", s.log.String())
		}
	}
	d.WaitConnected(t, identifies, 0)
	return s
}

// stop ends fetch serve as a signal would and checks it shut down
// cleanly.
func (s *server) stop(t *testing.T) {
	t.Helper()
	if s.cancel == nil {
		return
	}
	s.cancel()
	s.cancel = nil
	if code := <-s.done; code != exitInterrupted {
		t.Errorf("fetch serve exited with %d; want %d:\n%s", code, exitInterrupted, s.log.String())
	}
}

// seedOutbox leaves replies in the outbox of the owner's DM conversation,
// as a process that could not deliver them would: the conversation
// runtime stores them, its channel is down.
func seedOutbox(t *testing.T, dir, channelID string, replies ...chat.Reply) {
	t.Helper()
	ctx := t.Context()
	db, err := store.Open(ctx, filepath.Join(dir, "fetch.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conv := discord.ConversationID(channelID)
	if _, err := db.EnsureConversation(ctx, conv, discord.Channel, ownerID); err != nil {
		t.Fatal(err)
	}
	down := testkit.NewRecorder()
	down.SetFailing(true)
	mgr := conversation.New(conversation.Config{
		Store: db, Senders: map[string]chat.Sender{discord.Channel: down}, NoAgent: noAgentReply,
		RoleOf: func(string, string) chat.Role { return chat.Owner }, Logger: discardLogger(),
	})
	if err := mgr.Open(ctx); err != nil {
		t.Fatal(err)
	}
	for _, r := range replies {
		if err := mgr.Notify(ctx, conv, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := mgr.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

func openDB(t *testing.T, dir string) *store.DB {
	t.Helper()
	db, err := store.Open(t.Context(), filepath.Join(dir, "fetch.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func contents(ms []testkit.DiscordMessage) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Content)
	}
	return out
}

// reply sends a DM from the owner and returns the bot's next message.
func reply(t *testing.T, d *testkit.Discord, user, text string) testkit.DiscordMessage {
	t.Helper()
	ch := d.DMChannel(user)
	n := len(d.Messages(ch))
	d.DM(user, text)
	return d.WaitMessages(t, ch, n+1)[n]
}

func TestServeOwnerDMGetsReply(t *testing.T) {
	d := testkit.NewDiscord(t, testToken)
	startServe(t, d, serveVars(d, t.TempDir()), 1)

	status := reply(t, d, ownerID, "/status")
	if !strings.HasPrefix(status.Content, "🟢 ALERT since ") || !strings.Contains(status.Content, "Task: none running") {
		t.Fatalf("/status reply = %q", status.Content)
	}
	if got := reply(t, d, ownerID, "add a health check to the API").Content; got != noAgentReply {
		t.Fatalf("request reply = %q; want the no-agent reply", got)
	}
	if got := reply(t, d, friendID, "/whoami").Content; !strings.Contains(got, friendID+" (allowed)") {
		t.Fatalf("allowed user's /whoami = %q", got)
	}
	names := map[string]bool{}
	for _, c := range d.Commands() {
		names[c.Name] = true
	}
	for _, n := range []string{"status", "stop", "help", "clear", "remind", "schedule", "cron", "autonomy"} {
		if !names[n] {
			t.Errorf("/%s is not registered (registered: %v)", n, names)
		}
	}
}

func TestServeIgnoresStrangersGuildsAndBots(t *testing.T) {
	d := testkit.NewDiscord(t, testToken)
	dir := t.TempDir()
	startServe(t, d, serveVars(d, dir), 1)
	reply(t, d, ownerID, "/status") // the conversation exists and works
	before := d.Requests()

	strangerDM := d.DMChannel(strangerID)
	d.Post(testkit.DiscordPost{AuthorID: strangerID, Content: "/status", Attachments: []string{"payload.sh"}})
	d.Post(testkit.DiscordPost{AuthorID: ownerID, GuildID: "700000000000000001", ChannelID: "700000000000000002", Content: "/status"})
	d.Post(testkit.DiscordPost{AuthorID: "100000000000000077", Bot: true, ChannelID: d.DMChannel(ownerID), Content: "/status"})
	d.Post(testkit.DiscordPost{AuthorID: d.BotID, Bot: true, ChannelID: d.DMChannel(ownerID), Content: "/status"})
	slash := d.Slash(strangerID, "status", nil)

	// Gateway events are handled in order: once this one is answered,
	// the five before it were dropped.
	last := reply(t, d, ownerID, "/whoami")
	if !strings.Contains(last.Content, ownerID+" (owner)") {
		t.Fatalf("owner's /whoami = %q", last.Content)
	}
	// The owner's DM and its reply are the only requests since: one
	// message create (and perhaps typing indicators, on a slow machine).
	if n := d.Requests() - before; n < 1 || n > 3 {
		t.Errorf("%d REST requests for one owner message and four ignored ones", n)
	}
	if ms := d.Messages(strangerDM); len(ms) != 0 {
		t.Errorf("stranger got %q", contents(ms))
	}
	if d.Messages("700000000000000002") != nil {
		t.Error("guild channel got a reply")
	}
	var replies int
	for _, m := range d.Messages(d.DMChannel(ownerID)) {
		if m.Content != "/status" { // the fake bot post is not a reply
			replies++
		}
	}
	if got := replies; got != 2 {
		t.Errorf("owner channel has %d bot messages; want 2 (the bot's own message and another bot's were ignored)", got)
	}
	if got := d.Interaction(slash); !got.Acked.IsZero() || got.Rejected != 0 {
		t.Errorf("a stranger's slash command was answered: %+v", got)
	}
	if d.Downloads() != 0 || d.Typing(strangerDM) != 0 {
		t.Errorf("downloads %d, typing %d for a stranger", d.Downloads(), d.Typing(strangerDM))
	}
	db := openDB(t, dir)
	for _, conv := range []string{discord.ConversationID(strangerDM), discord.ConversationID("700000000000000002")} {
		if _, err := db.Conversation(t.Context(), conv); err == nil {
			t.Errorf("conversation %s was stored", conv)
		}
	}
	if h, err := db.History(t.Context(), discord.ConversationID(d.DMChannel(ownerID)), 0); err != nil || len(h) != 4 {
		t.Errorf("owner history has %d messages (%v); want 2 in, 2 out", len(h), err)
	}
}

func TestServeDuplicateMessageHandledOnce(t *testing.T) {
	d := testkit.NewDiscord(t, testToken)
	dir := t.TempDir()
	vars := serveVars(d, dir)
	s := startServe(t, d, vars, 1)
	ch := d.DMChannel(ownerID)
	id := d.DM(ownerID, "/whoami")
	d.WaitMessages(t, ch, 1)
	d.Post(testkit.DiscordPost{ID: id, AuthorID: ownerID, Content: "/whoami"})
	reply(t, d, ownerID, "/status") // handled after the duplicate
	s.stop(t)

	startServe(t, d, vars, 2)
	d.Post(testkit.DiscordPost{ID: id, AuthorID: ownerID, Content: "/whoami"})
	reply(t, d, ownerID, "/status")
	got := contents(d.Messages(ch))
	if len(got) != 3 || !strings.Contains(got[0], "You are") || !strings.Contains(got[1], "ALERT") || !strings.Contains(got[2], "ALERT") {
		t.Fatalf("messages = %q; want one /whoami reply and two /status replies", got)
	}
}

func TestServeRateLimit(t *testing.T) {
	d := testkit.NewDiscord(t, testToken)
	vars := serveVars(d, t.TempDir())
	vars["FETCH_RATE_LIMIT"] = "3/1h"
	startServe(t, d, vars, 1)
	ch := d.DMChannel(ownerID)
	for range 6 {
		d.DM(ownerID, "/whoami")
	}
	// The friend is not limited by the owner's pace.
	if got := reply(t, d, friendID, "/whoami").Content; !strings.Contains(got, friendID) {
		t.Fatalf("friend's reply = %q", got)
	}
	ms := d.WaitMessages(t, ch, 4)
	var whoami, slow int
	for _, m := range ms {
		switch {
		case strings.HasPrefix(m.Content, "You are"):
			whoami++
		case strings.HasPrefix(m.Content, "Slow down"):
			slow++
		}
	}
	if whoami != 3 || slow != 1 || len(ms) != 4 {
		t.Fatalf("owner got %q; want 3 replies and one slow-down", contents(ms))
	}
	// Over the limit, a stop still gets through.
	if got := reply(t, d, ownerID, "stop").Content; !strings.HasPrefix(got, "Nothing is running") {
		t.Fatalf("stop over the limit: %q", got)
	}
}

func TestServeSplitsLongRepliesAndAttachesDiffs(t *testing.T) {
	d := testkit.NewDiscord(t, testToken)
	dir := t.TempDir()
	ch := d.DMChannel(ownerID)
	var long strings.Builder
	long.WriteString("Here is the new handler:\n```go\n")
	for i := range 70 {
		long.WriteString("\tmux.HandleFunc(\"/health\", func(w http.ResponseWriter, r *http.Request) { /* line */ })\n")
		_ = i
	}
	long.WriteString("```\nThat's all.")
	diff := "diff --git a/api.go b/api.go\n--- a/api.go\n+++ b/api.go\n@@ -1,60 +1,60 @@\n" + strings.Repeat("-\told()\n+\tnew()\n", 200)
	seedOutbox(t, dir, ch,
		chat.Text(long.String()),
		chat.Text("Done. The changes:\n```diff\n"+diff+"```"),
	)
	startServe(t, d, serveVars(d, dir), 1)

	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("messages: %q", contents(d.Messages(ch)))
		}
	})
	d.WaitFor(t, "the diff message", func() bool {
		ms := d.Messages(ch)
		return len(ms) > 0 && len(ms[len(ms)-1].Files) > 0
	})
	ms := d.Messages(ch)
	parts, last := ms[:len(ms)-1], ms[len(ms)-1]
	if len(parts) < 4 {
		t.Fatalf("long reply in %d parts", len(parts))
	}
	for i, p := range parts {
		if n := len([]rune(p.Content)); n > 2000 {
			t.Errorf("part %d has %d characters", i, n)
		}
		if strings.Count(p.Content, "```")%2 != 0 {
			t.Errorf("part %d has unbalanced fences:\n%s", i, p.Content)
		}
		if i > 0 && !strings.HasPrefix(p.Content, "```go\n") {
			t.Errorf("part %d does not reopen the go block: %.40q", i, p.Content)
		}
	}
	if !strings.HasPrefix(parts[0].Content, "Here is the new handler:") || !strings.HasSuffix(parts[len(parts)-1].Content, "That's all.") {
		t.Errorf("parts out of order")
	}
	if len(last.Files) != 1 || last.Files[0].Name != "changes.diff" || string(last.Files[0].Data) != diff {
		t.Fatalf("diff message: %q with files %v", last.Content, last.Files)
	}
	if !strings.Contains(last.Content, "changes.diff (+200 −200 lines)") || strings.Contains(last.Content, "new()") {
		t.Fatalf("diff message content = %q", last.Content)
	}
}

func TestServeApprovalButtons(t *testing.T) {
	d := testkit.NewDiscord(t, testToken)
	dir := t.TempDir()
	ch := d.DMChannel(ownerID)
	conv := discord.ConversationID(ch)
	db := openDB(t, dir)
	if _, err := db.EnsureConversation(t.Context(), conv, discord.Channel, ownerID); err != nil {
		t.Fatal(err)
	}
	// Opened while Fetch runs: one left open by a previous run expires at
	// its start.
	startServe(t, d, serveVars(d, dir), 1)
	approve, err := db.AddPrompt(t.Context(), store.Prompt{ConversationID: conv, Kind: store.Approval, Body: "delete build/ (rm -r build)"})
	if err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		button, answer, reply string
		prompt                int64
	}{{"Approve", "yes", "Approved.", approve}, {"Deny", "no", "Denied. Nothing was done.", 0}} {
		if tc.prompt == 0 {
			if tc.prompt, err = db.AddPrompt(t.Context(), store.Prompt{ConversationID: conv, Kind: store.Approval, Body: "force-push the branch"}); err != nil {
				t.Fatal(err)
			}
		}
		ask := reply(t, d, ownerID, "what is going on?")
		if !strings.Contains(ask.Content, "waiting for your approval") || len(ask.Components) != 1 || len(ask.Components[0].Components) != 2 {
			t.Fatalf("reminder = %q with %+v", ask.Content, ask.Components)
		}
		var custom string
		for _, b := range ask.Components[0].Components {
			if b.Label == tc.button {
				custom = b.CustomID
			}
		}
		n := len(d.Messages(ch))
		in := d.Click(ownerID, ask.ID, custom)
		thanks := d.WaitMessages(t, ch, n+1)[n]
		if thanks.Content != tc.reply {
			t.Fatalf("after %s: %q", tc.button, thanks.Content)
		}
		got := d.Interaction(in)
		if got.Acked.IsZero() || got.AckType != 7 || got.Rejected != 0 || got.Acked.Sub(got.Dispatched) > 3*time.Second {
			t.Fatalf("interaction %+v; want acknowledged in time by updating the message", got)
		}
		var answer string
		if err := db.SQL().QueryRowContext(t.Context(), "SELECT answer FROM prompts WHERE id = ? AND resolved_at IS NOT NULL", tc.prompt).Scan(&answer); err != nil || answer != tc.answer {
			t.Fatalf("prompt %d: answer %q (%v); want %q", tc.prompt, answer, err, tc.answer)
		}
		for _, m := range d.Messages(ch) {
			if m.ID == ask.ID && len(m.Components) != 0 {
				t.Errorf("buttons still on the message after the click")
			}
		}
	}
}

// ago is the part of a /status reply that depends on when it was asked.
var ago = regexp.MustCompile(`\((just now|[0-9hms]+ ago)\)`)

func TestServeSlashStatusEqualsTyped(t *testing.T) {
	d := testkit.NewDiscord(t, testToken)
	startServe(t, d, serveVars(d, t.TempDir()), 1)
	ch := d.DMChannel(ownerID)
	typed := reply(t, d, ownerID, "/status")

	n := len(d.Messages(ch))
	in := d.Slash(ownerID, "status", nil)
	ms := d.WaitMessages(t, ch, n+2) // the acknowledgement and the reply
	ack, slash := ms[n], ms[n+1]
	if got := d.Interaction(in); got.AckType != 4 || got.Rejected != 0 || ack.Interaction != in || ack.Content != "`/status`" {
		t.Fatalf("acknowledgement %+v, message %q", got, ack.Content)
	}
	if ago.ReplaceAllString(slash.Content, "") != ago.ReplaceAllString(typed.Content, "") {
		t.Fatalf("slash /status:\n%s\ntyped /status:\n%s", slash.Content, typed.Content)
	}

	// The option is the typed arguments.
	typedRemind := reply(t, d, ownerID, "/remind in 20m check the deploy")
	n = len(d.Messages(ch))
	d.Slash(ownerID, "remind", map[string]string{"text": "in 20m check the deploy"})
	ms = d.WaitMessages(t, ch, n+2)
	if ms[n].Content != "`/remind in 20m check the deploy`" {
		t.Fatalf("acknowledgement %q", ms[n].Content)
	}
	if !strings.Contains(typedRemind.Content, "check the deploy") {
		t.Fatalf("typed /remind = %q", typedRemind.Content)
	}
	typedList := reply(t, d, ownerID, "/cron list")
	n = len(d.Messages(ch))
	d.Slash(ownerID, "cron", map[string]string{"text": "list"})
	if got := d.WaitMessages(t, ch, n+2)[n+1].Content; got != typedList.Content || strings.Count(got, "check the deploy") != 2 {
		t.Fatalf("slash /cron list = %q; typed = %q; want both reminders, the same text", got, typedList.Content)
	}
}

func TestServeStatusMessageEditedNotResent(t *testing.T) {
	d := testkit.NewDiscord(t, testToken)
	dir := t.TempDir()
	ch := d.DMChannel(ownerID)
	stop := []chat.Action{{Label: "Stop", Send: "/stop", Style: chat.Danger}}
	seedOutbox(t, dir, ch,
		chat.Reply{Key: "task-7", Text: "⏳ t-7: starting claude", Actions: stop},
		chat.Reply{Key: "task-7", Text: "⏳ t-7: running the tests", Actions: stop},
		chat.Text("(an unrelated message)"),
		chat.Reply{Key: "task-7", Text: "✅ t-7: done in 3m12s"},
	)
	startServe(t, d, serveVars(d, dir), 1)
	d.WaitFor(t, "the status message to show the final state", func() bool {
		ms := d.Messages(ch)
		return len(ms) > 0 && ms[0].Content == "✅ t-7: done in 3m12s"
	})
	ms := d.Messages(ch)
	if len(ms) != 2 || ms[1].Content != "(an unrelated message)" {
		t.Fatalf("messages %q; want the status message and the unrelated one", contents(ms))
	}
	if len(ms[0].Edits) < 1 || ms[0].Edits[0] != "⏳ t-7: starting claude" || len(ms[0].Components) != 0 {
		t.Fatalf("status message edits %q, buttons %+v", ms[0].Edits, ms[0].Components)
	}
}

func TestServeGatewayDropResumesWithoutDuplicates(t *testing.T) {
	d := testkit.NewDiscord(t, testToken)
	startServe(t, d, serveVars(d, t.TempDir()), 1)
	ch := d.DMChannel(ownerID)
	reply(t, d, ownerID, "/whoami")

	// Discord may deliver events around a resume again: the last three
	// (the DM, the bot's own reply) come twice.
	d.ReplayOnResume(3)
	d.Drop()
	d.DM(ownerID, "/status") // sent while Fetch is disconnected
	d.WaitConnected(t, 1, 1)
	d.WaitMessages(t, ch, 2)

	d.RequestReconnect()
	d.WaitConnected(t, 1, 2)
	reply(t, d, ownerID, "/commands")
	got := contents(d.Messages(ch))
	if len(got) != 3 || !strings.HasPrefix(got[0], "You are") || !strings.Contains(got[1], "ALERT") || !strings.HasPrefix(got[2], "Commands:") {
		t.Fatalf("messages = %q; want each message answered once", got)
	}
	if ids, _ := d.Sessions(); ids != 1 {
		t.Fatalf("%d IDENTIFYs; want the session resumed, not replaced", ids)
	}
}

func TestServeRestartSendsUnsentExactlyOnce(t *testing.T) {
	d := testkit.NewDiscord(t, testToken)
	dir := t.TempDir()
	vars := serveVars(d, dir)
	ch := d.DMChannel(ownerID)

	s := startServe(t, d, vars, 1)
	// Discord takes the reply but the answer is lost: Fetch cannot know
	// it went out.
	d.FailNextMessages(1, testkit.FailAfterCreate)
	d.DM(ownerID, "/whoami")
	d.WaitMessages(t, ch, 1)
	// Discord refuses this one: it did not go out.
	d.FailNextMessages(1, testkit.FailReject)
	d.DM(ownerID, "/commands")
	d.WaitFor(t, "the refused send", func() bool {
		return strings.Contains(s.log.String(), "send reply") && strings.Count(s.log.String(), "send reply") >= 2
	})
	s.stop(t)
	if unsent, err := openDB(t, dir).Unsent(t.Context(), discord.Channel); err != nil || len(unsent) != 2 {
		t.Fatalf("%d unsent replies (%v); want 2", len(unsent), err)
	}

	s = startServe(t, d, vars, 2)
	d.WaitMessages(t, ch, 2)
	s.stop(t)
	s = startServe(t, d, vars, 3)
	reply(t, d, ownerID, "/status")
	s.stop(t)
	got := contents(d.Messages(ch))
	if len(got) != 3 || !strings.HasPrefix(got[0], "You are") || !strings.HasPrefix(got[1], "Commands:") || !strings.Contains(got[2], "ALERT") {
		t.Fatalf("messages = %q; want each reply exactly once", got)
	}
	if unsent, err := openDB(t, dir).Unsent(t.Context(), discord.Channel); err != nil || len(unsent) != 0 {
		t.Fatalf("%d unsent replies (%v) after delivery", len(unsent), err)
	}
}

func TestServeUnsentGoesOutAfterReconnect(t *testing.T) {
	d := testkit.NewDiscord(t, testToken)
	dir := t.TempDir()
	vars := serveVars(d, dir)
	ch := d.DMChannel(ownerID)
	s := startServe(t, d, vars, 1)
	d.FailNextMessages(1, testkit.FailReject)
	d.DM(ownerID, "/whoami")
	d.WaitFor(t, "the refused send", func() bool { return strings.Contains(s.log.String(), "send reply") })
	d.Drop()
	d.WaitConnected(t, 1, 1)
	d.WaitMessages(t, ch, 1)
	s.stop(t)
	if unsent, err := openDB(t, dir).Unsent(t.Context(), discord.Channel); err != nil || len(unsent) != 0 {
		t.Fatalf("%d unsent replies (%v) after the resend", len(unsent), err)
	}
	s = startServe(t, d, vars, 2)
	reply(t, d, ownerID, "/status")
	s.stop(t)
	if got := contents(d.Messages(ch)); len(got) != 2 || !strings.HasPrefix(got[0], "You are") || !strings.Contains(got[1], "ALERT") {
		t.Fatalf("messages = %q; want the resent reply once, then the /status reply", got)
	}
}

func TestServeRedactsSecrets(t *testing.T) {
	d := testkit.NewDiscord(t, testToken)
	vars := serveVars(d, t.TempDir())
	vars["OPENROUTER_API_KEY"] = "sk-or-v1-0123456789abcdef0123456789abcdef0123456789abcdef"
	s := startServe(t, d, vars, 1)
	ghp := "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
	// The unknown-command reply quotes what was typed.
	for _, secret := range []string{testToken, ghp, vars["OPENROUTER_API_KEY"]} {
		got := reply(t, d, ownerID, "/"+secret).Content
		if strings.Contains(got, secret) || !strings.Contains(got, "[REDACTED]") {
			t.Errorf("reply %q leaks or does not mask the secret", got)
		}
	}
	got := reply(t, d, ownerID, "/x"+ghp+"y"+testToken).Content
	if strings.Contains(got, ghp) || strings.Contains(got, testToken) {
		t.Errorf("reply %q leaks a secret", got)
	}
	s.stop(t)
	for _, secret := range []string{testToken, ghp, vars["OPENROUTER_API_KEY"]} {
		if strings.Contains(s.log.String(), secret) {
			t.Errorf("the log leaks %q", secret)
		}
	}
}

func TestServeConfig(t *testing.T) {
	code, _, errs := runFetch(t, map[string]string{"FETCH_DATA_DIR": t.TempDir()}, "", "serve")
	if code != exitUsage || !strings.Contains(errs, "FETCH_DISCORD_TOKEN is required") || !strings.Contains(errs, "FETCH_OWNER_ID is required") {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	code, _, errs = runFetch(t, map[string]string{"FETCH_DATA_DIR": t.TempDir(), "FETCH_RATE_LIMIT": "lots"}, "", "serve")
	if code != exitUsage || !strings.Contains(errs, "FETCH_RATE_LIMIT") {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	if code, out, _ := runFetch(t, nil, "", "serve", "--help"); code != exitOK || !strings.Contains(out, "fetch serve") {
		t.Fatalf("serve --help: %d %q", code, out)
	}
	cfg, err := loadConfig(envOf(map[string]string{"HOME": "/h", "FETCH_RATE_LIMIT": "10/1m", "GH_TOKEN": "gho_secretvalue123"}))
	if err != nil || cfg.RateLimit != 10 || cfg.RatePer != time.Minute || len(cfg.Secrets) != 1 {
		t.Fatalf("config %+v, %v", cfg, err)
	}
}

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func TestServeAgentAnswersInDiscord(t *testing.T) {
	d := testkit.NewDiscord(t, testToken)
	llm := testkit.NewOpenRouter(t)
	vars := serveVars(d, t.TempDir())
	vars["OPENROUTER_API_KEY"] = testkit.OpenRouterKey
	vars["FETCH_LLM_URL"] = llm.URL()
	llm.Script(testkit.Say("Hello! Nothing is running; tell me what to build."))
	s := startServe(t, d, vars, 1)

	if got := reply(t, d, ownerID, "hey fetch, how are you?").Content; got != "Hello! Nothing is running; tell me what to build." {
		t.Fatalf("agent reply in Discord = %q", got)
	}
	if reqs := llm.Requests(); len(reqs) != 1 || !strings.Contains(reqs[0].System(), "You are Fetch") {
		t.Fatalf("%d LLM requests", len(reqs))
	}
	if got := reply(t, d, ownerID, "/status").Content; !strings.Contains(got, "Today: 120 tokens") {
		t.Fatalf("/status = %q", got)
	}
	if strings.Contains(s.log.String(), testkit.OpenRouterKey) {
		t.Fatal("the OpenRouter key reached the log")
	}
}

// TestServeActionEndsAsTaskInTheKennel: the same path as in fetch chat,
// from a Discord DM: agent → task_create → the real engine and kennel →
// the result in the DM.
func TestServeActionEndsAsTaskInTheKennel(t *testing.T) {
	tv := taskVars(t)
	d := testkit.NewDiscord(t, testToken)
	fake := testkit.NewOpenRouter(t)
	vars := serveVars(d, tv["FETCH_DATA_DIR"])
	vars["FETCH_KENNEL_IMAGE"] = tv["FETCH_KENNEL_IMAGE"]
	vars["OPENROUTER_API_KEY"] = testkit.OpenRouterKey
	vars["FETCH_LLM_URL"] = fake.URL()
	fake.Script(
		testkit.Use(testkit.Call{ID: "c", Name: "task_create", Arguments: `{"goal":"note that it works [file:notes/DONE.md]","workspace":"app"}`}),
		testkit.Say("Started it."),
	)
	startServe(t, d, vars, 1)
	ch := d.DMChannel(ownerID)
	d.DM(ownerID, "add a note that it works to the app workspace")
	deadline := time.After(2 * time.Minute)
	for {
		changed := d.Changed()
		var result string
		for _, m := range d.Messages(ch) {
			// The result, not the status message edited to its end
			// ("✅ Task ID on app (claude) — succeeded"), which comes first.
			if strings.HasPrefix(m.Content, "✅ Task ") && !strings.Contains(m.Content, ") — ") {
				result = m.Content
			}
		}
		if result != "" {
			if !strings.Contains(result, "succeeded on app") || !strings.Contains(result, "notes/DONE.md") {
				t.Fatalf("result message %q", result)
			}
			break
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("no task result in the DM; messages: %q", contents(d.Messages(ch)))
		}
	}
	if got := strings.Join(contents(d.Messages(ch)), "\n"); !strings.Contains(got, "Started it.") {
		t.Fatalf("the agent's reply is missing: %q", got)
	}
}

// TestServeDeleteWaitsForTheApproveButton: the agent's workspace_delete
// becomes an approval with Approve/Deny buttons in the DM; Deny does
// nothing, Approve deletes.
func TestServeDeleteWaitsForTheApproveButton(t *testing.T) {
	d := testkit.NewDiscord(t, testToken)
	fake := testkit.NewOpenRouter(t)
	dir := t.TempDir()
	// The workspaces belong to the kennel's user, who must reach them.
	for p := dir; p != os.TempDir() && p != "/"; p = filepath.Dir(p) {
		os.Chmod(p, 0o755)
	}
	vars := serveVars(d, dir)
	vars["OPENROUTER_API_KEY"] = testkit.OpenRouterKey
	vars["FETCH_LLM_URL"] = fake.URL()
	cfg, err := loadConfig(envOf(vars))
	if err != nil {
		t.Fatal(err)
	}
	reg := newWorkspaces(cfg, discardLogger(), nil)
	if _, err := reg.Create(t.Context(), "demo", ""); err != nil {
		t.Fatal(err)
	}
	exists := func() bool {
		_, err := reg.Path("demo")
		return err == nil
	}
	startServe(t, d, vars, 1)
	ch := d.DMChannel(ownerID)
	for _, button := range []string{"Deny", "Approve"} {
		fake.Script(testkit.Use(testkit.Call{ID: "d", Name: "workspace_delete", Arguments: `{"name":"demo"}`}))
		if button == "Approve" {
			fake.Script(testkit.Say("demo is deleted."))
		}
		ask := reply(t, d, ownerID, "delete the demo workspace")
		if !strings.Contains(ask.Content, `workspace_delete {"name":"demo"}`) || len(ask.Components) != 1 {
			t.Fatalf("approval message %q with %+v; requests:\n%s", ask.Content, ask.Components, fake.Requests()[len(fake.Requests())-1].Raw)
		}
		var custom string
		for _, b := range ask.Components[0].Components {
			if b.Label == button {
				custom = b.CustomID
			}
		}
		n := len(d.Messages(ch))
		d.Click(ownerID, ask.ID, custom)
		want := n + 1
		if button == "Approve" {
			want = n + 3 // "Approved.", the result, the model's confirmation
		}
		got := contents(d.WaitMessages(t, ch, want)[n:])
		switch button {
		case "Deny":
			if !exists() || got[0] != "Denied. Nothing was done." {
				t.Fatalf("after Deny: exists=%v, messages %q", exists(), got)
			}
		case "Approve":
			if exists() || !strings.Contains(strings.Join(got, "\n"), "Deleted workspace demo") {
				t.Fatalf("after Approve: exists=%v, messages %q", exists(), got)
			}
		}
	}
}
