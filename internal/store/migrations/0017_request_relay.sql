-- Requests of a task started from the terminal (fetch task run) are relayed
-- to the owner's chat when a Fetch that serves one runs on the same data
-- directory (internal/task, relay.go). relay_to is the conversation asked
-- ('' when the request is the task's own conversation's, or nobody's);
-- reply is the owner's answer (allow, task, always, deny, answer, …), which
-- the process that follows the run reads to answer its CLI.
ALTER TABLE task_requests ADD COLUMN relay_to TEXT NOT NULL DEFAULT '';
ALTER TABLE task_requests ADD COLUMN reply TEXT NOT NULL DEFAULT '';

-- relays are the running Fetch processes that serve a chat and take the
-- requests of terminal tasks: owner names the engine (pid:start:nonce, see
-- internal/task/owner.go, so a dead one is told apart), channel and
-- user_id the chat and the owner there whose conversation is asked.
CREATE TABLE relays (
    owner      TEXT PRIMARY KEY,
    channel    TEXT NOT NULL,
    user_id    TEXT NOT NULL,
    started_at TEXT NOT NULL
);
