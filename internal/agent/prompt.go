package agent

import (
	"context"
	_ "embed"
	"fmt"
	"strings"
	"text/template"

	"github.com/fetch-dev/fetch/identity"
	"github.com/fetch-dev/fetch/instincts"
	"github.com/fetch-dev/fetch/intent"
	"github.com/fetch-dev/fetch/internal/workspace"
)

// The system prompt is two templates: the fixed part (who Fetch is, the
// owner, the harness pack, the selected workspace's code map), which stays
// the same from call to call and ends at a cache breakpoint, and the
// session part (skills for this message, the workspace's state, the
// running task, the summary, the instruction), which may change at every
// call and comes after it.
var (
	//go:embed prompts/system.md
	systemText string
	//go:embed prompts/session.md
	sessionText string

	systemTemplate  = template.Must(template.New("system").Parse(systemText))
	sessionTemplate = template.Must(template.New("session").Parse(sessionText))
)

type promptData struct {
	Collar, Alpha string
	Agents        []identity.Agent
	Skills        []identity.Skill
	Workspace     string
	GitState      string
	RepoMap       string
	Task          *instincts.Task
	Autonomy      instincts.Autonomy
	Summary       string
	Instruction   string
}

// buildPrompt is the system prompt for the next request — the identity,
// the code map, the skills the message triggers, and the session as it is
// now — and the length of its fixed part, which ends at a cache
// breakpoint (llm.Message.CacheUpTo). The harness pack comes only to a
// turn offered task_create, the one tool that starts a task: elsewhere it
// would be paid for in every call and never used.
func (r *run) buildPrompt(ctx context.Context) (prompt string, fixed int) {
	id := r.a.cfg.Identity.Current()
	d := promptData{
		Collar: id.Collar, Alpha: id.Alpha, Skills: id.ActiveSkills(r.text),
		Workspace: r.workspace, Autonomy: r.autonomy, Summary: r.summary, Instruction: r.instruction(),
	}
	if r.offers("task_create") {
		d.Agents = id.Agents
	}
	if r.workspace != "" && r.a.cfg.Workspaces != nil {
		if st, err := promptStatus(ctx, r.a.cfg.Workspaces, r.workspace); err == nil {
			d.GitState = clip(describeStatus(st), 300)
		} else {
			r.a.log.Info("workspace status for the prompt", "workspace", r.workspace, "err", err)
		}
	}
	d.RepoMap = r.repoMap(ctx)
	if r.a.cfg.Running != nil {
		if t, err := r.a.cfg.Running.Running(ctx, r.conv); err == nil {
			d.Task = t
		}
	}
	var head, tail strings.Builder
	if err := systemTemplate.Execute(&head, d); err != nil {
		r.a.log.Error("system prompt", "err", err)
	}
	if err := sessionTemplate.Execute(&tail, d); err != nil {
		r.a.log.Error("system prompt", "err", err)
	}
	fixedText := strings.TrimSpace(head.String())
	return fixedText + "\n\n" + strings.TrimSpace(tail.String()), len(fixedText)
}

// awakeStatus reads a workspace's git state only if its kennel runs
// (*workspace.Registry): the prompt shows it in passing, and a question
// must not start a kennel.
type awakeStatus interface {
	StatusIfAwake(ctx context.Context, name string) (workspace.Status, error)
}

// promptStatus is the workspace's git state for the prompt: without
// starting its kennel when the registry can tell.
func promptStatus(ctx context.Context, ws Workspaces, name string) (workspace.Status, error) {
	if a, ok := ws.(awakeStatus); ok {
		return a.StatusIfAwake(ctx, name)
	}
	return ws.Status(ctx, name)
}

func (r *run) instruction() string {
	if r.lastRound {
		return "No more tool calls: answer the owner now, in text, with what you have."
	}
	switch r.kind {
	case intent.Conversation:
		return fmt.Sprintf("The owner is chatting: answer briefly, with at most %d look-ups; change nothing.", conversationCalls)
	case intent.Inquiry:
		return "The owner asks a question: look it up in one round of tool calls, then answer."
	}
	return fmt.Sprintf("Do what the owner asks with the tools (at most %d rounds), then answer in a line or two.", r.a.cfg.MaxRounds)
}
