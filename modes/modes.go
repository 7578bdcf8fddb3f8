package modes

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fetch-dev/fetch/internal/store"
	"github.com/looplab/fsm"
)

// Mode is a conversation's state of mind.
type Mode string

const (
	// Alert listens for new messages.
	Alert Mode = "ALERT"
	// Working runs a task.
	Working Mode = "WORKING"
	// Waiting waits for the owner's answer to a question.
	Waiting Mode = "WAITING"
	// Guarding waits for the owner to approve or deny a dangerous action.
	Guarding Mode = "GUARDING"
	// Resting is idle after a quiet period.
	Resting Mode = "RESTING"
)

// Emoji is the mode's sign in replies.
func (m Mode) Emoji() string {
	switch m {
	case Alert:
		return "🟢"
	case Working:
		return "🔵"
	case Waiting:
		return "🟠"
	case Guarding:
		return "🔴"
	case Resting:
		return "💤"
	}
	return "?"
}

// Event makes a mode change.
type Event string

const (
	// TaskStarted: a task began running.
	TaskStarted Event = "task_started"
	// Asked: Fetch asked the owner a question.
	Asked Event = "asked"
	// Answered: the owner answered the question.
	Answered Event = "answered"
	// Guarded: a dangerous action waits for approval.
	Guarded Event = "guarded"
	// Approved: the owner approved; the conversation goes back to where it
	// was before GUARDING (WORKING when that was nothing live).
	Approved Event = "approved"
	// Denied: the owner denied the action.
	Denied Event = "denied"
	// IdleTimeout: nothing happened for the idle period.
	IdleTimeout Event = "idle_timeout"
	// Woke: a message arrived while resting.
	Woke Event = "woke"
	// TaskEnded: the task finished, failed or was stopped.
	TaskEnded Event = "task_ended"
	// Settled: the work an answer or approval resumed is over and nothing
	// runs any more.
	Settled Event = "settled"
	// Reconciled: after a restart, the stored mode was brought in line
	// with what is really live.
	Reconciled Event = "reconciled"
	// initial is the first mode of a new conversation.
	initial Event = "init"
)

type transition struct {
	event Event
	src   []Mode
	dst   Mode
}

// transitions is the whole machine. An event may lead to several modes
// (Approved, Reconciled); the caller's situation picks one.
func transitions() []transition {
	live := []Mode{Working, Waiting, Guarding}
	return []transition{
		{TaskStarted, []Mode{Alert}, Working},
		{Asked, []Mode{Alert, Working}, Waiting},
		{Answered, []Mode{Waiting}, Working},
		{Guarded, []Mode{Alert, Working, Waiting}, Guarding},
		{Approved, []Mode{Guarding}, Working},
		{Approved, []Mode{Guarding}, Waiting},
		{Approved, []Mode{Guarding}, Alert},
		{Denied, []Mode{Guarding}, Alert},
		{IdleTimeout, []Mode{Alert}, Resting},
		{Woke, []Mode{Resting}, Alert},
		{TaskEnded, live, Alert},
		{Settled, []Mode{Working}, Alert},
		{Reconciled, live, Alert},
		{Reconciled, live, Working},
		{Reconciled, live, Waiting},
		{Reconciled, live, Guarding},
	}
}

// fsmEvent names an (event, destination) pair for looplab/fsm, which
// allows one destination per event and source.
func fsmEvent(e Event, dst Mode) string { return string(e) + ">" + string(dst) }

// ErrIllegal is wrapped by every *IllegalError.
var ErrIllegal = errors.New("illegal mode transition")

// IllegalError reports an event that cannot happen in the current mode.
type IllegalError struct {
	From  Mode
	Event Event
}

func (e *IllegalError) Error() string {
	return fmt.Sprintf("modes: %s is not possible in %s", e.Event, e.From)
}

func (e *IllegalError) Unwrap() error { return ErrIllegal }

// Store persists modes; *store.DB satisfies it.
type Store interface {
	Mode(ctx context.Context, conversationID string) (store.ModeState, error)
	ChangeMode(ctx context.Context, c store.ModeChange) error
}

// Machine is one conversation's mode.
type Machine struct {
	conversation string
	store        Store
	now          func() time.Time
	fsm          *fsm.FSM
	state        store.ModeState
}

// Load returns the conversation's machine in its stored mode, starting a
// new conversation in ALERT (persisted).
func Load(ctx context.Context, st Store, conversationID string, now func() time.Time) (*Machine, error) {
	m := &Machine{conversation: conversationID, store: st, now: now}
	state, err := st.Mode(ctx, conversationID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		state = store.ModeState{ConversationID: conversationID, Mode: string(Alert), Reason: "new conversation", Since: now()}
		err = st.ChangeMode(ctx, store.ModeChange{ConversationID: conversationID, To: string(Alert), Event: string(initial), Reason: state.Reason, At: state.Since})
		if err != nil {
			return nil, fmt.Errorf("modes: load %s: %w", conversationID, err)
		}
	case err != nil:
		return nil, fmt.Errorf("modes: load %s: %w", conversationID, err)
	}
	if !known(Mode(state.Mode)) {
		return nil, fmt.Errorf("modes: load %s: stored mode %q is unknown", conversationID, state.Mode)
	}
	m.state = state
	var events fsm.Events
	for _, t := range transitions() {
		src := make([]string, len(t.src))
		for i, s := range t.src {
			src[i] = string(s)
		}
		events = append(events, fsm.EventDesc{Name: fsmEvent(t.event, t.dst), Src: src, Dst: string(t.dst)})
	}
	m.fsm = fsm.NewFSM(state.Mode, events, fsm.Callbacks{
		// The transition is persisted before the machine moves; a failed
		// write cancels it.
		"before_event": m.persist,
	})
	return m, nil
}

func known(m Mode) bool {
	switch m {
	case Alert, Working, Waiting, Guarding, Resting:
		return true
	}
	return false
}

type reasonKey struct{}

func (m *Machine) persist(ctx context.Context, e *fsm.Event) {
	reason, _ := ctx.Value(reasonKey{}).(string)
	ev, _, _ := strings.Cut(e.Event, ">")
	change := store.ModeChange{
		ConversationID: m.conversation,
		From:           e.Src,
		To:             e.Dst,
		Event:          ev,
		Reason:         reason,
		At:             m.now(),
	}
	if err := m.store.ChangeMode(ctx, change); err != nil {
		e.Cancel(err)
		return
	}
	m.state = store.ModeState{ConversationID: m.conversation, Mode: e.Dst, Previous: e.Src, Reason: reason, Since: change.At}
}

// Current is the current mode.
func (m *Machine) Current() Mode { return Mode(m.fsm.Current()) }

// Since is when the current mode began.
func (m *Machine) Since() time.Time { return m.state.Since }

// Reason is why the current mode began.
func (m *Machine) Reason() string { return m.state.Reason }

// Fire applies an event whose destination is fixed by the current mode.
// Use Approve for Approved and Reconcile after a restart.
func (m *Machine) Fire(ctx context.Context, e Event, reason string) error {
	for _, t := range transitions() {
		if t.event == e && m.fsm.Can(fsmEvent(e, t.dst)) {
			return m.move(ctx, e, t.dst, reason)
		}
	}
	return &IllegalError{From: m.Current(), Event: e}
}

// Approve leaves GUARDING for the mode the conversation was in before it,
// or WORKING when that is not one it can return to.
func (m *Machine) Approve(ctx context.Context, reason string) error {
	dst := Working
	switch prev := Mode(m.state.Previous); prev {
	case Alert, Waiting:
		dst = prev
	}
	return m.move(ctx, Approved, dst, reason)
}

func (m *Machine) move(ctx context.Context, e Event, dst Mode, reason string) error {
	name := fsmEvent(e, dst)
	if !m.fsm.Can(name) {
		return &IllegalError{From: m.Current(), Event: e}
	}
	err := m.fsm.Event(context.WithValue(ctx, reasonKey{}, reason), name)
	var canceled fsm.CanceledError
	if errors.As(err, &canceled) && canceled.Err != nil {
		return fmt.Errorf("modes: %s: %w", e, canceled.Err)
	}
	if err != nil {
		return fmt.Errorf("modes: %s: %w", e, err)
	}
	return nil
}

// Live is what is really going on in a conversation, as found after a
// restart.
type Live struct {
	// TaskRunning: a task of this conversation has a live process.
	TaskRunning bool
	// QuestionOpen: a question to the owner is open and its asker alive.
	QuestionOpen bool
	// ApprovalOpen: an approval is open and not expired.
	ApprovalOpen bool
}

// Want is the mode that live calls for.
func (l Live) Want() Mode {
	switch {
	case l.ApprovalOpen:
		return Guarding
	case l.QuestionOpen:
		return Waiting
	case l.TaskRunning:
		return Working
	}
	return Alert
}

// Reconcile brings a restored WORKING, WAITING or GUARDING in line with
// what is live; ALERT and RESTING are kept as they are. It reports whether
// the mode changed.
func (m *Machine) Reconcile(ctx context.Context, live Live) (bool, error) {
	cur := m.Current()
	if cur == Alert || cur == Resting {
		return false, nil
	}
	want := live.Want()
	if want == cur {
		return false, nil
	}
	reason := fmt.Sprintf("after restart: %s was stale, %s is what is live", cur, want)
	if err := m.move(ctx, Reconciled, want, reason); err != nil {
		return false, err
	}
	return true, nil
}
