-- Tasks: one run of a coding harness on its own branch of a workspace,
-- owned by internal/task. conversation_id is empty for tasks started from
-- the command line.
CREATE TABLE tasks (
    id               TEXT PRIMARY KEY,
    conversation_id  TEXT NOT NULL DEFAULT '',
    workspace        TEXT NOT NULL,
    goal             TEXT NOT NULL,
    harness          TEXT NOT NULL,
    state            TEXT NOT NULL CHECK (state IN ('queued', 'running', 'waiting_input', 'succeeded', 'failed', 'cancelled', 'needs_attention')),
    -- The task's git worktree: path, branch, the commit it started from and
    -- the branch that commit was on.
    worktree         TEXT NOT NULL DEFAULT '',
    branch           TEXT NOT NULL DEFAULT '',
    base             TEXT NOT NULL DEFAULT '',
    base_branch      TEXT NOT NULL DEFAULT '',
    -- The harness's session id (to resume it), the open question and the
    -- answer the next run resumes with.
    session_id       TEXT NOT NULL DEFAULT '',
    question         TEXT NOT NULL DEFAULT '',
    answer           TEXT NOT NULL DEFAULT '',
    -- The kennel run id of the current (or last) run: the task id, then
    -- ID.2, ID.3 … for each resumed run.
    run_id           TEXT NOT NULL DEFAULT '',
    runs             INTEGER NOT NULL DEFAULT 0,
    -- The result.
    summary          TEXT NOT NULL DEFAULT '',
    error            TEXT NOT NULL DEFAULT '',
    exit_code        INTEGER NOT NULL DEFAULT -1,
    stderr_tail      TEXT NOT NULL DEFAULT '',
    -- JSON: files changed with line counts, and the branch's commits.
    files            TEXT NOT NULL DEFAULT '[]',
    commits          TEXT NOT NULL DEFAULT '[]',
    patch            TEXT NOT NULL DEFAULT '',
    patch_path       TEXT NOT NULL DEFAULT '',
    cost_usd         REAL NOT NULL DEFAULT 0,
    -- cancel_requested is set by a cancel from any process; the run that
    -- ends afterwards never reports success.
    cancel_requested INTEGER NOT NULL DEFAULT 0,
    timed_out        INTEGER NOT NULL DEFAULT 0,
    -- owner names the Fetch process following the run ("pid:start"), empty
    -- when none does.
    owner            TEXT NOT NULL DEFAULT '',
    timeout_ms       INTEGER NOT NULL DEFAULT 0,
    created_at       TEXT NOT NULL,
    started_at       TEXT,
    -- run_started_at is when the current run began: the wall-time limit
    -- counts from it.
    run_started_at   TEXT,
    ended_at         TEXT,
    updated_at       TEXT NOT NULL
);
-- One task at a time holds a workspace: running or waiting for an answer.
CREATE UNIQUE INDEX tasks_busy ON tasks(workspace) WHERE state IN ('running', 'waiting_input');
CREATE INDEX tasks_state ON tasks(state, created_at);
CREATE INDEX tasks_conversation ON tasks(conversation_id, state);

-- Everything that happened to a task, in order: its state transitions and
-- every harness event.
CREATE TABLE task_events (
    id      INTEGER PRIMARY KEY AUTOINCREMENT,
    task_id TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    at      TEXT NOT NULL,
    -- 'state' for a transition, otherwise the harness event's kind.
    kind    TEXT NOT NULL,
    data    TEXT NOT NULL
);
CREATE INDEX task_events_task ON task_events(task_id, id);
