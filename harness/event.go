package harness

import (
	"cmp"
	"encoding/json"
	"math"
)

// Kind says what an Event reports. The values are stable: they are written to
// logs, the task event log and golden files.
type Kind string

// The kinds of Event.
const (
	// KindText is assistant prose: a complete message or paragraph, never a
	// token-level delta.
	KindText Kind = "text"
	// KindToolUse is a tool call other than a shell command (read, edit,
	// search, …): Tool, ToolID and Input.
	KindToolUse Kind = "tool_use"
	// KindCommand is a shell command. ExitCode is nil when the command
	// starts and set when the CLI reports that it finished. Denied is set
	// instead when the CLI refused to run it.
	KindCommand Kind = "command"
	// KindFileChanged names a file that changed. While the CLI runs it is
	// what the CLI's own edit tool reported (Git false). After the run, Run
	// emits one event per file that git saw change (Git true, with line
	// counts); those are authoritative, because shell edits appear in no
	// event stream.
	KindFileChanged Kind = "file_changed"
	// KindQuestion is a question for the user: a structured ask-user request
	// where the CLI has one, otherwise the final message when it ends with a
	// QUESTION: line or a question.
	KindQuestion Kind = "question"
	// KindUsage reports tokens and cost. Usage events are additive: the
	// run's total is their sum.
	KindUsage Kind = "usage"
	// KindSpend reports what the run has used so far, while it runs: a
	// running total for the run that replaces the previous spend event.
	// It is never added into the run's usage (the usage events are the
	// record); it lets the task engine stop a run at its budget before the
	// CLI's final figure arrives. Only CLIs whose stream carries usage
	// before the end emit it (Claude Code: every assistant message has its
	// usage, while the dollars come only on the result line).
	KindSpend Kind = "spend"
	// KindSession carries the CLI's session (thread, chat) id, used to resume.
	KindSession Kind = "session"
	// KindResult is the terminal event: Success and the final summary in
	// Text. A run succeeded only if this says so and the exit code is 0.
	KindResult Kind = "result"
	// KindError is an error the CLI reported. It is not necessarily fatal
	// (retries are reported this way); only KindResult and the exit code
	// decide success.
	KindError Kind = "error"
	// KindPermission: a two-way run's CLI asks whether it may use a tool
	// (Request: the tool, its command or file and diff). The CLI waits for
	// the reply (TwoWay.Allow or TwoWay.Deny) on its stdin.
	KindPermission Kind = "permission"
	// KindAsk: a two-way run's CLI asks the user questions with options
	// (Request.Questions). The CLI waits for TwoWay.Answer (or Deny).
	KindAsk Kind = "ask"
	// KindPlan: a two-way run in plan mode proposes its plan
	// (Request.Plan). The CLI waits: Deny with the owner's revision makes
	// it plan again; DenyAndStop ends the planning.
	KindPlan Kind = "plan"
	// KindBadRequest: a control message from the CLI that Fetch cannot
	// relay: malformed, of an unknown kind, or too large. Text says why.
	// When Request.ID is set the CLI waits for a reply: answer it with
	// TwoWay.Deny. Never fatal; the caller logs it.
	KindBadRequest Kind = "bad_request"
	// KindRequestCancelled: the CLI withdrew its request Request.ID (it no
	// longer waits for the reply).
	KindRequestCancelled Kind = "request_cancelled"
	// KindRaw is a line the parser did not recognise: an unknown event type
	// (Raw holds the JSON) or a line that is not JSON (Text holds it).
	KindRaw Kind = "raw"
	// KindRefused: the kennel's way out refused a connection of the run
	// (package kennel/egress). Host is what the run asked for
	// (host:port), Text the reason. Emitted by the task engine after the
	// run, from the proxy's report.
	KindRefused Kind = "egress_refused"
)

// Event is one normalized thing a coding CLI reported. Which fields are set
// depends on Kind; see the Kind constants.
type Event struct {
	Kind Kind `json:"kind"`
	// Text: prose (text), the question (question), the final summary
	// (result), the message (error), output (command, when finished), a
	// non-JSON line (raw).
	Text string `json:"text,omitempty"`
	// Tool is the CLI's own tool name (tool_use, command).
	Tool string `json:"tool,omitempty"`
	// ToolID is the CLI's id for the tool call, when it has one.
	ToolID string `json:"tool_id,omitempty"`
	// Input is the tool's arguments as the CLI reported them (tool_use).
	Input json.RawMessage `json:"input,omitempty"`
	// Command is the shell command line (command).
	Command string `json:"command,omitempty"`
	// ExitCode is the command's exit code once it finished (command).
	ExitCode *int `json:"exit_code,omitempty"`
	// Path is the changed file (file_changed): as the CLI reported it, or
	// relative to the working directory when Git is true.
	Path string `json:"path,omitempty"`
	// Change is how the file changed, when known (file_changed).
	Change ChangeKind `json:"change,omitempty"`
	// Added and Removed count lines (file_changed with Git true).
	Added   int `json:"added,omitempty"`
	Removed int `json:"removed,omitempty"`
	// Git is true when the change was measured with git after the run.
	Git bool `json:"git,omitempty"`
	// Usage is set on usage events.
	Usage *Usage `json:"usage,omitempty"`
	// SessionID is set on session events.
	SessionID string `json:"session_id,omitempty"`
	// Success is set on result events: what the terminal event reported.
	Success bool `json:"success,omitempty"`
	// Denied marks a tool call the CLI refused to carry out (a permission
	// denial, a read-only run): a command event with Denied never ran and
	// has no exit code; an error event with Denied is a refused tool.
	Denied bool `json:"denied,omitempty"`
	// Host is the host:port a refused connection asked for (egress_refused).
	Host string `json:"host,omitempty"`
	// Raw is the unrecognised JSON line (raw).
	Raw json.RawMessage `json:"raw,omitempty"`
	// Request is what a two-way CLI asks (permission, ask, plan,
	// bad_request, request_cancelled).
	Request *Request `json:"request,omitempty"`
	// Limits are the subscription windows a limits event reports.
	Limits []Window `json:"limits,omitempty"`
}

// ChangeKind says how a file changed.
type ChangeKind string

// The kinds of file change.
const (
	ChangeAdded    ChangeKind = "added"
	ChangeModified ChangeKind = "modified"
	ChangeDeleted  ChangeKind = "deleted"
)

// Usage is token and cost accounting as the CLI reported it. Token fields
// keep the CLI's own meaning (for example OpenAI counts cached tokens inside
// InputTokens, Anthropic does not).
type Usage struct {
	InputTokens      int64   `json:"input_tokens,omitempty"`
	OutputTokens     int64   `json:"output_tokens,omitempty"`
	CacheReadTokens  int64   `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int64   `json:"cache_write_tokens,omitempty"`
	CostUSD          float64 `json:"cost_usd,omitempty"`
	// PremiumRequests is Copilot's unit of billing.
	PremiumRequests float64 `json:"premium_requests,omitempty"`
	// CostEstimated: CostUSD was priced by Fetch from the tokens with its
	// price table (internal/price), not reported by the CLI.
	CostEstimated bool `json:"cost_estimated,omitempty"`
	// CostUnknown: the CLI reported tokens but no dollars, and its model's
	// price is not in the table; CostUSD leaves them out.
	CostUnknown bool `json:"cost_unknown,omitempty"`
	// PricedAs: the CLI's model has no price of its own in the table, so
	// its tokens were priced as this model, the dearest known one of its
	// provider (price.Price.Fallback): an estimate that errs high, which
	// every place showing the cost says.
	PricedAs string `json:"priced_as,omitempty"`
}

// Add returns the sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		InputTokens:      u.InputTokens + v.InputTokens,
		OutputTokens:     u.OutputTokens + v.OutputTokens,
		CacheReadTokens:  u.CacheReadTokens + v.CacheReadTokens,
		CacheWriteTokens: u.CacheWriteTokens + v.CacheWriteTokens,
		CostUSD:          u.CostUSD + v.CostUSD,
		PremiumRequests:  u.PremiumRequests + v.PremiumRequests,
		CostEstimated:    u.CostEstimated || v.CostEstimated,
		CostUnknown:      u.CostUnknown || v.CostUnknown,
		PricedAs:         cmp.Or(u.PricedAs, v.PricedAs),
	}
}

// Valid reports whether every number of u is one a CLI can truly report:
// no negative token count, no cost or premium requests that are
// negative, NaN or infinite. A usage that is not valid is not reported at
// all (the tally and the task engine skip it): added up, it would lower a
// task's cost and its budget use.
func (u Usage) Valid() bool {
	return u.InputTokens >= 0 && u.OutputTokens >= 0 && u.CacheReadTokens >= 0 && u.CacheWriteTokens >= 0 &&
		validAmount(u.CostUSD) && validAmount(u.PremiumRequests)
}

func validAmount(f float64) bool { return f >= 0 && !math.IsInf(f, 1) }

// IsZero reports whether u carries no numbers at all.
func (u Usage) IsZero() bool { return u == Usage{} }

// Limits on what an event keeps from a line, so that one enormous line (a
// whole file written by a Write tool, a binary dump) cannot make an event
// enormous too.
const (
	// maxRawBytes bounds Raw and the Text of raw events.
	maxRawBytes = 64 << 10
	// maxInputBytes bounds tool Input; larger inputs are replaced by a
	// {"truncated_bytes":N} object.
	maxInputBytes = 64 << 10
	// maxTextBytes bounds Text of text, command and error events.
	maxTextBytes = 256 << 10
)
