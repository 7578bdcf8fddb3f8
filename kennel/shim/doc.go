// Package shim is the program that runs inside the kennel container around every
// process Fetch starts there (installed as /usr/local/bin/fetch-shim, built from
// cmd/fetch-shim), and the protocol the kennel package speaks with it.
//
// Docker cannot kill an exec and cannot re-attach to an exec's output after a
// restart, so the shim keeps, per task id, everything needed to find, stop and
// read back a run without the exec that started it:
//
//	fetch-shim run    --task ID [--ephemeral | --sweep] [--stdin | --inbox] [--grace D] [--record JSON] -- argv...
//	fetch-shim init
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
//	fetch-shim outfiles --root DIR --dir REL --max-files N --max-bytes M --max-total T
//
// run starts argv in a new session (so its process group id equals its pid),
// with stdin on /dev/null (its own stdin with --stdin, the task's inbox with
// --inbox) and FETCH_TASK_ID=ID added to its environment, forwards
// the signals it receives to that group, copies the child's stdout and stderr to
// its own and (unless --ephemeral) to a log, and exits with the child's exit code
// (128+n when the child died of signal n). The runner is a child subreaper
// (PR_SET_CHILD_SUBREAPER): a process that double-forks out of the child is
// reparented to the runner, not to init, and the runner reaps those that end
// while the child runs. When the child ends, whatever is left of the task (all
// the runner's descendants, whatever their group, session, name or
// environment; group members and tagged processes that escaped to init) is
// stopped like stop does before the exit is recorded.
//
// Nothing is left between runs. The kennel's PID 1 is init, which starts
// nothing, reaps what is reparented to it and exits on SIGTERM (the image's
// entrypoint; tini and "sleep infinity" were replaced so that init's tree
// holds nothing that keeps the container alive). Inside the container's PID
// namespace a process docker exec started has ppid 0, and an orphan is
// reparented to init; so every process is either in the tree of a live exec
// (rooted at a ppid-0 process: a run, a read of git, log --follow, send,
// stop, status) or a stray in init's tree, left by an exec that ended (a
// runner killed by SIGKILL, a daemon of an untracked exec). run --sweep, for
// a tracked run, SIGKILLs every stray, again on every ScanInterval until none
// is left (killWait at most; a process that forks meanwhile is caught on the
// next look, one that renames itself, ignores signals, changes its group or
// session or clears its environment is still a stray), before anything of
// the run is written or started, and refuses to run when that fails or when
// PID 1 is not fetch-shim init (NoInitMessage: an image older than its
// shim). When the child ends it stops the strays with the task's leftovers.
// A live exec's tree is never touched (the sweep at the start is for tracked
// runs only, so concurrent untracked execs are not cut short); no signal of
// stop or of a runner reaches a process outside init's tree and the task's
// runner's tree, so a pid record that names another exec's group selects
// nothing. An untracked run (--ephemeral) does not sweep: it ends only its
// own descendants. A process whose parent vanishes while /proc is read is
// left to the next look, once it shows under init.
//
// Every shim process makes itself undumpable (PR_SET_DUMPABLE 0): its
// /proc/PID/environ, fd and mem belong to root, so that a task's processes,
// which run as the same user, can neither read the environment Fetch gave
// the run nor ptrace the runner out of its cleanup. A child is dumpable again
// once it execs its program: a run's own processes can read each other's
// environment, never one of another run, since none is alive.
//
// Files, all in StateDir (a tmpfs in the kennel, so they vanish with the
// container, as do the processes they describe). The state directory and its
// parent must be directories of the shim's user, not links; records are
// neither read nor written through links (O_NOFOLLOW, O_EXCL), and a record
// that is not a regular file is refused. A --sweep run, once the strays are
// gone and again after its child's processes are, makes a state directory that
// is not the shim's anew and removes what the shim never writes there
// (links, directories, stray FIFOs, hard-linked files, unknown names). The
// state cannot be written by the shim alone: a task's processes run as the
// same user, with no capability, and nothing in the kennel is privileged
// enough to tell them apart. While a run lives, its processes can change any
// record (another task's log or exit record among them) and the shim cannot
// tell; what holds is that nothing but the live execs outlives a tracked
// run's start, so no earlier run changes anything during a later one:
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
// init is the kennel container's PID 1 (InitArgv, Dockerfile.kennel).
//
// The package uses the standard library only, so the program links statically.
// Main is the whole program; it is safe to call from one goroutine at a time
// (run installs signal handlers for its duration).
package shim
