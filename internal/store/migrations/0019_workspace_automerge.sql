-- When Fetch may merge a workspace's pull request on its own (package
-- review, /automerge): the most files and lines a change may touch (NULL:
-- the configured default), and the paths the owner listed that always
-- need the owner's Merge (a JSON array of patterns, as review.ParsePattern
-- reads them). One row per workspace, by name; none means the defaults.
CREATE TABLE workspace_automerge (
    workspace  TEXT PRIMARY KEY,
    max_files  INTEGER CHECK (max_files IS NULL OR max_files >= 0),
    max_lines  INTEGER CHECK (max_lines IS NULL OR max_lines >= 0),
    paths      TEXT NOT NULL DEFAULT '[]',
    updated_by TEXT NOT NULL DEFAULT '',
    updated_at TEXT NOT NULL
);
