package agent

import (
	"context"

	"github.com/fetch-dev/fetch/intent"
	"github.com/fetch-dev/fetch/internal/llm"
)

// noteIntro stands for the user's side of a note in the history: the
// history keeps turns (a user message, then the answer), and a note is
// something Fetch said without being asked.
const noteIntro = "(Not from the owner: Fetch's own report of something that happened meanwhile.)"

// Remember keeps a report that Fetch sent outside any turn (a task's
// result) in the conversation's history, so that a later turn knows of it
// without a tool call ("how did it go?").
func (a *Agent) Remember(ctx context.Context, conversationID, note string) error {
	return a.saveTurn(ctx, conversationID, intent.Conversation, []llm.Message{
		{Role: llm.User, Content: noteIntro},
		{Role: llm.Assistant, Content: note},
	})
}
