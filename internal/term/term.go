// Package term is the terminal channel behind `fetch chat`: it reads lines
// from an io.Reader, hands each to the conversation runtime as a message
// from the owner, and writes replies to an io.Writer.
//
// With a script piped in, replies come out in order and the output is
// deterministic: each line is handled before the next is read. Replies that
// arrive on their own (task progress) are written as they come.
//
// term imports chat only; the runtime reaches it through the Receiver
// interface declared here.
package term

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/fetch-dev/fetch/internal/chat"
)

// Channel is the name of the terminal channel.
const Channel = "term"

// maxLine bounds one input line; longer lines are still read whole up to
// this size so that the runtime can refuse them with a clear reply.
const maxLine = 1 << 20

// Receiver is what the terminal needs of the conversation runtime.
type Receiver interface {
	Receive(ctx context.Context, msg chat.Message) error
	Idle(ctx context.Context, conversationID string) error
}

// Terminal is one terminal session.
type Terminal struct {
	out    io.Writer
	userID string
	convID string
	// Prompt is printed before each line is read (interactive use).
	prompt string

	mu sync.Mutex // serialises writes to out
}

// New returns a terminal that writes replies to out. userID is the local
// user (the owner); prompt is shown before each input line ("" for none).
func New(out io.Writer, userID, prompt string) *Terminal {
	return &Terminal{out: out, userID: userID, convID: Channel + ":" + userID, prompt: prompt}
}

// ConversationID is the terminal's conversation.
func (t *Terminal) ConversationID() string { return t.convID }

// Send writes a reply. It implements chat.Sender.
func (t *Terminal) Send(_ context.Context, conversationID string, r chat.Reply) error {
	if conversationID != t.convID {
		return fmt.Errorf("term: no conversation %s here", conversationID)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	_, err := fmt.Fprintln(t.out, strings.TrimRight(r.Text, "\n"))
	if err != nil {
		return fmt.Errorf("term: send: %w", err)
	}
	return nil
}

// Run reads lines from in until EOF or ctx ends, handing each to rcv and
// waiting until it is handled before reading the next.
//
// Reading happens on a goroutine of its own so that Run returns when ctx
// ends even while a read blocks (a terminal waiting for input); that
// goroutine ends at the next line, EOF, or when in is closed.
func (t *Terminal) Run(ctx context.Context, in io.Reader, rcv Receiver) error {
	lines := make(chan string)
	next := make(chan struct{})
	errc := make(chan error, 1)
	done := make(chan struct{})
	defer close(done)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 0, 64*1024), maxLine)
		for {
			select {
			case <-next:
			case <-done:
				return
			}
			if !sc.Scan() {
				errc <- sc.Err()
				return
			}
			select {
			case lines <- sc.Text():
			case <-done:
				return
			}
		}
	}()
	for n := 1; ; n++ {
		t.showPrompt()
		select {
		case next <- struct{}{}:
		case <-ctx.Done():
			return nil
		}
		var line string
		var ok bool
		select {
		case line, ok = <-lines:
		case <-ctx.Done():
			return nil
		}
		if !ok {
			err := <-errc
			if errors.Is(err, bufio.ErrTooLong) {
				return fmt.Errorf("term: line %d is longer than %d bytes", n, maxLine)
			}
			if err != nil {
				return fmt.Errorf("term: read: %w", err)
			}
			return nil
		}
		msg := chat.Message{Channel: Channel, ConversationID: t.convID, UserID: t.userID, Text: line}
		if err := rcv.Receive(ctx, msg); err != nil {
			return fmt.Errorf("term: line %d: %w", n, err)
		}
		if err := rcv.Idle(ctx, t.convID); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("term: line %d: %w", n, err)
		}
	}
}

func (t *Terminal) showPrompt() {
	if t.prompt == "" {
		return
	}
	t.mu.Lock()
	fmt.Fprint(t.out, t.prompt)
	t.mu.Unlock()
}
