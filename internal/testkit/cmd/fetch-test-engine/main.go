// Command fetch-test-engine starts and stops the second Docker engine of a
// test run (testkit's remote engine: dockerd and sshd in a container on the
// local engine) outside any test process, so that every test binary of the
// run shares one engine that none of them owns. .ci/run uses it:
//
//	fetch-test-engine start --dir DIR --owner-pid PID
//	fetch-test-engine stop --dir DIR
//
// start makes DIR (mode 0700; an existing one must be empty), writes the
// engine's client keys (private ones 0600), known_hosts and engine.json
// into it, waits until the engine answers over TLS and SSH, and prints the
// path of engine.json: give it to the tests as FETCH_TEST_ENGINE. PID is
// the process that owns the engine, usually the calling shell ($$): if it
// dies without running stop, the next engine start on this host removes
// the engine. stop removes the engine's container and volume (also those
// of a start that was cut short) and what start wrote into DIR.
//
// It lives under internal/testkit because it is the testkit's engine code
// run from a shell; Fetch's own binaries never import testkit.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/docker/docker/client"

	"github.com/fetch-dev/fetch/internal/testkit"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "fetch-test-engine:", err)
		if errors.Is(err, errUsage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

var errUsage = errors.New("usage: fetch-test-engine start --dir DIR --owner-pid PID | stop --dir DIR")

// run runs one command; the engine's progress goes to stderr, start's
// answer (the path of engine.json) to stdout.
func run(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errUsage
	}
	cmd := args[0]
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", "", "directory for the engine's keys and engine.json")
	var owner *int
	switch cmd {
	case "start":
		owner = fs.Int("owner-pid", 0, "process that owns the engine (the shell that will stop it)")
	case "stop":
	default:
		return fmt.Errorf("%w (not %q)", errUsage, cmd)
	}
	if err := fs.Parse(args[1:]); err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	if *dir == "" || fs.NArg() > 0 || owner != nil && *owner <= 0 {
		return errUsage
	}
	local, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		return fmt.Errorf("docker client: %w", err)
	}
	defer local.Close()
	if cmd == "stop" {
		return testkit.StopEngineIn(local, *dir)
	}
	logf := func(format string, args ...any) { fmt.Fprintf(stderr, format+"\n", args...) }
	path, err := testkit.StartEngineIn(local, *dir, *owner, logf)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, path)
	return err
}
