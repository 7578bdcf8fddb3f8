// Package chat is the vocabulary shared by Fetch's channels (Discord, the
// terminal) and the conversation runtime: inbound messages, replies, and
// the Sender a channel provides. It imports nothing of Fetch's own.
package chat

import (
	"context"
	"time"
)

// Message is one inbound message from a person.
type Message struct {
	// Channel names the channel it came through ("discord", "term").
	Channel string
	// ConversationID identifies the conversation (a DM channel, the
	// terminal session); replies go back to it.
	ConversationID string
	// ExternalID is the channel's own id of the message, used to handle a
	// message delivered twice only once. Empty when the channel has none.
	ExternalID string
	// UserID is the sender's id on the channel.
	UserID string
	Text   string
	At     time.Time
	// Attachments are the files that came with it, as the channel names
	// them: never downloaded by the channel (see package attach).
	Attachments []Attachment
}

// Attachment is a file that came with a message.
type Attachment struct {
	Name string
	// URL is where the channel serves it.
	URL string
	// Size is its size as the channel tells it.
	Size int64
	// MediaType is its type as the channel tells it (not trusted).
	MediaType string
}

// Reply is one message Fetch sends.
type Reply struct {
	// ID is the outbox id of the reply; a channel may use it to deliver
	// each reply at most once.
	ID   int64  `json:"-"`
	Text string `json:"-"`
	// Key, when set, names a message that this reply replaces: a channel
	// that can edit messages edits the one it sent earlier under the same
	// key (a task's status message) instead of sending a new one.
	Key string `json:"key,omitempty"`
	// Actions are buttons offered with the reply (Approve / Deny, Stop).
	// Choosing one is the same as typing its Send text.
	Actions []Action `json:"actions,omitempty"`
	// Files are attachments (a diff, long output).
	Files []File `json:"files,omitempty"`
	// Shortcuts are the short answers typed text takes while this keyed
	// message's actions are open ("y/a/n"); a terminal shows them as its
	// prompt until the message is replaced by one without actions.
	Shortcuts string `json:"shortcuts,omitempty"`
}

// Action is a button; pressing it sends Send as the owner's message. An
// action with a URL is a link instead (Send is then empty): a channel
// that has link buttons opens it, others show it.
type Action struct {
	Label string      `json:"label"`
	Send  string      `json:"send,omitempty"`
	URL   string      `json:"url,omitempty"`
	Style ActionStyle `json:"style,omitempty"`
}

// ActionStyle hints how prominent a button is.
type ActionStyle string

const (
	Primary   ActionStyle = "primary"
	Secondary ActionStyle = "secondary"
	Danger    ActionStyle = "danger"
)

// File is an attachment.
type File struct {
	Name string `json:"name"`
	Data []byte `json:"data"`
}

// Text is a plain reply.
func Text(s string) Reply { return Reply{Text: s} }

// Sender delivers replies to a conversation. Send must be safe for
// concurrent use; a nil error means the reply was delivered.
type Sender interface {
	Send(ctx context.Context, conversationID string, r Reply) error
}

// Role is what a sender may do.
type Role string

const (
	// Owner may do everything.
	Owner Role = "owner"
	// Allowed may talk to Fetch but not change its settings.
	Allowed Role = "allowed"
)

// MaxMessageLen is the longest inbound message Fetch accepts, in
// characters.
const MaxMessageLen = 10_000
