package agent

import (
	"context"

	"github.com/fetch-dev/fetch/identity"
	"github.com/fetch-dev/fetch/instincts"
	"github.com/fetch-dev/fetch/internal/chat"
	"github.com/fetch-dev/fetch/internal/llm"
	"github.com/fetch-dev/fetch/internal/store"
	"github.com/fetch-dev/fetch/modes"
)

// Completer is the LLM; *llm.Client satisfies it.
type Completer interface {
	Complete(ctx context.Context, req llm.Request) (llm.Response, error)
}

// Identities gives the identity in force; *identity.Set satisfies it.
type Identities interface {
	Current() *identity.Identity
}

// Workspace is one workspace as the registry describes it.
type Workspace struct {
	Name, Path, ProjectType, Branch string
	Dirty                           bool
}

// Workspaces is what the tools need of the workspace registry.
type Workspaces interface {
	List(ctx context.Context) ([]Workspace, error)
	// Status describes a workspace's git state in a line or two.
	Status(ctx context.Context, name string) (string, error)
	Create(ctx context.Context, name, template string) (Workspace, error)
	Clone(ctx context.Context, name, url string) (Workspace, error)
	Delete(ctx context.Context, name string) error
}

// TaskRequest asks the task engine for a task.
type TaskRequest struct {
	ConversationID, Workspace, Goal, Harness string
	Queue                                    bool
}

// Task is a task as the engine reports it.
type Task struct {
	ID, ConversationID, Workspace, Goal, Harness, Branch string
	State, Summary, Question                             string
	ExitCode                                             int
}

// Tasks is what the tools need of the task engine.
type Tasks interface {
	Create(ctx context.Context, r TaskRequest) (Task, error)
	Get(ctx context.Context, id string) (Task, error)
	Cancel(ctx context.Context, id string) error
	Respond(ctx context.Context, id, answer string) error
	// Running is the conversation's running task, nil when none.
	Running(ctx context.Context, conversationID string) (*instincts.Task, error)
}

// Resolver continues what waited on a prompt; the agent hands prompts that
// are not its own (a harness's question) to the next one.
type Resolver interface {
	Resolved(ctx context.Context, p store.Prompt, answer string) ([]chat.Reply, error)
}

// FireFunc queues a mode event for a conversation (conversation.Manager's
// Fire); used when the agent runs without the mode machine at hand, in
// Resolved.
type FireFunc func(ctx context.Context, conversationID string, e modes.Event, reason string) error
