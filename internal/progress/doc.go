// Package progress turns the task engine's updates into what the owner
// sees and into mode changes: one status message per task (chat.Reply.Key
// "task:<id>", which channels edit in place) with a Stop button, tool
// steps coalesced into that message, the question a task asks as a prompt
// (store.Prompt of kind question, with {"task":"<id>"} as its action), and
// the end — summary, files with line counts, and the diff, attached as a
// patch file when it is too long to show.
//
// Modes follow the conversation's tasks: TaskStarted when its first task
// starts, Asked when one asks, TaskEnded when its last one ends.
//
// Reporter also resolves answered task prompts (conversation.Resolver):
// the answer resumes the task; other prompts go to the next resolver.
//
// progress imports chat, store, modes, instincts (the running task as
// /status shows it), harness (event kinds) and task. A Reporter is safe
// for concurrent use; it starts no goroutines.
package progress
