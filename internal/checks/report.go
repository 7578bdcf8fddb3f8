package checks

import (
	"fmt"
	"strings"
	"time"
)

// Outcome is how one check ended.
type Outcome string

const (
	Passed Outcome = "passed"
	Failed Outcome = "failed"
	// TimedOut: cut at the time limit.
	TimedOut Outcome = "timed out"
	// Missing: a detected command whose program is not in the kennel.
	Missing Outcome = "not run"
	// Skipped: the time limit was spent before it could start.
	Skipped Outcome = "skipped"
)

// Result is one check's outcome.
type Result struct {
	// Command is the command line as the owner reads it.
	Command string
	Source  Source
	Outcome Outcome
	// Exit is the exit code of a finished command.
	Exit int
	// Tail is the end of its output (stdout and stderr), masked; kept for
	// a check that did not pass.
	Tail string
	Took time.Duration
}

// Report is what the checks of one shipment said.
type Report struct {
	// Source says where the commands came from; Off when the owner
	// turned the checks off.
	Source  Source
	Results []Result
	// Limit is the time limit they shared.
	Limit time.Duration
	// OnFail is the workspace's setting for a failure.
	OnFail OnFail
}

// Failed tells whether a check failed or was cut: the work does not
// merge on its own, and its pull request is a draft or not opened.
func (r Report) Failed() bool {
	for _, c := range r.Results {
		if c.Outcome == Failed || c.Outcome == TimedOut {
			return true
		}
	}
	return false
}

// Passed tells whether every check that ran passed and at least one ran.
func (r Report) Passed() bool {
	ran := false
	for _, c := range r.Results {
		switch c.Outcome {
		case Passed:
			ran = true
		case Failed, TimedOut:
			return false
		}
	}
	return ran
}

// verdict is one check's outcome in words.
func (c Result) verdict(limit time.Duration) string {
	switch c.Outcome {
	case Failed:
		return fmt.Sprintf("failed (exit %d)", c.Exit)
	case TimedOut:
		return fmt.Sprintf("timed out: cut at the time limit of %s", limit)
	case Missing:
		return "not run: its program is not in the kennel"
	case Skipped:
		return "not run: the time limit was spent"
	}
	return string(c.Outcome)
}

// Summary is the checks in a few lines, for the chat: each command and
// its outcome, and the last lines of the first failure.
func (r Report) Summary() string {
	if r.Source == Off || len(r.Results) == 0 {
		return ""
	}
	var b strings.Builder
	tail := ""
	for _, c := range r.Results {
		mark := "✅"
		if c.Outcome != Passed {
			mark = "❌"
			if c.Outcome == Missing || c.Outcome == Skipped {
				mark = "➖"
			}
		}
		fmt.Fprintf(&b, "%s `%s`: %s\n", mark, c.Command, c.verdict(r.Limit))
		if tail == "" && (c.Outcome == Failed || c.Outcome == TimedOut) && c.Tail != "" {
			tail = lastLines(c.Tail, 6)
		}
	}
	if tail != "" {
		b.WriteString("```\n" + fence(tail) + "\n```")
	}
	return strings.TrimRight(b.String(), "\n")
}

// Markdown is the checks' section of a pull request's body; "" when no
// Runner ran (Source empty).
func (r Report) Markdown() string {
	if r.Source == "" {
		return ""
	}
	var b strings.Builder
	b.WriteString("**Checks Fetch ran in the kennel**\n\n")
	switch {
	case r.Source == Off:
		b.WriteString("None: the owner turned them off for this workspace.\n\n")
		return b.String()
	case len(r.Results) == 0:
		b.WriteString("None found: set them with `/checks set COMMAND`.\n\n")
		return b.String()
	}
	for _, c := range r.Results {
		fmt.Fprintf(&b, "- `%s` (%s): %s\n", c.Command, c.Source, c.verdict(r.Limit))
	}
	b.WriteString("\n")
	for _, c := range r.Results {
		if (c.Outcome == Failed || c.Outcome == TimedOut) && c.Tail != "" {
			fmt.Fprintf(&b, "<details><summary>Output of <code>%s</code> (its end)</summary>\n\n```\n%s\n```\n</details>\n\n", htmlEscape(c.Command), fence(c.Tail))
		}
	}
	return b.String()
}

// fence keeps a text from closing the code block it is shown in.
func fence(s string) string { return strings.ReplaceAll(s, "```", "`\u200b``") }

func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
