// Package term is the terminal channel behind `fetch chat`: it reads lines
// from an io.Reader, hands each to the conversation runtime as a message
// from the owner, and writes replies to an io.Writer.
//
// Input is read in one of two ways. A script piped in is handled line by
// line: each line is handled (Receiver.Idle) before the next is read, so
// replies come out in order and the output is deterministic; a stop in a
// script stops what is running at that point of the script. Typed input (a
// terminal device, or SetInteractive(true)) is read all the time and
// handed over as it comes, as a chat channel does: the runtime queues
// messages while a turn runs, and a stop typed meanwhile reaches it at
// once, ahead of lines still waiting to be handed over, so it can cancel a
// turn whose LLM call hangs. Replies that arrive on their own (task
// progress) are written as they come.
//
// A line may be arbitrarily long; memory is not. The terminal keeps the
// text of a line up to what the runtime could accept (chat.MaxMessageLen
// characters, and one more) and only counts the rest: the runtime refuses a
// kept line over the limit itself, with the refusal stored; a line too long
// to keep is refused here, with the same words and its true length, and
// the session goes on. Text is cleaned as chat.Clean cleans it (control
// characters and invalid bytes dropped) while it is read.
//
// Replies are written with control sequences stripped
// (redact.StripControl): a reply may quote a goal or a CLI's output. With
// a prompt, a reply never follows it on its line, where it would read as
// typed input: it takes the prompt's place (the line is erased) and the
// prompt is drawn again below it. A link a reply carries (chat.Action's
// URL, the task page's) is shown under it, once per link.
//
// term imports chat and redact only; the runtime reaches it through the Receiver
// interface declared here.
package term

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/fetch-dev/fetch/internal/chat"
	"github.com/fetch-dev/fetch/internal/redact"
)

// Channel is the name of the terminal channel.
const Channel = "term"

// maxKept bounds the text kept of one input line: room for the longest
// message the runtime accepts (chat.MaxMessageLen characters of up to
// utf8.UTFMax bytes) and one character more. A line whose text does not
// fit is certainly over the limit.
const maxKept = utf8.UTFMax * (chat.MaxMessageLen + 1)

// queueSize bounds the typed lines waiting to be handed to the runtime
// while an earlier one is still being handed over (Receive waits while the
// conversation's mailbox is full). A line typed while it is full is not
// sent, and the owner is told; a stop never waits in it.
const queueSize = 64

// Receiver is what the terminal needs of the conversation runtime.
type Receiver interface {
	Receive(ctx context.Context, msg chat.Message) error
	Idle(ctx context.Context, conversationID string) error
}

// Stopper is implemented by a Receiver that tells a stop from other
// messages (as the runtime's instincts do). Typed input hands a stop over
// at once, ahead of lines still waiting; without a Stopper only "/stop" is
// recognised as one.
type Stopper interface {
	IsStop(text string) bool
}

// inputMode is how Run reads its input.
type inputMode string

const (
	// detect: typed when the input is a terminal device, else scripted.
	detect inputMode = ""
	typed  inputMode = "typed"
	script inputMode = "script"
)

// Terminal is one terminal session.
type Terminal struct {
	out    io.Writer
	userID string
	convID string
	// Prompt is printed before each line is read (interactive use).
	prompt string
	mode   inputMode

	mu sync.Mutex // serialises writes to out, guards open, prompted and linked
	// open are the keys of messages whose actions are open and that
	// offer shortcuts (chat.Reply.Shortcuts), oldest first, with them.
	open []openKey
	// prompted: the prompt is the last thing on the screen, on a line of
	// its own that nothing was typed on yet (as far as the terminal
	// knows). A reply then takes its place and the prompt is drawn again
	// below it, so that a reply never reads as typed input.
	prompted bool
	// linked are the links (chat.Action.URL) shown so far, oldest first:
	// a task's status message carries its page's link at every edit, and
	// the terminal shows it once.
	linked []string
}

// maxLinked bounds the links a terminal remembers having shown; an older
// one shown again costs a line.
const maxLinked = 64

// clearLine returns the cursor to the start of the line and erases it
// (ANSI "erase in line"): what takes the prompt's place.
const clearLine = "\r\x1b[K"

type openKey struct{ key, shortcuts string }

// New returns a terminal that writes replies to out. userID is the local
// user (the owner); prompt is shown before each input line ("" for none).
func New(out io.Writer, userID, prompt string) *Terminal {
	return &Terminal{out: out, userID: userID, convID: Channel + ":" + userID, prompt: prompt}
}

// SetInteractive says whether Run's input is typed by a person (true) or a
// script (false), in place of looking whether it is a terminal device.
// Call it before Run.
func (t *Terminal) SetInteractive(on bool) {
	t.mode = script
	if on {
		t.mode = typed
	}
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
	if r.Key != "" {
		t.open = slices.DeleteFunc(t.open, func(o openKey) bool { return o.key == r.Key })
		if len(r.Actions) > 0 && r.Shortcuts != "" {
			t.open = append(t.open, openKey{r.Key, r.Shortcuts})
		}
	}
	// What reaches the terminal is inert: a reply may quote text from the
	// world (a goal, a CLI's output) holding escape sequences.
	var b strings.Builder
	if t.prompted {
		b.WriteString(clearLine)
	}
	b.WriteString(strings.TrimRight(redact.StripControl(r.Text), "\n"))
	b.WriteByte('\n')
	for _, a := range r.Actions {
		if a.URL == "" || slices.Contains(t.linked, a.URL) {
			continue
		}
		if len(t.linked) == maxLinked {
			t.linked = slices.Delete(t.linked, 0, 1)
		}
		t.linked = append(t.linked, a.URL)
		fmt.Fprintf(&b, "%s: %s\n", redact.StripControl(a.Label), redact.StripControl(a.URL))
	}
	if t.prompted {
		b.WriteString(t.promptText())
	}
	if _, err := io.WriteString(t.out, b.String()); err != nil {
		return fmt.Errorf("term: send: %w", err)
	}
	return nil
}

// Run reads lines from in until EOF or ctx ends and hands each to rcv: a
// script line by line, typed input as it comes (see the package doc). At
// EOF it waits until everything handed over is handled.
//
// Reading happens on a goroutine of its own so that Run returns when ctx
// ends even while a read blocks (a terminal waiting for input); that
// goroutine ends at the next line, EOF, or when in is closed.
func (t *Terminal) Run(ctx context.Context, in io.Reader, rcv Receiver) error {
	if t.interactive(in) {
		return t.runTyped(ctx, in, rcv)
	}
	return t.runScript(ctx, in, rcv)
}

func (t *Terminal) interactive(in io.Reader) bool {
	switch t.mode {
	case typed:
		return true
	case script:
		return false
	case detect:
		f, ok := in.(interface{ Stat() (fs.FileInfo, error) })
		if !ok {
			return false
		}
		fi, err := f.Stat()
		return err == nil && fi.Mode()&fs.ModeCharDevice != 0
	}
	return false
}

// runScript hands over one line at a time, each handled before the next
// is read.
func (t *Terminal) runScript(ctx context.Context, in io.Reader, rcv Receiver) error {
	lines := make(chan line)
	next := make(chan struct{})
	done := make(chan struct{})
	defer close(done)
	go readLines(in, lines, next, done)
	for {
		t.showPrompt()
		select {
		case next <- struct{}{}:
		case <-ctx.Done():
			return nil
		}
		var l line
		select {
		case l = <-lines:
		case <-ctx.Done():
			return nil
		}
		if l.err != nil {
			return readErr(l.err)
		}
		if err := t.hand(ctx, rcv, l); err != nil {
			return err
		}
		if err := t.idle(ctx, rcv, l.n); err != nil {
			return err
		}
	}
}

// runTyped reads all the time: a stop is handed over at once, other lines
// in order by a goroutine of their own, through a queue of queueSize.
func (t *Terminal) runTyped(ctx context.Context, in io.Reader, rcv Receiver) error {
	lines := make(chan line)
	done := make(chan struct{})
	defer close(done)
	go readLines(in, lines, nil, done)

	queue := make(chan line, queueSize)
	failed := make(chan error, 1)
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for l := range queue {
			if ctx.Err() != nil {
				continue // shutting down: what is left is not handed over
			}
			if err := t.hand(ctx, rcv, l); err != nil {
				failed <- err
				for range queue {
				}
				return
			}
		}
	}()
	// stopHanding ends the hand-over goroutine once it has handed over
	// what is queued, and waits for it.
	stopHanding := func() error {
		close(queue)
		<-finished
		select {
		case err := <-failed:
			return err
		default:
			return nil
		}
	}

	t.showPrompt()
	for {
		select {
		case <-ctx.Done():
			stopHanding()
			return nil
		case err := <-failed:
			failed <- err
			return stopHanding()
		case l := <-lines:
			if l.err != nil {
				if err := stopHanding(); err != nil {
					return err
				}
				if err := readErr(l.err); err != nil {
					return err
				}
				return t.idle(ctx, rcv, l.n)
			}
			t.typedLine()
			switch {
			case !l.cut && t.isStop(rcv, l.text):
				if err := t.hand(ctx, rcv, l); err != nil {
					stopHanding()
					return err
				}
			default:
				select {
				case queue <- l:
				default:
					t.notice(fmt.Sprintf("Fetch is still taking in %d earlier messages; this one was not sent: %q", queueSize, excerpt(l.text)))
				}
			}
			t.showPrompt()
		}
	}
}

func (t *Terminal) isStop(rcv Receiver, text string) bool {
	if s, ok := rcv.(Stopper); ok {
		return s.IsStop(text)
	}
	return strings.EqualFold(strings.TrimSpace(text), "/stop")
}

// hand gives a line to the runtime, or refuses it here when it was too
// long to keep. A failure because ctx ended is no failure.
func (t *Terminal) hand(ctx context.Context, rcv Receiver, l line) error {
	if l.cut {
		t.notice(tooLong(l.chars))
		return nil
	}
	msg := chat.Message{Channel: Channel, ConversationID: t.convID, UserID: t.userID, Text: l.text}
	if err := rcv.Receive(ctx, msg); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("term: line %d: %w", l.n, err)
	}
	return nil
}

func (t *Terminal) idle(ctx context.Context, rcv Receiver, n int) error {
	if err := rcv.Idle(ctx, t.convID); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("term: line %d: %w", n, err)
	}
	return nil
}

// tooLong is the runtime's refusal of a message over chat.MaxMessageLen
// characters (conversation.Manager.Receive), for a line too long to hand
// over.
func tooLong(chars int) string {
	return fmt.Sprintf("That message is %d characters long; the limit is %d. Please send something shorter, or put long text in a file in the workspace.", chars, chat.MaxMessageLen)
}

// notice writes a message of the terminal's own.
func (t *Terminal) notice(text string) {
	t.Send(context.Background(), t.convID, chat.Text(text))
}

func excerpt(s string) string {
	const n = 40
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

func readErr(err error) error {
	if errors.Is(err, io.EOF) {
		return nil
	}
	return fmt.Errorf("term: read: %w", err)
}

// showPrompt prints the prompt, unless it is already the last thing on
// the screen: while a message with shortcuts is open (a coding CLI's
// request), its shortcuts lead it ("y/a/n> "), so a typed y, a or n
// answers the oldest open request.
func (t *Terminal) showPrompt() {
	if t.prompt == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.prompted {
		return
	}
	fmt.Fprint(t.out, t.promptText())
	t.prompted = true
}

// promptText is the prompt as it stands. The caller holds mu.
func (t *Terminal) promptText() string {
	if len(t.open) > 0 {
		return t.open[0].shortcuts + t.prompt
	}
	return t.prompt
}

// typedLine notes that a line was typed: the terminal's echo of its end
// moved the cursor to a new line, below the prompt.
func (t *Terminal) typedLine() {
	t.mu.Lock()
	t.prompted = false
	t.mu.Unlock()
}
