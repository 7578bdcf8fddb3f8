// Package discord is Fetch's Discord channel, on github.com/bwmarrin/discordgo:
// it turns direct messages, button clicks and slash commands into
// chat.Messages for the conversation runtime, and delivers chat.Replies as
// Discord-native messages.
//
// Inbound, only DMs from admitted people get through. Guild messages,
// messages from bots (Fetch itself included) and messages from anyone
// RoleOf does not admit are dropped before anything else happens: nothing
// is stored, nothing is downloaded, nothing is answered. Admitted people
// are rate limited (a sliding window per user) with one "slow down"
// reply per burst; what Config.Unlimited picks out (a stop) always gets
// through. A message's Discord id (an interaction's id for clicks
// and slash commands) is its ExternalID, so the runtime handles a message
// delivered twice — a gateway RESUME replaying events, a restart — once.
// Slash commands become the same text as their typed form; a button
// click is acknowledged at once (its buttons removed, so it cannot be
// pressed twice) and handled as the clicker's message with the button's
// text. A typing indicator shows while a message takes longer than
// typingDelay to handle.
//
// Outbound, Send renders a reply: long diffs and very long text become
// attachments, the rest is split at 2,000 characters on line boundaries
// with code fences balanced in every part; buttons and files go with the
// last part. Everything sent passes through the redactor first (secrets
// masked, ANSI escapes stripped). Delivery is exactly once: every part of
// an outbox reply carries a nonce derived from its outbox id with
// enforce_nonce, so Discord itself drops a repeat; each part Discord
// accepted is recorded (table discord_sent), so a reply resent after a
// restart skips what already went out. The one gap: a crash after Discord
// accepted a part but before it was recorded, followed by a restart later
// than Discord's nonce window (a few minutes), sends that part twice.
// A reply that could not be delivered stays in the runtime's outbox; the
// Bot sends it again as soon as Discord is reachable (the gateway
// reconnected, or another send went through) and marks it sent, and the
// runtime's replay at the next start would find its parts recorded.
// A reply with a Key edits the message sent earlier under that key (table
// discord_keys, kept across restarts); edits are coalesced — only the
// newest content is edited in, at most once per EditInterval per key — by
// an editor goroutine, and a pending edit is persisted so a restart
// finishes it.
//
// Concurrency: New builds, Open connects to the gateway and starts the
// editor, Close disconnects, flushes pending edits and waits for every
// goroutine the Bot started. Send is safe for concurrent use and works
// before Open (the runtime replays its outbox first). Gateway events are
// handled one at a time, in order, on discordgo's reading goroutine
// (SyncEvents): while a handler blocks (the runtime's mailbox is full),
// the gateway is not read.
//
// discordgo's own logger is package-global and unredacted, so it is
// silenced; the Bot logs connection events itself, through the injected
// (redacting) logger.
//
// discord imports chat, store (its tables) and redact.
package discord
