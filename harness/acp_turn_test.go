package harness

import (
	"errors"
	"strings"
	"testing"
)

// TestACPMessageWaitsForTheTurn: an ACP agent runs one turn at a time, so
// a message of the user's is a session/prompt of its own only once the
// running turn answered (end_turn or an error); until then the dialogue
// says it cannot send yet, and RunTwoWay tries again.
func TestACPMessageWaitsForTheTurn(t *testing.T) {
	d := newACPDialogue(Task{ID: "t1", Workspace: "/w", Goal: "tidy"})
	if _, err := d.UserMessage("too early"); !errors.Is(err, ErrCannotReply) {
		t.Fatalf("a message before the session: %v; want ErrCannotReply", err)
	}
	d.React([]byte(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}`))
	opening := d.React([]byte(`{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s1"}}`))
	if len(opening) != 1 || !strings.Contains(string(opening[0]), `"id":3`) {
		t.Fatalf("the opening prompt = %q; want session/prompt 3", opening)
	}
	if _, err := d.UserMessage("fix it"); !errors.Is(err, ErrCannotReply) {
		t.Fatalf("a message while the turn runs: %v; want ErrCannotReply", err)
	}
	d.React([]byte(`{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}`))
	msg, err := d.UserMessage("fix it")
	if err != nil || !strings.Contains(string(msg), `"id":4`) || !strings.Contains(string(msg), "fix it") {
		t.Fatalf("the message after the turn = %q, %v; want session/prompt 4", msg, err)
	}
	if _, err := d.UserMessage("and this"); !errors.Is(err, ErrCannotReply) {
		t.Fatalf("a second message while the message's turn runs: %v; want ErrCannotReply", err)
	}
	d.React([]byte(`{"jsonrpc":"2.0","id":4,"error":{"code":-32603,"message":"Internal error"}}`))
	if _, err := d.UserMessage("and this"); err != nil {
		t.Fatalf("a message after a turn that failed: %v", err)
	}
}
