package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/fetch-dev/fetch/instincts"
	"github.com/fetch-dev/fetch/internal/agent"
	"github.com/fetch-dev/fetch/internal/progress"
	"github.com/fetch-dev/fetch/internal/task"
	"github.com/fetch-dev/fetch/internal/workspace"
)

// agentWorkspaces gives the agent's tools the workspace registry.
type agentWorkspaces struct{ r *workspace.Registry }

func fromInfo(i workspace.Info) agent.Workspace {
	return agent.Workspace{Name: i.Name, Path: i.Path, ProjectType: i.ProjectType, Branch: i.Branch, Dirty: i.Dirty}
}

func (w agentWorkspaces) List(ctx context.Context) ([]agent.Workspace, error) {
	infos, err := w.r.List(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]agent.Workspace, len(infos))
	for i, info := range infos {
		out[i] = fromInfo(info)
	}
	return out, nil
}

// Status describes a workspace's git state in one line.
func (w agentWorkspaces) Status(ctx context.Context, name string) (string, error) {
	st, err := w.r.Status(ctx, name)
	if err != nil {
		return "", err
	}
	var parts []string
	switch {
	case st.Detached:
		parts = append(parts, "detached HEAD")
	default:
		parts = append(parts, "on "+st.Branch)
	}
	if st.Upstream != "" && (st.Ahead > 0 || st.Behind > 0) {
		parts = append(parts, fmt.Sprintf("%d ahead and %d behind %s", st.Ahead, st.Behind, st.Upstream))
	}
	if st.Clean() {
		parts = append(parts, "clean")
	}
	for _, c := range []struct {
		n    int
		what string
	}{{len(st.Staged), "staged"}, {len(st.Modified), "modified"}, {len(st.Untracked), "untracked"}, {len(st.Conflicted), "conflicted"}} {
		if c.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c.n, c.what))
		}
	}
	if st.LastCommit != nil {
		parts = append(parts, fmt.Sprintf("last commit %.7s %q", st.LastCommit.Hash, st.LastCommit.Subject))
	} else {
		parts = append(parts, "no commits yet")
	}
	return strings.Join(parts, ", "), nil
}

func (w agentWorkspaces) Create(ctx context.Context, name, template string) (agent.Workspace, error) {
	info, err := w.r.Create(ctx, name, template)
	return fromInfo(info), err
}

func (w agentWorkspaces) Clone(ctx context.Context, name, url string) (agent.Workspace, error) {
	info, err := w.r.Clone(ctx, name, url)
	return fromInfo(info), err
}

func (w agentWorkspaces) Delete(ctx context.Context, name string) error { return w.r.Delete(ctx, name) }

// agentTasks gives the agent's tools the task engine.
type agentTasks struct {
	e       *task.Engine
	running progress.Running
}

func fromTask(t task.Task) agent.Task {
	return agent.Task{ID: t.ID, ConversationID: t.ConversationID, Workspace: t.Workspace, Goal: t.Goal, Harness: t.Harness,
		Branch: t.Branch, State: string(t.State), Summary: t.Summary, Question: t.Question, ExitCode: t.ExitCode}
}

func (a agentTasks) Create(ctx context.Context, r agent.TaskRequest) (agent.Task, error) {
	t, err := a.e.Create(ctx, task.Request{ConversationID: r.ConversationID, Workspace: r.Workspace, Goal: r.Goal, Harness: r.Harness, Queue: r.Queue})
	return fromTask(t), err
}

func (a agentTasks) Get(ctx context.Context, id string) (agent.Task, error) {
	t, err := a.e.Get(ctx, id)
	return fromTask(t), err
}

func (a agentTasks) Cancel(ctx context.Context, id string) error { return a.e.Cancel(ctx, id) }

func (a agentTasks) Respond(ctx context.Context, id, answer string) error {
	return a.e.Respond(ctx, id, answer)
}

func (a agentTasks) Running(ctx context.Context, conversationID string) (*instincts.Task, error) {
	return a.running.Running(ctx, conversationID)
}
