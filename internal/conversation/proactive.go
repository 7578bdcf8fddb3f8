package conversation

import (
	"context"

	"github.com/fetch-dev/fetch/instincts"
	"github.com/fetch-dev/fetch/internal/chat"
)

// Scheduler carries out /remind, /schedule and /cron for a conversation.
// The reply explains what was done or refused (a full quota, an unknown
// id); an error is a failure of Fetch's own.
type Scheduler interface {
	Apply(ctx context.Context, conversationID, userID string, r instincts.Response) (string, error)
}

// Watcher carries out /watch on|off for a conversation, like Scheduler.
type Watcher interface {
	Apply(ctx context.Context, conversationID, userID string, r instincts.Response) (string, error)
}

// applier is what Scheduler and Watcher have in common.
type applier interface {
	Apply(ctx context.Context, conversationID, userID string, r instincts.Response) (string, error)
}

// delegate hands a scheduling or watching instinct to what carries it out
// (nil when this Fetch runs none) and returns its reply.
func (s *session) delegate(ctx context.Context, it item, r instincts.Response, to applier) []chat.Reply {
	if to == nil {
		return []chat.Reply{chat.Text("That is not available in this Fetch.")}
	}
	reply, err := to.Apply(ctx, s.c.id, it.userID, r)
	if err != nil {
		s.m.log.Error("apply instinct", "conversation", s.c.id, "instinct", r.Instinct, "effect", r.Effect, "err", err)
		return []chat.Reply{chat.Text(ErrorMessage(err))}
	}
	s.m.audit(ctx, s.c.id, it.userID, string(r.Effect), reply)
	return []chat.Reply{chat.Text(reply)}
}
