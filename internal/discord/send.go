package discord

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path"
	"strconv"
	"strings"

	"github.com/bwmarrin/discordgo"

	"github.com/fetch-dev/fetch/internal/chat"
	"github.com/fetch-dev/fetch/internal/redact"
)

// buttonPrefix starts the custom id of Fetch's buttons; the rest is the
// button's row in discord_buttons.
const buttonPrefix = "fetch:b:"

// filesPart is the first part number of the files of a keyed reply, which
// go in a message of their own.
const filesPart = 100

// outgoing is a message create with the nonce fields discordgo's
// MessageSend lacks (v0.29.0).
type outgoing struct {
	discordgo.MessageSend
	Nonce        string `json:"nonce,omitempty"`
	EnforceNonce bool   `json:"enforce_nonce,omitempty"`
}

// Send delivers a reply to a Discord conversation: see the package doc.
// It implements chat.Sender; a nil error means every part is on Discord.
func (b *Bot) Send(ctx context.Context, conversationID string, r chat.Reply) error {
	channelID, ok := strings.CutPrefix(conversationID, conversationPrefix)
	if !ok || channelID == "" {
		return fmt.Errorf("discord: send to %s: %w", conversationID, ErrNotDiscord)
	}
	err := b.deliver(ctx, channelID, b.clean(r))
	b.noteDelivery(conversationID, r, err)
	return err
}

func (b *Bot) deliver(ctx context.Context, channelID string, r chat.Reply) error {
	b.sendMu.Lock()
	defer b.sendMu.Unlock()
	if r.Key != "" {
		return b.sendKeyed(ctx, channelID, r)
	}
	for i, p := range render(r) {
		if _, err := b.sendPart(ctx, channelID, r.ID, i, p); err != nil {
			return err
		}
	}
	return nil
}

// clean strips terminal escapes from everything a reply shows and
// redacts it.
func (b *Bot) clean(r chat.Reply) chat.Reply {
	text := func(s string) string { return b.red.String(redact.StripANSI(s)) }
	out := chat.Reply{ID: r.ID, Key: r.Key, Text: text(r.Text)}
	for _, a := range r.Actions {
		out.Actions = append(out.Actions, chat.Action{Label: text(a.Label), Send: a.Send, URL: a.URL, Style: a.Style})
	}
	for _, f := range r.Files {
		data := f.Data
		if isImage(f.Name, data) {
			// A picture is sent as it is: stripping escapes or masking
			// would break it (what sends one scanned it).
			out.Files = append(out.Files, chat.File{Name: text(f.Name), Data: data})
			continue
		}
		if bytes.IndexByte(data, 0x1b) >= 0 {
			data = []byte(redact.StripANSI(string(data)))
		}
		out.Files = append(out.Files, chat.File{Name: text(f.Name), Data: b.red.Bytes(data)})
	}
	return out
}

// sendPart creates one message of an outbox reply unless it was sent
// before, returning its id.
func (b *Bot) sendPart(ctx context.Context, channelID string, outboxID int64, n int, p part) (string, error) {
	if outboxID != 0 {
		id, err := b.state.sentPart(ctx, outboxID, n)
		if err != nil {
			return "", err
		}
		if id != "" {
			return id, nil
		}
	}
	msg := outgoing{MessageSend: discordgo.MessageSend{
		Content:         p.content,
		AllowedMentions: &discordgo.MessageAllowedMentions{},
	}}
	if outboxID != 0 {
		msg.Nonce = nonce(outboxID, n)
		msg.EnforceNonce = true
	}
	rows, err := b.buttons(ctx, channelID, p.buttons)
	if err != nil {
		return "", err
	}
	msg.Components = rows
	var files []*discordgo.File
	for _, f := range p.files {
		files = append(files, &discordgo.File{Name: f.Name, ContentType: contentType(f.Name), Reader: bytes.NewReader(f.Data)})
	}
	m, err := b.create(ctx, channelID, msg, files)
	if err != nil {
		return "", fmt.Errorf("discord: send part %d of outbox %d: %w", n, outboxID, err)
	}
	if outboxID != 0 {
		if err := b.state.recordPart(context.WithoutCancel(ctx), outboxID, n, channelID, m.ID); err != nil {
			return "", err
		}
	}
	return m.ID, nil
}

// nonce identifies a part of an outbox reply for Discord's
// de-duplication (at most 25 characters).
func nonce(outboxID int64, part int) string {
	return "f" + strconv.FormatInt(outboxID, 36) + "." + strconv.Itoa(part)
}

// create posts a message through discordgo's REST layer (its rate
// limiter and retries), with the nonce fields its MessageSend lacks.
func (b *Bot) create(ctx context.Context, channelID string, msg outgoing, files []*discordgo.File) (*discordgo.Message, error) {
	endpoint := discordgo.EndpointChannelMessages(channelID)
	var body []byte
	var err error
	if len(files) > 0 {
		var contentType string
		contentType, body, err = discordgo.MultipartBodyWithJSON(msg, files)
		if err != nil {
			return nil, err
		}
		body, err = b.session.RequestRaw("POST", endpoint, contentType, body, endpoint, 0, discordgo.WithContext(ctx))
	} else {
		body, err = b.session.RequestWithBucketID("POST", endpoint, msg, endpoint, discordgo.WithContext(ctx))
	}
	if err != nil {
		return nil, err
	}
	var m discordgo.Message
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, fmt.Errorf("read created message: %w", err)
	}
	return &m, nil
}

// buttons records what each action sends and returns the action rows.
func (b *Bot) buttons(ctx context.Context, channelID string, actions []chat.Action) ([]discordgo.MessageComponent, error) {
	var rows []discordgo.MessageComponent
	var row discordgo.ActionsRow
	for _, a := range actions {
		if a.URL != "" {
			row.Components = append(row.Components, discordgo.Button{Label: truncate(a.Label, maxLabel), Style: discordgo.LinkButton, URL: a.URL})
			if len(row.Components) == 5 {
				rows = append(rows, row)
				row = discordgo.ActionsRow{}
			}
			continue
		}
		id, err := b.state.addButton(ctx, channelID, a.Send)
		if err != nil {
			return nil, err
		}
		row.Components = append(row.Components, discordgo.Button{
			Label:    truncate(a.Label, maxLabel),
			Style:    buttonStyle(a.Style),
			CustomID: buttonPrefix + strconv.FormatInt(id, 10),
		})
		if len(row.Components) == 5 {
			rows = append(rows, row)
			row = discordgo.ActionsRow{}
		}
	}
	if len(row.Components) > 0 {
		rows = append(rows, row)
	}
	return rows, nil
}

func buttonStyle(s chat.ActionStyle) discordgo.ButtonStyle {
	switch s {
	case chat.Primary:
		return discordgo.PrimaryButton
	case chat.Danger:
		return discordgo.DangerButton
	case chat.Secondary:
		return discordgo.SecondaryButton
	}
	return discordgo.SecondaryButton
}

func contentType(name string) string {
	if t, ok := imageTypes[strings.ToLower(path.Ext(name))]; ok {
		return t
	}
	switch {
	case strings.HasSuffix(name, ".diff"), strings.HasSuffix(name, ".patch"):
		return "text/x-diff; charset=utf-8"
	case strings.HasSuffix(name, ".txt"), strings.HasSuffix(name, ".log"), strings.HasSuffix(name, ".md"):
		return "text/plain; charset=utf-8"
	}
	return "application/octet-stream"
}

// imageTypes are the pictures Discord shows inline, by the file name's
// extension (how Discord decides). SVG is not one: it is sent as a file.
var imageTypes = map[string]string{".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp"}

// isImage reports whether a file is a picture, sent as it is: named as
// one and holding one.
func isImage(name string, data []byte) bool {
	t, ok := imageTypes[strings.ToLower(path.Ext(name))]
	return ok && http.DetectContentType(data) == t
}

// edit is a pending edit of a keyed message, as persisted.
type edit struct {
	Content string        `json:"content"`
	Actions []chat.Action `json:"actions,omitempty"`
}

// sendKeyed sends the first reply under a key as a new message and
// queues later ones as edits of it. A keyed reply is one message: its
// text is truncated to fit; its files, if any, follow in a message of
// their own.
func (b *Bot) sendKeyed(ctx context.Context, channelID string, r chat.Reply) error {
	content := truncate(r.Text, MaxContent)
	if strings.TrimSpace(content) == "" && len(r.Actions) == 0 {
		content = "…"
	}
	k, found, err := b.state.keyMessage(ctx, channelID, r.Key)
	if err != nil {
		return err
	}
	if !found {
		id, err := b.sendPart(ctx, channelID, r.ID, 0, part{content: content, buttons: r.Actions})
		if err != nil {
			return err
		}
		if err := b.state.setKey(context.WithoutCancel(ctx), channelID, r.Key, id); err != nil {
			return err
		}
	} else {
		e, err := json.Marshal(edit{Content: content, Actions: r.Actions})
		if err != nil {
			return fmt.Errorf("discord: queue edit of %s: %w", k.key, err)
		}
		if err := b.state.setPending(ctx, channelID, r.Key, string(e)); err != nil {
			return err
		}
		select {
		case b.wake <- struct{}{}:
		default:
		}
	}
	if len(r.Files) > 0 {
		for i, p := range render(chat.Reply{Files: r.Files}) {
			if _, err := b.sendPart(ctx, channelID, r.ID, filesPart+i, p); err != nil {
				return err
			}
		}
	}
	return nil
}

// Idempotent tells the outbox that a reply sent again is not delivered
// twice: each part sent is recorded by its outbox id (see sendPart).
func (b *Bot) Idempotent() bool { return true }
