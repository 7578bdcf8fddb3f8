// Package conversation runs Fetch's conversations: one goroutine per
// conversation with a mailbox, handling that conversation's messages
// strictly in order through the three layers — instincts, then the mode,
// then intent and the agent — in one readable function (handle).
//
// # Run-time flow
//
// Everything flows one way. The task engine publishes updates on a
// task.Feed; the Manager's router hands each to its conversation as a
// note, without waiting. A conversation's goroutine is the only place
// that changes its mode, records its history and decides what to send:
// messages, notes (task started, step, question, ended, re-attached; a
// stop's wake-up) and the idle timer all arrive there. What anyone sends —
// a turn's replies, a stop's reply, a task's status, a reminder — is
// stored first, then queued on the Manager's outbox, whose pump per conversation
// delivers it in order and marks it sent. No lock is held across a call
// into another package and no one waits for a conversation: Receive never
// blocks (the mailbox is unbounded; channels bound the pace), notes never
// block.
//
// A stop (/stop, "stop", "cancel", …) does not wait in the mailbox: Receive
// handles it on the caller's goroutine, queues its reply, cancels the turn
// in flight with the cause ErrStopped and asks the engine to stop the
// conversation's tasks (task.Engine.RequestCancel), which never waits for
// a run; their ends arrive later as notes.
//
// # Restarts
//
// Nothing is lost on a crash: an inbound message is stored before it is
// handled and marked handled in the same transaction that queues its
// replies in the outbox; replies are marked sent once delivered. Open
// replays what a previous process left: unsent replies are delivered and
// unhandled messages handled, each exactly once. Prompts (approvals,
// questions) left open expire at Open, and the owner is told once per
// conversation: a "yes" after a restart approves nothing, and GUARDING or
// WAITING are not restored.
//
// Concurrency: the Manager owns the conversation goroutines and the
// router; Open starts them, Close cancels and waits for them. Its outbox
// owns the pumps. Receive and Notify are safe for concurrent use.
// conversation imports chat, store, instincts, intent, modes, task (the
// updates it drains) and progress (what they show); the agent reaches it
// through the Agent, Resolver and Memory interfaces declared here, the
// engine through Tasks, the reminder scheduler and the workspace watchers
// (which carry out /remind, /schedule, /cron and /watch) through Scheduler
// and Watcher. Those deliver back through Notify and, for a scheduled run,
// Receive.
package conversation
