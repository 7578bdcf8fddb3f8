// Package shim is the program that runs inside the kennel container around every
// process Fetch starts there (installed as /usr/local/bin/fetch-shim, built from
// cmd/fetch-shim), and the protocol the kennel package speaks with it.
//
// Docker cannot kill an exec and cannot re-attach to an exec's output after a
// restart, so the shim keeps, per task id, everything needed to find, stop and
// read back a run without the exec that started it:
//
//	fetch-shim run    --task ID [--ephemeral] [--stdin | --inbox] [--grace D] [--record JSON] -- argv...
//	fetch-shim send   --task ID [--close] [--timeout D] < message
//	fetch-shim stop   --task ID [--grace D]
//	fetch-shim status --task ID
//	fetch-shim ps
//	fetch-shim log    --task ID [--follow]
//	fetch-shim forget --task ID
//	fetch-shim batch  < program.json
//	fetch-shim prepare --dir DIR --batch JSON -- argv...
//	fetch-shim worktree --repo DIR --path PATH --branch NAME --exclude PATTERN -- git [options...]
//	fetch-shim bundle --ref refs/heads/NAME --not COMMIT -- git [options...]
//
// run starts argv in a new session (so its process group id equals its pid),
// with stdin on /dev/null (its own stdin with --stdin, the task's inbox with
// --inbox) and FETCH_TASK_ID=ID added to its environment, forwards
// the signals it receives to that group, copies the child's stdout and stderr to
// its own and (unless --ephemeral) to a log, and exits with the child's exit code
// (128+n when the child died of signal n). When the child ends, whatever is left
// of the task (group members, and processes carrying the tag that escaped into
// their own session) is stopped like stop does before the exit is recorded.
//
// Files, all in StateDir (a tmpfs in the kennel, so they vanish with the
// container, as do the processes they describe):
//
//	ID.lock  held with flock(LOCK_EX) by the runner for its whole life: the
//	         runner is alive exactly when the lock is held.
//	ID.pid   JSON [PidRecord]: process group, runner pid, start time.
//	ID.log   the output, as the same frames Docker uses for a multiplexed
//	         stream (8-byte header: stream, 0, 0, 0, big-endian length; then
//	         the bytes), so stdout and stderr stay apart and interleaved in
//	         order. Not written for --ephemeral runs.
//	ID.exit  JSON [ExitRecord], written (atomically) when the task is over.
//	ID.stop  marker created by stop before it signals anything; the exit
//	         record says Stopped when the marker appeared during the run.
//	ID.in    (--inbox) the inbox, a FIFO (mode 0600) whose read end is the
//	         child's stdin. The runner holds its write end open, so the
//	         child sees no EOF while the run lives, however many senders
//	         come and go; it holds no read end, so a child that stops
//	         reading makes a send fail rather than fill a buffer nobody
//	         drains. send takes flock(LOCK_EX) on it for the whole message.
//	         send --close removes it. Removed when the run ends.
//	ID.ctl   (--inbox) a FIFO the runner reads: send --close writes 'c'
//	         to it, and the runner closes its write end of ID.in, so the
//	         child reads what is queued, then EOF. Removed when the run ends.
//
// Ephemeral runs (the kennel's untracked execs) remove their files when they end.
//
// batch runs a program of commands in one exec (Batch); prepare runs one
// as the child of run, then replaces itself with argv in DIR, and writes
// its results as the run's first stderr line (PreparedPrefix), so that the
// work before a run costs no exec of its own; run --record runs one after
// its child and writes the results as the run's last stderr line
// (RecordedPrefix), so that the work after a run costs none either.
// worktree and bundle are the git work of those programs with as few git
// processes as git allows (CmdWorktree, CmdBundle); a batch runs them,
// and forget, inside its own process.
//
// send outlives the exec that started the run: any later exec (after Fetch
// restarted and re-attached with log --follow) reaches the same inbox. It
// reads one message of at most MaxMessage bytes from its stdin (never argv)
// and writes it whole once the pipe has room for it all (the runner asks the
// kernel for a pipe of MaxMessage bytes), so that a message is never cut by a
// child that stopped reading: it fails after --timeout (ExitStalled) having
// written nothing. Only a message larger than the pipe the kernel granted is
// written as room appears, and can be cut (ExitPartial). A send to a task
// that is not running exits ExitNoTask, one that takes no input (run without
// --inbox, input closed, child no longer reading) ExitNoInput, and a stop of
// the task ends a waiting send with ExitNoTask. The lock and the room are
// waited for on a short tick (sendTick): the kernel notifies neither.
//
// Stopping signals SIGINT, then SIGTERM after half the grace, then SIGKILL after
// the full grace, to the task's process group and to every process whose
// /proc/PID/environ carries FETCH_TASK_ID=ID; it returns once none of them is
// left (zombies count as gone) and the runner has recorded the exit. A runner
// that holds its lock but has not yet recorded its process group is waited for.
// A stop that comes before the runner took its lock finds nothing and succeeds;
// a caller racing a start (the kennel, when a run is cancelled while it starts)
// stops again until the run's stream ends. The kernel
// has no notification for the death of processes that are not one's children,
// so stop re-reads /proc on a short tick (ScanInterval) while it waits.
//
// The package uses the standard library only, so the program links statically.
// Main is the whole program; it is safe to call from one goroutine at a time
// (run installs signal handlers for its duration).
package shim
