package term_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"
	"unicode/utf8"

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
	// The reply takes the prompt's place, which is drawn again below it.
	if got := out.String(); got != "> \r\x1b[Kecho: hi\n> " {
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
	if err := tty.Run(t.Context(), iotest.ErrReader(boom), &echoer{t: tty}); !errors.Is(err, boom) {
		t.Fatalf("read error: %v", err)
	}
}

// hangCatch fails a test that waits much longer than it should: a guard
// against hangs, not a timing assertion.
const hangCatch = 20 * time.Second

func TestLongLines(t *testing.T) {
	refusal := func(n int) string {
		return fmt.Sprintf("That message is %d characters long; the limit is %d. Please send something shorter, or put long text in a file in the workspace.", n, chat.MaxMessageLen)
	}
	for _, tc := range []struct {
		name string
		line io.Reader
		// handed is the length in characters of the text handed over,
		// -1 when the line is refused by the terminal.
		handed  int
		refused string
	}{
		{"at the limit, multi-byte", strings.NewReader(strings.Repeat("é", chat.MaxMessageLen)), chat.MaxMessageLen, ""},
		{"just over the limit: the runtime refuses it", strings.NewReader(strings.Repeat("x", chat.MaxMessageLen+1)), chat.MaxMessageLen + 1, ""},
		{"control characters do not count", strings.NewReader(strings.Repeat("x\x00", chat.MaxMessageLen) + "\r"), chat.MaxMessageLen, ""},
		{"over 1 MiB", strings.NewReader(strings.Repeat("x", 2<<20)), -1, refusal(2 << 20)},
		{"over 1 MiB, multi-byte", strings.NewReader(strings.Repeat("日本", 1<<19)), -1, refusal(1 << 20)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			tty := term.New(&out, "local", "")
			rcv := &echoer{t: tty}
			in := io.MultiReader(strings.NewReader("before\n"), tc.line, strings.NewReader("\nafter\n"))
			if err := tty.Run(t.Context(), in, rcv); err != nil {
				t.Fatalf("the session ended: %v", err)
			}
			var lens []int
			for _, m := range rcv.msgs {
				lens = append(lens, utf8.RuneCountInString(m.Text))
			}
			want := []int{6, tc.handed, 5}
			if tc.handed < 0 {
				want = []int{6, 5}
			}
			if !slices.Equal(lens, want) || rcv.msgs[len(rcv.msgs)-1].Text != "after" {
				t.Fatalf("handed lines of %v characters; want %v", lens, want)
			}
			if tc.refused != "" {
				if lines := strings.Split(out.String(), "\n"); len(lines) < 3 || lines[1] != tc.refused || lines[2] != "echo: after" {
					t.Fatalf("output does not refuse the line in order: %.300q", out.String())
				}
			}
		})
	}
}

// runtime is a fake conversation runtime for typed input. A line whose
// text is in hold is accepted only once it is released; "turn" starts a
// turn that runs until a stop arrives.
type runtime struct {
	mu       sync.Mutex
	got      []string
	hold     map[string]chan struct{}
	turn     chan struct{} // closed by a stop
	received chan string
	// held is sent a held line's text when its Receive starts waiting.
	held  chan string
	stops func(string) bool
}

func newRuntime(hold ...string) *runtime {
	r := &runtime{hold: map[string]chan struct{}{}, turn: make(chan struct{}), received: make(chan string, 1000), held: make(chan string, 10)}
	for _, h := range hold {
		r.hold[h] = make(chan struct{})
	}
	return r
}

func (r *runtime) isStop(text string) bool {
	if r.stops != nil {
		return r.stops(text)
	}
	return text == "/stop"
}

func (r *runtime) Receive(ctx context.Context, m chat.Message) error {
	if r.isStop(m.Text) {
		r.mu.Lock()
		select {
		case <-r.turn:
		default:
			close(r.turn)
		}
		r.mu.Unlock()
	} else if h := r.hold[m.Text]; h != nil {
		r.held <- m.Text
		select {
		case <-h:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	r.mu.Lock()
	r.got = append(r.got, m.Text)
	r.mu.Unlock()
	r.received <- m.Text
	return nil
}

// Idle waits for the turn to be stopped.
func (r *runtime) Idle(ctx context.Context, _ string) error {
	select {
	case <-r.turn:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (r *runtime) order() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.got...)
}

// stopper is a runtime that tells its own stops.
type stopper struct{ *runtime }

func (s stopper) IsStop(text string) bool { return s.runtime.isStop(text) }

// expect waits until the runtime received text.
func expect(t testing.TB, r *runtime, text string) {
	t.Helper()
	timeout := time.After(hangCatch)
	for {
		select {
		case got := <-r.received:
			if got == text {
				return
			}
		case <-timeout:
			t.Fatalf("%q never reached the runtime; it has %q", text, r.order())
		}
	}
}

func TestTypedStopOvertakes(t *testing.T) {
	for _, tc := range []struct {
		name string
		// lines are typed in order; the last is the stop.
		lines []string
		// hold are lines whose Receive waits (a full mailbox).
		hold []string
		// natural: the runtime tells stops itself (Stopper).
		natural bool
		// order is what the runtime receives before the held lines are
		// released.
		order []string
	}{
		{"while a turn runs", []string{"turn", "/stop"}, nil, false, []string{"turn", "/stop"}},
		{"past lines the runtime is not taking", []string{"turn", "second", "third", "/stop"}, []string{"second"}, false, []string{"turn", "/stop"}},
		{"a natural stop the runtime recognises", []string{"turn", "second", "please stop"}, []string{"second"}, true, []string{"turn", "please stop"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := newRuntime(tc.hold...)
			var rcv term.Receiver = rt
			if tc.natural {
				rt.stops = func(s string) bool { return s == "please stop" }
				rcv = stopper{rt}
			}
			var out bytes.Buffer
			tty := term.New(&syncWriter{w: &out}, "local", "")
			tty.SetInteractive(true)
			in, typing := io.Pipe()
			ran := make(chan error, 1)
			go func() { ran <- tty.Run(t.Context(), in, rcv) }()

			// Each line is typed once the one before reached the
			// runtime, or is stuck in (or behind) a held Receive.
			stop := tc.lines[len(tc.lines)-1]
			blocked := false
			for _, l := range tc.lines {
				if _, err := io.WriteString(typing, l+"\n"); err != nil {
					t.Fatal(err)
				}
				switch {
				case l == stop || blocked:
				case rt.hold[l] != nil:
					select {
					case <-rt.held:
					case <-time.After(hangCatch):
						t.Fatalf("%q never reached the runtime", l)
					}
					blocked = true
				default:
					expect(t, rt, l)
				}
			}
			expect(t, rt, stop)
			if got := rt.order(); !slices.Equal(got, tc.order) {
				t.Fatalf("the runtime received %q; want %q", got, tc.order)
			}
			for _, h := range rt.hold {
				close(h)
			}
			typing.Close() // EOF: Run hands over what waits, then returns
			select {
			case err := <-ran:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(hangCatch):
				t.Fatal("Run did not return at EOF")
			}
			var ordinary []string
			for _, l := range rt.order() {
				if l != stop {
					ordinary = append(ordinary, l)
				}
			}
			if want := slices.DeleteFunc(slices.Clone(tc.lines), func(l string) bool { return l == stop }); !slices.Equal(ordinary, want) {
				t.Fatalf("ordinary lines received as %q; want %q in order", ordinary, want)
			}
		})
	}
}

func TestScriptedStopWaitsItsTurn(t *testing.T) {
	rt := newRuntime()
	tty := term.New(io.Discard, "local", "")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	ran := make(chan error, 1)
	go func() { ran <- tty.Run(ctx, strings.NewReader("turn\n/stop\n"), rt) }()
	expect(t, rt, "turn")
	// The turn runs (Idle waits): a script's next line is not read.
	select {
	case got := <-rt.received:
		t.Fatalf("%q handed over while the previous line was not handled", got)
	case <-time.After(100 * time.Millisecond):
	}
	cancel()
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
}

func TestTypedLinesBeyondTheQueueAreNotSent(t *testing.T) {
	rt := newRuntime("first")
	var out bytes.Buffer
	w := &syncWriter{w: &out}
	tty := term.New(w, "local", "")
	tty.SetInteractive(true)
	in, typing := io.Pipe()
	ran := make(chan error, 1)
	go func() { ran <- tty.Run(t.Context(), in, rt) }()
	// "first" is being handed over and the queue fills behind it.
	const queued = 64
	io.WriteString(typing, "first\n")
	<-rt.held
	for i := range queued + 1 {
		fmt.Fprintf(typing, "line %d\n", i)
	}
	// A stop still gets through.
	io.WriteString(typing, "/stop\n")
	expect(t, rt, "/stop")
	if !strings.Contains(w.String(), `this one was not sent: "line 64"`) {
		t.Fatalf("output %q; want the line beyond the queue refused", w.String())
	}
	close(rt.hold["first"])
	typing.Close()
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	if got := rt.order(); len(got) != queued+2 || got[1] != "first" || got[len(got)-1] != fmt.Sprintf("line %d", queued-1) {
		t.Fatalf("received %d lines: %q…", len(got), got[:min(3, len(got))])
	}
}

type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.String()
}

// requester answers "ask" with a request message offering shortcuts,
// "close" with its closed version (same key, no actions), anything else
// with an echo.
type requester struct{ t *term.Terminal }

func (r requester) Receive(ctx context.Context, m chat.Message) error {
	switch m.Text {
	case "ask":
		return r.t.Send(ctx, m.ConversationID, chat.Reply{Key: "task-request:7", Text: "Task t1 asks to run git push", Shortcuts: "y/a/n",
			Actions: []chat.Action{{Label: "Allow once", Send: "/req 7 allow"}, {Label: "Deny", Send: "/req 7 deny"}}})
	case "close":
		return r.t.Send(ctx, m.ConversationID, chat.Reply{Key: "task-request:7", Text: "Task t1 asked to run git push: denied"})
	}
	return r.t.Send(ctx, m.ConversationID, chat.Text("echo: "+m.Text))
}

func (requester) Idle(context.Context, string) error { return nil }

// TestPromptOffersShortcutsWhileARequestIsOpen: while a message with
// shortcuts is open the prompt leads with them, and it goes back to the
// plain prompt once the message is replaced without actions.
func TestPromptOffersShortcutsWhileARequestIsOpen(t *testing.T) {
	var out bytes.Buffer
	tty := term.New(&out, "local", "> ")
	if err := tty.Run(t.Context(), strings.NewReader("ask\nhi\nclose\nhi\n"), requester{t: tty}); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	const cl = "\r\x1b[K"
	want := "> " + cl + "Task t1 asks to run git push\ny/a/n> " + cl + "echo: hi\ny/a/n> " + cl + "Task t1 asked to run git push: denied\n> " + cl + "echo: hi\n> "
	if got != want {
		t.Errorf("output %q; want %q", got, want)
	}
}

// notifyWriter is a syncWriter that says when it was written to.
type notifyWriter struct {
	syncWriter
	wrote chan struct{}
}

func (n *notifyWriter) Write(p []byte) (int, error) {
	k, err := n.syncWriter.Write(p)
	select {
	case n.wrote <- struct{}{}:
	default:
	}
	return k, err
}

// waitFor waits until w's output is want.
func (n *notifyWriter) waitFor(t *testing.T, want string) {
	t.Helper()
	deadline := time.After(hangCatch)
	for n.String() != want {
		select {
		case <-n.wrote:
		case <-deadline:
			t.Fatalf("output %q; want %q", n.String(), want)
		}
	}
}

// TestReplyTakesThePromptsPlace: a reply that arrives while the prompt
// waits for typing (a task's progress, its result) is not written after
// the prompt, where it would read as typed input: it takes the prompt's
// line and the prompt is drawn again below it. A link the reply carries
// (the task page's) is shown under it, once.
func TestReplyTakesThePromptsPlace(t *testing.T) {
	w := &notifyWriter{syncWriter: syncWriter{w: &bytes.Buffer{}}, wrote: make(chan struct{}, 1)}
	tty := term.New(w, "local", "> ")
	tty.SetInteractive(true)
	in, typing := io.Pipe()
	ran := make(chan error, 1)
	go func() { ran <- tty.Run(t.Context(), in, &echoer{t: tty}) }()
	w.waitFor(t, "> ")

	const cl = "\r\x1b[K"
	link := chat.Action{Label: "Task page", URL: "http://127.0.0.1:8686/t/t1?exp=1&sig=x"}
	if err := tty.Send(t.Context(), tty.ConversationID(), chat.Reply{Key: "task:t1", Text: "Task t1 on app — running", Actions: []chat.Action{{Label: "Stop", Send: "/stop"}, link}}); err != nil {
		t.Fatal(err)
	}
	if err := tty.Send(t.Context(), tty.ConversationID(), chat.Reply{Text: "✅ Task t1 succeeded on app", Actions: []chat.Action{link}}); err != nil {
		t.Fatal(err)
	}
	want := "> " + cl + "Task t1 on app — running\nTask page: " + link.URL + "\n> " + cl + "✅ Task t1 succeeded on app\n> "
	w.waitFor(t, want)

	// A typed line moves the cursor below the prompt (the terminal echoes
	// it): its reply starts on that new line; the prompt follows.
	io.WriteString(typing, "hi\n")
	typing.Close()
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	got := strings.TrimPrefix(w.String(), want)
	if got != "echo: hi\n> " && got != "> "+cl+"echo: hi\n> " {
		t.Errorf("after a typed line: %q; want the reply on a line of its own, then the prompt", got)
	}
}
