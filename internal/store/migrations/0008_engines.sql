-- Where a workspace lives when it is not a directory under FETCH_WORKSPACES:
-- a named volume on another Docker engine (FETCH_ENGINES), where it stays.
CREATE TABLE workspace_engines (
    workspace  TEXT PRIMARY KEY,
    engine     TEXT NOT NULL,
    created_at TEXT NOT NULL
);
