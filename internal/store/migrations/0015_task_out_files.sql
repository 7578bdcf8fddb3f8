-- The files a task's CLI left for the owner in its worktree's out folder
-- (package task: outfiles.go), one row per file of a run: those sent have
-- a path under the data directory (mode 0600); those not sent have none,
-- and skipped says why (a symlink, too large, what look like secrets).
CREATE TABLE task_out_files (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    task_id    TEXT NOT NULL,
    run        INTEGER NOT NULL,
    name       TEXT NOT NULL,
    size       INTEGER NOT NULL DEFAULT 0,
    media_type TEXT NOT NULL DEFAULT '',
    path       TEXT NOT NULL DEFAULT '',
    skipped    TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL
);
CREATE INDEX task_out_files_task ON task_out_files (task_id, run);
