package workspace

import (
	"context"
	"fmt"
)

// Selections persists the workspace selected in each conversation;
// *store.DB implements it.
type Selections interface {
	SetWorkspace(ctx context.Context, conversationID, workspace string) error
}

// Select makes name the conversation's workspace, after checking that it
// exists; nothing is recorded otherwise.
func (r *Registry) Select(ctx context.Context, s Selections, conversationID, name string) (Info, error) {
	info, err := r.Get(ctx, name)
	if err != nil {
		return Info{}, fmt.Errorf("workspace: select: %w", err)
	}
	if err := s.SetWorkspace(ctx, conversationID, name); err != nil {
		return Info{}, fmt.Errorf("workspace: select %s: %w", name, err)
	}
	return info, nil
}
