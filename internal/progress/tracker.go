package progress

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/fetch-dev/fetch/harness"
	"github.com/fetch-dev/fetch/internal/chat"
	"github.com/fetch-dev/fetch/internal/store"
	"github.com/fetch-dev/fetch/internal/task"
	"github.com/fetch-dev/fetch/modes"
)

// Defaults.
const (
	// DefaultEditEvery is the least time between two edits of a task's
	// status message for tool steps: channels rate-limit edits.
	DefaultEditEvery = 3 * time.Second
	// maxText keeps a message under Discord's 2,000 characters.
	maxText = 1900
	// inlineDiff is the longest diff shown in the message; a longer one is
	// attached as a file.
	inlineDiff = 900
	// lastSteps is how many recent steps the status message shows.
	lastSteps = 3
)

// StopCommand is what the Stop button sends.
const StopCommand = "/stop"

// Tracker keeps what the status messages of a conversation's tasks show
// between updates and decides what each update sends. It is owned by the
// conversation's goroutine: not safe for concurrent use, no I/O.
type Tracker struct {
	every  time.Duration
	scrub  func(string) string
	status map[string]*status // by task id, while it runs
	// link is the task page's link to a task; nil (or "") shows none.
	link func(taskID string) string
}

// status is what the tracker keeps of a running task between updates.
type status struct {
	steps    int
	last     []string
	edited   time.Time
	deferred bool // steps arrived since the last edit
	// note is shown under the goal while it runs (the CLI near its
	// subscription's limit).
	note string
}

// NewTracker returns a Tracker that edits a status message for tool steps
// at most once per every (DefaultEditEvery when 0). scrub (nil: none)
// removes secrets from a task's text before any of it is cut to fit a
// message.
func NewTracker(every time.Duration, scrub func(string) string) *Tracker {
	if every <= 0 {
		every = DefaultEditEvery
	}
	if scrub == nil {
		scrub = func(s string) string { return s }
	}
	return &Tracker{every: every, scrub: scrub, status: map[string]*status{}}
}

// Linking makes a task's status message (while it runs) and its result
// carry a "Task page" link button to link(task id) (none when it returns
// ""); nil shows none.
func (tr *Tracker) Linking(link func(taskID string) string) *Tracker {
	tr.link = link
	return tr
}

// scrubbed is t with its free text scrubbed (the engine stores and
// publishes it scrubbed already; this keeps the tracker right on its own).
func (tr *Tracker) scrubbed(t task.Task) task.Task {
	t.Goal, t.Summary, t.Error = tr.scrub(t.Goal), tr.scrub(t.Summary), tr.scrub(t.Error)
	t.StderrTail, t.Question, t.Patch = tr.scrub(t.StderrTail), tr.scrub(t.Question), tr.scrub(t.Patch)
	return t
}

// Key is the edit key of a task's status message.
func Key(id string) string { return "task:" + id }

// Started is the status message of a task that began (or resumed) a run.
// nearLimit (task.Update.NearLimit) is shown in it while it runs.
func (tr *Tracker) Started(t task.Task, nearLimit string) chat.Reply {
	tr.status[t.ID] = &status{note: nearLimit}
	return tr.statusReply(t, "running")
}

// Reattached announces, as a new message, a run that Fetch follows again
// after a restart, then shows its status message.
func (tr *Tracker) Reattached(t task.Task) []chat.Reply {
	tr.status[t.ID] = &status{}
	return []chat.Reply{
		chat.Text(fmt.Sprintf("🔁 Task %s on %s is still running after a restart of Fetch; I'm following it again.", t.ID, t.Workspace)),
		tr.statusReply(t, "running (followed again after a restart)"),
	}
}

// Reconnected announces, as a new message, a run that Fetch follows again
// once its Docker engine (engine; "" for the local one) answers after an
// outage, then shows its status message. After a restart of Fetch it is
// Reattached.
func (tr *Tracker) Reconnected(t task.Task, engine string) []chat.Reply {
	tr.status[t.ID] = &status{}
	return []chat.Reply{
		chat.Text(fmt.Sprintf("🔁 %s answers again; task %s on %s is still running and I'm following it again.", capitalized(engineName(engine)), t.ID, t.Workspace)),
		tr.statusReply(t, "running (followed again)"),
	}
}

// Unreachable is the one message that tells the owner that a task's
// Docker engine does not answer while it runs; with t.CancelRequested, that
// the stop asked for waits for the engine.
func Unreachable(t task.Task, engine string) chat.Reply {
	if t.CancelRequested {
		return chat.Text(fmt.Sprintf("⏸️ Task %s will be stopped when %s answers again; until then it cannot be reached.", t.ID, engineName(engine)))
	}
	return chat.Text(fmt.Sprintf("🔌 Lost the connection to %s while task %s ran on %s; it will be followed again when the engine answers.", engineName(engine), t.ID, t.Workspace))
}

// engineName names a Docker engine in a message.
func engineName(engine string) string {
	if engine == "" {
		return "the Docker engine"
	}
	return "engine " + engine
}

func capitalized(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// Step coalesces a tool step into the status message: it returns the
// edited message at most once per the tracker's interval; steps in between
// are counted and shown at the next edit.
func (tr *Tracker) Step(t task.Task, ev harness.Event, now time.Time) (chat.Reply, bool) {
	line := Step(ev, tr.scrub)
	if line == "" {
		return chat.Reply{}, false
	}
	st := tr.status[t.ID]
	if st == nil {
		st = &status{}
		tr.status[t.ID] = st
	}
	st.steps++
	st.last = append(st.last, line)
	if len(st.last) > lastSteps {
		st.last = st.last[len(st.last)-lastSteps:]
	}
	if now.Sub(st.edited) < tr.every {
		st.deferred = true
		return chat.Reply{}, false
	}
	st.edited, st.deferred = now, false
	return tr.statusReply(t, "running"), true
}

// Waiting is the status message of a task that asked a question.
func (tr *Tracker) Waiting(t task.Task) chat.Reply {
	return tr.statusReply(t, "waiting for your answer")
}

// Ended forgets a task and returns its status message, edited to its end,
// and the result as a new message (so that the owner is notified).
func (tr *Tracker) Ended(t task.Task) []chat.Reply {
	delete(tr.status, t.ID)
	t = tr.scrubbed(t)
	final := chat.Reply{Text: clip(fmt.Sprintf("%s Task %s on %s (%s) — %s\nGoal: %s", endEmoji(t.State), t.ID, t.Workspace, t.Harness, t.State, clip(oneLine(t.Goal), 200)), maxText), Key: Key(t.ID)}
	res := Result(t)
	res.Actions = tr.withLink(t.ID, append(res.Actions, FollowActions(t)...))
	return []chat.Reply{final, res}
}

// ContinueCommand and RetryCommand are what a result's Continue and Retry
// buttons send, with the task's id.
const (
	ContinueCommand = "/continue"
	RetryCommand    = "/retry"
)

// FollowActions are the buttons that carry an ended task on: Continue
// (what it does next, on its branch) for a task with a branch to work on,
// and Retry for one that did not succeed.
func FollowActions(t task.Task) []chat.Action {
	if t.Mode != task.Work || t.Worktree == "" || !t.State.Terminal() {
		return nil
	}
	actions := []chat.Action{{Label: "Continue", Send: ContinueCommand + " " + t.ID, Style: chat.Primary}}
	if t.State != task.Succeeded {
		actions = append(actions, chat.Action{Label: "Retry", Send: RetryCommand + " " + t.ID, Style: chat.Secondary})
	}
	return actions
}

// Requeued tells that a message the owner sent a running CLI did not
// reach it before its run ended: it waits for the next run.
func Requeued(t task.Task, m task.Message) chat.Reply {
	return chat.Reply{
		Text:    clip(fmt.Sprintf("📥 Task %s's run ended before its CLI took your message %q; it becomes the task's next run, on the same branch.", t.ID, clip(oneLine(m.Text), 200)), maxText),
		Actions: []chat.Action{{Label: "Take it back", Send: fmt.Sprintf("/withdraw %d", m.ID), Style: chat.Secondary}},
	}
}

// withLink adds the task page's link button to actions, when there is a
// page.
func (tr *Tracker) withLink(id string, actions []chat.Action) []chat.Action {
	if tr.link == nil {
		return actions
	}
	if u := tr.link(id); u != "" {
		actions = append(actions, chat.Action{Label: PageLabel, URL: u})
	}
	return actions
}

// PageLabel is the label of the task page's link button.
const PageLabel = "Task page"

func endEmoji(s task.State) string {
	switch s {
	case task.Succeeded:
		return "✅"
	case task.Failed:
		return "❌"
	case task.Cancelled:
		return "⏹️"
	case task.NeedsAttention:
		return "⚠️"
	case task.Queued, task.Running, task.WaitingInput:
	}
	return modes.Working.Emoji()
}

// statusReply is the task's status message with its Stop button.
func (tr *Tracker) statusReply(t task.Task, what string) chat.Reply {
	t = tr.scrubbed(t)
	var b strings.Builder
	fmt.Fprintf(&b, "%s Task %s on %s (%s) — %s\nGoal: %s", modes.Working.Emoji(), t.ID, t.Workspace, t.Harness, what, clip(oneLine(t.Goal), 200))
	if t.Mode == task.Work && harness.RunsOneShot(harness.Name(t.Harness)) {
		b.WriteString("\n⚠️ " + t.Harness + " " + harness.BypassNote + ".")
	}
	if st := tr.status[t.ID]; st != nil && st.note != "" {
		b.WriteString("\n⚠️ " + st.note)
	}
	if st := tr.status[t.ID]; st != nil && st.steps > 0 {
		fmt.Fprintf(&b, "\nSteps: %d", st.steps)
		for _, l := range st.last {
			b.WriteString("\n  " + l)
		}
	}
	return chat.Reply{
		Text:    clip(b.String(), maxText),
		Key:     Key(t.ID),
		Actions: tr.withLink(t.ID, []chat.Action{{Label: "Stop", Send: StopCommand, Style: chat.Danger}}),
	}
}

// promptAction marks a prompt as a task's question.
type promptAction struct {
	Task string `json:"task"`
}

// QuestionPrompt is the prompt that a task's question opens in its
// conversation.
func QuestionPrompt(t task.Task) store.Prompt {
	action, _ := json.Marshal(promptAction{Task: t.ID})
	return store.Prompt{ConversationID: t.ConversationID, Kind: store.Question, Body: t.Question, Action: string(action)}
}

// PromptTask is the id of the task whose question p is, "" when p is not
// a task's question.
func PromptTask(p store.Prompt) string {
	var a promptAction
	if json.Unmarshal([]byte(p.Action), &a) != nil {
		return ""
	}
	return a.Task
}

// Question shows a task's question. When another prompt is open (queued),
// it says how to answer this one anyway.
func Question(t task.Task, queued bool) chat.Reply {
	if t.AtBudget {
		return AtBudget(t)
	}
	text := fmt.Sprintf("❓ Task %s asks:\n%s\n\nReply with your answer; the task resumes with it.", t.ID, clip(t.Question, maxText-200))
	if queued {
		text += fmt.Sprintf("\n(I'm waiting on another answer first; you can also answer with: fetch task answer %s \"…\")", t.ID)
	}
	return chat.Text(text)
}

// BudgetCommand is what the buttons of a task paused at its budget send:
// "/budget ID raise USD" or "/budget ID stop".
const BudgetCommand = "/budget"

// AtBudget asks the owner whether a task paused at its budget (its
// question says where and what it cost) may go on: Raise (to the cap its
// question offers) or Stop.
func AtBudget(t task.Task) chat.Reply {
	raise := fmt.Sprintf("%.2f", t.SuggestedCap())
	return chat.Reply{
		Text: clip(fmt.Sprintf("💰 Task %s: %s\n\nRaise its cap (%s %s raise [USD]) or stop it (%s %s stop).", t.ID, t.Question, BudgetCommand, t.ID, BudgetCommand, t.ID), maxText),
		Actions: []chat.Action{
			{Label: "Raise the cap to $" + raise, Send: fmt.Sprintf("%s %s raise %s", BudgetCommand, t.ID, raise), Style: chat.Primary},
			{Label: "Stop", Send: fmt.Sprintf("%s %s stop", BudgetCommand, t.ID), Style: chat.Danger},
		},
	}
}

// Result is the message (a new one, not an edit) for a task that ended: its state, summary or
// error, files with line counts, the diff — inline when short,
// otherwise attached as ID.patch — and the files the run's CLI left for
// the owner (task.Task.Out), attached.
func Result(t task.Task) chat.Reply {
	var b strings.Builder
	switch t.State {
	case task.Succeeded:
		fmt.Fprintf(&b, "✅ Task %s succeeded on %s", t.ID, t.Workspace)
	case task.Failed:
		fmt.Fprintf(&b, "❌ Task %s failed on %s", t.ID, t.Workspace)
		if t.ExitCode > 0 {
			fmt.Fprintf(&b, " (exit code %d)", t.ExitCode)
		}
	case task.Cancelled:
		fmt.Fprintf(&b, "⏹️ Task %s was cancelled on %s", t.ID, t.Workspace)
	case task.NeedsAttention:
		fmt.Fprintf(&b, "⚠️ Task %s on %s needs your attention", t.ID, t.Workspace)
	case task.Queued, task.Running, task.WaitingInput:
		fmt.Fprintf(&b, "Task %s on %s is %s", t.ID, t.Workspace, t.State)
	}
	b.WriteString("\nGoal: " + clip(oneLine(t.Goal), 200))
	if c := Cost(t); c != "" {
		b.WriteString("\nCost: " + c)
	}
	if t.Summary != "" {
		b.WriteString("\n\n" + clip(strings.TrimSpace(t.Summary), 700))
	}
	if t.Error != "" && t.State != task.Succeeded {
		b.WriteString("\n\n" + clip(strings.TrimSpace(t.Error), 400))
	}
	if t.ShipError != "" && !t.Conflicted() {
		b.WriteString("\n\n" + clip(strings.TrimSpace(t.ShipError), 300))
		if t.ChecksFailed() && t.Checks != "" {
			b.WriteString("\n" + clip(t.Checks, 900))
		}
	}
	if t.Pushed != "" && t.PR.Number == 0 && t.ShipAs == task.ShipAs("push") {
		fmt.Fprintf(&b, "\n\n⬆️ Pushed branch %s to GitHub; no pull request, as asked.", t.Branch)
	}
	if t.State == task.Failed && t.StderrTail != "" && !strings.Contains(t.Error, strings.TrimSpace(lastLines(t.StderrTail, 1))) {
		b.WriteString("\nstderr:\n" + clip(lastLines(t.StderrTail, 3), 300))
	}
	if len(t.Files) > 0 {
		fmt.Fprintf(&b, "\n\nBranch %s: %d file(s), +%d −%d", t.Branch, len(t.Files), t.Added(), t.Removed())
		for i, f := range t.Files {
			if i == 8 {
				fmt.Fprintf(&b, "\n  … and %d more", len(t.Files)-i)
				break
			}
			if f.Binary {
				fmt.Fprintf(&b, "\n  %s (binary)", f.Path)
			} else {
				fmt.Fprintf(&b, "\n  %s +%d −%d", f.Path, f.Added, f.Removed)
			}
		}
		if t.State == task.Cancelled || t.State == task.Failed {
			b.WriteString("\nThe partial work is kept on the branch.")
		}
	} else if t.Branch != "" && t.Worktree != "" && t.State != task.Failed {
		// (A failed run may have ended before its work could be read.)
		fmt.Fprintf(&b, "\n\nNo files changed (branch %s).", t.Branch)
	}
	if take := TakeIt(t); take != "" {
		b.WriteString("\nTake it into your clone: `" + take + "`")
	}
	b.WriteString(outNote(t))
	var reply chat.Reply
	if t.Conflicted() {
		reply.Actions = []chat.Action{{Label: "Resolve", Send: ShipCommand + " resolve " + t.ID, Style: chat.Primary}}
	}
	if t.Held() {
		reply.Actions = append(reply.Actions, shipAnyway(t))
	}
	switch {
	case t.Patch == "":
	case len(t.Patch) <= inlineDiff && b.Len()+len(t.Patch) < maxText-20:
		b.WriteString("\n```diff\n" + t.Patch + "```")
	default:
		reply.Files = []chat.File{{Name: t.ID + ".patch", Data: []byte(t.Patch)}}
		b.WriteString("\nThe diff is attached.")
	}
	reply.Files = append(reply.Files, outAttachments(t)...)
	reply.Text = clip(b.String(), maxText)
	return reply
}

// TakeIt is the command that brings task t's work into the owner's own
// clone (run in it: fetch task apply fetches the branch from Fetch's own
// repository and checks it out), for a task with commits on its branch;
// "" for any other.
func TakeIt(t task.Task) string {
	if t.Mode != task.Work || t.Branch == "" || len(t.Commits) == 0 {
		return ""
	}
	return "fetch task apply " + t.ID
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// shipAnyway is the button that opens the pull request a failing check
// held back.
func shipAnyway(t task.Task) chat.Action {
	return chat.Action{Label: "Ship anyway", Send: ShipCommand + " anyway " + t.ID, Style: chat.Secondary}
}

// ShipCommand is what the pull request's buttons send: "/pr merge ID",
// "/pr close ID".
const ShipCommand = "/pr"

// Shipped is the message that a task's pull request was opened (with its
// link and buttons), or why shipping failed (errText, or the task's
// ShipError).
func Shipped(t task.Task, errText string) chat.Reply {
	t.Goal = oneLine(t.Goal)
	switch {
	case errText != "":
		return chat.Text(clip(fmt.Sprintf("⚠️ Task %s was not shipped: %s", t.ID, errText), maxText))
	case t.PR.Number == 0 && t.Conflicted():
		return chat.Reply{
			Text:    clip(fmt.Sprintf("⚠️ Task %s was not shipped: %s", t.ID, t.Error), maxText),
			Actions: []chat.Action{{Label: "Resolve", Send: ShipCommand + " resolve " + t.ID, Style: chat.Primary}},
		}
	case t.PR.Number == 0 && t.Held():
		return chat.Reply{
			Text:    clip(fmt.Sprintf("⚠️ Task %s was not shipped: %s\n%s\n%s", t.ID, t.ShipError, t.Checks, t.Error), maxText),
			Actions: []chat.Action{shipAnyway(t)},
		}
	case t.PR.Number == 0 && t.State == task.NeedsAttention:
		return chat.Text(clip(fmt.Sprintf("⚠️ Task %s was not shipped: %s", t.ID, t.Error), maxText))
	case t.PR.Number == 0 && t.ShipError != "":
		return chat.Text(clip(fmt.Sprintf("⚠️ Task %s was %s", t.ID, t.ShipError), maxText))
	case t.PR.Number == 0 && t.Pushed != "":
		return chat.Text(fmt.Sprintf("⬆️ Task %s's branch %s was pushed to GitHub; no pull request, as asked.", t.ID, t.Branch))
	case t.PR.Number == 0:
		return chat.Text(fmt.Sprintf("Task %s has no pull request.", t.ID))
	}
	what := "opened"
	if t.PR.Draft {
		what = "opened as a draft"
	}
	actions := []chat.Action{{Label: "Open", URL: t.PR.URL}}
	if t.PR.State == "merged" {
		what = "opened and merged"
	} else {
		if t.PR.MayMerge {
			actions = append(actions, chat.Action{Label: "Merge", Send: ShipCommand + " merge " + t.ID, Style: chat.Primary})
		}
		actions = append(actions, chat.Action{Label: "Close", Send: ShipCommand + " close " + t.ID, Style: chat.Danger})
	}
	text := fmt.Sprintf("🔀 Pull request #%d %s for task %s on %s: %s\nGoal: %s", t.PR.Number, what, t.ID, t.Workspace, t.PR.URL, clip(t.Goal, 200))
	switch {
	case t.ChecksFailed() && t.PR.Draft:
		text += "\nA check failed, so it is a draft and is not merged on its own. Continue the task to fix it, or ship it anyway (marks it ready for review)."
		if t.PR.State == "open" {
			actions = append(actions, shipAnyway(t))
		}
	case t.ChecksFailed():
		text += "\nA check failed; it was shipped anyway, and is not merged on its own."
	}
	if t.Checks != "" {
		text += "\nChecks:\n" + clip(t.Checks, 900)
	}
	if t.PR.State == "open" && t.PR.Held != "" {
		// Said last and whole where it fits: why an autonomous merge waits.
		text = clip(text, maxText/2) + "\n⏸️ Waits for your Merge: " + strings.TrimSuffix(t.PR.Held, ".") + "."
	}
	return chat.Reply{Text: clip(text, maxText), Actions: actions}
}

// PRChanged is the message that a task's pull request was merged or
// closed (and its worktree removed), or why the owner's merge or close
// failed.
func PRChanged(t task.Task, errText string) chat.Reply {
	if errText != "" {
		return chat.Text(clip(fmt.Sprintf("⚠️ Pull request #%d of task %s: %s", t.PR.Number, t.ID, errText), maxText))
	}
	switch t.PR.State {
	case "merged":
		return chat.Text(fmt.Sprintf("🎉 Pull request #%d of task %s was merged: %s\nIts worktree and branch %s are removed.", t.PR.Number, t.ID, t.PR.URL, t.Branch))
	case "closed":
		return chat.Text(fmt.Sprintf("Pull request #%d of task %s was closed without merging: %s\nIts worktree and branch %s are removed.", t.PR.Number, t.ID, t.PR.URL, t.Branch))
	}
	return chat.Text(fmt.Sprintf("Pull request #%d of task %s is %s: %s", t.PR.Number, t.ID, t.PR.State, t.PR.URL))
}

// Reviewed is the message that a task's pull request got reviews, with the
// button that sends them to the coding CLI.
func Reviewed(t task.Task, review string) chat.Reply {
	return chat.Reply{
		Text: clip(fmt.Sprintf("💬 Pull request #%d of task %s on %s got a review: %s\n%s", t.PR.Number, t.ID, t.Workspace, t.PR.URL, strings.TrimSpace(review)), maxText),
		Actions: []chat.Action{
			{Label: "Address the review", Send: ShipCommand + " review " + t.ID, Style: chat.Primary},
			{Label: "Open", URL: t.PR.URL},
		},
	}
}

// Told says what became of a message to a task.
func Told(told task.Told) chat.Reply {
	t := told.Task
	switch told.How {
	case task.TellSent:
		return chat.Text(fmt.Sprintf("📨 Sent to task %s's %s while it works; it takes it at its next turn.", t.ID, t.Harness))
	case task.TellQueued:
		return chat.Reply{
			Text:    fmt.Sprintf("📥 Task %s's %s takes no message while it works: yours waits and becomes its next run, on the same branch, when this one ends.", t.ID, t.Harness),
			Actions: []chat.Action{{Label: "Take it back", Send: fmt.Sprintf("/withdraw %d", told.MessageID), Style: chat.Secondary}},
		}
	}
	return chat.Text(fmt.Sprintf("▶️ Task %s continues on %s with your message.", t.ID, t.Branch))
}
