// Package task is Fetch's task engine: it turns "do this in that
// workspace" into a tracked, stoppable, recoverable run of a coding
// harness in the kennel, on its own branch, with a reviewable result.
//
// # Lifecycle
//
// A task is queued, running, waiting_input, succeeded, failed, cancelled
// or needs_attention (state.go). Every transition and every harness event
// is appended to the task's event log in SQLite (task_events), exportable
// as JSONL (Engine.Export). One task at a time holds a workspace (running
// or waiting for an answer; a unique index enforces it across processes);
// a second one is refused with a *BusyError naming the holder, or queued
// when asked. Tasks on different workspaces run in parallel up to
// Config.MaxParallel; more wait queued. A queued task is started by whoever
// waits for it (Wait, as fetch task run does) or, for a conversation's
// task, by the adopting engine of fetch chat or fetch serve when a slot
// frees.
//
// Each task works in its own git worktree on branch fetch/<id>, made from
// the workspace's current commit. When a run ends, whatever it left in the
// worktree is committed to that branch, and the branch's files (with line
// counts), commits and diff are recorded, the diff also as PatchDir/ID.patch.
// The work is scanned with Config.Secrets (redact's gitleaks rules and
// the configured secrets) before it lands in Fetch's own repository: every
// commit of the branch over its base, each one's added lines (binary files
// as text), message, author and committer (mirror.Staged.Scan). Work that
// holds any, or that is too large to be scanned whole, is not committed
// (Fetch's commit is undone) and does not land, and the task needs
// attention with the findings named by commit, place (file, commit
// message, author), line and rule, never the secret. Without Fetch's
// repository only the branch's diff, read in the kennel, is scanned. All of the git on the worktree runs in the workspace's
// kennel (package workspace, through gitrun); a registry without a kennel
// of its own gets the KennelRunner's.
//
// A task costs one exec: its run's own exec makes the worktree before the
// CLI (harness.Task.Prepare) and, after the CLI ended however it ended,
// commits the work and bundles the branch (harness.Task.Record,
// workspace.PlanRecord). The bundle is staged into Fetch's own repository
// of the workspace (Config.Repos, package mirror: fsck'd, in quarantine),
// and the diff, files and commits are read there, by the host's git, not
// from what the kennel printed; only work without secrets lands. What a
// run printed as its record is kennel output like any other: a CLI may
// forge it, and gains nothing it could not do by committing. A run without
// a record that reads (its runner killed before it wrote one) gets a batch
// of its own; a repository without the base (a
// workspace's first task) gets the branch's whole history asked of the
// kennel (mirror.StageImport). Without Config.Repos the work is read in
// the kennel.
// The worktree stays until its branch is merged, pushed or discarded
// (workspace.RemoveWorktree): work that exists nowhere else is never
// deleted.
//
// An Ask task (Request.Mode) answers a question about the code instead:
// the harness runs in its own read-only mode (harness.Traits.ReadOnly; the
// other harnesses are refused) on the workspace itself, without a worktree
// or branch, and its final message is the task's summary. Nothing is
// committed. The workspace's fingerprint (HEAD, status, tracked diff;
// workspace.Fingerprint, read in the kennel without writing) is taken
// before the run and compared after it: a run that changed anything ends
// NeedsAttention saying what, and the change is left for the owner. The
// mode has no column (the schema belongs to package store): an Ask task
// is the one stored without a branch.
//
// A task's cost adds up its runs, except for harnesses whose resumed run
// reports the whole session (harness.UsageCumulative: Codex, Qwen): then
// the last report is the total. A usage report with a negative, NaN or
// infinite figure (harness.Usage.Valid) is logged and taken as not
// reported: it neither lowers the task's cost nor its budget use (the
// event stays in the task's log without its figures).
//
// The task budget is checked on each usage event as it arrives; at the
// cap a conversation's two-way run is paused at its turn, its work
// recorded, and the task waits for the owner (RaiseBudget, StopAtBudget;
// budget.go), and any other run is stopped.
//
// A run that ends with a question puts the task in waiting_input; Respond
// resumes the harness's session with the answer. Cancel stops the run
// through the kennel and marks the task cancelled; a run that ends after a
// cancel never counts as a success. A run is stopped when it passes its
// wall-time limit (Config.Timeout, per run) or its output passes
// Config.OutputCap.
//
// # Processes and recovery
//
// SQLite is the single source of truth: fetch chat, fetch serve and fetch
// task commands share one database. A task records its owner, the Fetch
// process following its run ("pid:start"). Close stops the runs it
// follows, as the kennel stops a run whose follower goes away; a process
// that dies without Close (kill -9, a crash) leaves its runs going in the
// kennel, each teeing its output to a log there. An engine opened with
// Config.Adopt reconciles running tasks whose owner is gone: a run still
// going is followed again through its log in the kennel, one that ended
// is read back and recorded, one the kennel has no trace of fails
// "interrupted by restart". Each orphan is claimed with a compare-and-swap
// on its owner, so one process settles it, and the owner hears of it once.
// A cancel from another process sets a flag in the task's row and stops the
// run in the kennel; the process following the run records the end.
//
// A run's stream that ends without the run's exit (the network to its
// engine cut, the engine stopped) is not the run's end (resume.go): the
// kennel is asked whether the run still goes. While its engine does not
// answer, the owner is told once (an Unreachable update, a KindUnreachable
// entry in the log) and the kennel is asked again on the run's goroutine,
// waiting Config.ReconnectMin doubling to ReconnectMax; then a run still
// going is followed again (Reattached, with the engine's name), one that
// ended is read back and concluded, and one its kennel no longer has fails
// "interrupted", naming the engine. A restart whose engine does not answer
// takes the same path. A cancel meanwhile is recorded and said to wait for
// the engine (Unreachable with Task.CancelRequested); the run is stopped
// when it answers. Close while the engine is out of reach leaves the task
// running, without owner, for the next adopting engine.
//
// # Imports and concurrency
//
// task imports harness (events, outcomes, adapters), kennel (KennelRunner),
// workspace, redact (Finding) and store. An Engine is safe for concurrent use. Open starts
// the goroutines that follow runs (one per run, plus one writing its
// events); Close cancels and waits for them. Observer.TaskUpdate is called
// from those goroutines, in order per task, and must not block: the
// engine publishes and never calls up. Long-lived processes give it a
// Feed, which the conversation layer drains. RequestCancel starts a stop
// without waiting for the run (a /stop must answer at once); Cancel waits.
package task
