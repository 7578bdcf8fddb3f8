// Package harness drives coding CLIs ("harnesses") inside the kennel: one
// adapter per CLI turns a Task into an argv and an environment, and parses
// the CLI's output into one event model; Run executes a task through a
// Runner (the kennel), streams its events and reports an Outcome.
//
// # Adapters
//
// Each adapter targets one CLI version (Adapter.Version), because these
// CLIs change their flags and output formats from week to week; the kennel
// image pins the same versions.
//
//	claude    Claude Code 2.1.197  claude -p --output-format stream-json --verbose
//	codex     Codex CLI 0.169.0    codex exec --json
//	gemini    Gemini CLI 0.61.0    gemini -o stream-json --yolo --prompt=…
//	copilot   Copilot CLI 1.0.102  copilot --output-format json --allow-all-tools --prompt=…
//	opencode  OpenCode 1.18.33     opencode run --format json
//	qwen      Qwen Code 0.15.10    qwen -o stream-json --yolo --prompt=…
//	cursor    Cursor Agent (docs of 2026-08-25)  cursor-agent -p --output-format stream-json --force --trust
//	aider     Aider 0.86.1         aider --message=… --yes-always (plain text)
//
// Amp has no adapter: its headless mode could not be run (it needs
// ampcode.com, and without a key it waits forever for a login code), and its
// only sample is a low-confidence reconstruction. Its transcripts are not
// copied into testdata.
//
// The prompt is always one argv element that carries the goal byte for byte,
// followed by Fetch's instructions (prompt.md). Where the CLI takes the
// prompt as a positional argument it comes after "--"; where it takes it as
// an option value it is passed as "--option=value", so a goal starting with
// '-' is never read as a flag. Nothing goes through a shell.
//
// Each adapter declares Traits. ReadOnly: the CLI has a read-only mode that
// HARNESSES.md confirms, and Invocation selects it for Task.ReadOnly (a
// question about the code): Claude Code --permission-mode plan (§2.2, its
// denials §2.4), Gemini --approval-mode default (§4.2: no write or shell
// tool is offered without --yolo), Copilot without --allow-all-tools (§5.2:
// apply_patch and bash are denied). The others refuse a read-only task with
// ErrNoReadOnly: Codex's read-only mode is its own sandbox, which fails in
// containers (§3.2); Qwen and Aider have none; OpenCode's --agent plan and
// Cursor's --mode plan|ask were never run. A read-only run gets
// prompt_ask.md instead of prompt.md, and no work-tree snapshots (they write
// git objects): the caller checks the tree. A command that such a CLI denies
// is reported once, with Event.Denied, never as run. ResumeUsage: Codex and
// Qwen report a resumed session's whole usage (UsageCumulative), the others
// each run's own; TaskUsage adds runs accordingly.
//
// Credentials come from configuration as one map of environment variable
// names to values. Each adapter passes only the names its CLI reads
// (OpenCode and Aider: only their model's provider's); FETCH_DISCORD_TOKEN,
// OPENROUTER_API_KEY and other CLIs' keys never reach the kennel.
//
// # Events
//
// Every CLI's stream becomes Events of the kinds in event.go. A parser never
// panics: event types it does not know become KindRaw events (with the JSON),
// and so do lines that are not JSON. Types it knows but that carry nothing
// new (token deltas that a full message repeats, lifecycle notices) are
// dropped; each parser lists them.
//
// A run succeeded only if its terminal event says so and the exit code is 0
// (Outcome.Success). Exit 0 alone means little: Qwen exits 0 after an API
// error, Aider after anything, Gemini when killed. OpenCode and Aider have no
// terminal event; their parsers make one from the end of the stream.
//
// Questions: Claude Code's AskUserQuestion request and Codex's
// request_user_input are structured; for every CLI the final message is a
// question when it has a "QUESTION:" line (the prompt asks for one) or when
// one of its last two sentences ends in '?'. The answer goes back through
// the CLI's resume mechanism: Task.ResumeID and Task.Answer.
//
// Files changed are measured with git, not taken from the events: shell
// edits appear in no event stream. Before the run, Run snapshots the work
// tree (tracked and untracked files, .gitignore respected) as a tree object
// through a temporary index; after the run it does it again and diffs the
// two trees. That ignores changes that were there before the run, counts
// commits the CLI made, and never touches the user's index or HEAD. The
// snapshot writes blob objects into the repository, as `git stash` would.
//
// # Two-way runs
//
// An adapter with Traits.TwoWay also implements TwoWay: Claude Code
// (claude_twoway.go says what each message rests on), Codex through `codex
// app-server` (codex_appserver.go, testdata/codex-appserver/README.md),
// Gemini CLI and Qwen Code through ACP (acp.go, testdata/acp/README.md).
// RunTwoWay starts its CLI with stdin kept open through an Input (the
// kennel's inbox), writes the opening messages, and reports the CLI's
// requests as KindPermission, KindAsk and KindPlan events carrying a
// Request; the caller answers each with the bytes of TwoWay.Allow, Deny,
// DenyAndStop or Answer, sent through the Input. A control message that
// cannot be relayed is a KindBadRequest event, to be logged and, when it has
// an id, denied. An adapter whose protocol needs messages no user decides
// (ACP's prompt needs the session id the CLI answered with, Codex's
// turn/start the thread id) also implements Dialogues: RunTwoWay shows the
// run's Dialogue every stdout line and sends what it returns. The same
// parser reads one-shot and two-way output, so Follow works for both.
//
// # Running
//
// Run snapshots the work tree, executes the CLI through a Runner
// (*kennel.Kennel; a small interface defined here) under the task's id so
// that kennel.Stop reaches it, streams its events, and after the CLI ended
// (even when stopped or timed out) emits the git-measured file_changed events,
// after the result event. Every git command runs in the kennel too, argv
// only. A timeout stops the run the way Stop does and is an Outcome with
// TimedOut, not an error.
//
// # Imports and concurrency
//
// harness imports the standard library and kennel (for its exec types). Run
// blocks until the CLI and the git commands have finished; it calls onEvent
// synchronously from the runner's line callback, so onEvent must not block
// (calling kennel.Stop from it would wait for the very run it is in). It
// logs nothing: what happened is in the events and the Outcome. Adapters are
// stateless values, safe for concurrent use; a Parser belongs to one run.
//
// # Test data
//
// testdata/transcripts holds the reference samples from
// shared/reference/harness-transcripts (captured from the real CLIs against a
// mock model, or reconstructed from docs and source where a CLI could not be
// run; each sidecar .md says which). testdata/golden holds the parsed events
// and outcome of each; refresh them with `go test ./harness -run TestGolden
// -update` and review the diff.
package harness
