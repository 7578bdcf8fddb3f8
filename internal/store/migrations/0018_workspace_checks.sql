-- The checks a workspace's work passes before a pull request (package
-- checks): what the owner set with /checks, and what a failing check
-- does. source: 'detect' (the commands are found in the workspace's
-- files), 'owner' (commands, a JSON array of command lines) or 'off'.
-- on_fail: 'draft' (the pull request is opened as a draft) or 'hold'
-- (none is opened).
CREATE TABLE workspace_checks (
    workspace  TEXT PRIMARY KEY,
    source     TEXT NOT NULL DEFAULT 'detect',
    commands   TEXT NOT NULL DEFAULT '[]',
    on_fail    TEXT NOT NULL DEFAULT 'draft',
    updated_at TEXT NOT NULL
);

-- A task's own shipping, asked with it ("just push it", "open it as a
-- draft"): '' (as the workspace ships), 'push' or 'draft'. checks is what
-- the checks said at the last shipment, for the chat; pr_draft tells that
-- its pull request was opened as a draft.
ALTER TABLE tasks ADD COLUMN ship_as TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN checks TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN pr_draft INTEGER NOT NULL DEFAULT 0;
