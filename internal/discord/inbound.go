package discord

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/fetch-dev/fetch/internal/chat"
)

// slowDown is the one reply to a burst over the rate limit.
const slowDown = "Slow down a little: you sent %d messages within %s. I'm ignoring messages until the pace drops; anything I ignored, please send again."

// admit decides whether a message from a user in a channel may reach the
// runtime: only DMs, never bots or Fetch itself, only admitted people.
// It is the first thing every inbound event goes through.
func (b *Bot) admit(guildID string, author *discordgo.User) chat.Role {
	if guildID != "" || author == nil || author.Bot || author.System || author.ID == "" || author.ID == b.id() {
		return ""
	}
	return b.cfg.RoleOf(Channel, author.ID)
}

// onMessage handles MESSAGE_CREATE.
func (b *Bot) onMessage(_ *discordgo.Session, m *discordgo.MessageCreate) {
	if m.Message == nil || b.admit(m.GuildID, m.Author) == "" {
		return
	}
	if m.Type != discordgo.MessageTypeDefault && m.Type != discordgo.MessageTypeReply {
		return
	}
	text := m.Content
	var atts []chat.Attachment
	for _, a := range m.Attachments {
		// Named here, never downloaded by the channel: the runtime
		// fetches (and checks) those a task is to get.
		text += fmt.Sprintf("\n[attachment: %s, %d bytes]", a.Filename, a.Size)
		atts = append(atts, chat.Attachment{Name: a.Filename, URL: a.URL, Size: int64(a.Size), MediaType: a.ContentType})
	}
	at := m.Timestamp
	if at.IsZero() {
		at = b.now()
	}
	b.receive(m.ChannelID, m.Author.ID, m.ID, text, at, atts...)
}

// receive rate-limits an admitted message and hands it to the runtime.
func (b *Bot) receive(channelID, userID, externalID, text string, at time.Time, atts ...chat.Attachment) {
	ctx, rcv := b.running()
	if rcv == nil {
		return
	}
	conv := ConversationID(channelID)
	unlimited := b.cfg.Unlimited != nil && b.cfg.Unlimited(text)
	if ok, warn := b.limit.allow(userID, b.now()); !ok && !unlimited {
		b.log.Warn("rate limited", "user", userID, "conversation", conv)
		if warn {
			msg := fmt.Sprintf(slowDown, b.cfg.RateLimit, b.cfg.RatePer)
			if err := rcv.Notify(ctx, conv, chat.Text(msg)); err != nil {
				b.log.Error("send slow-down reply", "conversation", conv, "err", err)
			}
		}
		return
	}
	err := rcv.Receive(ctx, chat.Message{
		Channel: Channel, ConversationID: conv, ExternalID: externalID, UserID: userID, Text: text, At: at, Attachments: atts,
	})
	if err != nil {
		b.log.Error("receive", "conversation", conv, "message", externalID, "err", err)
		return
	}
	b.startTyping(ctx, rcv, conv, channelID)
}

// startTyping shows a typing indicator in the channel while the
// conversation works on what it has queued, unless it is done within
// typingDelay. One loop per conversation; a message that arrives while a
// loop is ending keeps it going.
func (b *Bot) startTyping(ctx context.Context, rcv Receiver, conv, channelID string) {
	b.mu.Lock()
	if ctx.Err() != nil {
		b.mu.Unlock()
		return
	}
	if _, ok := b.typing[conv]; ok {
		b.typing[conv]++
		b.mu.Unlock()
		return
	}
	b.typing[conv] = 1
	b.wg.Add(1)
	b.mu.Unlock()

	go func() {
		defer b.wg.Done()
		timer := time.NewTimer(typingDelay)
		defer timer.Stop()
		for {
			b.mu.Lock()
			seen := b.typing[conv]
			b.mu.Unlock()
			idle := make(chan struct{})
			b.wg.Add(1)
			go func() {
				defer b.wg.Done()
				defer close(idle)
				if err := rcv.Idle(ctx, conv); err != nil && ctx.Err() == nil {
					b.log.Debug("wait for idle", "conversation", conv, "err", err)
				}
			}()
		wait:
			for {
				select {
				case <-idle:
					break wait
				case <-timer.C:
					if err := b.session.ChannelTyping(channelID, discordgo.WithContext(ctx)); err != nil && ctx.Err() == nil {
						b.log.Warn("typing indicator", "conversation", conv, "err", err)
					}
					timer.Reset(typingEvery)
				}
			}
			b.mu.Lock()
			if b.typing[conv] == seen || ctx.Err() != nil {
				delete(b.typing, conv)
				b.mu.Unlock()
				return
			}
			b.mu.Unlock()
		}
	}()
}

// onInteraction handles INTERACTION_CREATE: button clicks and slash
// commands, acknowledged at once, then handled like typed messages.
func (b *Bot) onInteraction(s *discordgo.Session, ic *discordgo.InteractionCreate) {
	in := ic.Interaction
	if in == nil || b.admit(in.GuildID, in.User) == "" {
		return
	}
	ctx, rcv := b.running()
	if rcv == nil {
		return
	}
	switch in.Type {
	case discordgo.InteractionMessageComponent:
		b.onClick(ctx, in)
	case discordgo.InteractionApplicationCommand:
		b.onCommand(ctx, in)
	}
}

// onClick acknowledges a button click by removing the buttons from the
// message (a button acts once), then hands the button's text on.
func (b *Bot) onClick(ctx context.Context, in *discordgo.Interaction) {
	data := in.MessageComponentData()
	id, err := strconv.ParseInt(strings.TrimPrefix(data.CustomID, buttonPrefix), 10, 64)
	var send string
	found := false
	if strings.HasPrefix(data.CustomID, buttonPrefix) && err == nil {
		send, found, err = b.state.button(ctx, in.ChannelID, id)
		if err != nil {
			b.log.Error("look up button", "custom_id", data.CustomID, "err", err)
		}
	}
	if !found {
		b.respond(ctx, in, &discordgo.InteractionResponse{
			Type: discordgo.InteractionResponseChannelMessageWithSource,
			Data: &discordgo.InteractionResponseData{Content: "That button no longer works; type your answer instead.", Flags: discordgo.MessageFlagsEphemeral},
		})
		return
	}
	// The update replaces the whole message: keep its text, note the
	// choice, drop the buttons.
	content := ""
	if in.Message != nil {
		content = in.Message.Content
	}
	if label := clickedLabel(in.Message, data.CustomID); label != "" {
		content = truncate(content+"\n→ "+label, MaxContent)
	}
	if !b.respond(ctx, in, &discordgo.InteractionResponse{
		Type: discordgo.InteractionResponseUpdateMessage,
		Data: &discordgo.InteractionResponseData{Content: content, Components: []discordgo.MessageComponent{}},
	}) {
		return
	}
	b.receive(in.ChannelID, in.User.ID, in.ID, send, b.now())
}

// respond acknowledges an interaction, telling whether Discord took it.
func (b *Bot) respond(ctx context.Context, in *discordgo.Interaction, r *discordgo.InteractionResponse) bool {
	if r.Data != nil {
		r.Data.Content = b.red.String(r.Data.Content)
	}
	if err := b.session.InteractionRespond(in, r, discordgo.WithContext(ctx)); err != nil {
		b.log.Error("acknowledge interaction", "interaction", in.ID, "err", err)
		return false
	}
	return true
}

// clickedLabel is the label of the button with customID on m.
func clickedLabel(m *discordgo.Message, customID string) string {
	if m == nil {
		return ""
	}
	for _, c := range m.Components {
		row, ok := c.(*discordgo.ActionsRow)
		if !ok {
			continue
		}
		for _, bc := range row.Components {
			if btn, ok := bc.(*discordgo.Button); ok && btn.CustomID == customID {
				return btn.Label
			}
		}
	}
	return ""
}
