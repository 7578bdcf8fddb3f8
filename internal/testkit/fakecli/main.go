// Command fakecli is a scripted stand-in for the coding CLIs Fetch drives:
// claude, codex, gemini, copilot, opencode, qwen, cursor-agent and aider. It
// is installed under each of those names in the kennel test image and
// behaves like the CLI it is called as: it accepts that CLI's headless flags
// (and rejects unknown ones with exit 2, as the real parsers do), writes that
// CLI's output format (modelled on shared/reference/harness-transcripts),
// really edits a file in its working directory, and keeps sessions under
// $HOME so that resuming works.
//
// Run as claude with --input-format stream-json (Claude Code's two-way
// mode), it reads its prompt and the answers to its permission requests
// and questions from stdin; twoway.go lists the goal's directives for it.
//
// Run as gemini, qwen or copilot with --acp, as `opencode acp`, or as
// pi-agent (an ACP agent Fetch has no code for, for the generic ACP
// harness), it speaks the Agent Client Protocol on stdin and stdout;
// acp.go and acp_agents.go list what it does.
//
// Run as `codex app-server`, it speaks Codex's app-server protocol on stdin
// and stdout; codex_appserver.go lists what it does.
//
// Run in a CLI's read-only mode (claude --permission-mode plan, gemini
// without --yolo, copilot without --allow-all-tools), a scenario that would
// edit is refused the way that CLI refuses it, and nothing is written;
// only sneak-edit writes anyway.
//
// The scenario comes from the prompt, so the code under test needs no special
// flags:
//
//	[scenario:success]     (default) edit a file, run a command, report usage and a summary, exit 0
//	[scenario:fail:N]      report the CLI's own failure shape and exit N (default 1)
//	[scenario:hang]        start a command whose child (its own session) hangs, and hang too
//	[scenario:ignore-int]  ignore SIGINT and hang
//	[scenario:question]    ask a question (QUESTION: line) and exit 0; a resume with the answer edits and succeeds
//	[scenario:huge:N]      write N MiB (default 16) of valid text events, then succeed
//	[scenario:spend:N]     claude/qwen: a model call every 200 ms for N seconds (default 30), each with its usage ($0.0125 at Opus prices); SIGINT ends it with the cost so far
//	[scenario:slow:N]      say "Still working" once a second for N seconds (default 5), then succeed
//	[scenario:secret]      print fake tokens and the CLI's own credential in its output, then succeed
//	[scenario:leak]        write a fake AWS access key into the file it edits, then succeed
//	[scenario:out-file]    the usual work, and leave .fetch/out/screenshot.png (a 2×1 PNG) and notes.txt for the owner
//	[scenario:out-symlink] the usual work, and leave .fetch/out/leak.txt (a symlink to /etc/passwd) and keys.txt (a fake AWS key)
//	[scenario:answer]      answer a question about the working directory without changing anything, exit 0
//	[scenario:sneak-edit]  edit a file although the run is read-only (a read-only mode that leaks), then answer
//	[tests]                after the edit, report a passing `go test ./...` run
//	[every:MSms]           the spend scenario's pace: a model call every MS milliseconds instead of 200
//	[file:NAME]            the file to edit, relative to the working directory (default FETCH_DONE.md)
//
// `NAME --version` prints "NAME (fakecli)" and exits 0.
//
// Every run writes "fakecli: argv <JSON array>", "fakecli: env <JSON array
// of variable names>" and "fakecli: uid <N>" to stderr first, so tests can
// check what arrived and as whom it ran.
//
// fakecli uses the standard library only and is built with CGO_ENABLED=0, so
// that one static binary runs in any image.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// childName is argv[0] of the helper process the hang scenario starts.
const childName = "fakecli-child"

func main() {
	os.Exit(run(os.Args, os.Stdout, os.Stderr))
}

// run dispatches on the program name, like a multi-call binary.
func run(args []string, stdout, stderr io.Writer) int {
	name := filepath.Base(args[0])
	if name == childName {
		return child()
	}
	if len(args) == 2 && args[1] == upstreamArg {
		return serveUpstream(stderr)
	}
	cli, ok := lookupCLI(name)
	if !ok {
		fmt.Fprintf(stderr, "fakecli: called as %q; install it as one of %s\n", name, strings.Join(cliNames(), ", "))
		return 127
	}
	if len(args) == 2 && args[1] == "--version" {
		// What `CLI --version` prints: a version line (fetch doctor reads it).
		fmt.Fprintf(stdout, "%s (fakecli)\n", name)
		return 0
	}
	record(stderr, args)
	if name == "codex" && len(args) > 1 && args[1] == "app-server" {
		return playAppServer(args[2:], os.Stdin, stdout, stderr)
	}
	inv, err := cli.parse(args[1:], stderr)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		if ee, ok := err.(exitError); ok {
			return ee.code
		}
		return 1
	}
	inv.cli = name
	if inv.twoWay {
		return playTwoWay(inv, os.Stdin, stdout, stderr)
	}
	if inv.acp {
		return playACP(inv, os.Stdin, stdout, stderr)
	}
	return play(cli, inv, stdout, stderr)
}

// record writes the argv and the names of the environment variables to
// stderr, for tests.
func record(stderr io.Writer, args []string) {
	argv, _ := json.Marshal(args)
	var names []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		names = append(names, k)
	}
	slices.Sort(names)
	env, _ := json.Marshal(names)
	fmt.Fprintf(stderr, "fakecli: argv %s\nfakecli: env %s\nfakecli: uid %d\n", argv, env, os.Getuid())
}

// exitError ends the run with a given exit code.
type exitError struct {
	code int
	msg  string
}

func (e exitError) Error() string { return e.msg }

// usagef is a command-line error: exit 2, like the CLIs' own parsers.
func usagef(format string, a ...any) error { return exitError{2, fmt.Sprintf(format, a...)} }
