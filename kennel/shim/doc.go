// Package shim is the program that runs inside the kennel container around every
// process Fetch starts there (installed as /usr/local/bin/fetch-shim, built from
// cmd/fetch-shim), and the protocol the kennel package speaks with it.
//
// Docker cannot kill an exec and cannot re-attach to an exec's output after a
// restart, so the shim keeps, per task id, everything needed to find, stop and
// read back a run without the exec that started it:
//
//	fetch-shim run    --task ID [--ephemeral] [--stdin] [--grace D] -- argv...
//	fetch-shim stop   --task ID [--grace D]
//	fetch-shim status --task ID
//	fetch-shim ps
//	fetch-shim log    --task ID [--follow]
//	fetch-shim forget --task ID
//
// run starts argv in a new session (so its process group id equals its pid),
// with stdin on /dev/null (its own stdin with --stdin) and FETCH_TASK_ID=ID added to its environment, forwards
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
//
// Ephemeral runs (the kennel's untracked execs) remove their files when they end.
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
