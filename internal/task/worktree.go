package task

import (
	"context"
	"errors"
	"fmt"

	"github.com/fetch-dev/fetch/internal/workspace"
)

// Discard deletes an ended task's worktree and its branch, whatever they
// hold: the owner decided the work is not wanted.
func (e *Engine) Discard(ctx context.Context, id string) error {
	t, err := e.Get(ctx, id)
	if err != nil {
		return err
	}
	if !t.State.Terminal() {
		return fmt.Errorf("task: discard %s: it is %s; cancel it first: %w", id, t.State, ErrState)
	}
	if t.Worktree == "" {
		return nil
	}
	if err := e.cfg.Workspaces.RemoveWorktree(ctx, t.worktree(), true); err != nil {
		return fmt.Errorf("task: discard %s: %w", id, err)
	}
	t.Worktree = ""
	if err := e.save(ctx, t, t.State, ""); err != nil {
		return fmt.Errorf("task: discard %s: %w", id, err)
	}
	e.log.Info("task discarded", "task", id, "branch", t.Branch)
	return nil
}

// Prune removes the worktrees of ended tasks whose branch was merged into
// the branch it started from or pushed: their work exists elsewhere. The
// branches stay. It returns the ids of the tasks pruned.
func (e *Engine) Prune(ctx context.Context) ([]string, error) {
	ended, err := e.list(ctx, Filter{States: []State{Succeeded, Failed, Cancelled, NeedsAttention}, Limit: 100000})
	if err != nil {
		return nil, fmt.Errorf("task: prune: %w", err)
	}
	var pruned []string
	for _, t := range ended {
		if t.Worktree == "" {
			continue
		}
		err := e.cfg.Workspaces.RemoveWorktree(ctx, t.worktree(), false)
		switch {
		case errors.Is(err, workspace.ErrUnsafe), errors.Is(err, workspace.ErrNotFound):
			continue
		case err != nil:
			return pruned, fmt.Errorf("task: prune %s: %w", t.ID, err)
		}
		t.Worktree = ""
		if err := e.save(ctx, t, t.State, ""); err != nil {
			return pruned, fmt.Errorf("task: prune %s: %w", t.ID, err)
		}
		pruned = append(pruned, t.ID)
	}
	return pruned, nil
}
