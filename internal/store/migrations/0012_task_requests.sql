-- The requests a two-way coding CLI made while a task ran (internal/task,
-- twoway.go): permissions to run a command or edit a file, questions with
-- options, plans to approve. id is Fetch's own (unique across tasks: the
-- owner's buttons name it); cli_id is the CLI's, unique within its task's
-- runs. Display fields are redacted before they are stored; the tool input
-- itself is never stored. state: pending, allowed, denied, answered,
-- expired, cancelled. decided_by says who or what closed it (the owner's
-- id, "policy", "ttl", "restart", "stop", "loop guard").
CREATE TABLE task_requests (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    task_id     TEXT NOT NULL,
    run_id      TEXT NOT NULL,
    cli_id      TEXT NOT NULL,
    kind        TEXT NOT NULL,
    tool        TEXT NOT NULL DEFAULT '',
    summary     TEXT NOT NULL DEFAULT '',
    detail      TEXT NOT NULL DEFAULT '',
    request     TEXT NOT NULL DEFAULT '{}',
    state       TEXT NOT NULL DEFAULT 'pending',
    answer      TEXT NOT NULL DEFAULT '',
    decided_by  TEXT NOT NULL DEFAULT '',
    created_at  TEXT NOT NULL,
    expires_at  TEXT,
    closed_at   TEXT,
    UNIQUE (run_id, cli_id)
);
CREATE INDEX task_requests_pending ON task_requests(task_id) WHERE state = 'pending';

-- plan is 'planning' while a task (/plan) must first run its CLI in plan
-- mode and have its plan approved; '' otherwise.
ALTER TABLE tasks ADD COLUMN plan TEXT NOT NULL DEFAULT '';
