package agent_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/internal/agent"
	"github.com/fetch-dev/fetch/internal/chat"
	"github.com/fetch-dev/fetch/internal/conversation"
	"github.com/fetch-dev/fetch/internal/testkit"
)

// viaConversation adapts the agent to conversation.Agent, as cmd/fetch
// does.
type viaConversation struct{ a *agent.Agent }

func (v viaConversation) Respond(ctx context.Context, t conversation.Turn) ([]chat.Reply, error) {
	return v.a.Respond(ctx, agent.Turn{ConversationID: t.ConversationID, UserID: t.UserID, Role: t.Role, Text: t.Text, Intent: t.Intent, Notify: t.Notify})
}

// chatRig runs the agent behind the real conversation runtime.
type chatRig struct {
	*rig
	rec *testkit.Recorder
	mgr *conversation.Manager
}

func newChatRig(t *testing.T) *chatRig {
	c := &chatRig{}
	c.rig = newRig(t, nil)
	c.start()
	return c
}

// start opens a conversation manager, as a (re)started Fetch does.
func (c *chatRig) start() {
	t, r := c.t, c.rig
	rec := testkit.NewRecorder()
	mgr := conversation.New(conversation.Config{
		Store: r.db, Senders: map[string]chat.Sender{"term": rec}, Agent: viaConversation{r.agent}, Resolver: r.agent, Spend: r.agent.Spend,
		RoleOf: func(_, user string) chat.Role {
			if user == "owner" {
				return chat.Owner
			}
			return ""
		},
		Logger: slog.New(slog.DiscardHandler),
	})
	if err := mgr.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		mgr.Close(ctx)
	})
	c.rec, c.mgr = rec, mgr
}

// send delivers a message and returns the replies it produced.
func (c *chatRig) send(text string) []chat.Reply {
	c.t.Helper()
	before := len(c.rec.Sent())
	if err := c.mgr.Receive(c.t.Context(), chat.Message{Channel: "term", ConversationID: conv, UserID: "owner", Text: text}); err != nil {
		c.t.Fatal(err)
	}
	if err := c.mgr.Idle(c.t.Context(), conv); err != nil {
		c.t.Fatal(err)
	}
	var out []chat.Reply
	for _, s := range c.rec.Sent()[before:] {
		out = append(out, s.Reply)
	}
	return out
}

func (c *chatRig) mode() string {
	c.t.Helper()
	m, err := c.db.Mode(c.t.Context(), conv)
	if err != nil {
		c.t.Fatal(err)
	}
	return m.Mode
}

func TestDeleteThroughGuardingInTheConversation(t *testing.T) {
	c := newChatRig(t)
	c.createWorkspace("api")
	c.selectWorkspace("api")

	if got := texts(c.send("yes")); !strings.Contains(got, "Nothing is waiting") {
		t.Fatalf("yes with nothing pending: %q", got)
	}

	c.llm.Script(testkit.Use(testkit.Call{ID: "d1", Name: "workspace_delete", Arguments: `{"name":"demo"}`}))
	replies := c.send("delete the workspace demo")
	if len(replies) != 1 || !strings.Contains(replies[0].Text, `workspace_delete {"name":"demo"}`) || len(replies[0].Actions) != 2 || replies[0].Actions[0].Send != "yes" {
		t.Fatalf("approval request %+v", replies)
	}
	if c.mode() != "GUARDING" {
		t.Fatalf("mode %s; want GUARDING", c.mode())
	}
	if got := texts(c.send("no")); !strings.Contains(got, "Denied") {
		t.Fatalf("no: %q", got)
	}
	if !c.hasWorkspace("demo") || c.mode() != "ALERT" {
		t.Fatalf("after no: demo exists=%v mode %s", c.hasWorkspace("demo"), c.mode())
	}
	if got := texts(c.send("yes")); !strings.Contains(got, "Nothing is waiting") {
		t.Fatalf("yes after the denial: %q", got)
	}
	if !c.hasWorkspace("demo") {
		t.Fatal("a late yes deleted the workspace")
	}

	c.llm.Script(
		testkit.Use(testkit.Call{ID: "d2", Name: "workspace_delete", Arguments: `{"name":"demo"}`}),
		testkit.Say("demo is gone."),
	)
	c.send("delete the workspace demo")
	got := texts(c.send("yes"))
	if c.hasWorkspace("demo") || !strings.Contains(got, "Deleted workspace demo") || !strings.Contains(got, "demo is gone.") {
		t.Fatalf("after yes: demo exists=%v replies %q", c.hasWorkspace("demo"), got)
	}
	if c.mode() != "ALERT" {
		t.Fatalf("mode after the approved delete: %s", c.mode())
	}
}

func TestAutonomyAndSpendInTheConversation(t *testing.T) {
	c := newChatRig(t)
	if got := texts(c.send("/autonomy")); !strings.Contains(got, "Autonomy: cautious") {
		t.Fatalf("/autonomy: %q", got)
	}
	if got := texts(c.send("/autonomy reckless")); !strings.Contains(got, "not a level") {
		t.Fatalf("bad level: %q", got)
	}
	c.send("/autonomy autonomous")
	if cv, _ := c.db.Conversation(t.Context(), conv); cv.Autonomy != "autonomous" {
		t.Fatalf("autonomy stored %q", cv.Autonomy)
	}
	c.llm.Script(testkit.Say("Hi! All quiet."))
	c.send("hey fetch, how are you?")
	if got := texts(c.send("/status")); !strings.Contains(got, "Today: 120 tokens") {
		t.Fatalf("/status lacks today's spend: %q", got)
	}
	// /clear keeps the level.
	c.send("/clear")
	if got := texts(c.send("/autonomy")); !strings.Contains(got, "autonomous") {
		t.Fatalf("after /clear: %q", got)
	}
}

func TestQuestionAnsweredThroughTheConversation(t *testing.T) {
	c := newChatRig(t)
	c.llm.Script(testkit.Use(testkit.Call{ID: "q", Name: "ask_user", Arguments: `{"question":"Which workspace should I use, demo or api?"}`}))
	if got := texts(c.send("set up the project please")); got != "Which workspace should I use, demo or api?" {
		t.Fatalf("question: %q", got)
	}
	if c.mode() != "WAITING" {
		t.Fatalf("mode %s; want WAITING", c.mode())
	}
	c.llm.Script(testkit.Say("Using demo."))
	got := texts(c.send("demo"))
	if !strings.Contains(got, "Using demo.") {
		t.Fatalf("answer: %q", got)
	}
	if err := c.mgr.Idle(t.Context(), conv); err != nil {
		t.Fatal(err)
	}
	if c.mode() != "ALERT" {
		t.Fatalf("mode after the answer with nothing running: %s", c.mode())
	}
}

// TestApprovalExpiresAtRestart: an approval pending when Fetch stopped
// expires at the next start (the owner is told), GUARDING is not restored,
// and a "yes" afterwards deletes nothing.
func TestApprovalExpiresAtRestart(t *testing.T) {
	c := newChatRig(t)
	c.llm.Script(testkit.Use(testkit.Call{ID: "d", Name: "workspace_delete", Arguments: `{"name":"demo"}`}))
	c.send("delete the workspace demo")
	if c.mode() != "GUARDING" {
		t.Fatalf("mode %s", c.mode())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.mgr.Close(ctx); err != nil {
		t.Fatal(err)
	}
	c.start()
	if got := texts(c.send("/status")); strings.Contains(got, "GUARDING") {
		t.Fatalf("after restart /status: %q", got)
	}
	var notice string
	for _, s := range c.rec.Sent() {
		if strings.Contains(s.Reply.Text, "nothing was done") {
			notice = s.Reply.Text
		}
	}
	if !strings.Contains(notice, "workspace_delete") {
		t.Fatalf("no expiry notice naming the action; sent %q", c.rec.Texts())
	}
	c.llm.Script(testkit.Say("There is nothing to approve."))
	c.send("yes")
	if !c.hasWorkspace("demo") {
		t.Fatal("a yes after the restart deleted the workspace")
	}
}
