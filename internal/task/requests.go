package task

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fetch-dev/fetch/harness"
	"github.com/fetch-dev/fetch/internal/policy"
	"github.com/fetch-dev/fetch/internal/store"
)

// requestsTable holds the requests of two-way runs (migration 0012).
const requestsTable = "task_requests"

// RequestState is where a CLI's request stands. The values are stored.
type RequestState string

const (
	// RequestPending waits for the owner.
	RequestPending RequestState = "pending"
	// RequestAllowed: the CLI was let go ahead (by the policy, a rule or
	// the owner).
	RequestAllowed RequestState = "allowed"
	// RequestDenied: the CLI was refused (by the policy or the owner); a
	// plan sent back for revision or cancelled is denied too.
	RequestDenied RequestState = "denied"
	// RequestAnswered: a question got the owner's answer; a plan was
	// approved.
	RequestAnswered RequestState = "answered"
	// RequestExpired: nobody answered within the approval TTL, or Fetch
	// restarted while it waited; the CLI was told it was denied.
	RequestExpired RequestState = "expired"
	// RequestCancelled: the task ended (stopped, failed) or the CLI
	// withdrew the request before an answer.
	RequestCancelled RequestState = "cancelled"
)

// Who closed a request, besides the owner's id.
const (
	ByPolicy  = "policy"
	ByTTL     = "ttl"
	ByRestart = "restart"
	ByEnd     = "end of the run"
	ByCLI     = "the CLI"
)

// CLIRequest is one request a two-way coding CLI made while a task ran, as
// the chat shows it. Every text in it is redacted.
type CLIRequest struct {
	// ID is Fetch's id, unique across tasks: the owner's answer names it.
	ID     int64  `json:"id"`
	TaskID string `json:"task_id"`
	// ConversationID is the task's conversation.
	ConversationID string `json:"conversation_id,omitempty"`
	// Kind is harness.KindPermission, KindAsk or KindPlan.
	Kind harness.Kind `json:"kind"`
	Tool string       `json:"tool,omitempty"`
	// Summary is one line: the command, the file an edit writes, the
	// question, "a plan".
	Summary string `json:"summary"`
	// Detail is the whole of it: the exact command, the edit's diff, the
	// questions with their options, the plan (bounded by maxDetail).
	Detail string `json:"detail,omitempty"`
	// Questions are an ask's questions.
	Questions []harness.Question `json:"questions,omitempty"`
	// Warning is the policy's word on a request on the deny list.
	Warning string `json:"warning,omitempty"`
	// Remember is the rule "Allow for this task" would keep ("" when the
	// request can only be allowed once).
	Remember string `json:"remember,omitempty"`
	// NoReason: the CLI's protocol cannot carry a denial's reason (ACP);
	// a denial reaches the CLI as a bare no.
	NoReason bool `json:"no_reason,omitempty"`
	// Relayed: the request is a terminal task's, asked in
	// ConversationID, a chat another Fetch process serves (relay.go).
	Relayed bool `json:"relayed,omitempty"`

	State RequestState `json:"state"`
	// By is who or what closed it (an owner's id, ByTTL, …); Answer what
	// was answered (a reason, an option, a revision).
	By     string `json:"by,omitempty"`
	Answer string `json:"answer,omitempty"`
	// Reply is the owner's answer ("" when nobody answered).
	Reply Reply `json:"reply,omitempty"`

	CreatedAt time.Time `json:"created_at"`
	ExpiresAt time.Time `json:"expires_at,omitzero"`
}

// Pending tells whether the request still waits.
func (r CLIRequest) Pending() bool { return r.State == RequestPending }

// Reply is the owner's answer to a CLI request.
type Reply string

const (
	// For a permission.
	ReplyAllow       Reply = "allow"
	ReplyAllowTask   Reply = "task"
	ReplyAllowAlways Reply = "always"
	ReplyDeny        Reply = "deny"
	// For a question: Text is the answer (an option's label or the
	// owner's words).
	ReplyAnswer Reply = "answer"
	// For a plan: approve it (the task is carried out with it), revise it
	// (Text says how), or cancel the task.
	ReplyApprove Reply = "approve"
	ReplyRevise  Reply = "revise"
	ReplyCancel  Reply = "cancel"
)

// RequestAnswer is what the owner answered, and who.
type RequestAnswer struct {
	Reply Reply
	// Text is a denial's reason, a question's answer or a plan's revision.
	Text string
	// By is the owner's id, for the audit.
	By string
}

// ErrRequestClosed: the request answered is no longer open (answered,
// expired, its task ended, Fetch restarted). The error says what became
// of it.
var ErrRequestClosed = errors.New("that request is no longer open")

// maxDetail bounds the stored text of a request.
const maxDetail = 64 << 10

// storedRequest is what the request column keeps: the CLI's request
// without its tool input (which may be large and hold anything), enough to
// deny it after a restart, and the rule the owner may remember.
type storedRequest struct {
	Request  harness.Request    `json:"request"`
	Policy   policy.Request     `json:"policy"`
	Remember *policy.Suggestion `json:"remember,omitempty"`
}

// requestColumns: a relayed request's conversation is the one it was
// relayed to.
const requestColumns = "r.id, r.task_id, CASE WHEN r.relay_to != '' THEN r.relay_to ELSE t.conversation_id END, r.relay_to != '', r.kind, r.tool, r.summary, r.detail, r.request, r.state, r.answer, r.reply, r.decided_by, r.created_at, COALESCE(r.expires_at, '')"

func scanRequest(s scanner) (CLIRequest, storedRequest, error) {
	var r CLIRequest
	var raw, created, expires string
	err := s.Scan(&r.ID, &r.TaskID, &r.ConversationID, &r.Relayed, &r.Kind, &r.Tool, &r.Summary, &r.Detail, &raw, &r.State, &r.Answer, &r.Reply, &r.By, &created, &expires)
	if err != nil {
		return r, storedRequest{}, err
	}
	var sr storedRequest
	_ = json.Unmarshal([]byte(raw), &sr) // a row unreadable here is shown without questions
	r.Questions, r.NoReason = sr.Request.Questions, sr.Request.NoReason
	if sr.Remember != nil {
		r.Remember = sr.Remember.String()
	}
	r.CreatedAt, r.ExpiresAt = parseTime(created), parseTime(expires)
	return r, sr, nil
}

// Request returns one CLI request.
func (e *Engine) Request(ctx context.Context, id int64) (CLIRequest, error) {
	r, _, err := e.request(ctx, e.db, id)
	return r, err
}

func (e *Engine) request(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, id int64) (CLIRequest, storedRequest, error) {
	r, sr, err := scanRequest(q.QueryRowContext(ctx, "SELECT "+requestColumns+" FROM "+requestsTable+" r JOIN "+tasksTable+" t ON t.id = r.task_id WHERE r.id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return r, sr, fmt.Errorf("task: request %d: %w: there is no such request", id, ErrNotFound)
	}
	if err != nil {
		return r, sr, fmt.Errorf("task: request %d: %w", id, err)
	}
	return r, sr, nil
}

// PendingRequests are the requests of the conversation's tasks, and those
// relayed to it, that wait for the owner, oldest first.
func (e *Engine) PendingRequests(ctx context.Context, conversationID string) ([]CLIRequest, error) {
	rows, err := e.db.QueryContext(ctx, "SELECT "+requestColumns+" FROM "+requestsTable+" r JOIN "+tasksTable+" t ON t.id = r.task_id WHERE r.state = 'pending' AND (t.conversation_id = ? OR r.relay_to = ?) ORDER BY r.id", conversationID, conversationID)
	if err != nil {
		return nil, fmt.Errorf("task: pending requests: %w", err)
	}
	defer rows.Close()
	var out []CLIRequest
	for rows.Next() {
		r, _, err := scanRequest(rows)
		if err != nil {
			return nil, fmt.Errorf("task: pending requests: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// insertRequest records a request of run runID (relayed to
// r.ConversationID when r.Relayed). A request the run's log replays (the
// run followed again after a restart) is there already: inserted is false
// and the stored one is returned.
func (e *Engine) insertRequest(ctx context.Context, t Task, runID string, r CLIRequest, sr storedRequest) (CLIRequest, bool, error) {
	raw, err := json.Marshal(sr)
	if err != nil {
		return r, false, err
	}
	var expires any
	if !r.ExpiresAt.IsZero() {
		expires = store.FormatTime(r.ExpiresAt)
	}
	var closed any
	if r.State != RequestPending {
		closed = store.FormatTime(e.now())
	}
	relayTo := ""
	if r.Relayed {
		relayTo = r.ConversationID
	}
	res, err := e.db.ExecContext(ctx, "INSERT INTO "+requestsTable+" (task_id, run_id, cli_id, kind, tool, summary, detail, request, state, answer, decided_by, created_at, expires_at, closed_at, relay_to) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (run_id, cli_id) DO NOTHING",
		t.ID, runID, sr.Request.ID, string(r.Kind), r.Tool, r.Summary, r.Detail, string(raw), string(r.State), r.Answer, r.By, store.FormatTime(r.CreatedAt), expires, closed, relayTo)
	if err != nil {
		return r, false, err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		var id int64
		if err := e.db.QueryRowContext(ctx, "SELECT id FROM "+requestsTable+" WHERE run_id = ? AND cli_id = ?", runID, sr.Request.ID).Scan(&id); err != nil {
			return r, false, err
		}
		old, _, err := e.request(ctx, e.db, id)
		return old, false, err
	}
	r.ID, err = res.LastInsertId()
	if !r.Relayed {
		r.ConversationID = t.ConversationID
	}
	return r, true, err
}

// closeRequest moves a pending request to state, in tx when given. A
// request that is no longer pending is ErrRequestClosed, saying what
// became of it.
func (e *Engine) closeRequest(ctx context.Context, tx *sql.Tx, id int64, state RequestState, by, answer string) error {
	var q interface {
		ExecContext(context.Context, string, ...any) (sql.Result, error)
	} = e.db
	if tx != nil {
		q = tx
	}
	res, err := q.ExecContext(ctx, "UPDATE "+requestsTable+" SET state = ?, decided_by = ?, answer = ?, closed_at = ? WHERE id = ? AND state = 'pending'",
		string(state), by, answer, store.FormatTime(e.now()), id)
	if err != nil {
		return fmt.Errorf("task: close request %d: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return e.closedError(ctx, id)
	}
	return nil
}

// closedError says what became of a request that is not pending.
func (e *Engine) closedError(ctx context.Context, id int64) error {
	r, _, err := e.request(ctx, e.db, id)
	if err != nil {
		return err
	}
	how := string(r.State)
	switch r.By {
	case "":
	case ByTTL:
		how += " (nobody answered in time)"
	case ByRestart:
		how += " (Fetch restarted while it waited)"
	case ByEnd:
		how += " (its task's run ended)"
	default:
		how += " by " + r.By
	}
	return fmt.Errorf("%w: request %d of task %s was already %s", ErrRequestClosed, id, r.TaskID, how)
}

// expireStale closes the pending requests of tasks that are not running
// (their run ended while no Fetch followed it): nothing waits on them.
func (e *Engine) expireStale(ctx context.Context) {
	_, err := e.db.ExecContext(ctx, "UPDATE "+requestsTable+" SET state = 'expired', decided_by = ?, closed_at = ? WHERE state = 'pending' AND task_id IN (SELECT id FROM "+tasksTable+" WHERE state != 'running')",
		ByRestart, store.FormatTime(e.now()))
	if err != nil {
		e.log.Warn("expire the requests of ended tasks", "err", err)
	}
}

// describeRequest is a request's summary and detail for the chat, redacted
// and bounded.
func (e *Engine) describeRequest(kind harness.Kind, r harness.Request) (summary, detail string) {
	switch {
	case kind == harness.KindAsk:
		var b strings.Builder
		for i, q := range r.Questions {
			if i == 0 {
				summary = q.Question
			}
			fmt.Fprintf(&b, "%s\n", q.Question)
			for j, o := range q.Options {
				fmt.Fprintf(&b, "  %d. %s", j+1, o.Label)
				if o.Description != "" {
					fmt.Fprintf(&b, " — %s", o.Description)
				}
				b.WriteString("\n")
			}
		}
		detail = b.String()
	case kind == harness.KindPlan:
		summary, detail = "a plan", r.Plan
	case r.Command != "":
		summary, detail = r.Command, r.Command
	case r.Path != "":
		summary, detail = r.Path, r.Diff
	default:
		summary, detail = r.Tool, string(r.Input)
	}
	summary = clipText(e.store.Scrub(strings.Join(strings.Fields(summary), " ")), 300)
	detail = clipText(e.store.Scrub(detail), maxDetail)
	return summary, detail
}

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

// policyRequest maps a harness request onto the policy's kinds by the
// action its adapter read from the CLI's tool (harness.Request.Action); a
// request without one is a shell command when it has a command line, and
// otherwise a tool the policy does not know.
func policyRequest(r harness.Request) policy.Request {
	switch r.Action {
	case harness.ActionShell:
		return policy.Request{Kind: policy.Shell, Tool: r.Tool, Command: r.Command}
	case harness.ActionEdit:
		return policy.Request{Kind: policy.Edit, Tool: r.Tool, Paths: nonEmpty(r.Path)}
	case harness.ActionDelete:
		return policy.Request{Kind: policy.Delete, Tool: r.Tool, Paths: nonEmpty(r.Path)}
	case harness.ActionRead:
		return policy.Request{Kind: policy.Read, Tool: r.Tool, Paths: nonEmpty(r.Path)}
	case harness.ActionFetch:
		return policy.Request{Kind: policy.Fetch, Tool: r.Tool, URL: r.URL}
	case harness.ActionInternal:
		return policy.Request{Kind: policy.Internal, Tool: r.Tool}
	case harness.ActionOther:
		return policy.Request{Kind: policy.Other, Tool: r.Tool}
	}
	if r.Command != "" {
		return policy.Request{Kind: policy.Shell, Tool: r.Tool, Command: r.Command}
	}
	return policy.Request{Kind: policy.Other, Tool: r.Tool}
}

func nonEmpty(p string) []string {
	if p == "" {
		return nil
	}
	return []string{p}
}
