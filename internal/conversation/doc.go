// Package conversation runs Fetch's conversations: one goroutine per
// conversation with a mailbox, handling that conversation's messages
// strictly in order through the three layers — instincts, then the mode,
// then intent and the agent — in one readable function (handle).
//
// Nothing is lost on a crash: an inbound message is stored before it is
// handled and marked handled in the same transaction that queues its
// replies in the outbox; replies are marked sent once delivered. Open
// replays what a previous process left: unsent replies are delivered and
// unhandled messages handled, each exactly once.
//
// A stop (/stop, "stop", "cancel", …) does not wait in the mailbox: Receive
// handles it at once, cancelling the turn in flight with the cause
// ErrStopped and stopping the conversation's tasks.
//
// Concurrency: the Manager owns the conversation goroutines; Open starts
// them, Close cancels and waits for them. Receive and Notify are safe for
// concurrent use. conversation imports chat, store, instincts, intent and
// modes; the agent and the task engine reach it through the Agent and
// Tasks interfaces declared here, the reminder scheduler and the
// workspace watchers (which carry out /remind, /schedule, /cron and
// /watch) through Scheduler and Watcher. Those deliver back through Notify
// and, for a scheduled run, Receive.
package conversation
