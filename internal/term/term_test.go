package term_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/fetch-dev/fetch/internal/chat"
	"github.com/fetch-dev/fetch/internal/term"
)

// echoer is a Receiver that answers each message at once through the
// terminal, like the conversation runtime would.
type echoer struct {
	t    *term.Terminal
	mu   sync.Mutex
	msgs []chat.Message
	fail error
}

func (e *echoer) Receive(ctx context.Context, m chat.Message) error {
	if e.fail != nil {
		return e.fail
	}
	e.mu.Lock()
	e.msgs = append(e.msgs, m)
	e.mu.Unlock()
	return e.t.Send(ctx, m.ConversationID, chat.Text("echo: "+m.Text+"\n"))
}

func (e *echoer) Idle(context.Context, string) error { return nil }

func TestRunHandsLinesInOrder(t *testing.T) {
	var out bytes.Buffer
	tty := term.New(&out, "42", "")
	rcv := &echoer{t: tty}
	if err := tty.Run(t.Context(), strings.NewReader("one\ntwo\n\nthree"), rcv); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "echo: one\necho: two\necho: \necho: three\n" {
		t.Fatalf("output %q", got)
	}
	for _, m := range rcv.msgs {
		if m.Channel != term.Channel || m.UserID != "42" || m.ConversationID != tty.ConversationID() {
			t.Fatalf("message %+v", m)
		}
	}
}

func TestPromptAndWrongConversation(t *testing.T) {
	var out bytes.Buffer
	tty := term.New(&out, "local", "> ")
	if err := tty.Run(t.Context(), strings.NewReader("hi\n"), &echoer{t: tty}); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "> echo: hi\n> " {
		t.Fatalf("output %q", got)
	}
	if err := tty.Send(t.Context(), "discord:1", chat.Text("x")); err == nil {
		t.Fatal("sent to a conversation that is not the terminal's")
	}
}

func TestRunErrors(t *testing.T) {
	tty := term.New(io.Discard, "local", "")
	boom := errors.New("boom")
	if err := tty.Run(t.Context(), strings.NewReader("hi\n"), &echoer{t: tty, fail: boom}); !errors.Is(err, boom) {
		t.Fatalf("receive error: %v", err)
	}
	long := strings.Repeat("x", 2<<20) + "\n"
	if err := tty.Run(t.Context(), strings.NewReader(long), &echoer{t: tty}); err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Fatalf("over-long line: %v", err)
	}
}
