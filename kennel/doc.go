// Package kennel runs the coding CLIs in the Kennel: one sandbox container per
// workspace, driven through the Docker Engine API (github.com/docker/docker
// client, API version negotiated; the engine may be as old as 20.10).
//
// Containers are created on demand from Config.Image (EnsureImage explains how
// to build it when it is missing), labelled with LabelInstance and
// LabelWorkspace, reused while they run and recreated when they stopped or
// died. An idle one is put to sleep — removed — by Sleep (a Sleeper runs it
// in the background), and the next run creates it again; a run that comes
// while it is removed waits for the new one. An exec with
// ExecSpec.IfRunning never starts one (ErrAsleep). The kennel follows its configuration: each container carries the
// fingerprint of what shaped it (LabelConfig: the image reference and the ID
// it resolved to, the user, the limits, the whole container definition), and
// one whose fingerprint is not the configuration's is recreated the next time
// a run needs it — once it is idle. Idle means no run of this Kennel has
// claimed it, no exec runs in it (another Fetch's runs, someone's docker
// exec) and the shim knows of no task there that runs, has live processes or
// left a log not yet forgotten; a busy container is kept, and said so once.
// (Another Fetch's exec created but not yet started is not seen, and Docker
// has no compare-and-remove: a run another process starts in the few
// milliseconds between the last look and the removal is cut short.) Each is
// hardened: the non-root kennel user, all capabilities dropped,
// no-new-privileges, memory/CPU/pids limits, a read-only root with tmpfs /tmp
// and home, no environment of its own, nothing from the host but the workspace,
// bind-mounted at its own absolute path (git worktrees record absolute paths),
// or its volume (Config.Volumes).
//
// Every process runs under fetch-shim (package kennel/shim) in a process group
// of its own, tagged with its task id: Docker can neither kill an exec nor
// re-attach to one, so the shim records the group, tees the output to a
// per-task log and stops the task from a second exec (Stop). Exec takes argv
// only — nothing reaches a shell — closes stdin (or feeds it ExecSpec.Stdin,
// then closes it), demultiplexes stdout and stderr into lines for a
// LineHandler (or passes stdout raw to ExecSpec.Stdout, for a bundle) and
// keeps only a bounded stderr tail.
// After a restart, Reconcile finds this instance's containers and the tasks
// left in them; Follow reads a task's output back to its end and Stop ends it.
// (A task goes on while nobody reads its exec: the engine keeps draining an
// exec's output after its client is gone; TestReconcileAfterCrash checks that
// a task writing megabytes after a crash does not freeze.)
//
// A run with ExecSpec.Inbox (a two-way session with a coding CLI) keeps its
// stdin open for its whole life: the shim makes it a FIFO in the container,
// and Send writes one message to it (whole, never interleaved with another,
// at most MaxMessage bytes, through the exec's stdin, never argv) from a
// short exec of its own — so it works from any Kennel, also after a restart
// that lost the exec which started the run (Follow then reads the output).
// CloseInput ends the input (the program reads EOF). A Send costs one exec
// (BenchmarkSendLatency); Stop ends a Send waiting for a program that does
// not read.
//
// Exec runs even untracked commands (no TaskID) under the shim, with a private
// id and no files, so that a timeout or a cancellation can always stop them;
// the cost is measured by BenchmarkDispatch against a bare SDK exec.
//
// Nothing is left between runs: a tracked run (with a TaskID) runs with the
// shim's --sweep, which ends every process in the kennel but its init
// (fetch-shim init, the image's entrypoint) and the trees of live execs
// before its program starts and again after it ends (see package
// kennel/shim); untracked execs do not sweep, so that they never cut one
// another short, and the sweep never touches them. The image's entrypoint
// is part of the image, whose ID is in the fingerprint, so a rebuilt image
// recreates idle kennels; an older image's shim refuses --sweep
// ("flag provided but not defined"), and a shim whose PID 1 is not
// fetch-shim init refuses with shim.NoInitMessage: both mean "rebuild the
// kennel image". BenchmarkTrackedRun measures a tracked run's start.
//
// Several engines: ParseEngines reads FETCH_ENGINES and Dial connects to an
// engine over ssh (one connection per engine, golang.org/x/crypto/ssh, the
// engine's socket dialed through it), TLS or a docker context; EnsureImage
// copies the kennel image between engines (docker save into docker load). On
// an engine that shares no path with Fetch, Config.Volumes keeps each
// workspace in a named volume mounted at its path. A Pool holds one Kennel
// per engine and routes every call by its workspace's placement.
//
// Imports: the Docker client, errgroup, x/crypto/ssh and kennel/shim; nothing
// else of Fetch.
// Concurrency: a Kennel is safe for concurrent use. New starts nothing; Exec
// and Follow each own one goroutine (reading the stream) for their duration,
// Reconcile a bounded errgroup. Nothing outlives the call that started it,
// but a Sleeper's goroutine, which runs from its Open to its Close.
// Logging goes to the injected slog.Logger; environment values never do.
package kennel
