package harness

import (
	_ "embed"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/fetch-dev/fetch/kennel/shim"
)

// Name identifies a coding CLI. The values are stable: they appear in
// configuration, the store and logs.
type Name string

// The harnesses Fetch can drive.
const (
	Claude   Name = "claude"
	Codex    Name = "codex"
	Gemini   Name = "gemini"
	Copilot  Name = "copilot"
	OpenCode Name = "opencode"
	Qwen     Name = "qwen"
	Cursor   Name = "cursor"
	Aider    Name = "aider"
)

// Task is one run of a coding CLI.
type Task struct {
	// ID identifies the task. It names the run for Stop and must be
	// [A-Za-z0-9._-]+.
	ID string
	// Goal is what the user asked for. It reaches the CLI inside one argv
	// element, byte for byte, followed by Fetch's instructions.
	Goal string
	// Workspace is the absolute host path of the workspace; it selects the
	// kennel container, where it is mounted at the same path.
	Workspace string
	// Workdir is the absolute directory the CLI runs in (a git work tree,
	// usually the task's worktree). Empty means Workspace.
	Workdir string
	// Model is the CLI's model name; empty leaves the CLI's default (or the
	// adapter's, for CLIs that need one).
	Model string
	// ResumeID continues an earlier session of the same CLI (the session id
	// of an earlier Outcome).
	ResumeID string
	// Answer is the user's reply to a question. With ResumeID it replaces
	// Goal as the prompt.
	Answer string
	// Measured: the caller measures what the run changed itself (Fetch's
	// task engine diffs the task's branch when it records the work), so
	// Run takes no snapshots (each costs execs in the kennel) and emits no
	// file_changed events of its own; the CLI's own reports still come.
	Measured bool
	// Timeout bounds the run; 0 means none. On expiry the run is stopped
	// like a user stop and the Outcome says TimedOut.
	Timeout time.Duration
	// ReadOnly runs the CLI in its own read-only (plan) mode to answer a
	// question about the code: Invocation selects that mode, or fails with
	// ErrNoReadOnly for a CLI without one (Traits.ReadOnly), and the prompt
	// asks for an answer instead of changes. Run takes no snapshot of the
	// work tree (a snapshot writes git objects): the caller checks that the
	// tree did not change.
	ReadOnly bool
	// Prepare, when set, runs in the run's own exec before the CLI starts
	// (kennel.ExecSpec.Prepare: the task's worktree is made there, and
	// Workdir may not exist before); what it printed is
	// Outcome.Prepared. A run whose Prepare failed has no CLI output.
	Prepare *shim.Batch
	// Record, when set, runs in the run's own exec after the CLI ended,
	// however it ended (kennel.ExecSpec.Record: the task's work is
	// committed and bundled there); what it printed is Outcome.Recorded.
	Record *shim.Batch
	// Mailbox, when set, carries the user's messages to a two-way run
	// while it works (RunTwoWay); nil takes none.
	Mailbox *Mailbox
	// Attachments are files the user gave this run (see Attachment).
	Attachments []Attachment
	// Egress, when set, sends the run through the kennel's way out (the
	// kennel must have one: kennel.Config.Egress): the CLI's routed
	// credentials become placeholders and its API's base URL the proxy's
	// route, and the proxy holds the real ones (see egress.go).
	Egress *Egress
}

// dir returns the directory the CLI runs in.
func (t Task) dir() string {
	if t.Workdir != "" {
		return t.Workdir
	}
	return t.Workspace
}

// Credentials maps environment variable names to values, as configured
// (ANTHROPIC_API_KEY, OPENAI_API_KEY, …). Every adapter picks only the
// names its own CLI reads; nothing else from the map reaches the kennel.
type Credentials map[string]string

// env returns KEY=VALUE for each of keys that is set and non-empty, in the
// order of keys.
func (c Credentials) env(keys ...string) []string {
	var out []string
	for _, k := range keys {
		if v := c[k]; v != "" {
			out = append(out, k+"="+v)
		}
	}
	return out
}

// Key is an environment variable an adapter passes from Credentials into
// the kennel. Each adapter declares its keys (Adapter.Keys); Fetch's
// configuration reads exactly these from its environment and redacts the
// values of the secret ones everywhere.
type Key struct {
	Name string
	// Secret marks a value that grants access: an API key, a token, a
	// configuration that may hold one. Settings (base URLs, model names,
	// cloud projects) are not secret.
	Secret bool
}

// keyNames returns the names of keys, in order.
func keyNames(keys []Key) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k.Name
	}
	return out
}

// Invocation is how to start a CLI for a task: the argv (never passed
// through a shell) and the environment added for this run.
type Invocation struct {
	Argv []string
	Env  []string
}

// Adapter knows one coding CLI: how to invoke it headless and how to read
// its output.
type Adapter interface {
	// Name is the harness this adapter drives.
	Name() Name
	// Version is the CLI version the argv and the parser target.
	Version() string
	// Keys are the credential variables Invocation may pass into the
	// kennel; it passes no other.
	Keys() []Key
	// Invocation builds the argv and environment for task. creds is the
	// whole configured map; the adapter selects its own keys from it.
	Invocation(task Task, creds Credentials) (Invocation, error)
	// NewParser returns a parser for the output of one run of task.
	NewParser(task Task) Parser
	// Traits are what the adapter declares about its CLI beyond argv and
	// output.
	Traits() Traits
}

// Traits are the declared properties of an adapter's CLI.
type Traits struct {
	// ReadOnly: the CLI has a read-only mode that HARNESSES.md confirms,
	// and Invocation selects it for Task.ReadOnly.
	ReadOnly bool
	// ResumeUsage says how a resumed run reports usage.
	ResumeUsage UsageScope
	// TwoWay: the CLI has a protocol through which Fetch answers its
	// requests while it runs, and the adapter implements the TwoWay
	// interface (RunTwoWay). Without it the CLI runs one-shot.
	TwoWay bool
	// Steer says how a two-way run takes the user's messages while it
	// works (Task.Mailbox); SteerNone for a one-shot CLI.
	Steer Steering
	// TwoWayOnly: the CLI has no one-shot mode (Invocation fails with
	// ErrNoOneShot): every run of it must be two-way, whoever is there to
	// answer (a generic ACP agent).
	TwoWayOnly bool
	// Relays are the request event kinds a two-way run emits (of
	// KindPermission, KindAsk, KindPlan).
	Relays []Kind
}

// UsageScope says what the usage a run reports covers. The values are
// stable: they appear in logs and tests.
type UsageScope string

const (
	// UsagePerRun: every run reports its own usage, so a task's total is
	// the sum of its runs.
	UsagePerRun UsageScope = "per_run"
	// UsageCumulative: a run that resumes a session reports the whole
	// session's usage, earlier runs included, so a task's total is the
	// last run's (Codex: turn.completed of `exec resume` counts the history
	// again, codex-resume.jsonl; Qwen: result.usage is the session's).
	UsageCumulative UsageScope = "cumulative"
)

// TaskUsage is the usage of a task whose earlier runs came to total after
// a run that reported run; resumed says whether that run continued the
// earlier runs' session.
func TaskUsage(scope UsageScope, total, run Usage, resumed bool) Usage {
	switch scope {
	case UsageCumulative:
		if resumed {
			if run.IsZero() {
				// The resumed run reported nothing (it failed early):
				// the session's usage is still what it was.
				return total
			}
			return run
		}
	case UsagePerRun:
	}
	return total.Add(run)
}

// Parser turns one run's stdout into events. A parser belongs to one run and
// is not safe for concurrent use. It never panics on its input: unknown event
// types become KindRaw events, and so do lines that are not JSON.
type Parser interface {
	// Parse handles one line of stdout, without its newline. It calls emit
	// for each event the line yields, before returning. line is only valid
	// during the call.
	Parse(line []byte, emit func(Event))
	// Flush is called once when the output ended. CLIs without a terminal
	// event (OpenCode, Aider) emit their result here.
	Flush(emit func(Event))
}

// Registry holds the adapters by name.
type Registry struct {
	adapters map[Name]Adapter
}

// NewRegistry returns a registry of every built-in adapter.
func NewRegistry() *Registry {
	r := &Registry{adapters: make(map[Name]Adapter)}
	for _, a := range []Adapter{
		ClaudeAdapter{}, CodexAdapter{}, GeminiAdapter{}, CopilotAdapter{},
		OpenCodeAdapter{}, QwenAdapter{}, CursorAdapter{}, AiderAdapter{},
	} {
		r.adapters[a.Name()] = a
	}
	return r
}

// Get returns the adapter for name, or an error wrapping ErrUnknownHarness.
// A name of the form "acp:COMMAND [ARGS…]" is a generic ACP harness
// (ParseACP), whose error says what is wrong with the name.
func (r *Registry) Get(name Name) (Adapter, error) {
	if IsACPName(name) {
		a, err := ParseACP(name)
		if err != nil {
			return nil, err
		}
		return a, nil
	}
	a, ok := r.adapters[name]
	if !ok {
		return nil, fmt.Errorf("harness: get %q: %w", name, ErrUnknownHarness)
	}
	return a, nil
}

// Names lists the built-in harnesses, sorted. Generic ACP harnesses
// ("acp:…", see Get) are not listed: there is one for every command.
func (r *Registry) Names() []Name {
	names := make([]Name, 0, len(r.adapters))
	for n := range r.adapters {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// promptInstructions follow the goal in every first prompt. They ask the
// agent for a summary and for a machine-readable QUESTION: line when it needs
// the user, because most CLIs have no structured question channel in
// headless mode.
//
//go:embed prompt.md
var promptInstructions string

// QuestionMarker starts the line an agent ends its reply with when it needs
// input from the user.
const QuestionMarker = "QUESTION:"

// askInstructions follow the question of a read-only run (Task.ReadOnly).
//
//go:embed prompt_ask.md
var askInstructions string

// Prompt returns the text a CLI receives as its prompt for task: the answer
// when resuming with one, otherwise the goal, unchanged, followed by Fetch's
// instructions (for a read-only run, those for answering a question).
func Prompt(task Task) string {
	note := AttachmentNote(task.Attachments)
	if task.ResumeID != "" && task.Answer != "" {
		return task.Answer + note
	}
	if task.ReadOnly {
		return task.Goal + note + "\n\n" + askInstructions
	}
	return task.Goal + note + "\n\n" + promptInstructions
}

// readOnlyUnsupported is the error of Invocation for a read-only task on a
// CLI without a read-only mode.
func readOnlyUnsupported(name Name) error {
	return fmt.Errorf("harness: %s invocation: %w", name, ErrNoReadOnly)
}

var (
	// safeID matches ids that go into argv or file names: task ids and
	// session ids. It excludes a leading '-' so an id is never read as a
	// flag.
	safeID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]*$`)
	// safeModel matches model names such as "anthropic/claude-sonnet-4-5",
	// "gpt-5.5", "claude-opus-4-8[1m]" or "openrouter/x@y".
	safeModel = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:/@\[\]+-]*$`)
)

// validate checks what every adapter relies on.
func validate(task Task) error {
	var problems []string
	if !safeID.MatchString(task.ID) {
		problems = append(problems, fmt.Sprintf("task id %q must match %s", task.ID, safeID))
	}
	if task.ResumeID == "" && strings.TrimSpace(task.Goal) == "" {
		problems = append(problems, "goal is empty")
	}
	if task.ResumeID != "" && strings.TrimSpace(task.Answer) == "" && strings.TrimSpace(task.Goal) == "" {
		problems = append(problems, "resume needs an answer or a goal")
	}
	if strings.ContainsRune(task.Goal, 0) || strings.ContainsRune(task.Answer, 0) {
		problems = append(problems, "goal and answer cannot contain NUL bytes")
	}
	if task.Workspace == "" || !path.IsAbs(task.Workspace) {
		problems = append(problems, fmt.Sprintf("workspace %q is not an absolute path", task.Workspace))
	}
	if task.Workdir != "" && !path.IsAbs(task.Workdir) {
		problems = append(problems, fmt.Sprintf("workdir %q is not an absolute path", task.Workdir))
	}
	if task.Model != "" && !safeModel.MatchString(task.Model) {
		problems = append(problems, fmt.Sprintf("model %q must match %s", task.Model, safeModel))
	}
	if task.ResumeID != "" && !safeID.MatchString(task.ResumeID) {
		problems = append(problems, fmt.Sprintf("resume id %q must match %s", task.ResumeID, safeID))
	}
	if task.Timeout < 0 {
		problems = append(problems, "timeout is negative")
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: %s", ErrInvalidTask, strings.Join(problems, "; "))
	}
	return nil
}

// commonEnv is added to every run: no colour codes in output meant for
// parsing.
var commonEnv = []string{"NO_COLOR=1"}

// buildEnv joins the fixed environment of a CLI with its selected
// credentials.
func buildEnv(fixed []string, creds Credentials, keys ...string) []string {
	env := slices.Concat(commonEnv, fixed)
	return append(env, creds.env(keys...)...)
}

// OneShot tells whether a task on this CLI runs one-shot, with its
// permissions bypassed (the kennel is then the only boundary): a CLI
// without a two-way mode. A two-way CLI's task runs two-way under the
// policy when someone can answer it: a chat's task, or a terminal task
// while a Fetch serves the owner's chat (the task engine decides that).
func (tr Traits) OneShot() bool {
	return !tr.TwoWay
}

// builtins are the built-in adapters, for RunsOneShot (read only).
var builtins = NewRegistry()

// RunsOneShot is Traits.OneShot of CLI name (false for a name no adapter
// has).
func RunsOneShot(name Name) bool {
	a, err := builtins.Get(name)
	return err == nil && a.Traits().OneShot()
}

// BypassNote is what the owner is told of a one-shot run.
const BypassNote = "runs one-shot: its permissions are bypassed, and the kennel is the boundary"
