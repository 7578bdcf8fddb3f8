package shim

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
)

// CmdPrepare runs a batch (Fetch's own steps before a run, such as making
// the task's worktree) and then replaces itself with the run's command, in
// the directory the steps made: the work before a run and the run itself
// cost one exec. It is run as the child of run, so the steps belong to the
// task's process group (a stop reaches them) and the command keeps the pid
// run started.
//
//	fetch-shim prepare --dir DIR --batch JSON -- argv...
//
// Before the command starts, prepare writes one line to stderr:
// PreparedPrefix followed by the batch's BatchResult as JSON, so that the
// line is the first of the run's stderr, in its log too (a follower after
// a restart reads it again). When a step that may not fail fails, the
// command does not start and prepare exits ExitPrepareFailed.
const CmdPrepare = "prepare"

// PreparedPrefix starts the line prepare writes to stderr.
const PreparedPrefix = "fetch-shim prepared: "

// ExitPrepareFailed is prepare's exit code when a step failed.
const ExitPrepareFailed = 124

// maxPreparedStdout bounds each step's stdout in the prepared line, which
// a kennel reads as one line.
const maxPreparedStdout = 4 << 10

// PrepareArgv is the argv that runs b, then argv in dir. b.Env, when set,
// is the steps' whole environment (with the shim's PATH), so that what the
// command is given (its keys) does not reach the steps.
func PrepareArgv(b Batch, dir string, argv []string) ([]string, error) {
	if err := b.check(); err != nil {
		return nil, fmt.Errorf("prepare: %w", err)
	}
	program, err := json.Marshal(b)
	if err != nil {
		return nil, fmt.Errorf("prepare: %w", err)
	}
	return append([]string{Path, CmdPrepare, "--dir", dir, "--batch", string(program), "--"}, argv...), nil
}

// prepareAndExec is the prepare command. It returns only when the command
// did not start.
func prepareAndExec(ctx context.Context, dir, program string, argv []string, stderr io.Writer) int {
	var b Batch
	dec := json.NewDecoder(strings.NewReader(program))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		fmt.Fprintf(stderr, "fetch-shim: prepare: read the program: %v\n", err)
		return ExitShimFailed
	}
	if err := b.check(); err != nil {
		fmt.Fprintf(stderr, "fetch-shim: prepare: %v\n", err)
		return ExitShimFailed
	}
	if len(argv) == 0 || dir == "" {
		fmt.Fprintf(stderr, "fetch-shim: prepare: no command or no directory\n")
		return ExitShimFailed
	}
	res, vars := b.run(ctx, nil)
	failed := false
	for i := range res.Steps {
		s := &res.Steps[i]
		if len(s.Stdout) > maxPreparedStdout {
			s.Stdout, s.Truncated = s.Stdout[:maxPreparedStdout], true
		}
		failed = failed || s.Exit != 0 && !b.Steps[i].AllowFail
	}
	if !failed && len(res.Steps) == len(b.Steps) {
		res.OK, res.Vars = true, vars // for the run's Record program
	}
	line, err := json.Marshal(res)
	if err != nil {
		fmt.Fprintf(stderr, "fetch-shim: prepare: %v\n", err)
		return ExitShimFailed
	}
	var msg bytes.Buffer
	msg.WriteString(PreparedPrefix)
	msg.Write(line)
	msg.WriteByte('\n')
	if _, err := stderr.Write(msg.Bytes()); err != nil {
		return ExitShimFailed
	}
	if failed || len(res.Steps) < len(b.Steps) {
		return ExitPrepareFailed
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		fmt.Fprintf(stderr, "fetch-shim: prepare: %v\n", err)
		return startCode(err)
	}
	if err := os.Chdir(dir); err != nil {
		fmt.Fprintf(stderr, "fetch-shim: prepare: %v\n", err)
		return ExitShimFailed
	}
	err = syscall.Exec(path, argv, os.Environ())
	fmt.Fprintf(stderr, "fetch-shim: prepare: start %s: %v\n", argv[0], err)
	return startCode(err)
}

// stepEnv is the environment of a batch's steps: b.Env with the shim's
// PATH when b.Env is set, else the shim's own.
func (b Batch) stepEnv() []string {
	if b.Env == nil {
		return os.Environ()
	}
	env := append([]string(nil), b.Env...)
	if p, ok := os.LookupEnv("PATH"); ok {
		env = append(env, "PATH="+p)
	}
	return env
}

// prepareCommand parses prepare's arguments and runs it.
func prepareCommand(ctx context.Context, args []string, stderr io.Writer) int {
	flags := flag.NewFlagSet("fetch-shim "+CmdPrepare, flag.ContinueOnError)
	flags.SetOutput(stderr)
	dir := flags.String("dir", "", "directory the command runs in (the steps make it)")
	program := flags.String("batch", "", "the steps, as a JSON Batch")
	if err := flags.Parse(args); err != nil {
		return ExitShimFailed
	}
	return prepareAndExec(ctx, *dir, *program, flags.Args(), stderr)
}
