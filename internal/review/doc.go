// Package review decides whether a change may be merged without the
// owner — the gate before an autonomous workspace's merge (issue 28).
//
// A change merges on its own only when it is within its workspace's
// limits and Fetch's own LLM approves it. The limits (Settings, table
// workspace_automerge, /automerge; defaults from FETCH_AUTOMERGE_*) are
// the files and lines it may change and the paths that always need the
// owner: the built-in classes (CI workflows, lockfiles and dependency
// manifests, deploy files; see Classify) and the patterns the owner
// lists. A change over them is not reviewed: it waits for the owner
// anyway. Within them, the LLM is given a short rubric (rubric.md,
// embedded), the goal, the file list and the diff, fenced as data, and
// answers only through one tool, submit_review, whose arguments are the
// structured verdict (approve or block, a summary, findings with a
// severity). Anything that is not a readable approving verdict with no
// blocking finding — no LLM configured, a budget that is used up, a
// provider failure or timeout, an answer cut at its token limit or
// without the tool call, a diff too large to read whole — is no approval:
// Decide says why, for the owner. The review's cost is recorded as its
// task's (llm_usage.task_id), so it counts with the task's cost and the
// day's spend.
//
// The verdict's Body is what the caller (package ship) posts on the pull
// request as a review.
//
// review imports llm (the client's types), store (the limits' table and
// the usage) and instincts (the /automerge Response). A Gate and Settings
// keep no state of their own and are safe for concurrent use; they start
// no goroutines.
package review
