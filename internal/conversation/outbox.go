package conversation

import (
	"encoding/json"
	"fmt"

	"github.com/fetch-dev/fetch/internal/chat"
	"github.com/fetch-dev/fetch/internal/store"
)

// encode turns a reply into its outbox form: the text as the body, the
// rest (edit key, buttons, files) as JSON in extra.
func encode(r chat.Reply) (store.Outgoing, error) {
	out := store.Outgoing{Body: r.Text}
	if r.Key == "" && len(r.Actions) == 0 && len(r.Files) == 0 {
		return out, nil
	}
	extra, err := json.Marshal(r)
	if err != nil {
		return store.Outgoing{}, fmt.Errorf("encode reply: %w", err)
	}
	out.Extra = string(extra)
	return out, nil
}

// decode reads an outbox entry back into a reply.
func decode(m store.Message) (chat.Reply, error) {
	var r chat.Reply
	if m.Extra != "" {
		if err := json.Unmarshal([]byte(m.Extra), &r); err != nil {
			return chat.Reply{}, fmt.Errorf("decode outbox %d: %w", m.ID, err)
		}
	}
	r.ID, r.Text = m.ID, m.Body
	return r, nil
}
