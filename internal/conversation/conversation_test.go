package conversation_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/internal/chat"
	"github.com/fetch-dev/fetch/internal/conversation"
	"github.com/fetch-dev/fetch/internal/store"
	"github.com/fetch-dev/fetch/internal/task"
	"github.com/fetch-dev/fetch/internal/testkit"
	"github.com/fetch-dev/fetch/modes"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		os.Exit(crashHelper())
	}
	goleak.VerifyTestMain(m)
}

const (
	owner    = "100"
	stranger = "999"
	conv     = "dm:100"
)

func roleOf(_, userID string) chat.Role {
	if userID == owner {
		return chat.Owner
	}
	return ""
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

type env struct {
	db  *store.DB
	rec *testkit.Recorder
	mgr *conversation.Manager
}

func openDB(t testing.TB, path string) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// start opens a Manager on the database at path; cfg's zero fields get
// test defaults.
func start(t testing.TB, path string, cfg conversation.Config) *env {
	t.Helper()
	return newEnvOn(t, openDB(t, path), cfg)
}

// newEnvOn opens a Manager on db; cfg's zero fields get test defaults.
func newEnvOn(t testing.TB, db *store.DB, cfg conversation.Config) *env {
	t.Helper()
	e := &env{db: db, rec: testkit.NewRecorder()}
	cfg.Store = e.db
	if cfg.Senders == nil {
		cfg.Senders = map[string]chat.Sender{"test": e.rec}
	}
	if cfg.RoleOf == nil {
		cfg.RoleOf = roleOf
	}
	if cfg.Logger == nil {
		cfg.Logger = quiet()
	}
	if cfg.NoAgent == "" {
		cfg.NoAgent = "no agent configured"
	}
	e.mgr = conversation.New(cfg)
	if err := e.mgr.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.mgr.Close(context.Background()) })
	return e
}

func newEnv(t testing.TB, cfg conversation.Config) *env {
	return start(t, filepath.Join(t.TempDir(), "fetch.db"), cfg)
}

func (e *env) say(t testing.TB, text string) {
	t.Helper()
	e.sayID(t, "", text)
}

func (e *env) sayID(t testing.TB, id, text string) {
	t.Helper()
	err := e.mgr.Receive(t.Context(), chat.Message{Channel: "test", ConversationID: conv, ExternalID: id, UserID: owner, Text: text})
	if err != nil {
		t.Fatal(err)
	}
}

func (e *env) idle(t testing.TB) {
	t.Helper()
	if err := e.mgr.Idle(t.Context(), conv); err != nil {
		t.Fatal(err)
	}
}

// echo is an agent that answers "done: TEXT" and records what it saw.
type echo struct {
	mu    sync.Mutex
	turns []conversation.Turn
}

func (a *echo) Respond(_ context.Context, t conversation.Turn) ([]chat.Reply, error) {
	a.mu.Lock()
	a.turns = append(a.turns, t)
	a.mu.Unlock()
	return []chat.Reply{chat.Text("done: " + t.Text)}, nil
}

func TestStatusOnFreshConversation(t *testing.T) {
	e := newEnv(t, conversation.Config{})
	e.say(t, "/status")
	got := e.rec.WaitFor(t, 1)
	if !strings.HasPrefix(got[0].Reply.Text, "🟢 ALERT since ") || got[0].ConversationID != conv {
		t.Fatalf("reply = %+v", got[0])
	}
}

func TestInOrder(t *testing.T) {
	agent := &echo{}
	e := newEnv(t, conversation.Config{Agent: agent})
	var want []string
	for i := range 30 {
		text := fmt.Sprintf("add test number %d to parser_test.go", i)
		if i%3 == 0 {
			text = "/whoami"
			want = append(want, "You are 100 (owner) on test.")
		} else {
			want = append(want, "done: "+text)
		}
		e.say(t, text)
	}
	got := e.rec.WaitFor(t, len(want))
	for i := range want {
		if got[i].Reply.Text != want[i] {
			t.Fatalf("reply %d = %q; want %q (replies out of order?)", i, got[i].Reply.Text, want[i])
		}
	}
	e.idle(t) // the last reply is marked sent after it was received
	if unsent, _ := e.db.Unsent(t.Context(), ""); len(unsent) != 0 {
		t.Fatalf("%d replies left unsent", len(unsent))
	}
}

// blocker is an agent whose turns block until cancelled.
type blocker struct {
	started chan struct{}
	cause   chan error
}

func (b *blocker) Respond(ctx context.Context, t conversation.Turn) ([]chat.Reply, error) {
	close(b.started)
	<-ctx.Done()
	b.cause <- context.Cause(ctx)
	return []chat.Reply{chat.Text("finished anyway")}, ctx.Err()
}

func TestStopBypassesBusyTurn(t *testing.T) {
	agent := &blocker{started: make(chan struct{}), cause: make(chan error, 1)}
	e := newEnv(t, conversation.Config{Agent: agent})
	e.say(t, "refactor internal/store/db.go to use prepared statements")
	<-agent.started
	e.say(t, "/status") // queued behind the busy turn
	e.say(t, "stop")
	got := e.rec.WaitFor(t, 1)
	if got[0].Reply.Text != "Stopped." {
		t.Fatalf("first reply = %q; want the stop's", got[0].Reply.Text)
	}
	if cause := <-agent.cause; cause != conversation.ErrStopped {
		t.Fatalf("turn cancelled with %v; want ErrStopped", cause)
	}
	e.idle(t)
	texts := e.rec.Texts()
	if len(texts) != 2 || !strings.Contains(texts[1], "ALERT") {
		t.Fatalf("replies = %q; want the stop, then the queued /status, and nothing from the stopped turn", texts)
	}
	if un, _ := e.db.Unhandled(t.Context()); len(un) != 0 {
		t.Fatalf("unhandled after stop: %+v", un)
	}
	log, _ := e.db.AuditLog(t.Context(), conv)
	if len(log) == 0 || log[0].Action != "stop" {
		t.Fatalf("audit = %+v", log)
	}
}

func TestBadInput(t *testing.T) {
	e := newEnv(t, conversation.Config{})
	e.say(t, "")
	e.say(t, "   \n\t ")
	e.say(t, "\x00\x01\x1b")
	if err := e.mgr.Receive(t.Context(), chat.Message{Channel: "test", ConversationID: "dm:999", UserID: stranger, Text: "/status"}); err != nil {
		t.Fatal(err)
	}
	e.say(t, "/who\x00ami\x1b")
	e.idle(t)
	long := strings.Repeat("é", chat.MaxMessageLen+1)
	e.say(t, long)
	got := e.rec.WaitFor(t, 2)
	if got[0].Reply.Text != "You are 100 (owner) on test." {
		t.Fatalf("control characters not stripped: %q", got[0].Reply.Text)
	}
	if !strings.Contains(got[1].Reply.Text, "10001 characters") || !strings.Contains(got[1].Reply.Text, "limit is 10000") {
		t.Fatalf("long message reply = %q", got[1].Reply.Text)
	}
	if len(e.rec.Sent()) != 2 {
		t.Fatalf("replies = %q; want none for blank messages or strangers", e.rec.Texts())
	}
	if _, err := e.db.Conversation(t.Context(), "dm:999"); err == nil {
		t.Fatal("a stranger's message created a conversation")
	}
	hist, _ := e.db.History(t.Context(), conv, 0)
	for _, m := range hist {
		if strings.Contains(m.Body, "éééé") {
			t.Fatal("over-long message stored as history")
		}
	}
}

func TestDuplicateHandledOnce(t *testing.T) {
	agent := &echo{}
	e := newEnv(t, conversation.Config{Agent: agent})
	e.sayID(t, "m-1", "add a README to the demo workspace")
	e.sayID(t, "m-1", "add a README to the demo workspace")
	e.sayID(t, "m-2", "/whoami")
	e.idle(t)
	if texts := e.rec.Texts(); len(texts) != 2 {
		t.Fatalf("replies = %q; want 2", texts)
	}
}

func TestClarifyAndNoAgent(t *testing.T) {
	e := newEnv(t, conversation.Config{})
	e.say(t, "fix it")
	e.say(t, "add a health check endpoint to the API")
	got := e.rec.WaitFor(t, 2)
	if !strings.Contains(got[0].Reply.Text, "not sure what to do") {
		t.Fatalf("vague request reply = %q", got[0].Reply.Text)
	}
	if got[1].Reply.Text != "no agent configured" {
		t.Fatalf("action without agent = %q", got[1].Reply.Text)
	}
}

func TestAgentSeesIntentAndCanChangeMode(t *testing.T) {
	agent := &echo{}
	e := newEnv(t, conversation.Config{Agent: agent})
	e.say(t, "can you make the button blue?")
	e.idle(t)
	if len(agent.turns) != 1 || agent.turns[0].Intent.Kind != "action" || agent.turns[0].Role != chat.Owner {
		t.Fatalf("turn = %+v", agent.turns)
	}
}

// guard puts the conversation in GUARDING with an open approval, as the
// agent does before a dangerous action.
func guard(t *testing.T, e *env, kind store.PromptKind, body string) {
	t.Helper()
	ctx := t.Context()
	event := modes.Guarded
	if kind == store.Question {
		event = modes.Asked
	}
	seedMode(t, e, event)
	if _, err := e.db.AddPrompt(ctx, store.Prompt{ConversationID: conv, Kind: kind, Body: body}); err != nil {
		t.Fatal(err)
	}
	e.say(t, "/status") // starts the conversation in that mode
	e.rec.WaitFor(t, 1)
	e.idle(t)
}

// seedMode puts a conversation that has not started in this process
// into the mode event leads to, as the conversation would (the agent asks
// for approval, a task asks a question).
func seedMode(t *testing.T, e *env, events ...modes.Event) {
	t.Helper()
	ctx := t.Context()
	if _, err := e.db.EnsureConversation(ctx, conv, "test", owner); err != nil {
		t.Fatal(err)
	}
	m, err := modes.Load(ctx, e.db, conv, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	for _, event := range events {
		if err := m.Fire(ctx, event, "test"); err != nil {
			t.Fatal(err)
		}
	}
}

type resolver struct {
	mu      sync.Mutex
	answers []string
}

func (r *resolver) Resolved(_ context.Context, p store.Prompt, answer string, _ chat.Role) ([]chat.Reply, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.answers = append(r.answers, answer)
	return []chat.Reply{chat.Text("resolved " + p.Body + " with " + answer)}, nil
}

func TestApprovals(t *testing.T) {
	for _, tc := range []struct {
		answer, reply string
		mode          string
	}{
		{"yes", "Approved.", "ALERT"},
		{"no", "Denied. Nothing was done.", "ALERT"},
	} {
		t.Run(tc.answer, func(t *testing.T) {
			res := &resolver{}
			e := newEnv(t, conversation.Config{Resolver: res})
			guard(t, e, store.Approval, "workspace_delete demo")
			e.say(t, "what's up") // not an answer: reminded
			e.say(t, tc.answer)
			e.say(t, tc.answer) // nothing pending any more
			got := e.rec.WaitFor(t, 5)
			texts := []string{got[1].Reply.Text, got[2].Reply.Text, got[3].Reply.Text, got[4].Reply.Text}
			if !strings.Contains(texts[0], "waiting for your approval of: workspace_delete demo") {
				t.Fatalf("reminder = %q", texts[0])
			}
			if acts := got[1].Reply.Actions; len(acts) != 2 || acts[0].Send != "yes" || acts[1].Send != "no" {
				t.Fatalf("reminder buttons = %+v", acts)
			}
			if texts[1] != tc.reply || texts[2] != "resolved workspace_delete demo with "+tc.answer {
				t.Fatalf("answer replies = %q", texts[1:3])
			}
			if texts[3] != "Nothing is waiting for a yes or no right now." {
				t.Fatalf("second answer = %q", texts[3])
			}
			if len(res.answers) != 1 {
				t.Fatalf("resolver called %d times", len(res.answers))
			}
			st, _ := e.db.Mode(t.Context(), conv)
			if st.Mode != tc.mode {
				t.Fatalf("mode = %s; want %s", st.Mode, tc.mode)
			}
		})
	}
}

func TestQuestionAnsweredByFreeText(t *testing.T) {
	res := &resolver{}
	e := newEnv(t, conversation.Config{Resolver: res})
	guard(t, e, store.Question, "Which database?")
	e.say(t, "Postgres, please")
	got := e.rec.WaitFor(t, 3)
	if got[1].Reply.Text != "Thanks, passing that on." || got[2].Reply.Text != "resolved Which database? with Postgres, please" {
		t.Fatalf("replies = %q", e.rec.Texts())
	}
	// Nothing runs once the answer was handled: the conversation settles.
	st, _ := e.db.Mode(t.Context(), conv)
	if st.Mode != "ALERT" {
		t.Fatalf("mode after answer = %s; want ALERT", st.Mode)
	}
	hist, _ := e.db.ModeHistory(t.Context(), conv)
	var events []string
	for _, h := range hist[len(hist)-2:] {
		events = append(events, h.Event)
	}
	if strings.Join(events, ",") != "answered,settled" {
		t.Fatalf("last mode events = %v", events)
	}
}

// running is a task engine with one task that keeps running.
type running struct{}

func (running) List(_ context.Context, f task.Filter) ([]task.Task, error) {
	for _, s := range f.States {
		if s == task.Running {
			return []task.Task{{ID: "t-1", Goal: "g", Harness: "claude", Workspace: "api", State: task.Running}}, nil
		}
	}
	return nil, nil
}
func (running) RequestCancel(context.Context, string) (<-chan struct{}, error) { return nil, nil }
func (running) Respond(context.Context, string, string) error                  { return nil }
func (running) RequestShip(context.Context, string) error                      { return nil }
func (running) RequestPRAction(context.Context, string, task.PRAction) error   { return nil }

func TestQuestionAnsweredWhileATaskRunsStaysWorking(t *testing.T) {
	e := newEnv(t, conversation.Config{Resolver: &resolver{}, Tasks: running{}})
	// A task started, then the agent asked: WORKING → WAITING.
	seedMode(t, e, modes.TaskStarted, modes.Asked)
	if _, err := e.db.AddPrompt(t.Context(), store.Prompt{ConversationID: conv, Kind: store.Question, Body: "Which port?"}); err != nil {
		t.Fatal(err)
	}
	e.say(t, "8080")
	e.idle(t)
	if st, _ := e.db.Mode(t.Context(), conv); st.Mode != "WORKING" {
		t.Fatalf("mode after answer with a task running = %s; want WORKING", st.Mode)
	}
}

func TestRestingAfterIdleAndWakeOnMessage(t *testing.T) {
	e := newEnv(t, conversation.Config{IdleAfter: 50 * time.Millisecond})
	e.say(t, "/whoami")
	waitMode(t, e.db, "RESTING")
	e.say(t, "/status")
	got := e.rec.WaitFor(t, 2)
	if !strings.HasPrefix(got[1].Reply.Text, "🟢 ALERT") {
		t.Fatalf("status after waking = %q", got[1].Reply.Text)
	}
	hist, _ := e.db.ModeHistory(t.Context(), conv)
	var events []string
	for _, h := range hist {
		events = append(events, h.Event)
	}
	if strings.Join(events[:3], ",") != "init,idle_timeout,woke" {
		t.Fatalf("mode events = %v", events)
	}
}

func waitMode(t *testing.T, db *store.DB, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if st, err := db.Mode(t.Context(), conv); err == nil && st.Mode == want {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("mode never became %s", want)
}

func TestUnsentRepliesGoOutOnceAfterRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fetch.db")
	e := start(t, path, conversation.Config{})
	e.rec.SetFailing(true)
	e.say(t, "/whoami")
	e.idle(t)
	e.mgr.Close(t.Context())
	e.db.Close()

	e2 := start(t, path, conversation.Config{})
	got := e2.rec.WaitFor(t, 1)
	if got[0].Reply.Text != "You are 100 (owner) on test." {
		t.Fatalf("redelivered %q", got[0].Reply.Text)
	}
	e2.mgr.Close(t.Context())
	e2.db.Close()

	e3 := start(t, path, conversation.Config{})
	e3.say(t, "/commands")
	e3.idle(t)
	if texts := e3.rec.Texts(); len(texts) != 1 || !strings.HasPrefix(texts[0], "Commands:") {
		t.Fatalf("third start sent %q; want only the new reply", texts)
	}
}

func TestRestartReconcilesStaleMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fetch.db")
	e := start(t, path, conversation.Config{})
	e.say(t, "/status")
	e.rec.WaitFor(t, 1)
	e.idle(t)
	e.mgr.Close(t.Context())
	// What a process that crashed in WORKING left in the store.
	seedMode(t, e, modes.TaskStarted)
	e.db.Close()

	// Nothing runs in the new process: WORKING is stale.
	e2 := start(t, path, conversation.Config{})
	waitMode(t, e2.db, "ALERT")
	hist, _ := e2.db.ModeHistory(t.Context(), conv)
	if last := hist[len(hist)-1]; last.Event != "reconciled" || last.From != "WORKING" {
		t.Fatalf("last transition = %+v", last)
	}
}

func TestNotifyKeepsButtonsAndKeyAcrossRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fetch.db")
	e := start(t, path, conversation.Config{})
	e.say(t, "/whoami")
	e.rec.WaitFor(t, 1)
	e.rec.SetFailing(true)
	r := chat.Reply{Text: "task t-1 running", Key: "task:t-1", Actions: []chat.Action{{Label: "Stop", Send: "/stop", Style: chat.Danger}}, Files: []chat.File{{Name: "diff.patch", Data: []byte("+x\n")}}}
	if err := e.mgr.Notify(t.Context(), conv, r); err != nil {
		t.Fatal(err)
	}
	e.mgr.Close(t.Context())
	e.db.Close()

	e2 := start(t, path, conversation.Config{})
	got := e2.rec.WaitFor(t, 1)[0].Reply
	if got.ID == 0 {
		t.Fatal("redelivered reply has no outbox id")
	}
	got.ID = 0
	if diff := cmp.Diff(r, got); diff != "" {
		t.Fatalf("redelivered reply (-want +got):\n%s", diff)
	}
}

// TestNotifyOnce: a notification handed over again under the same key (a
// reminder repeated after a crash, or by a second process) goes out once.
func TestNotifyOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fetch.db")
	e := start(t, path, conversation.Config{})
	e.say(t, "/whoami")
	e.rec.WaitFor(t, 1)
	for range 2 {
		if err := e.mgr.NotifyOnce(t.Context(), conv, "remind:7:1700000000", chat.Text("⏰ Reminder: stretch")); err != nil {
			t.Fatal(err)
		}
	}
	e.mgr.Close(t.Context())
	e.db.Close()
	e2 := start(t, path, conversation.Config{})
	if err := e2.mgr.NotifyOnce(t.Context(), conv, "remind:7:1700000000", chat.Text("⏰ Reminder: stretch")); err != nil {
		t.Fatal(err)
	}
	if err := e2.mgr.NotifyOnce(t.Context(), conv, "remind:7:1700000060", chat.Text("⏰ Reminder: stretch again")); err != nil {
		t.Fatal(err)
	}
	e2.idle(t)
	texts := append(e.rec.Texts(), e2.rec.Texts()...)
	if len(texts) != 3 || texts[1] != "⏰ Reminder: stretch" || texts[2] != "⏰ Reminder: stretch again" {
		t.Fatalf("sent %q; want each key once", texts)
	}
}

// TestPromptsExpireAtRestart: an approval and a question left open by a
// process that stopped expire at the next start; the owner is told once,
// in one message; GUARDING is not restored; a "yes" afterwards approves
// nothing.
func TestPromptsExpireAtRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fetch.db")
	r := &resolver{}
	e := start(t, path, conversation.Config{Resolver: r})
	seedMode(t, e, modes.Guarded)
	if _, err := e.db.AddPrompt(t.Context(), store.Prompt{ConversationID: conv, Kind: store.Approval, Body: "delete workspace demo"}); err != nil {
		t.Fatal(err)
	}
	e.mgr.Close(t.Context())
	e.db.Close()

	for run := 2; run <= 3; run++ {
		e2 := start(t, path, conversation.Config{Resolver: r})
		e2.say(t, "yes")
		e2.idle(t)
		texts := e2.rec.Texts()
		if run == 2 && (len(texts) != 2 || !strings.Contains(texts[0], "the approval of: delete workspace demo — nothing was done")) {
			t.Fatalf("run %d sent %q; want the expiry notice, then the answer to yes", run, texts)
		}
		if run == 3 && (len(texts) != 1 || strings.Contains(texts[0], "expired")) {
			t.Fatalf("run %d sent %q; want no second notice", run, texts)
		}
		if st, _ := e2.db.Mode(t.Context(), conv); st.Mode != "ALERT" {
			t.Fatalf("run %d: mode = %s; want ALERT", run, st.Mode)
		}
		e2.mgr.Close(t.Context())
		e2.db.Close()
	}
	if len(r.answers) != 0 {
		t.Fatalf("a yes after the restart resolved %v", r.answers)
	}
}

// TestReplyWhoseSentMarkFailedIsNotSentAgain: the terminal printed a
// reply but recording that failed (a full disk, here a trigger); the next
// start does not print it again.
func TestReplyWhoseSentMarkFailedIsNotSentAgain(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fetch.db")
	e := start(t, path, conversation.Config{})
	if _, err := e.db.SQL().ExecContext(t.Context(),
		"CREATE TRIGGER full_disk BEFORE UPDATE OF sent_at ON messages BEGIN SELECT RAISE(FAIL, 'database or disk is full'); END"); err != nil {
		t.Fatal(err)
	}
	e.say(t, "/whoami")
	e.idle(t)
	if texts := e.rec.Texts(); len(texts) != 1 {
		t.Fatalf("sent %q", texts)
	}
	e.mgr.Close(t.Context())
	if _, err := e.db.SQL().ExecContext(t.Context(), "DROP TRIGGER full_disk"); err != nil {
		t.Fatal(err)
	}
	e.db.Close()

	e2 := start(t, path, conversation.Config{})
	e2.say(t, "/commands")
	e2.idle(t)
	if texts := e2.rec.Texts(); len(texts) != 1 || !strings.HasPrefix(texts[0], "Commands:") {
		t.Fatalf("second start sent %q; want only the new reply", texts)
	}
	if un, _ := e2.db.Unsent(t.Context(), "test"); len(un) != 0 {
		t.Fatalf("still unsent: %+v", un)
	}
}
