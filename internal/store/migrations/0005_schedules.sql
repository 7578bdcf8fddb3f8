-- Reminders and cron schedules (internal/schedule). A one-shot job has an
-- empty spec and is done once it fired; a recurring one keeps its next run.
-- next_run is NULL once a job will never run again.
CREATE TABLE schedules (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    user_id         TEXT NOT NULL,
    kind            TEXT NOT NULL CHECK (kind IN ('remind', 'run')),
    spec            TEXT NOT NULL DEFAULT '',
    body            TEXT NOT NULL,
    state           TEXT NOT NULL CHECK (state IN ('active', 'paused', 'done', 'removed')),
    next_run        TEXT,
    last_run        TEXT,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL
);
CREATE INDEX schedules_due ON schedules(next_run) WHERE state = 'active';
CREATE INDEX schedules_user ON schedules(user_id, state);

-- Workspaces watched for file changes and upstream commits (internal/watch),
-- and the conversation told about them.
CREATE TABLE watches (
    workspace       TEXT PRIMARY KEY,
    conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    created_at      TEXT NOT NULL
);
