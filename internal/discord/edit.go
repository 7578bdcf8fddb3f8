package discord

import (
	"context"
	"encoding/json"
	"time"

	"github.com/bwmarrin/discordgo"
)

// flushTimeout bounds the edits made while closing.
const flushTimeout = 10 * time.Second

// editor makes the pending edits of keyed messages, each at most once per
// EditInterval, until ctx ends; then it makes the ones still pending at
// once and returns. Pending edits live in the store, so the editor is
// stateless: a wake-up or a timer makes it look again.
func (b *Bot) editor(ctx context.Context) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		next := b.editDue(ctx, false)
		if next.IsZero() {
			timer.Stop()
		} else {
			timer.Reset(next.Sub(b.now()))
		}
		select {
		case <-ctx.Done():
			flush, cancel := context.WithTimeout(context.WithoutCancel(ctx), flushTimeout)
			b.editDue(flush, true)
			cancel()
			return
		case <-b.wake:
		case <-timer.C:
		}
	}
}

// editDue makes the edits that are due (all of them when all is set) and
// returns when the next one falls due, zero when none is pending.
func (b *Bot) editDue(ctx context.Context, all bool) time.Time {
	pending, err := b.state.pendingEdits(ctx)
	if err != nil {
		b.log.Error("list pending edits", "err", err)
		return b.now().Add(b.cfg.EditInterval)
	}
	var next time.Time
	for _, k := range pending {
		due := k.editedAt.Add(b.cfg.EditInterval)
		if !all && b.now().Before(due) {
			if next.IsZero() || due.Before(next) {
				next = due
			}
			continue
		}
		if err := b.applyEdit(ctx, k); err != nil {
			b.log.Error("edit message", "channel", k.channelID, "key", k.key, "err", err)
			retry := b.now().Add(b.cfg.EditInterval)
			if next.IsZero() || retry.Before(next) {
				next = retry
			}
		}
	}
	return next
}

// applyEdit edits a keyed message to its pending content; a message that
// was deleted is sent again.
func (b *Bot) applyEdit(ctx context.Context, k keyed) error {
	var e edit
	if err := json.Unmarshal([]byte(k.pending), &e); err != nil {
		b.log.Error("unreadable pending edit; dropped", "key", k.key, "err", err)
		return b.state.edited(ctx, k, k.messageID)
	}
	b.sendMu.Lock()
	defer b.sendMu.Unlock()
	rows, err := b.buttons(ctx, k.channelID, e.Actions)
	if err != nil {
		return err
	}
	if rows == nil {
		rows = []discordgo.MessageComponent{}
	}
	content := e.Content
	_, err = b.session.ChannelMessageEditComplex(&discordgo.MessageEdit{
		ID: k.messageID, Channel: k.channelID, Content: &content, Components: &rows,
	}, discordgo.WithContext(ctx))
	id := k.messageID
	if err != nil && isUnknownMessage(err) {
		b.log.Info("status message was deleted; sending it again", "key", k.key)
		m, cerr := b.create(ctx, k.channelID, outgoing{MessageSend: discordgo.MessageSend{
			Content: content, Components: rows, AllowedMentions: &discordgo.MessageAllowedMentions{},
		}}, nil)
		if cerr != nil {
			return cerr
		}
		id, err = m.ID, nil
	}
	if err != nil {
		return err
	}
	return b.state.edited(ctx, k, id)
}
