package harness

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/fetch-dev/fetch/kennel"
)

// TwoWayMode says what a two-way run is for.
type TwoWayMode string

// The modes of a two-way run.
const (
	// ModeWork does the task; the CLI asks before it runs a command or
	// edits a file, and may ask the user questions.
	ModeWork TwoWayMode = "work"
	// ModePlan runs the CLI read-only in its plan mode: it reads the code
	// and ends by proposing a plan (a KindPlan request), which the owner
	// approves, revises or cancels. An approved plan is carried out by a
	// ModeWork run that resumes the session (Task.ResumeID) with
	// ApprovedPlanGoal as its goal.
	ModePlan TwoWayMode = "plan"
)

// TwoWay is an adapter whose CLI Fetch can answer while it runs: the CLI's
// stdin stays open, and its requests (KindPermission, KindAsk, KindPlan)
// are answered by writing the replies these methods build. Every reply is
// one line, newline included, to be written whole (Input.Send).
//
// A request that cannot be relayed arrives as KindBadRequest; when it has a
// Request.ID it must still be answered, with Deny. Deny never fails for a
// request with an ID, so a request is never left unanswered.
type TwoWay interface {
	// TwoWayInvocation builds the argv and environment of a two-way run of
	// task. The prompt is not in the argv: it is in Opening.
	TwoWayInvocation(task Task, mode TwoWayMode, creds Credentials) (Invocation, error)
	// Opening returns the first messages to write to the CLI's stdin, in
	// order: the protocol's handshake and the prompt.
	Opening(task Task, mode TwoWayMode) ([][]byte, error)
	// Allow lets the CLI go ahead with a permission request as asked (or,
	// for a plan, leave plan mode and carry it out in the same process).
	Allow(r Request) ([]byte, error)
	// Deny refuses a request; reason (the owner's words, or why Fetch
	// refused) is what the agent is told. For a plan it is the owner's
	// revision: the agent plans again.
	Deny(r Request, reason string) ([]byte, error)
	// DenyAndStop refuses a request and ends the CLI's turn: it stops
	// working rather than trying something else.
	DenyAndStop(r Request, reason string) ([]byte, error)
	// Answer answers a KindAsk request: answers[i] answers
	// r.Questions[i], either one of its option labels or the user's own
	// text (for a multiSelect question: labels joined by JoinChoices).
	Answer(r Request, answers []string) ([]byte, error)
	// Interrupt asks the CLI to stop what it is doing (the run ends with an
	// interrupted result); id is a fresh request id ([A-Za-z0-9._:-]).
	Interrupt(id string) ([]byte, error)
	// UserMessage is a further message from the user to the running CLI.
	UserMessage(text string) ([]byte, error)
}

// Request is one request of a two-way CLI, as an event carries it.
type Request struct {
	// ID is the CLI's id for the request; the reply carries it back.
	// Empty for a bad request that cannot be answered.
	ID string `json:"id,omitempty"`
	// Control is the protocol's name for the kind of request (Claude
	// Code: the control_request subtype, "can_use_tool").
	Control string `json:"control,omitempty"`
	// Tool is the CLI's name of the tool it wants to use, and ToolUseID
	// its id for that call (the tool_use and tool_result lines carry it).
	Tool      string `json:"tool,omitempty"`
	ToolUseID string `json:"tool_use_id,omitempty"`
	// Command is the exact shell command (shell tools).
	Command string `json:"command,omitempty"`
	// Path is the file an edit tool would write, and Diff a compact view
	// of the edit ("-" old lines, "+" new lines), bounded.
	Path string `json:"path,omitempty"`
	Diff string `json:"diff,omitempty"`
	// Reason is what the CLI said about why it asks, when it did.
	Reason string `json:"reason,omitempty"`
	// Questions are the questions of a KindAsk request.
	Questions []Question `json:"questions,omitempty"`
	// Plan is the proposed plan of a KindPlan request.
	Plan string `json:"plan,omitempty"`
	// Input is the tool input exactly as the CLI sent it, which Allow and
	// Answer echo back; nil when it was larger than maxRequestInputBytes
	// (then only Deny is possible). Callers show Command, Path and Diff,
	// not Input, and should not store Input whole.
	Input json.RawMessage `json:"input,omitempty"`
	// Fingerprint is the same for two requests of the same tool with the
	// same input: a request repeated after a denial has the fingerprint
	// of the denied one (a loop guard counts them).
	Fingerprint string `json:"fingerprint,omitempty"`
	// Action is what the request would do, as the adapter reads its CLI's
	// tool (Claude Code: the tool's name; ACP: the tool call's kind), for
	// a policy that knows no CLI's tool names. Empty when unknown. Like
	// URL, it is derived from the request each time a parser reads it and
	// is not part of the request's JSON (what is stored of a decided
	// request is the policy's own view of it).
	Action Action `json:"-"`
	// URL is the address a fetch request would read, when it names one.
	URL string `json:"-"`
	// Session is the CLI's session id the request belongs to, for
	// protocols whose replies name it (ACP's session/cancel).
	Session string `json:"session,omitempty"`
	// NoReason: the protocol cannot carry a denial's reason to the CLI
	// (ACP); Deny sends a bare refusal, and the owner should be told.
	NoReason bool `json:"no_reason,omitempty"`
}

// Action is what a permission request would do. The values are stable:
// they are stored with the request.
type Action string

// The actions of requests.
const (
	// ActionShell runs a command line (Request.Command).
	ActionShell Action = "shell"
	// ActionEdit creates or changes a file (Request.Path).
	ActionEdit Action = "edit"
	// ActionDelete removes a file (Request.Path).
	ActionDelete Action = "delete"
	// ActionRead reads files or searches them.
	ActionRead Action = "read"
	// ActionFetch reads from the web (Request.URL, when known).
	ActionFetch Action = "fetch"
	// ActionInternal is the CLI's own bookkeeping (its todo list, its
	// plan, a sub-agent whose tool calls ask for themselves).
	ActionInternal Action = "internal"
	// ActionOther is a tool the adapter cannot place (MCP tools, …).
	ActionOther Action = "other"
)

// Dialogues is a TwoWay adapter whose protocol needs messages that no user
// decides, built from what the CLI answered: ACP's session/prompt needs the
// session id of the session/new response. RunTwoWay starts one Dialogue
// per run and sends what it returns.
type Dialogues interface {
	NewDialogue(task Task, mode TwoWayMode) (Dialogue, error)
}

// Dialogue is the protocol state of one two-way run.
type Dialogue interface {
	// React returns the messages to send in reaction to one line of the
	// CLI's stdout (none for most lines). It is called from the runner's
	// line callback, in order, and must not block.
	React(line []byte) [][]byte
	// Interrupt asks the CLI to stop its turn, with the ids the dialogue
	// saw (ErrCannotReply before it has them).
	Interrupt() ([]byte, error)
	// UserMessage is a further message from the user to the running CLI.
	UserMessage(text string) ([]byte, error)
}

// Question is one question of a KindAsk request.
type Question struct {
	Question    string   `json:"question"`
	Header      string   `json:"header,omitempty"`
	MultiSelect bool     `json:"multi_select,omitempty"`
	Options     []Option `json:"options,omitempty"`
}

// Option is one choice of a Question.
type Option struct {
	Label       string `json:"label"`
	Description string `json:"description,omitempty"`
}

// Limits on requests.
const (
	// maxRequestInputBytes bounds the tool input a request keeps to
	// echo back; a larger request can only be denied.
	maxRequestInputBytes = 1 << 20
	// maxDiffBytes and maxDiffLines bound Request.Diff.
	maxDiffBytes = 4 << 10
	maxDiffLines = 40
	// maxReasonBytes bounds the reason a denial carries to the CLI.
	maxReasonBytes = 16 << 10
)

// defaultDenial is the reason of a denial without one.
const defaultDenial = "The user denied this."

// planInstructions follow the goal of a ModePlan run.
//
//go:embed prompt_plan.md
var planInstructions string

// twoWayInstructions follow the goal of a ModeWork run.
//
//go:embed prompt_twoway.md
var twoWayInstructions string

// TwoWayPrompt is the first message of a two-way run: the answer when
// resuming with one, otherwise the goal followed by the instructions for
// the mode.
func TwoWayPrompt(task Task, mode TwoWayMode) string {
	note := AttachmentNote(task.Attachments)
	switch {
	case task.ResumeID != "" && task.Answer != "":
		return task.Answer + note
	case mode == ModePlan:
		return task.Goal + note + "\n\n" + planInstructions
	}
	return task.Goal + note + "\n\n" + twoWayInstructions
}

// ApprovedPlanGoal is the goal of the run that carries out an approved
// plan, resuming the planning session.
func ApprovedPlanGoal(goal, plan string) string {
	return "The user approved this plan for the goal \"" + goal + "\". Carry it out now.\n\n" + plan
}

// Input is the stdin of a running two-way CLI. The kennel's inbox provides
// it (one Send per message, CloseInput at the end); a test may use a pipe.
type Input interface {
	// Send writes msg (whole lines) to the CLI's stdin.
	Send(ctx context.Context, msg []byte) error
	// Close ends the CLI's stdin. A two-way CLI keeps running after its
	// final result until its stdin ends.
	Close(ctx context.Context) error
}

// Attach connects the stdin of a two-way run: it sets up spec (the kennel
// inbox: spec.Inbox; a test: spec.Stdin) and returns the Input that writes
// to it. Messages sent before the run started must wait or fail; RunTwoWay
// sends only after the run started.
type Attach func(spec *kennel.ExecSpec) (Input, error)

// RunTwoWay runs task like Run, but two-way: the CLI's stdin stays open
// through attach. Once the run started it writes the adapter's opening
// messages; every request the CLI makes reaches onEvent (KindPermission,
// KindAsk, KindPlan, KindBadRequest), and the caller answers it by sending
// the adapter's reply through the Input attach returned, from its own
// goroutine, while RunTwoWay waits. After the result event (or when the run
// ends) RunTwoWay closes the input, so the CLI exits.
//
// onEvent is called from the runner's line callback and must not block;
// sending a reply from it would.
func RunTwoWay(ctx context.Context, runner Runner, adapter Adapter, task Task, mode TwoWayMode, creds Credentials, attach Attach, onEvent func(Event)) (Outcome, error) {
	name := adapter.Name()
	tw, ok := adapter.(TwoWay)
	if !ok || !adapter.Traits().TwoWay {
		return Outcome{ExitCode: -1}, fmt.Errorf("harness: run %s two-way: %w", name, ErrNoTwoWay)
	}
	creds, _ = egressRun(adapter, task, creds)
	inv, err := tw.TwoWayInvocation(task, mode, creds)
	if err != nil {
		return Outcome{ExitCode: -1}, fmt.Errorf("harness: run %s two-way: %w", name, err)
	}
	opening, err := tw.Opening(task, mode)
	if err != nil {
		return Outcome{ExitCode: -1}, fmt.Errorf("harness: run %s two-way: %w", name, err)
	}
	var dlg Dialogue
	if d, ok := adapter.(Dialogues); ok {
		if dlg, err = d.NewDialogue(task, mode); err != nil {
			return Outcome{ExitCode: -1}, fmt.Errorf("harness: run %s two-way: %w", name, err)
		}
	}
	if mode == ModePlan {
		task.ReadOnly = true // no snapshots: the run must not write
	}
	// mail carries the user's messages while the run works, and counts
	// the results its input waits for.
	mail := task.Mailbox
	if mail == nil {
		mail = NewMailbox()
	}
	if mode == ModeWork {
		mail.open(adapter.Traits().Steer)
	}
	var (
		in       Input
		started  = make(chan struct{})
		finished = make(chan struct{}) // the result arrived
		ended    = make(chan struct{}) // Exec returned
		once     sync.Once
		sendErr  = make(chan error, 1)
		// reactions are the dialogue's messages, queued by the line
		// callback (which must not block) for the feeder; wake tells the
		// feeder there are some. The queue is as long as the CLI's
		// handshake: the dialogue reacts to its own requests' responses.
		reactMu   sync.Mutex
		reactions [][]byte
		wake      = make(chan struct{}, 1)
	)
	react := func(line []byte) {
		msgs := dlg.React(line)
		if len(msgs) == 0 {
			return
		}
		reactMu.Lock()
		reactions = append(reactions, msgs...)
		reactMu.Unlock()
		select {
		case wake <- struct{}{}:
		default:
		}
	}
	takeReactions := func() [][]byte {
		reactMu.Lock()
		defer reactMu.Unlock()
		msgs := reactions
		reactions = nil
		return msgs
	}
	prepare := func(spec *kennel.ExecSpec) error {
		var err error
		if in, err = attach(spec); err != nil {
			return fmt.Errorf("attach stdin: %w", err)
		}
		if in == nil {
			return errNoInput
		}
		spec.Started = func() { close(started) }
		return nil
	}
	// feeder owns the input: it writes the opening once the run started,
	// then the dialogue's reactions, and closes the input after the result
	// or at the end of the run. It ends with the run (ended), which
	// RunTwoWay waits for.
	var wg sync.WaitGroup
	startFeeder := func() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			closeCtx := context.WithoutCancel(ctx)
			var retry <-chan time.Time
			select {
			case <-started:
				for _, m := range opening {
					if err := in.Send(ctx, m); err != nil {
						sendErr <- fmt.Errorf("send opening: %w", err)
						_ = in.Close(closeCtx)
						return
					}
				}
			case <-ended:
			}
		wait:
			for {
				select {
				case <-wake:
					for _, m := range takeReactions() {
						if err := in.Send(ctx, m); err != nil {
							sendErr <- fmt.Errorf("send: %w", err)
							_ = in.Close(closeCtx)
							return
						}
					}
					continue
				case <-mail.wake:
				case <-retry:
				case <-finished:
					break wait
				case <-ended:
					break wait
				}
				retry = nil
				if mail.toInterrupt() {
					err := interrupt(ctx, in, tw, dlg)
					if errors.Is(err, ErrCannotReply) {
						// The protocol's turn is still being made.
						mail.unsent()
						retry = time.After(deliverRetry)
						continue
					}
					if err != nil {
						sendErr <- fmt.Errorf("send an interrupt: %w", err)
						_ = in.Close(closeCtx)
						return
					}
				}
				msgs := mail.take()
				for i, text := range msgs {
					err := deliver(ctx, in, tw, dlg, text)
					if errors.Is(err, ErrCannotReply) {
						// Not yet (the protocol's session or turn is
						// still being made): it waits a moment.
						mail.unshift(msgs[i:])
						retry = time.After(deliverRetry)
						break
					}
					if err != nil {
						sendErr <- fmt.Errorf("send a message: %w", err)
						_ = in.Close(closeCtx)
						return
					}
				}
			}
			_ = in.Close(closeCtx)
		}()
	}
	watch := func(ev Event) {
		if ev.Kind == KindResult && mail.result() {
			once.Do(func() { close(finished) })
		}
		if onEvent != nil {
			onEvent(ev)
		}
	}
	var onLine func([]byte)
	if dlg != nil {
		onLine = react
	}
	o, runErr := execute(ctx, runner, adapter, task, inv, func(spec *kennel.ExecSpec) error {
		if err := prepare(spec); err != nil {
			return err
		}
		startFeeder()
		return nil
	}, func() { close(ended) }, onLine, watch)
	wg.Wait()
	o.Undelivered = mail.close()
	select {
	case err := <-sendErr:
		if runErr == nil {
			runErr = fmt.Errorf("harness: run %s two-way: %w", name, err)
		}
	default:
	}
	return o, runErr
}

// deliver writes a message of the user to the running CLI: through the
// run's dialogue when the protocol has one (it knows the ids a message
// names), otherwise as the adapter builds it.
func deliver(ctx context.Context, in Input, tw TwoWay, dlg Dialogue, text string) error {
	var (
		msg []byte
		err error
	)
	if dlg != nil {
		msg, err = dlg.UserMessage(text)
	} else {
		msg, err = tw.UserMessage(text)
	}
	if err != nil {
		return err
	}
	return in.Send(ctx, msg)
}

// interrupt asks the running CLI to end its turn: through the run's
// dialogue when the protocol has one (it knows the turn's ids).
func interrupt(ctx context.Context, in Input, tw TwoWay, dlg Dialogue) error {
	var (
		msg []byte
		err error
	)
	if dlg != nil {
		msg, err = dlg.Interrupt()
	} else {
		msg, err = tw.Interrupt(fmt.Sprintf("fetch-interrupt-%d", time.Now().UnixNano()))
	}
	if err != nil {
		return err
	}
	return in.Send(ctx, msg)
}

// deliverRetry is how soon a message the protocol could not carry yet is
// tried again.
const deliverRetry = 200 * time.Millisecond

// errNoInput is the error of an Attach that returned no Input.
var errNoInput = errors.New("attach returned no input")
