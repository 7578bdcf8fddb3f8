package agent

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/fetch-dev/fetch/instincts"
	"github.com/fetch-dev/fetch/internal/chat"
	"github.com/fetch-dev/fetch/internal/store"
	"github.com/fetch-dev/fetch/internal/task"
	"github.com/fetch-dev/fetch/internal/workspace"
)

// Argument types: the tools' JSON Schemas are generated from these. A
// field is described only where its name and the tool's description leave
// the model guessing; a workspace left empty is the selected one, which
// the system prompt says once for every tool.
type (
	noArgs        struct{}
	workspaceName struct {
		Name string `json:"name"`
	}
	optionalWorkspace struct {
		Name string `json:"name,omitempty"`
	}
	createArgs struct {
		Name     string `json:"name"`
		Template string `json:"template,omitempty"`
		URL      string `json:"url,omitempty"`
	}
	taskCreateArgs struct {
		Goal      string `json:"goal" description:"one clear instruction with acceptance criteria"`
		Workspace string `json:"workspace,omitempty"`
		Harness   string `json:"harness,omitempty"`
		Queue     bool   `json:"queue,omitempty" description:"wait behind a running task"`
		PlanFirst bool   `json:"plan_first,omitempty" description:"big or risky goal: plan first, owner approves"`
		Model     string `json:"model,omitempty" description:"the CLI's model, only when the owner names one"`
		Ship      string `json:"ship,omitempty" enum:"push,draft" description:"only when the owner asks it of this task: push (push the branch, no pull request) or draft (a draft pull request)"`
	}
	taskMessageArgs struct {
		ID   string `json:"id"`
		Text string `json:"text" description:"the owner's instruction, in their words"`
	}
	taskAskArgs struct {
		Question  string `json:"question" description:"with what a good answer covers"`
		Workspace string `json:"workspace,omitempty"`
		Harness   string `json:"harness,omitempty" description:"claude, gemini or copilot"`
		Queue     bool   `json:"queue,omitempty" description:"wait behind a running task"`
	}
	taskID struct {
		ID string `json:"id"`
	}
	optionalTask struct {
		ID string `json:"id,omitempty"`
	}
	taskRespondArgs struct {
		ID     string `json:"id"`
		Answer string `json:"answer"`
	}
	askArgs struct {
		Question string `json:"question"`
	}
	progressArgs struct {
		Message string `json:"message"`
	}
)

// dangerousGoal matches task goals that destroy work: discarding a branch,
// force-pushing, hard resets, wiping files or data.
var dangerousGoal = regexp.MustCompile(`(?i)\b(discard|delete|drop|remove)\s+(the\s+)?(task\s+)?(branch|branches|database|table|repo|repository)\b|\bforce[- ]push|push\s+(-f|--force)\b|reset\s+--hard|\brm\s+-rf?\b|\bwipe\b|\bdrop\s+(table|database)\b`)

func trimmed(fields ...*string) {
	for _, f := range fields {
		*f = strings.TrimSpace(*f)
	}
}

// nonEmpty fails for a required field that is empty (or only spaces).
func nonEmpty(field, v string) error {
	if v == "" {
		return fieldError(field, "must not be empty")
	}
	return nil
}

// knownHarness fails for a harness the engine does not know, naming the
// ones it does; "" (the default harness) and a setup that lists none pass.
func (a *Agent) knownHarness(h string) error {
	// A generic ACP agent (acp:COMMAND) is checked by the task engine.
	if h == "" || len(a.cfg.Harnesses) == 0 || slices.Contains(a.cfg.Harnesses, h) || strings.HasPrefix(h, "acp:") {
		return nil
	}
	return fieldError("harness", "unknown harness %q (known: %s)", h, strings.Join(a.cfg.Harnesses, ", "))
}

// register defines the orchestrator tools, in the order they are offered.
func (a *Agent) register() error {
	a.tools = map[string]*tool{}
	errs := []error{
		define(a, "workspace_list", spec[noArgs]{access: readOnly, run: toolWorkspaceList}),
		define(a, "workspace_status", spec[optionalWorkspace]{access: readOnly, survey: true,
			validate: func(w *optionalWorkspace) error { trimmed(&w.Name); return nil },
			run:      toolWorkspaceStatus}),
		define(a, "task_status", spec[optionalTask]{access: readOnly, needs: aTask,
			validate: func(t *optionalTask) error { trimmed(&t.ID); return nil },
			run:      toolTaskStatus}),
		define(a, "workspace_select", spec[workspaceName]{access: mutating, needs: anotherWorkspace, changesContext: true,
			validate: func(w *workspaceName) error { trimmed(&w.Name); return nonEmpty("name", w.Name) },
			check:    func(ctx context.Context, r *run, w workspaceName) error { return mustExist(ctx, r, "name", w.Name) },
			run:      toolWorkspaceSelect}),
		define(a, "workspace_create", spec[createArgs]{access: mutating, changesContext: true, ownerOnly: "add a workspace",
			validate: func(c *createArgs) error { trimmed(&c.Name, &c.Template, &c.URL); return nonEmpty("name", c.Name) },
			run:      toolWorkspaceCreate}),
		define(a, "workspace_delete", spec[workspaceName]{access: mutating, needs: anotherWorkspace, changesContext: true, ownerOnly: "delete a workspace",
			validate: func(w *workspaceName) error { trimmed(&w.Name); return nonEmpty("name", w.Name) },
			check: func(ctx context.Context, r *run, w workspaceName) error {
				if err := notActive(r, w.Name); err != nil {
					return err
				}
				return mustExist(ctx, r, "name", w.Name)
			},
			run: toolWorkspaceDelete,
			policy: func(w *workspaceName) (string, string) {
				return "deleting a workspace destroys its files and history", "Delete workspace " + w.Name + " and everything in it"
			}}),
		define(a, "task_create", spec[taskCreateArgs]{access: mutating, changesContext: true,
			validate: func(t *taskCreateArgs) error {
				trimmed(&t.Goal, &t.Workspace, &t.Harness)
				if err := nonEmpty("goal", t.Goal); err != nil {
					return err
				}
				return a.knownHarness(t.Harness)
			},
			check: checkTaskCreate,
			bind:  func(r *run, t *taskCreateArgs) { t.Workspace = or(t.Workspace, r.workspace) },
			run:   toolTaskCreate,
			policy: func(t *taskCreateArgs) (string, string) {
				desc := fmt.Sprintf("Start a task in %s: %s", or(t.Workspace, "the selected workspace"), t.Goal)
				if dangerousGoal.MatchString(t.Goal) {
					return "the goal destroys work (branch, history or data)", desc
				}
				return "", desc
			}}),
		define(a, "task_ask", spec[taskAskArgs]{access: asking, changesContext: true,
			validate: func(t *taskAskArgs) error {
				trimmed(&t.Question, &t.Workspace, &t.Harness)
				if err := nonEmpty("question", t.Question); err != nil {
					return err
				}
				return a.knownHarness(t.Harness)
			},
			check: func(ctx context.Context, r *run, t taskAskArgs) error {
				return checkTaskCreate(ctx, r, taskCreateArgs{Workspace: t.Workspace})
			},
			run: toolTaskAsk}),
		define(a, "task_cancel", spec[taskID]{access: mutating, needs: anActiveTask, changesContext: true,
			validate: func(t *taskID) error { trimmed(&t.ID); return nonEmpty("id", t.ID) },
			check:    func(ctx context.Context, r *run, t taskID) error { return ownTask(ctx, r, t.ID) },
			run:      toolTaskCancel}),
		// Pushing a branch and opening its pull request use the owner's
		// GitHub token: like /pr, the owner's alone.
		define(a, "task_ship", spec[taskID]{access: mutating, needs: aTask, ownerOnly: "ship a task (push its branch, open its pull request)",
			validate: func(t *taskID) error { trimmed(&t.ID); return nonEmpty("id", t.ID) },
			run:      toolTaskShip}),
		define(a, "task_message", spec[taskMessageArgs]{access: mutating, needs: aTask, changesContext: true,
			validate: func(t *taskMessageArgs) error {
				trimmed(&t.ID, &t.Text)
				if err := nonEmpty("id", t.ID); err != nil {
					return err
				}
				return nonEmpty("text", t.Text)
			},
			check: func(ctx context.Context, r *run, t taskMessageArgs) error { return ownTask(ctx, r, t.ID) },
			run:   toolTaskMessage}),
		define(a, "task_retry", spec[taskID]{access: mutating, needs: aTask, changesContext: true,
			validate: func(t *taskID) error { trimmed(&t.ID); return nonEmpty("id", t.ID) },
			check:    func(ctx context.Context, r *run, t taskID) error { return ownTask(ctx, r, t.ID) },
			run:      toolTaskRetry}),
		define(a, "task_respond", spec[taskRespondArgs]{access: mutating, needs: aWaitingTask,
			validate: func(t *taskRespondArgs) error {
				trimmed(&t.ID, &t.Answer)
				if err := nonEmpty("id", t.ID); err != nil {
					return err
				}
				return nonEmpty("answer", t.Answer)
			},
			check: func(ctx context.Context, r *run, t taskRespondArgs) error { return ownTask(ctx, r, t.ID) },
			run:   toolTaskRespond}),
		define(a, "ask_user", spec[askArgs]{access: mutating,
			validate: func(q *askArgs) error { trimmed(&q.Question); return nonEmpty("question", q.Question) },
			run:      toolAskUser}),
		define(a, "report_progress", spec[progressArgs]{access: mutating,
			validate: func(p *progressArgs) error { trimmed(&p.Message); return nonEmpty("message", p.Message) },
			run:      toolReportProgress}),
	}
	errs = append(errs, a.registerCode()...)
	return errors.Join(errs...)
}

// mustExist fails for a workspace that is not registered, naming the
// argument field that gave it ("" when it is the selected one).
func mustExist(ctx context.Context, r *run, field, name string) error {
	ok, err := exists(ctx, r, name)
	if err != nil {
		return err
	}
	if !ok {
		if field == "" {
			return fmt.Errorf("the selected workspace %q no longer exists; workspace_list shows the workspaces", name)
		}
		return fieldError(field, "there is no workspace %q; workspace_list shows the workspaces", name)
	}
	return nil
}

// ownTask fails, for anyone but the owner, for a task another
// conversation started: an allowed user cancels or answers only the tasks
// of their own conversation, never the owner's. A task that cannot be
// looked up is left to the tool, which says so.
func ownTask(ctx context.Context, r *run, id string) error {
	if r.role == chat.Owner || r.a.cfg.Tasks == nil {
		return nil
	}
	t, err := r.a.cfg.Tasks.Get(ctx, id)
	if err != nil {
		return nil
	}
	if t.ConversationID != r.conv {
		return fmt.Errorf("task %s is not one of this conversation's; only the owner may act on another conversation's task", id)
	}
	return nil
}

// workspaceField is the argument field a workspace came from: "" when
// none was given and the selected one is used.
func workspaceField(field, given string) string {
	if given == "" {
		return ""
	}
	return field
}

// notActive fails for the conversation's active (selected) workspace,
// which cannot be deleted: it is checked before any approval is asked, and
// again when an approved deletion runs, in case it was selected meanwhile.
func notActive(r *run, name string) error {
	if name == r.workspace {
		return fmt.Errorf("workspace %s is the active workspace of this conversation; select another one first (workspace_select), then delete it", name)
	}
	return nil
}

// errNoWorkspace tells the model how to get a workspace for a task.
var errNoWorkspace = errors.New("no workspace: none was given and none is selected. Select one with workspace_select (workspace_list shows them) or create one with workspace_create, then call task_create again")

func checkTaskCreate(ctx context.Context, r *run, t taskCreateArgs) error {
	if r.a.cfg.Tasks == nil {
		return errNoTasks
	}
	ws := or(t.Workspace, r.workspace)
	if ws == "" {
		return errNoWorkspace
	}
	return mustExist(ctx, r, workspaceField("workspace", t.Workspace), ws)
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

func toolWorkspaceList(ctx context.Context, r *run, _ noArgs) (string, error) {
	if r.a.cfg.Workspaces == nil {
		return "", errNoWorkspaces
	}
	ws, err := r.a.cfg.Workspaces.List(ctx)
	if err != nil {
		return "", err
	}
	if len(ws) == 0 {
		return "No workspaces yet. Create one with workspace_create.", nil
	}
	var b strings.Builder
	for _, w := range ws {
		fmt.Fprintf(&b, "- %s (%s, branch %s", w.Name, or(w.ProjectType, "unknown type"), or(w.Branch, "none"))
		if w.Dirty {
			b.WriteString(", uncommitted changes")
		}
		if w.Asleep {
			b.WriteString(", its kennel sleeps: changes not read; workspace_status reads them")
		}
		b.WriteString(")")
		if w.Name == r.workspace {
			b.WriteString(" [selected]")
		}
		b.WriteString("\n")
	}
	if r.workspace == "" {
		b.WriteString("No workspace is selected.")
	}
	return strings.TrimSpace(b.String()), nil
}

// exists reports whether a workspace of that name is registered.
func exists(ctx context.Context, r *run, name string) (bool, error) {
	if r.a.cfg.Workspaces == nil {
		return false, errNoWorkspaces
	}
	ws, err := r.a.cfg.Workspaces.List(ctx)
	if err != nil {
		return false, err
	}
	for _, w := range ws {
		if w.Name == name {
			return true, nil
		}
	}
	return false, nil
}

func toolWorkspaceStatus(ctx context.Context, r *run, w optionalWorkspace) (string, error) {
	if r.a.cfg.Workspaces == nil {
		return "", errNoWorkspaces
	}
	name := or(w.Name, r.workspace)
	if name == "" {
		return "", errors.New("no workspace given and none selected; call workspace_list, then workspace_select")
	}
	st, err := r.a.cfg.Workspaces.Status(ctx, name)
	if err != nil {
		return "", err
	}
	return describeStatus(st), nil
}

// describeStatus puts a workspace's git state in one line.
func describeStatus(st workspace.Status) string {
	var parts []string
	if st.Detached || st.Branch == "" {
		parts = append(parts, "detached HEAD")
	} else {
		parts = append(parts, "on "+st.Branch)
	}
	if st.Upstream != "" && (st.Ahead > 0 || st.Behind > 0) {
		parts = append(parts, fmt.Sprintf("%d ahead and %d behind %s", st.Ahead, st.Behind, st.Upstream))
	}
	if st.Clean() {
		parts = append(parts, "clean")
	}
	for _, c := range []struct {
		n    int
		what string
	}{{len(st.Staged), "staged"}, {len(st.Modified), "modified"}, {len(st.Untracked), "untracked"}, {len(st.Conflicted), "conflicted"}} {
		if c.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c.n, c.what))
		}
	}
	if st.LastCommit != nil {
		parts = append(parts, fmt.Sprintf("last commit %.7s %q", st.LastCommit.Hash, st.LastCommit.Subject))
	} else {
		parts = append(parts, "no commits yet")
	}
	return strings.Join(parts, ", ")
}

func toolWorkspaceSelect(ctx context.Context, r *run, w workspaceName) (string, error) {
	if err := mustExist(ctx, r, "name", w.Name); err != nil {
		return "", err
	}
	if err := r.a.cfg.Store.SetWorkspace(ctx, r.conv, w.Name); err != nil {
		return "", err
	}
	r.workspace = w.Name
	return "Selected workspace " + w.Name + ".", nil
}

func toolWorkspaceCreate(ctx context.Context, r *run, c createArgs) (string, error) {
	if r.a.cfg.Workspaces == nil {
		return "", errNoWorkspaces
	}
	var w workspace.Info
	var err error
	if c.URL != "" {
		// Host git clones with Fetch's rights: from the chat, nothing on
		// Fetch's machine is read (a local repository is added at the
		// terminal).
		if err := workspace.ValidateRemoteURL(c.URL); err != nil {
			return "", err
		}
		w, err = r.a.cfg.Workspaces.Clone(ctx, c.Name, c.URL)
	} else {
		w, err = r.a.cfg.Workspaces.Create(ctx, c.Name, c.Template)
	}
	if err != nil {
		return "", err
	}
	if err := r.a.cfg.Store.SetWorkspace(ctx, r.conv, w.Name); err != nil {
		return "", err
	}
	r.workspace = w.Name
	return fmt.Sprintf("Created workspace %s (%s) and selected it.", w.Name, or(w.ProjectType, "empty")), nil
}

func toolWorkspaceDelete(ctx context.Context, r *run, w workspaceName) (string, error) {
	if r.a.cfg.Workspaces == nil {
		return "", errNoWorkspaces
	}
	if err := notActive(r, w.Name); err != nil {
		return "", err
	}
	if err := r.a.cfg.Workspaces.Delete(ctx, w.Name); err != nil {
		return "", err
	}
	return "Deleted workspace " + w.Name + ".", nil
}

func toolTaskCreate(ctx context.Context, r *run, t taskCreateArgs) (string, error) {
	if r.a.cfg.Tasks == nil {
		return "", errNoTasks
	}
	ws := or(t.Workspace, r.workspace)
	if ws == "" {
		return "", errNoWorkspace
	}
	if t.Model == "" {
		// The conversation's /model, when the owner set one.
		if c, err := r.a.cfg.Store.Conversation(ctx, r.conv); err == nil {
			t.Model = c.Model
		}
	}
	req := task.Request{ConversationID: r.conv, Workspace: ws, Goal: t.Goal, Harness: t.Harness, Queue: t.Queue, Model: t.Model, ShipAs: task.ShipAs(t.Ship), Attachments: r.takeAttachments()}
	// A big or risky goal, and every task under supervised autonomy: the
	// CLI plans read-only first, and its plan comes to the owner to
	// approve, revise or cancel before anything changes (where the
	// harness has a plan mode; otherwise the task runs as asked).
	planFirst := t.PlanFirst || r.autonomy == instincts.Supervised
	var created task.Task
	var err error
	if planFirst {
		created, err = r.a.cfg.Tasks.CreatePlan(ctx, req)
		if errors.Is(err, task.ErrNoPlanMode) {
			planFirst = false
		}
	}
	if !planFirst {
		created, err = r.a.cfg.Tasks.Create(ctx, req)
	}
	var refused *task.ShipAsError
	if errors.As(err, &refused) {
		// Said to the owner whatever the model makes of it.
		r.notes = append(r.notes, "I did not start it: "+refused.Reason+".")
	}
	if err != nil {
		return "", err
	}
	// The task engine's reporter moves the mode to WORKING when the task
	// starts.
	r.created = append(r.created, created)
	// The reply names the task whatever the model says (run.replies), so
	// the result is only the facts.
	branch := ""
	if created.Branch != "" {
		branch = " on " + created.Branch
	}
	if planFirst {
		return fmt.Sprintf("Created task %s: %s in %s plans first; its plan goes to the owner to approve, revise or cancel.", created.ID, or(created.Harness, "default harness"), created.Workspace), nil
	}
	return fmt.Sprintf("Created task %s: %s in %s%s, %s.", created.ID, or(created.Harness, "default harness"), created.Workspace, branch, created.State), nil
}

// toolTaskAsk hands a question to a harness that runs read-only on the
// workspace: no branch, no commit; the answer arrives as the task's result.
func toolTaskAsk(ctx context.Context, r *run, t taskAskArgs) (string, error) {
	if r.a.cfg.Tasks == nil {
		return "", errNoTasks
	}
	ws := or(t.Workspace, r.workspace)
	if ws == "" {
		return "", errNoWorkspace
	}
	created, err := r.a.cfg.Tasks.Create(ctx, task.Request{ConversationID: r.conv, Workspace: ws, Goal: t.Question, Harness: t.Harness, Queue: t.Queue, Mode: task.Ask})
	if err != nil {
		return "", err
	}
	r.created = append(r.created, created)
	return fmt.Sprintf("Asked: task %s, harness %s reading workspace %s (read-only, no branch), state %s. Its answer comes to the owner as a message when it is ready; tell the owner so, with the id, and do not guess the answer.", created.ID, or(created.Harness, "default"), created.Workspace, created.State), nil
}

func toolTaskStatus(ctx context.Context, r *run, t optionalTask) (string, error) {
	if r.a.cfg.Tasks == nil {
		return "", errNoTasks
	}
	id := t.ID
	if id == "" {
		running, err := r.a.cfg.Running.Running(ctx, r.conv)
		if err != nil {
			return "", err
		}
		if running == nil {
			return "No task is running in this conversation.", nil
		}
		id = running.ID
	}
	got, err := r.a.cfg.Tasks.Get(ctx, id)
	if err != nil {
		return "", err
	}
	s := fmt.Sprintf("Task %s (%s in %s): %s", got.ID, got.Harness, got.Workspace, got.State)
	if got.Summary != "" {
		s += "\nSummary: " + clip(got.Summary, 600)
	}
	if got.Error != "" {
		s += "\nError: " + clip(got.Error, 300)
	}
	if got.Question != "" {
		s += "\nIt asks: " + got.Question
	}
	if got.PR.Number != 0 {
		s += fmt.Sprintf("\nPull request #%d (%s): %s", got.PR.Number, got.PR.State, got.PR.URL)
	} else if got.ShipError != "" {
		s += "\nShipping: " + clip(got.ShipError, 300)
	}
	return s, nil
}

func toolTaskShip(ctx context.Context, r *run, t taskID) (string, error) {
	if r.a.cfg.Tasks == nil {
		return "", errNoTasks
	}
	if err := r.a.cfg.Tasks.RequestShip(ctx, t.ID); err != nil {
		return "", err
	}
	return "Shipping task " + t.ID + ": the pull request's link (or why it failed) comes to the chat by itself.", nil
}

func toolTaskCancel(ctx context.Context, r *run, t taskID) (string, error) {
	if r.a.cfg.Tasks == nil {
		return "", errNoTasks
	}
	if err := r.a.cfg.Tasks.Cancel(ctx, t.ID); err != nil {
		return "", err
	}
	return "Cancelled task " + t.ID + "; its branch is kept.", nil
}

// toolTaskMessage gives the owner's words to a task of the conversation:
// to its CLI while it works, or as its next run (a follow-up on its
// branch) when it ended.
func toolTaskMessage(ctx context.Context, r *run, t taskMessageArgs) (string, error) {
	if r.a.cfg.Tasks == nil {
		return "", errNoTasks
	}
	told, err := r.a.cfg.Tasks.Tell(ctx, t.ID, t.Text, string(r.role), r.takeAttachments()...)
	if err != nil {
		return "", err
	}
	r.told = append(r.told, told)
	switch told.How {
	case task.TellSent:
		return fmt.Sprintf("Sent to task %s's coding CLI while it works; it takes it at its next turn. Tell the owner so, briefly.", t.ID), nil
	case task.TellQueued:
		return fmt.Sprintf("Task %s's CLI takes no message while it works: the message waits (message %d) and becomes the task's next run, on the same branch, when this one ends; the owner can take it back. Tell the owner so, briefly.", t.ID, told.MessageID), nil
	}
	return fmt.Sprintf("Task %s continues on its branch %s with the message (run %d); its result comes to the owner by itself. Tell the owner so, briefly.", t.ID, told.Task.Branch, told.Task.Runs+1), nil
}

// toolTaskRetry runs a failed task again as it was asked.
func toolTaskRetry(ctx context.Context, r *run, t taskID) (string, error) {
	if r.a.cfg.Tasks == nil {
		return "", errNoTasks
	}
	if err := r.a.cfg.Tasks.Retry(ctx, t.ID); err != nil {
		return "", err
	}
	cur, err := r.a.cfg.Tasks.Get(ctx, t.ID)
	if err == nil {
		r.created = append(r.created, cur)
	}
	return fmt.Sprintf("Task %s runs again as it was asked, on its branch; its result comes to the owner by itself.", t.ID), nil
}

func toolTaskRespond(ctx context.Context, r *run, t taskRespondArgs) (string, error) {
	if r.a.cfg.Tasks == nil {
		return "", errNoTasks
	}
	if err := r.a.cfg.Tasks.Respond(ctx, t.ID, t.Answer); err != nil {
		return "", err
	}
	return "Passed the answer to task " + t.ID + ".", nil
}

// routine matches a routine confirmation; destructive matches a question
// about destroying something, which only the owner answers.
var (
	routine     = regexp.MustCompile(`(?i)\b(proceed|go ahead|continue|carry on|start|begin|go on)\b[^?]*\?\s*$`)
	destructive = regexp.MustCompile(`(?i)\b(delete|deleting|remove|removing|drop|discard|destroy|wipe|erase|purge|overwrite|force|reset|rm)\b`)
)

func toolAskUser(ctx context.Context, r *run, q askArgs) (string, error) {
	if r.autonomy != instincts.Supervised && routine.MatchString(q.Question) && !destructive.MatchString(q.Question) {
		return "The owner's standing answer to routine confirmations is yes (only in supervised mode do they reach the owner). Proceed.", nil
	}
	if err := r.ask(ctx, store.Question, q.Question, pending{Kind: kindQuestion, Question: q.Question}); err != nil {
		return "", err
	}
	r.end(q.Question, nil)
	return "Asked the owner; their answer will come as the next message. End your turn now.", nil
}

func toolReportProgress(ctx context.Context, r *run, p progressArgs) (string, error) {
	if r.notify == nil {
		return "Noted (no live channel to send progress to).", nil
	}
	if err := r.notify(ctx, chat.Reply{Text: p.Message, Key: "progress:" + r.conv}); err != nil {
		return "", err
	}
	return "Sent.", nil
}
