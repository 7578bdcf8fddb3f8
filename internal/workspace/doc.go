// Package workspace manages the directories under FETCH_WORKSPACES, one git
// repository each: it validates names, lists workspaces with their project
// type, branch and dirtiness, reports a workspace's git status, creates
// (git init, optional template), clones and deletes them, and makes, diffs
// and removes the per-task git worktrees the task engine works in.
//
// A name is validated (ValidateName) before anything touches the disk: 1 to
// 64 letters, digits, dots, dashes and underscores, not starting with a
// dot. A name is never a path, so "../x", "/etc" and "a/../../x" are
// refused. Git runs as the git binary with an argv, never through a shell,
// with prompts disabled; a URL is always passed after "--".
//
// Task worktrees live inside their workspace, under .fetch/worktrees/ID
// (excluded from the workspace's own status through .git/info/exclude), so
// that the kennel, which mounts a workspace at the same absolute path as on
// the host, sees a worktree whose absolute paths work.
//
// workspace imports only the standard library. A *Registry is safe for
// concurrent use; it keeps no state of its own besides its root, so several
// processes may use the same root (git's own locks order their writes).
package workspace
