package progress

import (
	"fmt"
	"strings"
	"time"

	"github.com/fetch-dev/fetch/harness"
	"github.com/fetch-dev/fetch/internal/chat"
	"github.com/fetch-dev/fetch/internal/redact"
	"github.com/fetch-dev/fetch/internal/task"
)

// maxShown bounds the command, diff, questions or plan a request's message
// shows (Discord takes 2,000 characters); "Full text" sends all of it.
const maxShown = 1200

// RequestKey names the message of a request: closing it edits that
// message.
func RequestKey(id int64) string { return fmt.Sprintf("task-request:%d", id) }

// RequestCommand is the text a request's buttons send: /req ID VERB [TEXT].
func RequestCommand(id int64, verb string) string { return fmt.Sprintf("/req %d %s", id, verb) }

// Request is the message of a request that waits for the owner: what the
// CLI of task t wants, and the buttons that answer it. Every button names
// the request, and the text names its task, so that requests of parallel
// tasks never mix. What the CLI wrote is shown through redact.Visible
// (visible), so that the owner approves what would run, not what Discord or
// a terminal would render of it: a right-to-left override or a zero-width
// character reads ⟨U+202E⟩, ⟨U+200B⟩.
func Request(t task.Task, r task.CLIRequest, ttl time.Duration) chat.Reply {
	r = visible(r)
	shown, cut := clipShown(r.Detail)
	var b strings.Builder
	var actions []chat.Action
	shortcuts := ""
	switch r.Kind {
	case harness.KindAsk:
		fmt.Fprintf(&b, "❓ Task %s (%s) asks:\n%s", t.ID, t.Workspace, shown)
		if len(r.Questions) > 0 {
			for _, o := range r.Questions[0].Options {
				actions = append(actions, chat.Action{Label: o.Label, Send: RequestCommand(r.ID, "answer "+o.Label), Style: chat.Primary})
			}
		}
		b.WriteString("\nPick an option, or write your own answer.")
	case harness.KindPlan:
		fmt.Fprintf(&b, "📋 Task %s (%s) proposes a plan:\n%s", t.ID, t.Workspace, shown)
		b.WriteString("\nApprove it to carry it out, Revise to say what should change, or Cancel.")
		actions = []chat.Action{
			{Label: "Approve", Send: RequestCommand(r.ID, "approve"), Style: chat.Primary},
			{Label: "Revise", Send: RequestCommand(r.ID, "revise"), Style: chat.Secondary},
			{Label: "Cancel", Send: RequestCommand(r.ID, "cancel"), Style: chat.Danger},
		}
	default:
		what := "use " + r.Tool
		switch r.Tool { // Claude Code's tools, and the ACP adapter's names of kinds
		case "Bash", "shell":
			what = "run"
		case "Edit", "Write", "MultiEdit", "NotebookEdit", "edit":
			what = "edit " + r.Summary
		}
		fmt.Fprintf(&b, "🔐 Task %s (%s) asks to %s:\n```\n%s\n```", t.ID, t.Workspace, what, strings.ReplaceAll(shown, "```", "ˋˋˋ"))
		if r.Warning != "" {
			fmt.Fprintf(&b, "\n⚠️ %s", r.Warning)
		}
		actions = []chat.Action{{Label: "Allow once", Send: RequestCommand(r.ID, "allow"), Style: chat.Primary}}
		if r.Remember != "" {
			actions = append(actions, chat.Action{Label: "Allow for this task", Send: RequestCommand(r.ID, "task"), Style: chat.Secondary})
		}
		actions = append(actions, chat.Action{Label: "Deny", Send: RequestCommand(r.ID, "deny"), Style: chat.Danger})
		shortcuts = "y/n"
		if r.Remember != "" {
			shortcuts = "y/a/n"
		}
		if r.NoReason {
			b.WriteString("\nAnswer yes or no (this CLI cannot be told a reason)")
		} else {
			b.WriteString("\nAnswer yes, no (or \"no, because …\": the CLI gets your reason)")
		}
		if r.Remember != "" {
			fmt.Fprintf(&b, ", or \"a\" to allow %s for this task", r.Remember)
		}
		b.WriteString(".")
	}
	if cut {
		actions = append(actions, chat.Action{Label: "Full text", Send: RequestCommand(r.ID, "full"), Style: chat.Secondary})
	}
	fmt.Fprintf(&b, "\nRequest %d · denied if unanswered within %s.", r.ID, ttl.Round(time.Second))
	return chat.Reply{Key: RequestKey(r.ID), Text: b.String(), Actions: actions, Shortcuts: shortcuts}
}

// RequestClosed replaces a request's message once it is closed: what it
// asked and how it ended, without buttons.
func RequestClosed(t task.Task, r task.CLIRequest) chat.Reply {
	r = visible(r)
	what := r.Summary
	if r.Kind == harness.KindPlan {
		what = "its plan"
	}
	var how string
	switch r.By {
	case task.ByTTL:
		how = "denied: nobody answered in time"
	case task.ByRestart:
		how = "denied: Fetch restarted while it waited"
	case task.ByEnd:
		how = "closed: the task's run ended"
	case task.ByCLI:
		how = "withdrawn by the CLI"
	default:
		how = string(r.State) + " by " + r.By
		if r.Answer != "" {
			how += ": " + clip(oneLine(r.Answer), 300)
		}
	}
	return chat.Reply{Key: RequestKey(r.ID), Text: fmt.Sprintf("Task %s's request %d (%s) — %s.", t.ID, r.ID, clip(oneLine(what), 300), how)}
}

// RequestFull is the whole text of a request, as a file (through
// redact.Visible too: an editor renders a bidirectional override as a
// chat does).
func RequestFull(r task.CLIRequest) chat.Reply {
	r = visible(r)
	return chat.Reply{
		Text:  fmt.Sprintf("The full text of task %s's request %d is attached.", r.TaskID, r.ID),
		Files: []chat.File{{Name: fmt.Sprintf("request-%d.txt", r.ID), Data: []byte(r.Detail)}},
	}
}

// visible is a request with everything the CLI wrote spelled out by
// redact.Visible, for a message the owner answers.
func visible(r task.CLIRequest) task.CLIRequest {
	r.Tool, r.Summary, r.Detail = redact.Visible(r.Tool), redact.Visible(r.Summary), redact.Visible(r.Detail)
	r.Warning, r.Remember, r.Answer = redact.Visible(r.Warning), redact.Visible(r.Remember), redact.Visible(r.Answer)
	qs := make([]harness.Question, len(r.Questions))
	for i, q := range r.Questions {
		q.Question = redact.Visible(q.Question)
		q.Options = append([]harness.Option(nil), q.Options...)
		for j := range q.Options {
			q.Options[j].Label = redact.Visible(q.Options[j].Label)
			q.Options[j].Description = redact.Visible(q.Options[j].Description)
		}
		qs[i] = q
	}
	r.Questions = qs
	return r
}

func clipShown(s string) (string, bool) {
	if len(s) <= maxShown {
		return s, false
	}
	cut := maxShown
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "\n[…cut; Full text has all of it]", true
}
