// Package watch tells the owner what changes in a workspace they opted in
// with /watch on: files created, changed or removed (fsnotify), gathered
// into one message per burst, and new commits upstream of the workspace's
// branch ("git behind", checked after a git fetch on an interval).
//
// A burst ends after a quiet period (Debounce) or, for changes that never
// pause, after maxBurst; its summary lists the files by kind. Directories
// that are noise (.git, vendor, build, node_modules, …) are not watched
// and editor swap files are ignored. The upstream check's git (fetch,
// rev-parse, rev-list, log) runs in the workspace's kennel through package
// gitrun, never on the host: the workspace's .git is the coding CLI's to
// write, and its configuration (remote.*.uploadpack, core.sshCommand, …)
// must not run on the host. It has no credentials there, so an upstream
// that needs them is not checked (a warning in the log). The upstream commit
// last reported is kept in memory, so after a restart a branch still behind
// is reported once more.
//
// Bursts and the git interval run on the real clock: file events arrive in
// real time, so a test cannot know when to move an injected clock; the
// tests use a short quiet period and wait for the message.
//
// The watched workspaces and the conversation told about each are stored
// (table watches) and watched again on Open. Each watched workspace has two
// goroutines, one for file events and one for git, owned by the Manager:
// Apply(WatchOff) and Close stop them and wait. watch imports store, chat
// instincts and gitrun; messages go out through the Notifier (the
// conversation runtime's outbox). ApplyTx stores or removes a watch inside
// the caller's transaction (the one that marks the command's message
// handled); its after hook starts or stops the watcher once that
// committed.
package watch
