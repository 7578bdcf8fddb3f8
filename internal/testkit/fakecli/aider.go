package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
)

// parseAider accepts the flags the harness passes (and a few more of
// Aider's), with --message=….
func parseAider(args []string, stderr io.Writer) (invocation, error) {
	var inv invocation
	var input string
	var ignored bool
	f := newFlags("aider", stderr)
	for _, b := range []string{"yes-always", "no-stream", "no-pretty", "no-fancy-input", "no-auto-commits", "no-gitignore",
		"no-check-update", "no-show-release-notes", "no-show-model-warnings", "analytics-disable", "auto-test"} {
		f.boolean(&ignored, b)
	}
	f.boolean(&inv.restore, "restore-chat-history")
	f.str(&inv.history, "chat-history-file")
	f.str(&input, "input-history-file")
	f.str(&inv.model, "model")
	f.str(&inv.prompt, "m", "message")
	pos, err := f.parse(args)
	if err != nil {
		return inv, err
	}
	switch {
	case len(pos) != 0:
		return inv, usagef("fakecli does not script adding files on the command line: %q", pos)
	case inv.prompt == "":
		return inv, usagef("missing --message")
	case inv.history == "":
		inv.history = filepath.Join(cwd(), ".aider.chat.history.md")
	}
	return inv, nil
}

type aiderStyle struct {
	o      out
	model  string
	edited []string
	last   string
}

func newAider(o out, inv invocation, _ *session) emitter {
	return &aiderStyle{o: o, model: orDefault(inv.model, "sonnet")}
}

func (a *aiderStyle) start() {
	a.o.line("Aider v0.86.1")
	a.o.line("Main model: " + a.model + " with diff edit format, infinite output")
	a.o.line("Git repo: .git with 2 files")
	a.o.line("Repo-map: using 4096 tokens, auto refresh")
	a.o.line("")
}

func (a *aiderStyle) text(s string) {
	a.last = s
	a.o.line(s)
	a.o.line("")
}

func (a *aiderStyle) edit(path string, _ bool, before, after string) {
	rel, err := filepath.Rel(cwd(), path)
	if err != nil {
		rel = path
	}
	a.last = ""
	a.o.line(rel)
	a.o.line("<<<<<<< SEARCH")
	a.o.line(strings.TrimSuffix(before, "\n"))
	a.o.line("=======")
	a.o.line(strings.TrimSuffix(after, "\n"))
	a.o.line(">>>>>>> REPLACE")
	a.o.line("")
	a.edited = append(a.edited, rel)
}

// command: Aider refuses shell commands under --yes-always.
func (a *aiderStyle) command(cmd, _ string, _ int) {
	a.last = ""
	a.o.line(cmd)
	a.o.line("Run shell command? (Y)es/(N)o/(D)on't ask again [Yes]: n")
}

func (a *aiderStyle) commandStarted(cmd string) { a.o.line(cmd) }

func (a *aiderStyle) finish(summary string) {
	if a.last != summary {
		a.o.line(summary)
		a.o.line("")
	}
	a.o.line(fmt.Sprintf("Tokens: %.1fk sent, %d received. Cost: $%.4f message, $%.4f session.", float64(fakeInputTokens)/1000, fakeOutputTokens, fakeCostUSD, fakeCostUSD))
	for _, f := range a.edited {
		a.o.line("Applied edit to " + f)
	}
}

// fail: Aider prints the error and still exits 0.
func (a *aiderStyle) fail(msg string) {
	a.o.line("litellm.APIError: " + msg)
}
