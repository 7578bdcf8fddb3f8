package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
	"time"

	"github.com/fetch-dev/fetch/instincts"
	"github.com/fetch-dev/fetch/intent"
	"github.com/fetch-dev/fetch/internal/chat"
	"github.com/fetch-dev/fetch/internal/llm"
	"github.com/fetch-dev/fetch/internal/progress"
	"github.com/fetch-dev/fetch/internal/store"
	"github.com/fetch-dev/fetch/internal/task"
)

const (
	// conversationCalls bounds the tool calls of a conversation turn.
	conversationCalls = 2
	// maxResult bounds one tool result kept in history and sent back.
	maxResult = 4000
	// repeatWarn and repeatStop are how many identical calls draw a
	// warning and end the turn.
	repeatWarn = 3
	repeatStop = 5
	// maxFinalGrace caps the time the final answer gets beyond the turn's
	// wall time (see finalGrace).
	maxFinalGrace = 20 * time.Second
)

// finalGrace is how long past the turn's wall time its final answer may
// take: a quarter of the turn time, at most maxFinalGrace. A turn that ran
// out of time still owes the owner an answer, and a final answer without
// tools over the turn's history takes a model seconds, not minutes; a
// provider that cannot give one in that time is reported as not answering.
// So every LLM call of a turn ends by TurnTime + finalGrace(TurnTime).
func finalGrace(turn time.Duration) time.Duration {
	return min(maxFinalGrace, turn/4)
}

// run is one turn in progress. It lives on the conversation's goroutine
// for the length of Respond or Resolved.
type run struct {
	a    *Agent
	conv string
	// started is when the turn began: its completions, recorded since,
	// are attributed to the one task it created (attribute).
	started time.Time
	kind    intent.Kind
	// role is the sender's: an allowed user's turn is refused the
	// owner's tools (refuse).
	role      chat.Role
	notify    func(ctx context.Context, r chat.Reply) error
	workspace string
	autonomy  instincts.Autonomy
	summary   string
	history   []llm.Message
	text      string

	msgs    []llm.Message
	usage   llm.Usage
	created []task.Task
	// told are the messages given to tasks this turn (task_message).
	told []task.Told
	// notes are facts the reply carries whatever the model says (a task
	// refused for asking more than its workspace allows).
	notes []string
	// attachments came with the message; the first task the turn starts
	// or tells takes them (takeAttachments).
	attachments []task.Attachment

	seen  map[string]int
	trail []string

	// knowsTasks: the conversation has a task to ask about or ship (see
	// tasksKnown); activeTask: one of its tasks runs or waits, which
	// task_cancel needs; waitingTask: one waits for an answer, which
	// task_respond needs; otherWorkspace: a workspace besides the
	// selected one exists, to select or delete. All as the turn starts.
	knowsTasks, activeTask, waitingTask, otherWorkspace bool
	// tools are the tools offered in every call of the turn (offered).
	tools []llm.Tool

	// system is the system prompt; fixed the length of its fixed part,
	// which ends at a cache breakpoint.
	system      string
	fixed       int
	promptDirty bool
	lastRound   bool

	ended   bool
	final   string
	actions []chat.Action
}

func (a *Agent) newRun(ctx context.Context, conv string, kind intent.Kind, role chat.Role) (*run, error) {
	c, err := a.cfg.Store.Conversation(ctx, conv)
	if err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	summary, history, err := a.window(ctx, conv)
	if err != nil {
		return nil, err
	}
	level, ok := instincts.ParseAutonomy(c.Autonomy)
	if !ok {
		level = instincts.Cautious
	}
	return &run{a: a, conv: conv, kind: kind, role: role, workspace: c.Workspace, autonomy: level, started: a.now(),
		summary: summary, history: history, seen: map[string]int{}, promptDirty: true}, nil
}

// limits are how many tool rounds and calls the intent allows.
func (r *run) limits() (rounds, calls int) {
	switch r.kind {
	case intent.Conversation:
		return conversationCalls, conversationCalls
	case intent.Inquiry:
		return 1, 1 << 30
	case intent.Action:
		return r.a.cfg.MaxRounds, 1 << 30
	}
	return 0, 0
}

// run is the ReAct loop for one user message.
func (r *run) run(ctx context.Context, text string) ([]chat.Reply, error) {
	log := r.a.log.With("conversation", r.conv, "intent", r.kind)
	r.text = text
	r.msgs = []llm.Message{{Role: llm.User, Content: text}}
	r.knowsTasks = r.tasksKnown(ctx)
	r.survey(ctx)
	r.tools = r.offered()
	rounds, calls := r.limits()
	// Tool rounds run until the turn's deadline; the final answer has
	// whatever is left of it plus a grace. Both end at once on a stop:
	// they derive from ctx.
	turnCtx, cancel := context.WithTimeoutCause(ctx, r.a.cfg.TurnTime, ErrTurnTime)
	defer cancel()
	deadline, _ := turnCtx.Deadline()
	finalCtx, cancelFinal := context.WithDeadlineCause(ctx, deadline.Add(finalGrace(r.a.cfg.TurnTime)), ErrTurnTime)
	defer cancelFinal()

	for round := 0; ; round++ {
		if ctx.Err() != nil {
			return nil, r.stopped(ctx)
		}
		if over, err := r.overBudget(ctx); err != nil {
			return nil, err
		} else if over != nil {
			return r.pause(ctx, over)
		}
		withTools := round < rounds && calls > 0 && turnCtx.Err() == nil
		r.lastRound = !withTools
		callCtx := turnCtx
		if !withTools {
			callCtx = finalCtx
		}
		if r.promptDirty || !withTools {
			r.system, r.fixed = r.buildPrompt(ctx)
			r.promptDirty = false
		}
		req := r.request(withTools)
		resp, err := r.a.cfg.LLM.Complete(callCtx, req)
		if err != nil {
			if ctx.Err() != nil {
				return nil, r.stopped(ctx)
			}
			if withTools && errors.Is(context.Cause(turnCtx), ErrTurnTime) {
				log.Info("turn out of time; asking for the final answer")
				rounds = round + 1
				continue
			}
			// The provider's failure (or Fetch's) is a reply to the
			// owner, not an error of the turn.
			log.Warn("completion failed", "final", !withTools, "err", err)
			msg := userMessage(err)
			r.close("(The request failed: " + msg + ")")
			r.save(ctx)
			return []chat.Reply{chat.Text(msg)}, nil
		}
		r.record(ctx, resp.Usage)
		m := resp.Message
		if !withTools || len(m.ToolCalls) == 0 {
			final := strings.TrimSpace(m.Content)
			if final == "" {
				final = "I have nothing more to add."
				if len(m.ToolCalls) > 0 {
					final = fmt.Sprintf("I stopped after %d rounds of tool use; ask me to continue if there is more to do.", round)
				}
			}
			r.msgs = append(r.msgs, llm.Message{Role: llm.Assistant, Content: final})
			r.final = final
			break
		}
		for i := range m.ToolCalls {
			if m.ToolCalls[i].ID == "" || r.callIDTaken(m.ToolCalls[i].ID, m.ToolCalls[:i]) {
				m.ToolCalls[i].ID = fmt.Sprintf("call_%d_%d", round, i)
			}
		}
		// History keeps only arguments a provider accepts back; the raw
		// ones are decoded below and what was wrong goes in the result.
		kept := make([]llm.ToolCall, len(m.ToolCalls))
		for i, c := range m.ToolCalls {
			kept[i] = c
			kept[i].Arguments = resendable(c.Arguments)
		}
		r.msgs = append(r.msgs, llm.Message{Role: llm.Assistant, Content: m.Content, ToolCalls: kept})
		for _, c := range m.ToolCalls {
			var result string
			switch {
			case r.ended:
				result = "Not run: the turn ended before this call (waiting for the owner)."
			case calls <= 0:
				result = fmt.Sprintf("Not run: a %s allows at most %d tool calls. Answer now.", r.kind, conversationCalls)
			default:
				calls--
				result = r.execute(turnCtx, c)
			}
			r.msgs = append(r.msgs, llm.Message{Role: llm.ToolRole, ToolCallID: c.ID, Content: result})
		}
		if r.ended {
			r.msgs = append(r.msgs, llm.Message{Role: llm.Assistant, Content: r.final})
			break
		}
	}
	r.save(ctx)
	return r.replies(), nil
}

// request is the next completion request. Its cacheable prefix ends at
// two breakpoints: after the fixed part of the system prompt (with the
// tools, which providers put before it), which stays the same from call to
// call and turn to turn; and after the turn's message (with the history),
// which the later calls of the turn repeat. Providers that cache only what
// is marked (llm.TakesCacheMarkers) read these; the others cache prefixes
// by themselves. Every call caps its answer (MaxTokens).
func (r *run) request(withTools bool) llm.Request {
	msgs := make([]llm.Message, 0, 1+len(r.history)+len(r.msgs))
	msgs = append(msgs, llm.Message{Role: llm.System, Content: r.system, CacheUpTo: r.fixed})
	msgs = append(msgs, r.history...)
	msgs = append(msgs, r.msgs...)
	// The turn's message is r.msgs[0], always a user message.
	turn := &msgs[1+len(r.history)]
	turn.CacheUpTo = len(turn.Content)
	limit := r.a.cfg.MaxTokens.Tools
	if !withTools {
		limit = r.a.cfg.MaxTokens.Final
	}
	return llm.Request{Messages: msgs, Tools: r.tools, NoToolCalls: !withTools, MaxTokens: limit}
}

// survey looks, as the turn starts, at what the conversation has that
// decides which tools it is offered: its tasks that run or wait, and the
// workspaces besides the selected one. A look-up that fails offers the
// tools (they answer for themselves when called).
func (r *run) survey(ctx context.Context) {
	r.activeTask, r.waitingTask, r.otherWorkspace = false, false, false
	if r.a.cfg.Tasks != nil {
		active, err := r.a.cfg.Tasks.Active(ctx, r.conv)
		if err != nil {
			r.a.log.Info("active tasks for the tools", "conversation", r.conv, "err", err)
			r.activeTask, r.waitingTask = true, true
		}
		for _, t := range active {
			r.activeTask = true
			r.waitingTask = r.waitingTask || t.State == task.WaitingInput
		}
	}
	if r.a.cfg.Workspaces != nil {
		ws, err := r.a.cfg.Workspaces.List(ctx)
		if err != nil {
			r.a.log.Info("workspaces for the tools", "conversation", r.conv, "err", err)
			r.otherWorkspace = true
		}
		for _, w := range ws {
			r.otherWorkspace = r.otherWorkspace || w.Name != r.workspace
		}
	}
	// An active task is a task the conversation knows of.
	r.knowsTasks = r.knowsTasks || r.activeTask
}

// tasksKnown tells whether the conversation has a task the task tools
// could name, as the turn starts: one is running, the history the model
// sees started one or reported one's end (Remember), or the summary or the
// message speak of a task. A task started in this turn does not count:
// its id is in the turn, and asking about it waits for the next message.
func (r *run) tasksKnown(ctx context.Context) bool {
	if r.a.cfg.Tasks == nil {
		return false
	}
	if r.a.cfg.Running != nil {
		if t, err := r.a.cfg.Running.Running(ctx, r.conv); err == nil && t != nil {
			return true
		}
	}
	for _, m := range r.history {
		if m.Role == llm.User && m.Content == noteIntro {
			return true
		}
		for _, c := range m.ToolCalls {
			if c.Name == "task_create" || c.Name == "task_ask" {
				return true
			}
		}
	}
	return mentionsTask.MatchString(r.summary) || mentionsTask.MatchString(r.text)
}

// mentionsTask matches text that speaks of a task.
var mentionsTask = regexp.MustCompile(`(?i)\btasks?\b`)

// stopped closes and saves a turn whose context was cancelled (/stop,
// shutdown) and returns the cause.
func (r *run) stopped(ctx context.Context) error {
	r.close("(Stopped before finishing.)")
	r.save(ctx)
	return fmt.Errorf("agent: %w", context.Cause(ctx))
}

func (r *run) callIDTaken(id string, before []llm.ToolCall) bool {
	for _, c := range before {
		if c.ID == id {
			return true
		}
	}
	for _, m := range r.msgs {
		for _, c := range m.ToolCalls {
			if c.ID == id {
				return true
			}
		}
	}
	return false
}

// execute runs one tool call and returns the result the model reads.
func (r *run) execute(ctx context.Context, c llm.ToolCall) string {
	t := r.a.tools[c.Name]
	if t == nil {
		return fmt.Sprintf("error: there is no tool %q. The tools are: %s.", c.Name, strings.Join(toolNames(r.tools), ", "))
	}
	if !allowed(t, r.kind) {
		return fmt.Sprintf("error: %s is not available for this %s. Available: %s.", c.Name, r.kind, strings.Join(toolNames(r.tools), ", "))
	}
	if refusal := r.refuse(t); refusal != "" {
		r.a.log.Info("tool refused to a non-owner", "conversation", r.conv, "tool", c.Name, "role", r.role)
		return refusal
	}
	p, err := t.decode(c.Arguments)
	if err != nil {
		return fmt.Sprintf("error: %s: %v", c.Name, err)
	}
	key := c.Name + " " + p.args
	r.seen[key]++
	n := r.seen[key]
	if n >= repeatStop {
		r.end(fmt.Sprintf("I stopped: I called %s with the same arguments %d times without getting anywhere. Tell me how you'd like to go on.", c.Name, n), nil)
		return fmt.Sprintf("error: stopped — %s was called %d times with the same arguments.", c.Name, n)
	}
	if p.check != nil {
		if err := p.check(ctx, r); err != nil {
			return fmt.Sprintf("error: %s: %v", c.Name, err)
		}
	}
	if p.danger == "" && (c.Name == "task_create" || c.Name == "task_ask") {
		p.danger = r.overTaskDay(ctx)
	}
	if p.danger != "" || (r.autonomy == instincts.Supervised && c.Name == "task_create") {
		return r.requestApproval(ctx, t, p)
	}
	out, err := p.run(ctx, r)
	result := out
	if err != nil {
		r.a.log.Info("tool failed", "conversation", r.conv, "tool", c.Name, "err", err)
		result = fmt.Sprintf("error: %s failed: %v", c.Name, err)
	} else if t.changesContext {
		r.promptDirty = true
	}
	result = boundTo(result, t.maxResult)
	if n == repeatWarn {
		result += fmt.Sprintf("\n\nWarning: this is the %d. identical call of %s; the result will not change. Do something else or answer.", n, c.Name)
	}
	r.trail = append(r.trail, key+"\x00"+result)
	if k := len(r.trail); k >= 4 && r.trail[k-1] == r.trail[k-3] && r.trail[k-2] == r.trail[k-4] && r.trail[k-1] != r.trail[k-2] {
		result += "\n\nWarning: you are alternating between the same two calls without progress. Stop and answer, or try something different."
	}
	return result
}

// resendable is a tool call's arguments as history may send them back:
// the JSON object itself, or {} in place of anything else, which providers
// reject and which would poison every later request.
func resendable(raw string) string {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(raw), &obj); err != nil || obj == nil {
		return "{}"
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(raw)); err != nil {
		return "{}"
	}
	return buf.String()
}

// boundTo cuts s to limit bytes (maxResult when 0).
func boundTo(s string, limit int) string {
	if limit <= 0 {
		limit = maxResult
	}
	if len(s) <= limit {
		return s
	}
	return s[:limit] + "\n…(truncated)"
}

// end finishes the turn after the current tool calls with text as the
// reply to the owner.
func (r *run) end(text string, actions []chat.Action) {
	r.ended, r.final, r.actions = true, text, actions
}

// close ends an unfinished turn so that its history stays valid: pending
// tool calls get a result and the turn ends with an assistant message.
func (r *run) close(note string) {
	if last := r.msgs[len(r.msgs)-1]; last.Role == llm.Assistant && len(last.ToolCalls) > 0 {
		for _, c := range last.ToolCalls {
			r.msgs = append(r.msgs, llm.Message{Role: llm.ToolRole, ToolCallID: c.ID, Content: "Not run: the turn ended."})
		}
	}
	r.msgs = append(r.msgs, llm.Message{Role: llm.Assistant, Content: note})
}

// save persists the turn, even when its context was cancelled.
func (r *run) save(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := r.a.saveTurn(ctx, r.conv, r.kind, r.msgs); err != nil {
		r.a.log.Error("save turn", "conversation", r.conv, "err", err)
	}
	r.attribute(ctx)
}

// attribute ties the turn's completions to the task it created, so that
// they count in the task's cost (and its budget). A turn that created
// several tasks was about all of them: its completions stay the
// orchestrator's, counted in the day's spend but in no task's.
func (r *run) attribute(ctx context.Context) {
	if len(r.created) != 1 {
		return
	}
	if err := r.a.cfg.Store.AttributeUsage(ctx, r.conv, r.started, r.created[0].ID); err != nil {
		r.a.log.Error("attribute the turn's usage to its task", "conversation", r.conv, "task", r.created[0].ID, "err", err)
	}
}

// record stores a completion's usage. What the provider read from its
// cache goes to the log (the store keeps totals). A usage with a negative,
// NaN or infinite figure is logged and taken as not reported: summed, it
// would lower the day's spend and the cost of a task it is attributed to.
func (r *run) record(ctx context.Context, u llm.Usage) {
	if u.PromptTokens < 0 || u.CompletionTokens < 0 || u.CachedTokens < 0 || u.CacheWriteTokens < 0 || !(u.Cost >= 0) || math.IsInf(u.Cost, 1) {
		r.a.log.Warn("completion usage refused: a negative, NaN or infinite figure; treated as not reported", "conversation", r.conv,
			"prompt_tokens", u.PromptTokens, "completion_tokens", u.CompletionTokens, "cost", u.Cost)
		return
	}
	r.usage = r.usage.Add(u)
	r.a.log.Debug("completion usage", "conversation", r.conv, "prompt_tokens", u.PromptTokens, "cached_tokens", u.CachedTokens,
		"cache_write_tokens", u.CacheWriteTokens, "completion_tokens", u.CompletionTokens, "cost", u.Cost)
	err := r.a.cfg.Store.AddUsage(context.WithoutCancel(ctx), r.conv, store.Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, Cost: u.Cost})
	if err != nil {
		r.a.log.Error("record usage", "conversation", r.conv, "err", err)
	}
}

// replies is what the owner reads at the end of the turn. A task created
// in the turn is always reported with its id, whatever the model said.
func (r *run) replies() []chat.Reply {
	text := r.final
	for _, t := range r.created {
		if !strings.Contains(text, t.ID) {
			text += fmt.Sprintf("\nTask %s started (%s in %s).", t.ID, or(t.Harness, "default harness"), t.Workspace)
		}
	}
	for _, n := range r.notes {
		if !strings.Contains(text, n) {
			text += "\n" + n
		}
	}
	actions := r.actions
	// What became of a message to a task is said whatever the model says.
	for _, t := range r.told {
		told := progress.Told(t)
		text += "\n" + told.Text
		actions = append(actions, told.Actions...)
	}
	return []chat.Reply{{Text: text, Actions: actions}}
}

// takeAttachments returns the message's files once: the first task the
// turn starts or tells gets them.
func (r *run) takeAttachments() []task.Attachment {
	atts := r.attachments
	r.attachments = nil
	return atts
}
