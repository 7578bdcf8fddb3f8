package conversation

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/fetch-dev/fetch/instincts"
	"github.com/fetch-dev/fetch/internal/chat"
	"github.com/fetch-dev/fetch/internal/store"
)

// Workspaces is what /use needs of the workspace registry
// (*workspace.Registry).
type Workspaces interface {
	// Names lists the workspaces, sorted.
	Names(ctx context.Context) ([]string, error)
	// Root is the folder the workspaces are in.
	Root() string
}

// Allowlist carries out /allow add|remove|list, like Scheduler: the change
// commits with the command's message, and its after updates who is
// admitted.
type Allowlist interface {
	ApplyTx(ctx context.Context, tx *sql.Tx, conversationID, userID string, r instincts.Response) (reply string, after func(), err error)
}

// Hosts carries out /hosts (list, add, remove) for the workspace the
// instinct names, like Scheduler: the change commits with the command's
// message. It checks the host (the instinct passes it on as typed) and
// refuses a bad one in its reply, changing nothing. Describe is /status's
// line on the kennels' way out for the selected workspace (workspace ""
// when none is; "" shows no line).
type Hosts interface {
	ApplyTx(ctx context.Context, tx *sql.Tx, conversationID, userID string, r instincts.Response) (reply string, after func(), err error)
	Describe(ctx context.Context, workspace string) string
}

// use is /use's effect: the conversation's workspace becomes
// r.Workspace when it exists, as the agent's workspace_select makes it;
// /use alone lists the workspaces. An unknown name changes nothing.
func (s *session) use(it item, r instincts.Response) effect {
	return effect{write: func(ctx context.Context, tx *sql.Tx) ([]chat.Reply, func(), error) {
		reply := func(text string) ([]chat.Reply, func(), error) {
			return []chat.Reply{chat.Text(text)}, func() {}, nil
		}
		ws := s.m.cfg.Workspaces
		if ws == nil {
			return reply("That is not available in this Fetch.")
		}
		names, err := ws.Names(ctx)
		if err != nil {
			return nil, nil, err
		}
		current := ""
		if c, err := s.m.cfg.Store.Conversation(ctx, s.c.id); err == nil {
			current = c.Workspace
		}
		known := func() string {
			if len(names) == 0 {
				return fmt.Sprintf("There are no workspaces in %s yet: ask me to create or clone one, or run fetch workspace add NAME [PATH] or fetch workspace clone URL on the machine Fetch runs on.", ws.Root())
			}
			list := make([]string, len(names))
			for i, n := range names {
				list[i] = n
				if n == current {
					list[i] += " (selected)"
				}
			}
			return "Workspaces: " + strings.Join(list, ", ") + "."
		}
		switch {
		case r.Workspace == "":
			return reply(known() + " /use WORKSPACE selects one.")
		case !slices.Contains(names, r.Workspace):
			return reply(fmt.Sprintf("There is no workspace %q; nothing changed. %s", r.Workspace, known()))
		}
		if err := s.m.cfg.Store.SetWorkspaceTx(ctx, tx, s.c.id, r.Workspace); err != nil {
			return nil, nil, err
		}
		if err := s.m.cfg.Store.AuditTx(ctx, tx, store.AuditEntry{ConversationID: s.c.id, Actor: it.userID, Action: "workspace_select", Detail: r.Workspace}); err != nil {
			return nil, nil, err
		}
		text := "Workspace " + r.Workspace + " selected: new tasks and questions work there."
		if r.Reply != "" {
			text += " " + r.Reply
		}
		return reply(text)
	}}
}
