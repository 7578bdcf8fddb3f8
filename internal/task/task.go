package task

import (
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fetch-dev/fetch/internal/ship"
	"github.com/fetch-dev/fetch/internal/workspace"
)

// MaxGoalLen is the longest goal accepted, in characters.
const MaxGoalLen = 2000

// Mode is what a task does with its workspace. The values are shown and
// logged.
type Mode string

const (
	// Work changes the code, on the task's own worktree and branch.
	Work Mode = "work"
	// Ask answers a question about the code: the harness runs in its own
	// read-only mode on the workspace itself, with no worktree or branch,
	// and its final message is the task's summary. Nothing is committed;
	// a run that changed the workspace anyway ends NeedsAttention.
	Ask Mode = "ask"
)

// ShipAs is how one task ships, asked with it (ship.As): "" as its
// workspace ships, "push" or "draft".
type ShipAs = ship.As

// Request asks for a task.
type Request struct {
	// ConversationID is where progress goes; empty for the command line.
	ConversationID string
	Workspace      string
	Goal           string
	// Harness names the coding CLI; empty means the engine's default.
	Harness string
	// Queue: when the workspace is busy, queue the task behind the one
	// holding it instead of refusing.
	Queue bool
	// Defer creates the task queued even when it could start: another
	// process (a fetch task worker) starts it with Engine.Start.
	Defer bool
	// Mode is Work when empty. An Ask needs a harness with a read-only
	// mode (harness.Traits.ReadOnly).
	Mode Mode
	// Model is the CLI's model for this task; empty for its default. A
	// name the CLI does not take is refused (harness.CheckModel).
	Model string
	// Attachments are files the owner gave the task, for its first run.
	Attachments []Attachment
	// ShipAs is how this task alone ships ("just push it", "open it as a
	// draft"), within what its workspace allows; empty for as the
	// workspace ships.
	ShipAs ship.As
}

// Task is one task as stored.
type Task struct {
	ID             string `json:"id"`
	ConversationID string `json:"conversation_id,omitempty"`
	Workspace      string `json:"workspace"`
	Goal           string `json:"goal"`
	Harness        string `json:"harness"`
	// Model is the CLI's model; empty for the CLI's default.
	Model string `json:"model,omitempty"`
	// Attachments are the files the owner gave the current (or last)
	// run.
	Attachments []Attachment `json:"attachments,omitempty"`
	State       State        `json:"state"`
	// Mode is Work or Ask. It is not a column of its own: an Ask task is
	// the one stored without a branch (every Work task has one from its
	// creation).
	Mode Mode `json:"mode"`

	// Branch is fetch/<id>; Worktree its directory; Base the commit it
	// started from, on BaseBranch. An Ask task has no branch or worktree;
	// Base is the workspace's HEAD when its last run started.
	Branch     string `json:"branch,omitempty"`
	Worktree   string `json:"worktree,omitempty"`
	Base       string `json:"base,omitempty"`
	BaseBranch string `json:"base_branch,omitempty"`

	// SessionID resumes the harness's session.
	SessionID string `json:"session_id,omitempty"`
	// Question is open while WaitingInput; Answer is what the next run
	// resumes with.
	Question string `json:"question,omitempty"`
	Answer   string `json:"answer,omitempty"`
	// RunID names the current or last run in the kennel; Runs counts them.
	RunID string `json:"run_id,omitempty"`
	Runs  int    `json:"runs"`

	// Summary is the harness's final message; Error why the task did not
	// succeed.
	Summary    string               `json:"summary,omitempty"`
	Error      string               `json:"error,omitempty"`
	ExitCode   int                  `json:"exit_code"`
	StderrTail string               `json:"stderr_tail,omitempty"`
	Files      []workspace.FileStat `json:"files,omitempty"`
	Commits    []workspace.Commit   `json:"commits,omitempty"`
	Patch      string               `json:"-"`
	PatchPath  string               `json:"patch_path,omitempty"`
	// Out are the files the last run's CLI left for the owner (its out
	// folder, harness.OutDir), sent with the result: set in the update
	// that tells the end of a run, with their data (OutFiles lists them).
	Out []OutFile `json:"out,omitempty"`
	// CostUSD is the task's total: CLICostUSD plus the orchestrator's LLM
	// calls attributed to the task (store.AttributeUsage). CostUnknown:
	// a run reported tokens whose price Fetch does not know, which
	// CostUSD leaves out.
	CostUSD     float64 `json:"cost_usd,omitempty"`
	CLICostUSD  float64 `json:"cli_cost_usd,omitempty"`
	CostUnknown bool    `json:"cost_unknown,omitempty"`
	// CostPricedAs: a run's tokens were of a model without a price of
	// its own, priced as this one (harness.Usage.PricedAs): CostUSD is an
	// estimate.
	CostPricedAs string `json:"cost_priced_as,omitempty"`
	// BudgetUSD is this task's own cap, once the owner raised it at the
	// cap (0: Config.TaskBudgetUSD). AtBudget: the task waits at its cap
	// (WaitingInput) for the owner to raise it (RaiseBudget) or stop
	// (StopAtBudget); its work so far is on its branch.
	BudgetUSD float64 `json:"budget_usd,omitempty"`
	AtBudget  bool    `json:"at_budget,omitempty"`
	// CapUSD is the cap that applies to the task: BudgetUSD, else the
	// configured one; 0 for none. Not stored: the engine sets it.
	CapUSD float64 `json:"cap_usd,omitempty"`

	// Pushed is the commit pushed to GitHub (the branch rebased onto the
	// latest base); PR its pull request; ShipError why shipping a
	// succeeded task did not happen (the task stays succeeded).
	Pushed    string  `json:"pushed,omitempty"`
	PR        ship.PR `json:"pr,omitzero"`
	ShipError string  `json:"ship_error,omitempty"`
	// PRReviews counts the reviews and review comments of PR told so far.
	PRReviews int `json:"pr_reviews,omitempty"`
	// ShipAs is how this task ships, asked with it ("just push it",
	// "open it as a draft"): empty for as its workspace ships.
	ShipAs ship.As `json:"ship_as,omitempty"`
	// Checks is what the workspace's checks said at the last shipment
	// (checks.Report.Summary); empty when none ran.
	Checks string `json:"checks,omitempty"`

	CancelRequested bool          `json:"cancel_requested,omitempty"`
	TimedOut        bool          `json:"timed_out,omitempty"`
	Timeout         time.Duration `json:"timeout"`
	// Owner is the Fetch process following the run, empty when none.
	Owner string `json:"owner,omitempty"`

	CreatedAt time.Time `json:"created_at"`
	StartedAt time.Time `json:"started_at,omitzero"`
	// RunStartedAt is when the current run began.
	RunStartedAt time.Time `json:"run_started_at,omitzero"`
	EndedAt      time.Time `json:"ended_at,omitzero"`
	UpdatedAt    time.Time `json:"updated_at"`

	// recorded is the current run's own record of its work (its
	// harness.Task.Record and what that printed), while the run's end is
	// decided; never stored.
	recorded *recorded
}

// Added and Removed total the changed lines.
func (t Task) Added() (n int) {
	for _, f := range t.Files {
		n += f.Added
	}
	return n
}

func (t Task) Removed() (n int) {
	for _, f := range t.Files {
		n += f.Removed
	}
	return n
}

// SuggestedCap is the cap the owner is offered when t waits at its
// budget: twice its cap, and above what it cost.
func (t Task) SuggestedCap() float64 {
	next := math.Ceil(t.CapUSD*200) / 100
	if next <= t.CostUSD {
		next = math.Ceil((t.CostUSD+t.CapUSD)*100) / 100
	}
	return next
}

// worktree is the task's worktree as the workspace package knows it.
func (t Task) worktree() workspace.Worktree {
	return workspace.Worktree{Workspace: t.Workspace, Path: t.Worktree, Branch: t.Branch, Base: t.Base, BaseBranch: t.BaseBranch}
}

// unplanned is t without the worktree its run was to make and did not:
// there is nothing to record.
func (t Task) unplanned() Task {
	t.Worktree, t.Branch, t.Base, t.BaseBranch = "", "", "", ""
	return t
}

// unplannedIf is t.unplanned() when cond (its worktree was to be made by
// the run that did not start).
func (t Task) unplannedIf(cond bool) Task {
	if cond {
		return t.unplanned()
	}
	return t
}

// ValidateGoal checks a goal's length and content.
func ValidateGoal(goal string) error {
	switch n := utf8.RuneCountInString(goal); {
	case strings.TrimSpace(goal) == "":
		return fmt.Errorf("the goal is empty: %w", ErrInvalid)
	case n > MaxGoalLen:
		return fmt.Errorf("the goal is %d characters long; the limit is %d: %w", n, MaxGoalLen, ErrInvalid)
	case !utf8.ValidString(goal) || strings.ContainsRune(goal, 0):
		return fmt.Errorf("the goal is not valid text: %w", ErrInvalid)
	}
	return nil
}
