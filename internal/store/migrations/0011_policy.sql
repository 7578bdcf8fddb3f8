-- Rules the owner remembered for the coding CLI's permission requests:
-- "Always allow in this workspace" (task_id '') and "Allow for this task"
-- (task_id set: kept across a restart while the task runs, removed when it
-- ends). tool is a policy tool kind (shell, edit, delete, read, fetch,
-- other); pattern is what internal/policy matches: command words, a path
-- glob inside the worktree, a host or a tool name. The decisions
-- themselves go to the audit table.
CREATE TABLE policy_rules (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    workspace  TEXT NOT NULL,
    task_id    TEXT NOT NULL DEFAULT '',
    tool       TEXT NOT NULL,
    pattern    TEXT NOT NULL,
    created_by TEXT NOT NULL,
    created_at TEXT NOT NULL,
    UNIQUE (workspace, task_id, tool, pattern)
);
CREATE INDEX policy_rules_task ON policy_rules(task_id) WHERE task_id != '';
