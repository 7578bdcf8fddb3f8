-- What a task cost, in its two parts. cli_cost_usd is what the coding CLI's
-- runs reported (or what Fetch priced from their tokens), summed over the
-- runs without counting a resumed session twice. llm_usage.task_id ties an
-- orchestrator LLM completion to the task it was about: the completions of
-- the agent turn that created the task. tasks.cost_usd stays the task's
-- total: cli_cost_usd plus the cost of those completions.
ALTER TABLE tasks ADD COLUMN cli_cost_usd REAL NOT NULL DEFAULT 0;
-- cost_unknown: a run reported tokens of a model whose price Fetch does not
-- know; cli_cost_usd leaves them out.
ALTER TABLE tasks ADD COLUMN cost_unknown INTEGER NOT NULL DEFAULT 0;
ALTER TABLE llm_usage ADD COLUMN task_id TEXT NOT NULL DEFAULT '';
CREATE INDEX llm_usage_task ON llm_usage(task_id) WHERE task_id != '';
CREATE INDEX tasks_created ON tasks(created_at);
