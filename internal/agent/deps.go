package agent

import (
	"context"

	"github.com/fetch-dev/fetch/identity"
	"github.com/fetch-dev/fetch/instincts"
	"github.com/fetch-dev/fetch/internal/chat"
	"github.com/fetch-dev/fetch/internal/llm"
	"github.com/fetch-dev/fetch/internal/store"
	"github.com/fetch-dev/fetch/internal/task"
	"github.com/fetch-dev/fetch/internal/workspace"
)

// Completer is the LLM; *llm.Client satisfies it.
type Completer interface {
	Complete(ctx context.Context, req llm.Request) (llm.Response, error)
}

// Identities gives the identity in force; *identity.Set satisfies it.
type Identities interface {
	Current() *identity.Identity
}

// Workspaces is what the tools need of the workspace registry;
// *workspace.Registry satisfies it.
type Workspaces interface {
	List(ctx context.Context) ([]workspace.Info, error)
	Status(ctx context.Context, name string) (workspace.Status, error)
	Create(ctx context.Context, name, template string) (workspace.Info, error)
	Clone(ctx context.Context, name, url string) (workspace.Info, error)
	Delete(ctx context.Context, name string) error
}

// Tasks is what the tools need of the task engine; *task.Engine
// satisfies it.
type Tasks interface {
	Create(ctx context.Context, r task.Request) (task.Task, error)
	// CreatePlan makes a task whose CLI plans first, read-only (its plan
	// goes to the owner); a harness without a plan mode is ErrInvalid.
	CreatePlan(ctx context.Context, r task.Request) (task.Task, error)
	Get(ctx context.Context, id string) (task.Task, error)
	Cancel(ctx context.Context, id string) error
	Respond(ctx context.Context, id, answer string) error
	// Tell gives the owner's message to a task: to its CLI while it works
	// (or as its next run), or as a follow-up run when it ended.
	Tell(ctx context.Context, id, text, by string, atts ...task.Attachment) (task.Told, error)
	// Retry runs an ended task that did not succeed again, as asked.
	Retry(ctx context.Context, id string) error
	// RequestShip starts pushing a finished task's branch and opening its
	// pull request; the outcome comes to the chat by itself.
	RequestShip(ctx context.Context, id string) error
	// Active lists the conversation's tasks that run or wait for an
	// answer: the turn offers task_cancel and task_respond by them.
	Active(ctx context.Context, conversationID string) ([]task.Task, error)
}

// Running finds a conversation's running task (progress.Running, the
// conversation runtime's view of the engine).
type Running interface {
	Running(ctx context.Context, conversationID string) (*instincts.Task, error)
}

// Resolver continues what waited on a prompt; the agent hands prompts that
// are not its own (a harness's question) to the next one.
type Resolver interface {
	Resolved(ctx context.Context, p store.Prompt, answer string, role chat.Role) ([]chat.Reply, error)
}
