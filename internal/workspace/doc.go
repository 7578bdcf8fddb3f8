// Package workspace manages the directories under FETCH_WORKSPACES, one git
// repository each: it validates names, lists workspaces with their project
// type, branch and dirtiness, reports a workspace's git status, creates
// (git init, optional template), clones and deletes them, and makes, diffs
// and removes the per-task git worktrees the task engine works in.
//
// A name is validated (ValidateName) before anything touches the disk: 1 to
// 64 letters, digits, dots, dashes and underscores, not starting with a
// dot. A name is never a path, so "../x", "/etc" and "a/../../x" are
// refused.
//
// Git on an existing workspace runs in that workspace's kennel (package
// gitrun, given with InKennel), never on the host: the workspace, its .git
// included, is the coding CLI's to write, so its hooks, configuration and
// attributes are hostile. Status, List, AddWorktree (and the exclude file
// it keeps), Pending, Commit, Diff, BranchState and RemoveWorktree all go
// through the kennel; a workspace whose repository git cannot read is
// still listed, with Info.Problem. List, Get and StatusIfAwake start no
// kennel: they run git only in a kennel that runs (kennel.ExecSpec.IfRunning)
// and otherwise say the workspace is asleep (List reads the branch from
// .git/HEAD as a plain file, through an os.Root, bounded). Only Create and Clone run git on the
// host (hostgit.go), in a staging directory Fetch has just made and no
// kennel has seen, with a minimal environment (never Fetch's own) and the
// same hardening options; the result is published by a rename. Delete
// runs no git; it removes the workspace's kennel container. A URL is always passed after "--".
//
// Task worktrees live inside their workspace, under .fetch/worktrees/ID
// (excluded from the workspace's own status through info/exclude), so
// that the kennel, which mounts a workspace at the same absolute path as on
// the host, sees a worktree whose absolute paths work.
//
// workspace imports gitrun (and through it kennel's types). A *Registry is
// safe for concurrent use once built (RunAs and InKennel are set before
// use); it keeps no state of its own besides its root, so several
// processes may use the same root (git's own locks order their writes).
package workspace
