-- budget_usd: this task's own cap, in dollars, once the owner raised it at
-- the cap (0: the configured FETCH_TASK_BUDGET_USD). at_budget: the task
-- waits at its cap for the owner to raise it or stop (a two-way run paused
-- there, its work so far recorded on the branch).
ALTER TABLE tasks ADD COLUMN budget_usd REAL NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN at_budget INTEGER NOT NULL DEFAULT 0;

-- cli_limits: the latest usage of each subscription window a coding CLI
-- reported (Claude Code's rate_limit_event, Codex's
-- account/rateLimits/updated), one row per CLI and window.
CREATE TABLE cli_limits (
    harness      TEXT NOT NULL,
    name         TEXT NOT NULL,
    used_percent REAL NOT NULL,
    status       TEXT NOT NULL DEFAULT '',
    resets_at    TEXT NOT NULL DEFAULT '',
    updated_at   TEXT NOT NULL,
    PRIMARY KEY (harness, name)
);
