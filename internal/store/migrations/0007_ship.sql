-- How a workspace's work ships (internal/ship): its GitHub repository and
-- the branch pull requests go to, and how far Fetch may go on its own
-- ('pr-required': push and open a pull request; 'autonomous': may also
-- merge it; 'local': never push). A workspace without a row is
-- 'pr-required' with no repository known yet.
CREATE TABLE workspace_ship (
    workspace   TEXT PRIMARY KEY,
    mode        TEXT NOT NULL DEFAULT 'pr-required' CHECK (mode IN ('pr-required', 'autonomous', 'local')),
    owner       TEXT NOT NULL DEFAULT '',
    repo        TEXT NOT NULL DEFAULT '',
    base_branch TEXT NOT NULL DEFAULT '',
    updated_at  TEXT NOT NULL
);

-- A task's shipment: the commit pushed, its pull request and the PR's
-- state ('open', 'merged', 'closed'), and why shipping did not happen.
ALTER TABLE tasks ADD COLUMN pushed TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN pr_number INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN pr_url TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN pr_state TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN ship_error TEXT NOT NULL DEFAULT '';
-- How many reviews and review comments of the pull request were told.
ALTER TABLE tasks ADD COLUMN pr_reviews INTEGER NOT NULL DEFAULT 0;
CREATE INDEX tasks_pr ON tasks(pr_state) WHERE pr_state != '';
