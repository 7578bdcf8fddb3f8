// Package agent is Fetch's ReAct loop: it answers a message that no
// instinct took by talking to the LLM with the orchestrator tools
// (workspaces, tasks, questions to the owner), and keeps each
// conversation's history, approvals, autonomy level and budgets.
//
// The intent shapes a turn: a conversation gets the tools that look at
// workspaces and tasks and at most two tool calls, an inquiry those, the
// code tools and task_ask for one cycle, an action every tool but task_ask
// and the surveys its prompt makes redundant (code_map, workspace_status)
// for at most MaxRounds rounds and TurnTime of wall time. Of those, a tool
// is offered only when it can apply as the turn starts: task_status and
// task_ship when the conversation knows of a task (tasksKnown),
// task_cancel while one of its tasks runs or waits, task_respond while one
// waits for an answer, workspace_select and workspace_delete when a
// workspace besides the selected one exists. The list is made once per
// turn, so every call of the turn sends the same tools; a tool allowed but
// not offered still runs when called. Then the model gives one final
// answer without tools, within what is left of TurnTime plus a grace of
// TurnTime/4 (at most 20s).
//
// Every call pays for the system prompt and the tools offered, so a turn
// is offered only what it can use, the harness pack comes only with
// task_create, and every call caps its answer (MaxTokens: tools calls and
// the final answer each their own). The system prompt is a fixed part
// (identity, harness pack, the selected workspace's code map) then a
// session part (skills, workspace state, running task, summary,
// instruction); each request marks two cache breakpoints, after the fixed
// part and after the turn's message, which the llm client sends as
// cache_control to models that cache only what is marked (go run
// ./bench/tokens measures the cost).
//
// Every LLM call of a turn ends by TurnTime plus that grace, and at once when the turn's context is
// cancelled (the owner's /stop), which Respond returns as the context's
// cause. A provider that fails — does not answer in time, answers 5xx or
// 429 still after the llm client's retries, rejects the key, cuts its
// answer off — is not an error of the turn: the owner gets a reply naming
// the provider and what to do (llm.UserMessage). A tool call that
// fails for the model — unknown tool, a tool the intent does not allow,
// arguments that do not fit, a missing workspace — is a result the model
// reads, never a Go error, so history stays valid; what is wrong with the
// arguments names the field (missing, unknown, of the wrong type, empty,
// an unknown harness with the known ones). Repeating the
// same call is warned about at three and stops the turn at five.
//
// History is written one whole turn per transaction (user, assistant with
// tool calls, one result per call, …, assistant), and the window sent to
// the model holds whole turns only. Older turns are folded into a summary
// that includes the previous one. /clear (store.ClearHistory) clears the
// agent's turns too, through a trigger in migration 0003.
//
// Dangerous actions (workspace_delete; a task that would discard a branch,
// force-push or wipe data) never run in the turn: they become an approval
// prompt with an expiry (the conversation, which alone changes modes, then
// goes to GUARDING), and Resolved carries them out only on the owner's
// yes. Autonomy (supervised, cautious,
// autonomous) decides who answers routine confirmations; a destructive
// question always reaches the owner.
//
// Concurrency: Respond and Resolved run on the conversation's goroutine
// (internal/conversation). An *Agent keeps no per-conversation state in
// memory and is safe for concurrent use across conversations.
//
// agent imports llm, identity, store, chat, intent and instincts,
// and task and workspace for their types: the registry and the engine
// reach it through the small Workspaces, Tasks and Running interfaces
// declared here, which *workspace.Registry, *task.Engine and the
// conversation runtime's view of the running task satisfy. Remember keeps
// what Fetch reported outside a turn (a task's result) in the history.
package agent
