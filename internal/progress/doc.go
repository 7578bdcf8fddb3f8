// Package progress decides what the owner sees of a task: one status
// message per task (chat.Reply.Key "task:<id>", which channels edit in
// place) with a Stop button, tool steps coalesced into that message, the
// question a task asks (a store.Prompt of kind question with
// {"task":"<id>"} as its action), a new message when Fetch follows a run
// again after a restart, and the end: the status message edited to the
// final state and the result as a new message — summary, files with line
// counts, and the diff, attached as a patch file when it is too long.
//
// It makes no decisions about modes and does no I/O: the conversation's
// goroutine feeds its Tracker the engine's updates and sends what it
// returns. progress imports chat, store (prompt shape), modes (emoji),
// harness (event kinds) and task. A Tracker is owned by one goroutine.
package progress
