package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/fetch-dev/fetch/harness"
	"github.com/fetch-dev/fetch/internal/attach"
	"github.com/fetch-dev/fetch/internal/gitrun"
	"github.com/fetch-dev/fetch/internal/mirror"
	"github.com/fetch-dev/fetch/internal/progress"
	"github.com/fetch-dev/fetch/internal/redact"
	"github.com/fetch-dev/fetch/internal/ship"
	"github.com/fetch-dev/fetch/internal/store"
	"github.com/fetch-dev/fetch/internal/task"
	"github.com/fetch-dev/fetch/internal/workspace"
	"github.com/fetch-dev/fetch/kennel"
)

const taskUsage = `Usage:
  fetch task run --workspace W [--harness H] [--model M] [--attach FILE]... [--queue] [--wait] [--ask] [--over-budget] "goal"
  fetch task ls [--all] [--workspace W]
  fetch task show [--json] ID
  fetch task log [--json] [-f] ID
  fetch task apply ID [DIR]
  fetch task cancel ID
  fetch task answer ID "answer"
  fetch task continue [--attach FILE]... ID "what to do next"
  fetch task retry ID
  fetch task withdraw MESSAGE_ID
  fetch task discard ID
  fetch task pr ID

run starts a coding harness on a goal in workspace W (a directory under
$FETCH_WORKSPACES), on its own branch fetch/ID, and prints the task id.
--queue queues the task when the workspace is busy instead of refusing.
--ask answers the goal as a question about the code instead: the harness
(one with a read-only mode: claude, gemini, copilot) runs read-only on the
workspace itself, with no branch and no commit; its answer is the result.
--over-budget starts the task although today's spend (tasks and Fetch's
own LLM calls, UTC day) is over FETCH_DAILY_BUDGET_USD; without it run
refuses then, with exit code 2. A task that passes FETCH_TASK_BUDGET_USD
while it runs is stopped and fails.
--attach gives the CLI a file (a screenshot, a log; repeatable): checked
like a chat attachment (FETCH_ATTACH_TYPES, FETCH_ATTACH_MAX_BYTES, no
secrets in text), written into the kennel and named in the prompt; a
picture also reaches the CLI in its protocol's form where it has one.
--model names the coding CLI's model for this task (claude: sonnet, opus,
haiku or a claude-… id; codex: gpt-…); a name the CLI does not take is
refused with the ones it takes.
--wait follows the task to its end, printing its steps; the exit code
then says how it ended: 0 succeeded, 1 failed, 2 needs attention or
waiting for an answer, 3 cancelled. The task runs in a worker process of
its own either way: Ctrl-C leaves it running (exit code 4; follow it
again with log -f, stop it with cancel), and a second Ctrl-C within 3
seconds cancels it and waits for its end (exit code 3). continue, retry
and answer follow the run they start the same way.
On a CLI with a two-way mode (claude, codex, gemini, qwen, copilot,
opencode, acp:…) the task runs under the policy while fetch serve or
fetch chat runs on this data directory: what it asks that the policy
leaves to the owner goes to the owner's chat. With no chat served, it
runs one-shot, its permissions bypassed inside the kennel.

log prints a task's event log; -f (--follow) goes on printing it as the
task works, whichever Fetch process runs it, until the task ends or
asks, then prints how it ended, with --wait's exit codes.

continue gives a task what to do next. An ended task (succeeded, failed,
cancelled, needs attention) runs again on its own branch: the CLI resumes
its session where it has one, its commits add to the branch, and an open
pull request gets them; continue follows that run to its end like --wait.
A task that is running gets the message as its next run, when this one
ends (withdraw takes it back before then). retry runs a task that did
not succeed again as it was asked, on its branch, and follows it.

pr ships a finished task: its branch is brought out of the kennel, rebased
onto the latest base branch from GitHub, scanned for secrets, pushed with
FETCH_GITHUB_TOKEN and a pull request is opened (or the open one found).
With the token set, a task that succeeds ships by itself unless its
workspace is local (/ship in chat).

apply brings a task's work into your own clone DIR (the current
directory when left out): its branch is taken from Fetch's own repository
of the workspace ($FETCH_DATA_DIR/repos/NAME.git, never the kennel's
folder) and checked out on branch fetch/ID. Your uncommitted changes
are never overwritten (git refuses, and nothing changes); a branch
fetch/ID you had moves on only when it loses no commit of yours.

A task's worktree and branch stay after it ends, for review, until its
pull request is merged or closed, its branch is merged or pushed (fetch chat
then removes the worktree), or the task is discarded, which deletes both.

The commands work on the same data directory as a running fetch chat or
fetch serve: the database is the single source of truth.
`

// exitError carries an exit code chosen by a command, with nothing more to
// print.
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

// taskEnv are the variables a task worker inherits from its parent's
// configuration.
var taskEnv = []string{envDataDir, envWorkspaces, envKennelImage, envLogLevel, envHarness, envTaskTimeout, envMaxTasks, envTaskBudgetUSD, envPrices}

func runTask(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) (err error) {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(stdout, taskUsage)
		if len(args) == 0 {
			return fmt.Errorf("%w: a subcommand is required", errUsage)
		}
		return nil
	}
	sub, rest := args[0], args[1:]
	want := map[string]int{"run": 1, "ls": 0, "show": 1, "log": 1, "apply": 2, "cancel": 1, "answer": 2, "follow": 1, "discard": 1, "pr": 1, "continue": 2, "retry": 1, "withdraw": 1}
	n, known := want[sub]
	if !known {
		return fmt.Errorf("%w: unknown subcommand %q\n\n%s", errUsage, sub, taskUsage)
	}
	// From here on, what goes wrong is told as the subcommand's
	// ("fetch task run: …").
	defer func() {
		if err != nil {
			err = &cmdError{name: "task " + sub, err: err}
		}
	}()
	cfg, err := loadConfig(getenv)
	if err != nil {
		return err
	}
	// The engine's goroutines print a followed task's steps while this one
	// prints too.
	stdout = &lockedWriter{w: stdout}
	fs := flag.NewFlagSet("fetch task "+sub, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var (
		ws      = fs.String("workspace", "", "workspace name")
		hname   = fs.String("harness", "", "harness")
		model   = fs.String("model", "", "the coding CLI's model")
		files   stringList
		wait    = fs.Bool("wait", false, "follow the task to its end")
		queue   = fs.Bool("queue", false, "queue when the workspace is busy")
		ask     = fs.Bool("ask", false, "answer a question read-only: no branch, no commit")
		over    = fs.Bool("over-budget", false, "start the task although today's spend is over FETCH_DAILY_BUDGET_USD")
		asJSON  = fs.Bool("json", false, "JSON output")
		all     = fs.Bool("all", false, "list every task, not only the last 20")
		showAll = fs.Bool("help", false, "help")
		follow  bool
		report  = fs.Bool("report", false, "") // the worker's: say how the task started (startWorker)
		adoptF  = fs.Bool("adopt", false, "")  // the worker's: adopt the runs killed processes left
		jobF    = fs.Bool("job", false, "")    // the worker's: start the follow-up run its parent gives it
	)
	fs.BoolVar(&follow, "f", false, "follow the log until the task ends")
	fs.BoolVar(&follow, "follow", false, "follow the log until the task ends")
	fs.Var(&files, "attach", "a file for the CLI (repeatable)")
	pos, err := parseInterleaved(fs, rest)
	if err != nil || *showAll {
		if *showAll {
			fmt.Fprint(stdout, taskUsage)
			return nil
		}
		return fmt.Errorf("%w: %v\n\n%s", errUsage, err, taskUsage)
	}
	if len(pos) != n && !(sub == "apply" && len(pos) == 1) {
		return fmt.Errorf("%w: takes %d argument(s), got %d\n\n%s", errUsage, n, len(pos), taskUsage)
	}
	if sub == "run" && *ws == "" {
		return fmt.Errorf("%w: which workspace? fetch task run --workspace NAME \"…\" (fetch workspace list shows them)", errUsage)
	}

	log, red, db, err := openBase(ctx, cfg, stderr, slog.LevelWarn)
	if err != nil {
		return err
	}
	defer db.Close()
	clean := inert(red)
	// The worker of run --wait, the one command that stays to the end of
	// something the user started, also follows the runs that killed
	// processes left.
	adopt := sub == "follow" && *adoptF
	var obs task.Observer
	if sub == "follow" {
		obs = &printer{w: stdout, clean: clean}
	}
	// ls, show and log read the database only: no engine to dial.
	ks, err := newKennels(ctx, cfg, db, log, sub != "ls" && sub != "show" && sub != "log" && sub != "withdraw" && sub != "apply")
	if err != nil {
		return err
	}
	defer ks.release()
	engine, _, err := newEngine(cfg, db, log, ks, obs, adopt, nil)
	if err != nil {
		return err
	}
	if err := engine.Open(ctx); err != nil {
		return err
	}
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		engine.Close(closeCtx)
	}()

	atts, err := attachFiles(cfg, db, files)
	if err != nil {
		return err
	}
	switch sub {
	case "run":
		if err := dailyBudget(ctx, cfg, db, *over, stderr); err != nil {
			return err
		}
		mode := task.Work
		if *ask {
			mode = task.Ask
		}
		// A worker runs the task, with --wait too (task_wait.go).
		t, err := engine.Create(ctx, task.Request{Workspace: *ws, Goal: pos[0], Harness: *hname, Model: *model, Queue: *queue, Defer: true, Mode: mode, Attachments: atts})
		if err != nil {
			return err
		}
		w, err := startWorker(cfg, getenv, t.ID, *wait, nil)
		if err != nil {
			return err
		}
		if !*wait {
			fmt.Fprintf(stdout, "%s\n", t.ID)
			return nil
		}
		t = cleanTask(t, clean)
		head := func(st workerStart) (string, error) {
			where := "branch " + t.Branch
			if t.Mode == task.Ask {
				where = "read-only, no branch"
			}
			return fmt.Sprintf("Task %s %s on %s (%s), %s", t.ID, st.State, t.Workspace, t.Harness, where), nil
		}
		return waitDetachable(ctx, engine, t.ID, stdout, clean, followWorker(engine, w, t, 0, head, stdout, clean))
	case "follow":
		// The worker behind fetch task run, continue, retry and answer:
		// it runs the task (waiting for its turn when it is queued), or
		// the follow-up run its parent gives it.
		st, err := startOrJob(ctx, engine, db, pos[0], *jobF)
		if *report {
			reportStart(st, err)
		}
		if err != nil {
			return err
		}
		switch {
		case st.How == task.TellQueued || st.How == task.TellSent:
			return nil
		case st.State == task.Queued:
			log.Info("task queued; waiting for its turn", "task", pos[0])
		}
		return waitTask(ctx, engine, pos[0], stdout, clean)
	case "ls":
		f := task.Filter{Workspace: *ws, Limit: 20}
		if *all {
			f.Limit = 100000
		}
		ts, err := engine.List(ctx, f)
		if err != nil {
			return err
		}
		printList(stdout, ts, time.Now(), clean)
	case "show":
		t, err := engine.Get(ctx, pos[0])
		if err != nil {
			return err
		}
		if *asJSON {
			return writeJSON(stdout, t)
		}
		printTask(stdout, t, clean)
	case "log":
		return logTask(ctx, engine, pos[0], follow, *asJSON, stdout, clean)
	case "apply":
		t, err := engine.Get(ctx, pos[0])
		if err != nil {
			return err
		}
		dir := "."
		if len(pos) == 2 {
			dir = pos[1]
		}
		return applyTask(ctx, t, filepath.Join(cfg.DataDir, "repos", t.Workspace+".git"), dir, []string{cfg.Workspaces, cfg.DataDir}, stdout, clean)
	case "cancel":
		if err := engine.Cancel(ctx, pos[0]); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "Task %s cancelled.\n", pos[0])
	case "discard":
		if err := engine.Discard(ctx, pos[0]); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "Task %s discarded: its worktree and branch are deleted.\n", pos[0])
	case "pr":
		t, err := engine.Ship(ctx, pos[0])
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "Task %s: pull request #%d (%s): %s\n", t.ID, t.PR.Number, t.PR.State, t.PR.URL)
	case "continue", "retry":
		return followUpRun(ctx, cfg, getenv, engine, pos[0], workerJob{Kind: sub, Text: pos[len(pos)-1], Attachments: atts}, stdout, clean)
	case "withdraw":
		id, err := strconv.ParseInt(strings.TrimPrefix(pos[0], "#"), 10, 64)
		if err != nil || id <= 0 {
			return fmt.Errorf("%w: %q is not a message id (fetch task continue printed it)", errUsage, pos[0])
		}
		m, err := engine.Withdraw(ctx, id)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "Took back your message to task %s; it will not be sent.\n", m.TaskID)
	case "answer":
		t, err := engine.Get(ctx, pos[0])
		if err != nil {
			return err
		}
		if t.State != task.WaitingInput {
			return fmt.Errorf("task %s is %s, not waiting for an answer", t.ID, t.State)
		}
		return followUpRun(ctx, cfg, getenv, engine, t.ID, workerJob{Kind: sub, Text: pos[1]}, stdout, clean)
	}
	return nil
}

// followUpRun has a task worker start job, a follow-up run of task id
// (continue, retry, answer), and follows it as run --wait does.
func followUpRun(ctx context.Context, cfg Config, getenv func(string) string, engine *task.Engine, id string, job workerJob, stdout io.Writer, clean func(string) string) error {
	t, err := engine.Get(ctx, id)
	if err != nil {
		return err
	}
	// The follow-up's steps are those after what the log holds now.
	after, err := lastSeq(ctx, engine, id)
	if err != nil {
		return err
	}
	w, err := startWorker(cfg, getenv, id, true, &job)
	if err != nil {
		return err
	}
	head := func(st workerStart) (string, error) {
		switch {
		case st.How == task.TellQueued:
			return fmt.Sprintf("Task %s is %s: your message waits and becomes its next run, on the same branch, when this one ends.\nTake it back with: fetch task withdraw %d", id, st.State, st.MessageID), errNothingToFollow
		case st.How == task.TellSent:
			return fmt.Sprintf("Task %s's CLI takes your message at its next turn.", id), errNothingToFollow
		case job.Kind == "continue":
			return fmt.Sprintf("Task %s continues on %s with your message.", id, st.Branch), nil
		case job.Kind == "retry":
			return fmt.Sprintf("Task %s runs again as it was asked.", id), nil
		}
		return fmt.Sprintf("Task %s resumed with your answer.", id), nil
	}
	return waitDetachable(ctx, engine, id, stdout, clean, followWorker(engine, w, cleanTask(t, clean), after, head, stdout, clean))
}

// startOrJob is what a task worker starts: task id when it is queued, or
// the follow-up run its parent gives it (job).
func startOrJob(ctx context.Context, engine *task.Engine, db *store.DB, id string, job bool) (workerStart, error) {
	if !job {
		t, err := engine.Start(ctx, id)
		return workerStart{State: t.State}, err
	}
	j, err := readJob()
	if err != nil {
		return workerStart{}, err
	}
	switch j.Kind {
	case "continue":
		told, err := engine.Tell(ctx, id, j.Text, "terminal", j.Attachments...)
		if err != nil {
			return workerStart{}, err
		}
		return workerStart{State: told.Task.State, How: told.How, MessageID: told.MessageID, Branch: told.Task.Branch}, nil
	case "retry":
		if err := engine.Retry(ctx, id); err != nil {
			return workerStart{}, err
		}
	case "answer":
		t, err := engine.Get(ctx, id)
		if err != nil {
			return workerStart{}, err
		}
		if err := engine.Respond(ctx, id, j.Text); err != nil {
			return workerStart{}, err
		}
		if t.ConversationID != "" {
			// The conversation's open prompt for this question is
			// answered here.
			if p, err := db.OpenPrompt(ctx, t.ConversationID); err == nil && strings.Contains(p.Action, `"`+t.ID+`"`) {
				db.ResolvePrompt(ctx, p.ID, j.Text)
			}
		}
	default:
		return workerStart{}, fmt.Errorf("unknown job %q", j.Kind)
	}
	return workerStart{State: task.Running}, nil
}

// parseInterleaved parses flags that may come after positional arguments.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// waitTask follows a task this process runs until it ends or asks, and
// turns its state into the exit code.
func waitTask(ctx context.Context, engine *task.Engine, id string, stdout io.Writer, clean func(string) string) error {
	t, err := engine.WaitSettled(ctx, id)
	if err != nil {
		return err
	}
	t = cleanTask(t, clean)
	fmt.Fprintln(stdout, strings.TrimSpace(clean(progress.Result(t).Text)))
	if t.State == task.WaitingInput {
		fmt.Fprintf(stdout, "\n❓ %s\nAnswer with: fetch task answer %s \"…\"\n", t.Question, t.ID)
	}
	if code := t.State.ExitCode(); code != 0 {
		return &exitError{code: code}
	}
	return nil
}

// inert is how fetch task prints text from the world (goals, CLI output,
// errors): control sequences stripped, then secrets redacted, before any
// of it is cut to fit.
func inert(red *redact.Redactor) func(string) string {
	return func(s string) string { return red.String(redact.StripControl(s)) }
}

// cleanTask is t with its free text made inert.
func cleanTask(t task.Task, clean func(string) string) task.Task {
	t.Goal, t.Summary, t.Error = clean(t.Goal), clean(t.Summary), clean(t.Error)
	t.StderrTail, t.Question, t.Patch = clean(t.StderrTail), clean(t.Question), clean(t.Patch)
	t.ShipError, t.PR.URL = clean(t.ShipError), clean(t.PR.URL)
	return t
}

// printer writes a followed task's steps to the terminal.
type printer struct {
	w     io.Writer
	clean func(string) string
}

func (p *printer) TaskUpdate(_ context.Context, u task.Update) {
	switch u.Kind {
	case task.Started:
		if u.Task.Runs > 1 {
			fmt.Fprintf(p.w, "Resumed (run %d)\n", u.Task.Runs)
		}
	case task.Reattached:
		if u.Engine != "" && !u.Recovered {
			fmt.Fprintf(p.w, "Engine %s answers again; task %s is still running, following it again\n", u.Engine, u.Task.ID)
			break
		}
		fmt.Fprintf(p.w, "Task %s is still running after a restart; following it again\n", u.Task.ID)
	case task.Unreachable:
		fmt.Fprintln(p.w, p.clean(progress.Unreachable(u.Task, u.Engine).Text))
	case task.Progress:
		if u.Event != nil {
			if s := progress.Step(*u.Event, p.clean); s != "" {
				fmt.Fprintln(p.w, "  "+s)
			}
		}
	case task.Requested, task.RequestClosed:
		if r := u.Request; r != nil {
			fmt.Fprintln(p.w, "  "+p.clean(requestLine(u.Kind, *r)))
		}
	case task.Asked, task.Ended:
	}
}

// requestLine tells the terminal of a request of the task's CLI: where it
// was asked, and how it closed.
func requestLine(kind task.UpdateKind, r task.CLIRequest) string {
	what := fmt.Sprintf("request %d (%s)", r.ID, oneLineClip(r.Summary, 80))
	switch {
	case kind == task.Requested && r.Relayed:
		return "The CLI asks: " + what + ": asked in your chat (fetch serve or fetch chat); answer it there."
	case kind == task.Requested:
		return "The CLI asks: " + what + "."
	case r.By != "" && r.Answer != "":
		return fmt.Sprintf("Closed %s: %s by %s: %s", what, r.State, r.By, oneLineClip(r.Answer, 120))
	case r.By != "":
		return fmt.Sprintf("Closed %s: %s by %s", what, r.State, r.By)
	}
	return fmt.Sprintf("Closed %s: %s", what, r.State)
}

func printList(w io.Writer, ts []task.Task, now time.Time, clean func(string) string) {
	if len(ts) == 0 {
		fmt.Fprintln(w, "No tasks.")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATE\tWORKSPACE\tHARNESS\tCREATED\tCOST\tGOAL")
	for _, t := range ts {
		cost := "-"
		switch {
		case t.CostUSD > 0 && t.CostPricedAs != "":
			cost = fmt.Sprintf("$%.4f (estimated)", t.CostUSD)
		case t.CostUSD > 0:
			cost = fmt.Sprintf("$%.4f", t.CostUSD)
		case t.CostUnknown:
			cost = "unknown"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s ago\t%s\t%s\n", t.ID, t.State, t.Workspace, t.Harness, now.Sub(t.CreatedAt).Round(time.Second), cost, oneLineClip(clean(t.Goal), 60))
	}
	tw.Flush()
}

func printTask(w io.Writer, t task.Task, clean func(string) string) {
	t = cleanTask(t, clean)
	tw := tabwriter.NewWriter(w, 0, 4, 1, ' ', 0)
	row := func(k, v string) {
		if v != "" {
			fmt.Fprintf(tw, "%s:\t%s\n", k, v)
		}
	}
	row("Task", t.ID)
	row("State", string(t.State))
	row("Workspace", t.Workspace)
	row("Harness", t.Harness)
	row("Goal", t.Goal)
	if t.Mode == task.Ask {
		row("Mode", "ask (read-only, no branch)")
	}
	row("Branch", t.Branch)
	row("Worktree", t.Worktree)
	row("Created", t.CreatedAt.Local().Format(time.DateTime))
	if !t.StartedAt.IsZero() {
		row("Started", t.StartedAt.Local().Format(time.DateTime))
	}
	if !t.EndedAt.IsZero() {
		row("Ended", fmt.Sprintf("%s (took %s)", t.EndedAt.Local().Format(time.DateTime), t.EndedAt.Sub(t.StartedAt).Round(time.Second)))
	}
	if t.ExitCode >= 0 {
		row("Exit code", fmt.Sprint(t.ExitCode))
	}
	row("Question", t.Question)
	row("Summary", t.Summary)
	row("Error", t.Error)
	row("Cost", progress.Cost(t))
	if t.PR.Number != 0 {
		row("Pull request", fmt.Sprintf("#%d (%s) %s", t.PR.Number, t.PR.State, t.PR.URL))
	}
	row("Shipping", t.ShipError)
	row("Patch", t.PatchPath)
	// From Fetch's own repository, into the owner's clone: the
	// workspace's folder is the kennel's.
	row("Take it", progress.TakeIt(t))
	tw.Flush()
	if len(t.Files) > 0 {
		fmt.Fprintf(w, "Files (+%d −%d):\n", t.Added(), t.Removed())
		for _, f := range t.Files {
			fmt.Fprintf(w, "  %s +%d −%d\n", clean(f.Path), f.Added, f.Removed)
		}
	}
	if len(t.Commits) > 0 {
		fmt.Fprintln(w, "Commits:")
		for _, c := range t.Commits {
			fmt.Fprintf(w, "  %.12s %s\n", c.Hash, clean(c.Subject))
		}
	}
	if t.State == task.Failed && t.StderrTail != "" {
		fmt.Fprintf(w, "Stderr (end):\n%s\n", strings.TrimRight(t.StderrTail, "\n"))
	}
}

func logLine(le task.LogEntry, clean func(string) string) string {
	return fmt.Sprintf("%s %-12s %s", le.At.Local().Format("15:04:05.000"), clean(le.Kind), oneLineClip(clean(string(le.Data)), 200))
}

func oneLineClip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// newEngine builds the task engine over the kennels ks; obs is told of
// task updates. Work that holds secrets (the gitleaks rules and the
// configured secrets) is not committed. Each task's branch is kept in
// Fetch's own repository of its workspace, which shipping uses too.
func newEngine(cfg Config, db *store.DB, log *slog.Logger, ks *kennels, obs task.Observer, adopt bool, relay *task.Relay) (*task.Engine, *ship.Shipper, error) {
	secrets, err := redact.New(cfg.Secrets...)
	if err != nil {
		return nil, nil, err
	}
	harnesses := harness.NewRegistry()
	repos, err := mirror.New(mirror.Config{Root: filepath.Join(cfg.DataDir, "repos"), Kennel: ks.pool, Secrets: secrets, Logger: log, CA: cfg.CA})
	if err != nil {
		return nil, nil, err
	}
	chk := newChecks(cfg, db, log, ks.pool)
	shipper, err := newShipper(cfg, db, log, repos, ks.workspaces, chk)
	if err != nil {
		return nil, nil, err
	}
	return task.New(task.Config{
		Store:             db,
		Workspaces:        ks.workspaces,
		Runner:            &task.KennelRunner{Kennel: ks.pool, Harnesses: harnesses, Credentials: cfg.Credentials, Egress: ks.egress},
		Harnesses:         harnesses,
		DefaultHarness:    harness.Name(cfg.Harness),
		MaxParallel:       cfg.MaxTasks,
		Timeout:           cfg.TaskTimeout,
		TaskBudgetUSD:     cfg.TaskBudgetUSD,
		TaskBudgetSetting: envTaskBudgetUSD,
		PatchDir:          filepath.Join(cfg.DataDir, "patches"),
		OutDir:            filepath.Join(cfg.DataDir, "out"),
		OutMaxFiles:       cfg.OutMaxFiles,
		OutMaxBytes:       int64(cfg.OutMaxBytes),
		Secrets:           secrets,
		Repos:             repos,
		Shipper:           shipper,
		ShipOnSuccess:     cfg.GitHubToken != "",
		CheckLimit:        chk.Limit(),
		PRPoll:            cfg.PRPoll,
		ApprovalTTL:       cfg.ApprovalTTL,
		Observer:          obs,
		Adopt:             adopt,
		Relay:             relay,
		Logger:            log,
	}), shipper, nil
}

// newWorkspaces is the workspace registry. When Fetch runs as root, the
// workspaces belong to the kennel's user, who must write them. Git on an
// existing workspace runs in its kennel k; with k nil the registry can
// only create, clone, find and delete workspaces.
func newWorkspaces(cfg Config, log *slog.Logger, k gitrun.Exec) *workspace.Registry {
	ws := workspace.New(cfg.Workspaces, log)
	ws.RunAs(kennelUser())
	ws.TrustCA(cfg.CA)
	if k != nil {
		ws.InKennel(k)
	}
	return ws
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// lockedWriter serializes writes from several goroutines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// kennelUser is who the kennels run as: kennel.DefaultUser (10001) when
// Fetch runs as root, which gives the workspaces to that user; otherwise
// Fetch's own user, whose files the workspaces are and who cannot give
// them away — the kennel still never runs as root.
func kennelUser() (uid, gid int) {
	if os.Geteuid() != 0 {
		return os.Getuid(), os.Getgid()
	}
	uidStr, gidStr, _ := strings.Cut(kennel.DefaultUser, ":")
	uid, _ = strconv.Atoi(uidStr)
	gid, _ = strconv.Atoi(gidStr)
	return uid, gid
}

// kennelUserSpec is kennelUser as kennel.Config.User wants it, "uid:gid".
func kennelUserSpec() string {
	uid, gid := kennelUser()
	return fmt.Sprintf("%d:%d", uid, gid)
}

// dailyBudget refuses a new task when today's spend is over
// FETCH_DAILY_BUDGET_USD, unless over (--over-budget) says to go on.
func dailyBudget(ctx context.Context, cfg Config, db *store.DB, over bool, stderr io.Writer) error {
	if cfg.DailyBudgetUSD <= 0 {
		return nil
	}
	spent, err := db.DaySpend(ctx, store.Day(time.Now()))
	if err != nil {
		return err
	}
	if spent < cfg.DailyBudgetUSD {
		return nil
	}
	if over {
		fmt.Fprintf(stderr, "Today's spend $%.4f is over the daily budget of $%.2f (%s); starting anyway (--over-budget).\n", spent, cfg.DailyBudgetUSD, envDailyBudgetUSD)
		return nil
	}
	fmt.Fprintf(stderr, "Not started: today's spend $%.4f (tasks and Fetch's own LLM calls, UTC day) is over the daily budget of $%.2f (%s).\nRun it anyway with --over-budget, or raise %s (0 for no cap).\n",
		spent, cfg.DailyBudgetUSD, envDailyBudgetUSD, envDailyBudgetUSD)
	return &exitError{code: 2}
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

// attachFiles takes the files of --attach into Fetch's keeping, checked
// like chat attachments; all or none.
func attachFiles(cfg Config, db *store.DB, paths []string) ([]task.Attachment, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	if len(paths) > attach.MaxFiles {
		return nil, fmt.Errorf("%w: %d files; at most %d go with one task", errUsage, len(paths), attach.MaxFiles)
	}
	f, err := newAttachments(cfg, db)
	if err != nil {
		return nil, err
	}
	var out []task.Attachment
	for _, p := range paths {
		a, err := f.Local(p)
		if err != nil {
			for _, k := range out {
				os.Remove(k.File)
			}
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}
