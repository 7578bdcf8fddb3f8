-- Conversations: one per channel and peer (a Discord DM channel, the terminal).
CREATE TABLE conversations (
    id         TEXT PRIMARY KEY,
    channel    TEXT NOT NULL,
    user_id    TEXT NOT NULL,
    workspace  TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL
);

-- Messages in both directions. An inbound message is stored before it is
-- handled (handled_at NULL until then); an outbound one is stored before it is
-- sent (sent_at NULL until then): together they make the inbox and the outbox.
CREATE TABLE messages (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    direction       TEXT NOT NULL CHECK (direction IN ('in', 'out')),
    external_id     TEXT,
    user_id         TEXT NOT NULL DEFAULT '',
    body            TEXT NOT NULL,
    -- extra is the channel-independent rest of an outbound message (edit
    -- key, buttons, attachments) as its owner encoded it.
    extra           TEXT NOT NULL DEFAULT '',
    created_at      TEXT NOT NULL,
    handled_at      TEXT,
    sent_at         TEXT,
    in_history      INTEGER NOT NULL DEFAULT 1
);
CREATE UNIQUE INDEX messages_external ON messages(conversation_id, direction, external_id) WHERE external_id IS NOT NULL;
CREATE INDEX messages_unhandled ON messages(conversation_id, id) WHERE direction = 'in' AND handled_at IS NULL;
CREATE INDEX messages_unsent ON messages(id) WHERE direction = 'out' AND sent_at IS NULL;

-- The current mode of each conversation and every transition that led there.
CREATE TABLE modes (
    conversation_id TEXT PRIMARY KEY REFERENCES conversations(id) ON DELETE CASCADE,
    mode            TEXT NOT NULL,
    previous        TEXT NOT NULL DEFAULT '',
    reason          TEXT NOT NULL DEFAULT '',
    since           TEXT NOT NULL
);
CREATE TABLE mode_history (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    from_mode       TEXT NOT NULL,
    to_mode         TEXT NOT NULL,
    event           TEXT NOT NULL,
    reason          TEXT NOT NULL,
    at              TEXT NOT NULL
);
CREATE INDEX mode_history_conversation ON mode_history(conversation_id, id);

-- Something Fetch asked the owner and waits for: a question or an approval of a
-- dangerous action. At most one open prompt per conversation.
CREATE TABLE prompts (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    kind            TEXT NOT NULL CHECK (kind IN ('question', 'approval')),
    body            TEXT NOT NULL,
    action          TEXT NOT NULL DEFAULT '',
    created_at      TEXT NOT NULL,
    expires_at      TEXT,
    resolved_at     TEXT,
    answer          TEXT NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX prompts_open ON prompts(conversation_id) WHERE resolved_at IS NULL;

-- Append-only record of what Fetch did and why.
CREATE TABLE audit (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    at              TEXT NOT NULL,
    conversation_id TEXT NOT NULL DEFAULT '',
    actor           TEXT NOT NULL,
    action          TEXT NOT NULL,
    detail          TEXT NOT NULL DEFAULT ''
);
