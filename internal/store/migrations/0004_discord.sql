-- What the Discord channel needs to deliver each reply exactly once and to
-- edit messages in place across restarts. Owned by internal/discord.

-- Every part of an outbox reply that Discord accepted (a long reply is
-- split into parts). A reply resent after a crash skips the parts listed
-- here; the part in flight at the crash is resent with the same nonce, which
-- Discord de-duplicates (enforce_nonce).
CREATE TABLE discord_sent (
    outbox_id  INTEGER NOT NULL,
    part       INTEGER NOT NULL,
    channel_id TEXT NOT NULL,
    message_id TEXT NOT NULL,
    sent_at    TEXT NOT NULL,
    PRIMARY KEY (outbox_id, part)
);

-- The message sent under an edit key (a task's status message) and the
-- newest content waiting to be edited into it: edits are coalesced so that
-- they stay within Discord's rate limits, and a pending edit survives a
-- restart.
CREATE TABLE discord_keys (
    channel_id TEXT NOT NULL,
    key        TEXT NOT NULL,
    message_id TEXT NOT NULL,
    -- pending is the JSON of the edit still to make, NULL when none.
    pending    TEXT,
    edited_at  TEXT NOT NULL,
    PRIMARY KEY (channel_id, key)
);
CREATE INDEX discord_keys_pending ON discord_keys(channel_id) WHERE pending IS NOT NULL;

-- What pressing a button sends; a button's custom id names its row.
CREATE TABLE discord_buttons (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    channel_id TEXT NOT NULL,
    send       TEXT NOT NULL,
    created_at TEXT NOT NULL
);
