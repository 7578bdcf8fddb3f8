-- The owner's messages to a task that wait for its next run (package task:
-- Engine.Tell): one that came while a one-shot CLI worked, or that a
-- two-way run ended before it could take. state: queued (waits), taken
-- (a follow-up run got it), withdrawn (the owner took it back), dropped
-- (the task was stopped). attachments is a JSON array of the files that
-- came with it.
CREATE TABLE task_messages (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    task_id     TEXT NOT NULL,
    text        TEXT NOT NULL,
    attachments TEXT NOT NULL DEFAULT '[]',
    state       TEXT NOT NULL DEFAULT 'queued',
    by          TEXT NOT NULL DEFAULT '',
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);
CREATE INDEX task_messages_task ON task_messages (task_id, state);

-- The model a task's CLI uses; empty for the CLI's default.
ALTER TABLE tasks ADD COLUMN model TEXT NOT NULL DEFAULT '';

-- The files the owner gave the task's current run (a JSON array: name,
-- media type, size, where Fetch keeps it).
ALTER TABLE tasks ADD COLUMN attachments TEXT NOT NULL DEFAULT '[]';

-- The coding CLI's model a conversation's tasks use (/model); empty for
-- each CLI's default.
ALTER TABLE conversations ADD COLUMN model TEXT NOT NULL DEFAULT '';
