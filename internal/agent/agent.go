package agent

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/fetch-dev/fetch/instincts"
	"github.com/fetch-dev/fetch/intent"
	"github.com/fetch-dev/fetch/internal/chat"
	"github.com/fetch-dev/fetch/internal/store"
	"github.com/fetch-dev/fetch/internal/task"
)

// Budget limits what the LLM may cost. Zero means no limit.
type Budget struct {
	TurnTokens int
	TurnCost   float64
	DayTokens  int
	DayCost    float64
	// TaskDayCost is the day's budget for tasks and the orchestrator
	// together (FETCH_DAILY_BUDGET_USD, store.DaySpend): over it, starting
	// a task needs the owner's approval. 0 means no cap.
	TaskDayCost float64
}

// MaxTokens caps the answer of each kind of LLM call (max_tokens,
// reasoning included for models that reason). Zero takes the default.
// Summaries of older turns are made without the LLM, so there is no cap
// for them.
type MaxTokens struct {
	// Tools caps a call that may answer with tool calls (default 4096:
	// a task_create with a long goal, or a reasoning model's thinking
	// before it).
	Tools int
	// Final caps the final answer without tools (default 2048: the
	// owner reads a line or two on a phone).
	Final int
}

// Config is what an Agent needs. Store, LLM, Identity and Logger are
// required; without Workspaces or Tasks their tools answer that they are
// not available.
type Config struct {
	Store      *store.DB
	LLM        Completer
	Identity   Identities
	Workspaces Workspaces
	Tasks      Tasks
	// Code reads workspaces' source for the code tools and the prompt's
	// repository map; without it the code tools answer that they are not
	// available.
	Code Code
	// Running finds the conversation's running task; required with Tasks.
	Running Running
	// Next resolves prompts that are not the agent's.
	Next   Resolver
	Logger *slog.Logger
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// MaxRounds bounds an action's tool rounds (default 8).
	MaxRounds int
	// TurnTime bounds a turn's tool rounds (default 5m); then one final
	// answer is asked for, which gets what is left plus a grace of
	// TurnTime/4, at most 20s. Every LLM call of the turn, retries
	// included, ends by then; a provider that has not answered by then
	// is reported to the owner as not answering.
	TurnTime time.Duration
	// HistoryTurns is how many whole turns the model sees; older ones
	// are summarised (default 12).
	HistoryTurns int
	// HistoryTokens bounds those turns, counted with the tokenizer
	// (default 15,000); the newest turn is sent whatever its size.
	HistoryTokens int
	// ApprovalTTL is how long an approval stays open (default 1h).
	ApprovalTTL time.Duration
	Budget      Budget
	// MaxTokens caps each call's answer.
	MaxTokens MaxTokens
	// Harnesses are the names task_create and task_ask accept; a call
	// naming another is refused with the list. Empty: not checked here
	// (the engine still refuses an unknown one).
	Harnesses []string
}

// Agent is the ReAct loop with its tools.
type Agent struct {
	cfg   Config
	log   *slog.Logger
	now   func() time.Time
	tools map[string]*tool
	order []string
}

// New builds an Agent.
func New(cfg Config) (*Agent, error) {
	if cfg.Store == nil || cfg.LLM == nil || cfg.Identity == nil || cfg.Logger == nil {
		return nil, fmt.Errorf("agent: new: Store, LLM, Identity and Logger are required")
	}
	if cfg.Tasks != nil && cfg.Running == nil {
		return nil, fmt.Errorf("agent: new: Tasks needs Running")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.MaxRounds <= 0 {
		cfg.MaxRounds = 8
	}
	if cfg.TurnTime <= 0 {
		cfg.TurnTime = 5 * time.Minute
	}
	if cfg.HistoryTurns <= 0 {
		cfg.HistoryTurns = 12
	}
	if cfg.HistoryTokens <= 0 {
		cfg.HistoryTokens = 15_000
	}
	if cfg.ApprovalTTL <= 0 {
		cfg.ApprovalTTL = time.Hour
	}
	if cfg.MaxTokens.Tools <= 0 {
		cfg.MaxTokens.Tools = 4096
	}
	if cfg.MaxTokens.Final <= 0 {
		cfg.MaxTokens.Final = 2048
	}
	a := &Agent{cfg: cfg, log: cfg.Logger, now: cfg.Now}
	if err := a.register(); err != nil {
		return nil, err
	}
	return a, nil
}

// Turn is one message for the agent: conversation.Turn without the
// import.
type Turn struct {
	ConversationID string
	UserID         string
	// Role is the sender's: the owner's tools (workspace_create,
	// workspace_delete, task_ship) are refused to anyone else.
	Role   chat.Role
	Text   string
	Intent intent.Result
	// Attachments came with the message: the task the turn starts or
	// tells (task_create, task_message) gets them.
	Attachments []task.Attachment
	// Notify sends progress to the conversation at once.
	Notify func(ctx context.Context, r chat.Reply) error
}

// Respond runs one turn and returns its replies. A failure of the LLM
// provider (a timeout, 5xx, 429, a rejected key, a cut-off answer) is a
// reply saying so and what to do; the error is for failures of Fetch
// itself and for a stopped turn, whose context's cause it returns.
func (a *Agent) Respond(ctx context.Context, t Turn) ([]chat.Reply, error) {
	r, err := a.newRun(ctx, t.ConversationID, t.Intent.Kind, t.Role)
	if err != nil {
		return nil, err
	}
	r.notify = t.Notify
	r.attachments = t.Attachments
	return r.run(ctx, t.Text)
}

// Autonomy levels, re-exported for readers of this package.
const (
	Supervised = instincts.Supervised
	Cautious   = instincts.Cautious
	Autonomous = instincts.Autonomous
)
