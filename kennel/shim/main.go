package shim

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"time"
)

// Command names.
const (
	CmdRun    = "run"
	CmdStop   = "stop"
	CmdStatus = "status"
	CmdPs     = "ps"
	CmdLog    = "log"
	CmdForget = "forget"
	CmdSend   = "send"
)

// Exit codes of the control commands (stop, status, ps, log, forget). run exits
// with the child's code, or ExitShimFailed, ExitNotExecutable, ExitNotFound.
const (
	ExitOK     = 0
	ExitFailed = 1 // the command failed; stderr says why
	ExitUsage  = 2
	ExitNoLog  = 3 // log: the task has no log (unknown, ephemeral or forgotten)
	ExitBusy   = 4 // forget: the task is still running
	// Exit codes of send.
	ExitNoTask   = 5 // the task is not running (never ran, or ended)
	ExitNoInput  = 6 // the task runs but takes no input: not --inbox, input closed, or its child no longer reads it
	ExitTooLarge = 7 // the message exceeds MaxMessage (or is empty)
	ExitStalled  = 8 // the task did not take the message within the timeout
	ExitPartial  = 9 // the task stopped reading in the middle of the message
)

// RunOptions are the options of run.
type RunOptions struct {
	// Ephemeral: keep no log, remove the task's files at the end.
	Ephemeral bool
	// Grace is the stop grace for the leftovers when the child ends; zero
	// means DefaultGrace.
	Grace time.Duration
	// Stdin: the child reads the runner's stdin (the exec's, when the kennel
	// attaches one) instead of /dev/null.
	Stdin bool
	// Inbox: the child reads the task's inbox, which send writes to, and
	// which stays open until send --close or the end of the run.
	Inbox bool
	// Record, when set, is a program the runner runs after the child
	// (see RecordedPrefix), as RecordProgram encodes it.
	Record string
	// Sweep (a tracked run): before the child starts and after it ended,
	// end every process in the kennel but init and the live docker execs'
	// trees (see the package doc). Needs fetch-shim init as PID 1.
	Sweep bool
}

// RunArgv is the argv that runs argv as task id under the shim.
func RunArgv(id string, o RunOptions, argv []string) []string {
	out := []string{Path, CmdRun, "--task", id}
	if o.Grace > 0 {
		out = append(out, "--grace", o.Grace.String())
	}
	if o.Ephemeral {
		out = append(out, "--ephemeral")
	}
	if o.Stdin {
		out = append(out, "--stdin")
	}
	if o.Inbox {
		out = append(out, "--inbox")
	}
	if o.Sweep {
		out = append(out, "--sweep")
	}
	if o.Record != "" {
		out = append(out, "--record", o.Record)
	}
	return append(append(out, "--"), argv...)
}

// SendArgv is the argv that writes its stdin, as one message, to task id's
// inbox, and with closeInput then closes the task's input (an empty stdin
// then only closes).
func SendArgv(id string, closeInput bool, timeout time.Duration) []string {
	out := []string{Path, CmdSend, "--task", id}
	if timeout > 0 {
		out = append(out, "--timeout", timeout.String())
	}
	if closeInput {
		out = append(out, "--close")
	}
	return out
}

// StopArgv is the argv that stops task id.
func StopArgv(id string, grace time.Duration) []string {
	return []string{Path, CmdStop, "--task", id, "--grace", grace.String()}
}

// StatusArgv is the argv that prints task id's TaskInfo as JSON.
func StatusArgv(id string) []string { return []string{Path, CmdStatus, "--task", id} }

// PsArgv is the argv that prints one TaskInfo (JSON) per line for every task
// with files or live processes.
func PsArgv() []string { return []string{Path, CmdPs} }

// LogArgv is the argv that replays task id's log (and follows it to its end).
func LogArgv(id string, follow bool) []string {
	out := []string{Path, CmdLog, "--task", id}
	if follow {
		out = append(out, "--follow")
	}
	return out
}

// ForgetArgv is the argv that removes the files of finished task id.
func ForgetArgv(id string) []string { return []string{Path, CmdForget, "--task", id} }

const usage = `usage:
  fetch-shim run    --task ID [--ephemeral | --sweep] [--stdin | --inbox] [--grace D] [--record JSON] -- argv...
  fetch-shim init
  fetch-shim send   --task ID [--close] [--timeout D] < message
  fetch-shim stop   --task ID [--grace D]
  fetch-shim status --task ID
  fetch-shim ps
  fetch-shim log    --task ID [--follow]
  fetch-shim forget --task ID
  fetch-shim batch  < program.json
  fetch-shim prepare --dir DIR --batch JSON -- argv...
  fetch-shim worktree --repo DIR --path PATH --branch NAME --exclude PATTERN -- git [options...]
  fetch-shim bundle --ref refs/heads/NAME --not COMMIT -- git [options...]
  fetch-shim outfiles --root DIR --dir REL --max-files N --max-bytes M --max-total T
`

// Main runs the program with args (without the program name) and returns its
// exit code.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return ExitUsage
	}
	// No process of a task may read a shim's environment or take it over.
	if err := undumpable(); err != nil {
		fmt.Fprintf(stderr, "fetch-shim: undumpable: %v\n", err)
		return ExitShimFailed
	}
	cmd := args[0]
	if cmd == CmdInit {
		if len(args) > 1 {
			fmt.Fprintf(stderr, "fetch-shim: init: unexpected arguments %q\n", args[1:])
			return ExitUsage
		}
		return runInit(ctx, stderr)
	}
	if cmd == CmdBatch {
		if len(args) > 1 {
			fmt.Fprintf(stderr, "fetch-shim: batch: unexpected arguments %q\n", args[1:])
			return ExitUsage
		}
		return runBatch(ctx, os.Stdin, stdout, stderr)
	}
	if cmd == CmdPut {
		return putCommand(args[1:], os.Stdin, stderr)
	}
	if cmd == CmdPrepare {
		return prepareCommand(ctx, args[1:], stderr)
	}
	if cmd == CmdOutfiles {
		return outfilesCommand(args[1:], stdout, stderr)
	}
	if cmd == CmdWorktree || cmd == CmdBundle {
		return gitCommand(ctx, args, "", os.Environ(), stdout, stderr)
	}
	flags := flag.NewFlagSet("fetch-shim "+cmd, flag.ContinueOnError)
	flags.SetOutput(stderr)
	dir := flags.String("state", StateDir, "directory of the per-task files")
	var id *string
	if cmd != CmdPs {
		id = flags.String("task", "", "task id")
	}
	var grace *time.Duration
	if cmd == CmdRun || cmd == CmdStop {
		grace = flags.Duration("grace", DefaultGrace, "time from SIGINT to SIGKILL")
	}
	ephemeral, stdin, inbox, recordProgram, sweepKennel := false, false, false, "", false
	if cmd == CmdRun {
		flags.BoolVar(&sweepKennel, "sweep", false, "before the child starts and after it ends, end every process in the kennel but init and live docker execs")
		flags.StringVar(&recordProgram, "record", "", "a program (a JSON Batch) to run after the child; its result is the last stderr line")
		flags.BoolVar(&ephemeral, "ephemeral", false, "keep no log and remove the task's files at the end")
		flags.BoolVar(&stdin, "stdin", false, "give the child this program's stdin instead of /dev/null")
		flags.BoolVar(&inbox, "inbox", false, "give the child the task's inbox as stdin: fetch-shim send writes to it")
	}
	closeInput, sendTimeout := false, DefaultSendTimeout
	if cmd == CmdSend {
		flags.BoolVar(&closeInput, "close", false, "close the task's input after the message (an empty stdin only closes)")
		flags.DurationVar(&sendTimeout, "timeout", DefaultSendTimeout, "how long to wait for the task to take the message")
	}
	follow := false
	if cmd == CmdLog {
		flags.BoolVar(&follow, "follow", false, "keep reading until the task ends")
	}
	if !slices.Contains([]string{CmdRun, CmdStop, CmdStatus, CmdPs, CmdLog, CmdForget, CmdSend}, cmd) {
		fmt.Fprintf(stderr, "fetch-shim: unknown command %q\n%s", cmd, usage)
		return ExitUsage
	}
	if err := flags.Parse(args[1:]); err != nil {
		return usageCode(cmd)
	}
	if id != nil && !ValidTaskID(*id) {
		fmt.Fprintf(stderr, "fetch-shim: invalid task id %q\n", *id)
		return usageCode(cmd)
	}
	if grace != nil && *grace < 0 {
		fmt.Fprintf(stderr, "fetch-shim: negative grace %v\n", *grace)
		return usageCode(cmd)
	}
	if ephemeral && sweepKennel {
		fmt.Fprintf(stderr, "fetch-shim: run: --ephemeral and --sweep exclude each other\n")
		return ExitShimFailed
	}
	if stdin && inbox {
		fmt.Fprintf(stderr, "fetch-shim: run: --stdin and --inbox exclude each other\n")
		return ExitShimFailed
	}
	if sendTimeout <= 0 {
		fmt.Fprintf(stderr, "fetch-shim: send: the timeout must be positive, not %v\n", sendTimeout)
		return ExitUsage
	}
	if cmd != CmdRun && flags.NArg() > 0 {
		fmt.Fprintf(stderr, "fetch-shim: unexpected arguments %q\n", flags.Args())
		return ExitUsage
	}

	switch cmd {
	case CmdRun:
		if flags.NArg() == 0 {
			fmt.Fprintf(stderr, "fetch-shim: run: no command\n")
			return ExitShimFailed
		}
		o := runOptions{dir: *dir, id: *id, ephemeral: ephemeral, stdin: stdin, inbox: inbox, grace: *grace, argv: flags.Args(), sweep: sweepKennel}
		if recordProgram != "" {
			b, err := parseRecord(recordProgram)
			if err != nil {
				fmt.Fprintf(stderr, "fetch-shim: run: %v\n", err)
				return ExitShimFailed
			}
			o.record = b
		}
		return runTask(ctx, o, stdout, stderr)
	case CmdStop:
		return report(stderr, cmd, stopTask(ctx, *dir, *id, *grace))
	case CmdStatus:
		return report(stderr, cmd, printStatus(*dir, *id, stdout))
	case CmdPs:
		return report(stderr, cmd, printPs(*dir, stdout))
	case CmdLog:
		err := replayLog(ctx, *dir, *id, follow, stdout, stderr)
		if errors.Is(err, errNoLog) {
			fmt.Fprintf(stderr, "fetch-shim: log: task %s: %v\n", *id, err)
			return ExitNoLog
		}
		return report(stderr, cmd, err)
	case CmdSend:
		err := sendMessage(ctx, sendOptions{dir: *dir, id: *id, close: closeInput, timeout: sendTimeout}, os.Stdin)
		return sendCode(stderr, *id, err)
	case CmdForget:
		err := forget(*dir, *id)
		if errors.Is(err, errTaskBusy) {
			fmt.Fprintf(stderr, "fetch-shim: forget: task %s: %v\n", *id, err)
			return ExitBusy
		}
		return report(stderr, cmd, err)
	}
	return ExitUsage // not reached: cmd was checked above
}

// sendCode reports a send's error and picks its exit code.
func sendCode(stderr io.Writer, id string, err error) int {
	if err == nil {
		return ExitOK
	}
	fmt.Fprintf(stderr, "fetch-shim: send: task %s: %v\n", id, err)
	switch {
	case errors.Is(err, errNoTask):
		return ExitNoTask
	case errors.Is(err, errNoInput):
		return ExitNoInput
	case errors.Is(err, errTooLarge), errors.Is(err, errEmpty):
		return ExitTooLarge
	case errors.Is(err, errPartial):
		return ExitPartial
	case errors.Is(err, errStalled):
		return ExitStalled
	default:
		return ExitFailed
	}
}

func usageCode(cmd string) int {
	if cmd == CmdRun {
		return ExitShimFailed
	}
	return ExitUsage
}

func report(stderr io.Writer, cmd string, err error) int {
	if err != nil {
		fmt.Fprintf(stderr, "fetch-shim: %s: %v\n", cmd, err)
		return ExitFailed
	}
	return ExitOK
}

func printStatus(dir, id string, stdout io.Writer) error {
	procs, err := scanProcs("/proc")
	if err != nil {
		return err
	}
	ti, err := task{dir: dir, id: id}.info(procs)
	if err != nil {
		return err
	}
	return json.NewEncoder(stdout).Encode(ti)
}

// printPs prints every task that has files, and every task id found only as a
// tag on live processes (their files were removed, or their runner never
// wrote any).
func printPs(dir string, stdout io.Writer) error {
	procs, err := scanProcs("/proc")
	if err != nil {
		return err
	}
	ids, err := knownTasks(dir)
	if err != nil {
		return err
	}
	for _, p := range procs {
		if p.tag != "" && ValidTaskID(p.tag) && p.state != 'Z' && !slices.Contains(ids, p.tag) {
			ids = append(ids, p.tag)
		}
	}
	slices.Sort(ids)
	enc := json.NewEncoder(stdout)
	for _, id := range ids {
		ti, err := task{dir: dir, id: id}.info(procs)
		if err != nil {
			return err
		}
		if err := enc.Encode(ti); err != nil {
			return err
		}
	}
	return nil
}

// forget removes the files of a task that is not running.
func forget(dir, id string) error {
	t := task{dir: dir, id: id}
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	lock, err := t.lock()
	if err != nil {
		return err
	}
	defer lock.Close()
	return t.remove(pidSuffix, logSuffix, exitSuffix, stopSuffix, inSuffix, ctlSuffix, lockSuffix)
}
