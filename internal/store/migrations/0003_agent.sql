-- The agent's side of a conversation: its settings, its history of turns with
-- tool calls, the summary of compacted turns, and what the LLM cost.

-- How much Fetch decides on its own in a conversation: supervised, cautious
-- or autonomous. /clear keeps it.
ALTER TABLE conversations ADD COLUMN autonomy TEXT NOT NULL DEFAULT 'cautious';

-- One turn: what the owner said and everything the agent did about it. A turn
-- is written whole, in one transaction, so that its messages are always in a
-- valid order (user, assistant with tool calls, one result per call, ...,
-- assistant). compacted turns are in the summary instead; cleared turns were
-- taken out of the history by /clear.
CREATE TABLE agent_turns (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    intent          TEXT NOT NULL,
    created_at      TEXT NOT NULL,
    compacted       INTEGER NOT NULL DEFAULT 0,
    cleared         INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX agent_turns_live ON agent_turns(conversation_id, id) WHERE compacted = 0 AND cleared = 0;

CREATE TABLE agent_messages (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    turn_id      INTEGER NOT NULL REFERENCES agent_turns(id) ON DELETE CASCADE,
    role         TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'tool')),
    content      TEXT NOT NULL DEFAULT '',
    -- tool_calls is the assistant's calls as JSON ([{id, name, arguments}]).
    tool_calls   TEXT NOT NULL DEFAULT '',
    tool_call_id TEXT NOT NULL DEFAULT ''
);
CREATE INDEX agent_messages_turn ON agent_messages(turn_id, id);

-- The summary of a conversation's compacted turns; each compaction folds the
-- previous summary into the new one.
CREATE TABLE agent_summaries (
    conversation_id TEXT PRIMARY KEY REFERENCES conversations(id) ON DELETE CASCADE,
    summary         TEXT NOT NULL,
    updated_at      TEXT NOT NULL
);

-- /clear (store.ClearHistory) takes the conversation's messages out of the
-- history; the agent's turns and summary go with them.
CREATE TRIGGER agent_history_cleared AFTER UPDATE OF in_history ON messages
WHEN OLD.in_history = 1 AND NEW.in_history = 0
BEGIN
    UPDATE agent_turns SET cleared = 1 WHERE conversation_id = NEW.conversation_id AND cleared = 0;
    DELETE FROM agent_summaries WHERE conversation_id = NEW.conversation_id;
END;

-- What each LLM completion cost, from the provider's usage fields. day is the
-- UTC date, for daily budgets.
CREATE TABLE llm_usage (
    id                INTEGER PRIMARY KEY AUTOINCREMENT,
    conversation_id   TEXT NOT NULL DEFAULT '',
    day               TEXT NOT NULL,
    at                TEXT NOT NULL,
    prompt_tokens     INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    cost              REAL NOT NULL
);
CREATE INDEX llm_usage_day ON llm_usage(day);

-- Extra budget the owner granted for a day after Fetch paused over budget.
CREATE TABLE budget_grants (
    id     INTEGER PRIMARY KEY AUTOINCREMENT,
    day    TEXT NOT NULL,
    tokens INTEGER NOT NULL,
    cost   REAL NOT NULL,
    at     TEXT NOT NULL
);
