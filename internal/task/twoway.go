package task

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fetch-dev/fetch/harness"
	"github.com/fetch-dev/fetch/instincts"
	"github.com/fetch-dev/fetch/internal/policy"
	"github.com/fetch-dev/fetch/internal/store"
	"github.com/fetch-dev/fetch/kennel"
)

// Updates of two-way runs.
const (
	// Requested: the CLI of a running task asks the owner
	// (Update.Request: a permission, a question, a plan).
	Requested UpdateKind = "requested"
	// RequestClosed: a request that asked the owner was closed
	// (Update.Request.State and By say how: answered, expired, restart,
	// end of the run).
	RequestClosed UpdateKind = "request_closed"
)

// DefaultApprovalTTL is how long a request waits for the owner when
// Config.ApprovalTTL is 0.
const DefaultApprovalTTL = time.Hour

// planning is the tasks.plan value of a task that plans first (/plan).
const planning = "planning"

// TwoWayRunner is a Runner that can run a harness two-way: the CLI's stdin
// stays open (the kennel's inbox) and its requests are answered while it
// runs. KennelRunner is one when its Kennel has an inbox.
type TwoWayRunner interface {
	RunTwoWay(ctx context.Context, h harness.Name, t harness.Task, mode harness.TwoWayMode, onEvent func(harness.Event)) (harness.Outcome, error)
	// Send writes one reply to the run t.ID's stdin; CloseInput ends it.
	Send(ctx context.Context, t harness.Task, msg []byte) error
	CloseInput(ctx context.Context, t harness.Task) error
}

// inbox is what KennelRunner needs of its Kennel for two-way runs
// (*kennel.Kennel and *kennel.Pool).
type inbox interface {
	Send(ctx context.Context, workspace, taskID string, msg []byte) error
	CloseInput(ctx context.Context, workspace, taskID string) error
}

// errNoInbox: the kennel cannot keep a run's stdin open.
var errNoInbox = errors.New("the kennel has no inbox for two-way runs")

// RunTwoWay implements TwoWayRunner over the kennel's inbox.
func (r *KennelRunner) RunTwoWay(ctx context.Context, h harness.Name, t harness.Task, mode harness.TwoWayMode, onEvent func(harness.Event)) (harness.Outcome, error) {
	a, err := r.Harnesses.Get(h)
	if err != nil {
		return harness.Outcome{ExitCode: -1}, err
	}
	in, ok := r.Kennel.(inbox)
	if !ok {
		return harness.Outcome{ExitCode: -1}, fmt.Errorf("task: run %s two-way: %w", h, errNoInbox)
	}
	attach := func(spec *kennel.ExecSpec) (harness.Input, error) {
		spec.Inbox = true
		return kennelInput{in: in, workspace: spec.Workspace, id: spec.TaskID}, nil
	}
	if err := r.withEgress(ctx, &t); err != nil {
		return harness.Outcome{ExitCode: -1}, err
	}
	defer r.reportEgress(ctx, t, onEvent)
	return harness.RunTwoWay(ctx, r.Kennel, a, t, mode, r.Credentials, attach, onEvent)
}

// Send implements TwoWayRunner.
func (r *KennelRunner) Send(ctx context.Context, t harness.Task, msg []byte) error {
	in, ok := r.Kennel.(inbox)
	if !ok {
		return errNoInbox
	}
	return in.Send(ctx, t.Workspace, t.ID, msg)
}

// CloseInput implements TwoWayRunner.
func (r *KennelRunner) CloseInput(ctx context.Context, t harness.Task) error {
	in, ok := r.Kennel.(inbox)
	if !ok {
		return errNoInbox
	}
	return in.CloseInput(ctx, t.Workspace, t.ID)
}

// kennelInput is a run's stdin through the kennel's inbox.
type kennelInput struct {
	in        inbox
	workspace string
	id        string
}

// Its first message may race the wrapper's start: the exec runs (Started)
// a moment before fetch-shim has made the run's inbox, and a Send then
// finds no task. That message is tried again, within startRace.
const (
	startRace      = 5 * time.Second
	startRaceRetry = 25 * time.Millisecond
)

func (k kennelInput) Send(ctx context.Context, msg []byte) error {
	deadline := time.Now().Add(startRace)
	for {
		err := k.in.Send(ctx, k.workspace, k.id, msg)
		if !errors.Is(err, kennel.ErrNoTask) || time.Now().After(deadline) {
			return err
		}
		t := time.NewTimer(startRaceRetry)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
}

func (k kennelInput) Close(ctx context.Context) error {
	return k.in.CloseInput(ctx, k.workspace, k.id)
}

// steering is the engine's part of two-way runs: the steer of each run it
// follows, and the loop guard (made by New, safe for concurrent use).
type steering struct {
	mu     sync.Mutex
	steers map[string]*steer // by task id
	guard  *policy.LoopGuard
}

func (s *steering) get(taskID string) *steer {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.steers[taskID]
}

func (s *steering) set(taskID string, st *steer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.steers == nil {
		s.steers = map[string]*steer{}
	}
	if st == nil {
		delete(s.steers, taskID)
		return
	}
	s.steers[taskID] = st
}

// twoWayMode is how t's next run goes: ModeWork or ModePlan for a two-way
// run, "" for a one-shot run. A run is two-way when the task belongs to a
// conversation (someone can answer), does work (an Ask task runs
// read-only already), its harness has a two-way mode and the runner can
// keep stdin open. Tasks from the command line (fetch task run) stay
// one-shot: nobody is there to answer.
func (e *Engine) twoWayMode(ctx context.Context, t Task) harness.TwoWayMode {
	if t.Mode != Work {
		return ""
	}
	a, err := e.cfg.Harnesses.Get(harness.Name(t.Harness))
	if err != nil || a.Traits().OneShot() {
		return ""
	}
	if t.ConversationID == "" && !a.Traits().TwoWayOnly && e.relayTarget(ctx, t) == "" {
		// A task from the terminal while no Fetch serves a chat: nobody
		// could answer its CLI, which runs one-shot (the kennel is the
		// boundary), as a CLI without a two-way mode does.
		return ""
	}
	if _, ok := a.(harness.TwoWay); !ok {
		return ""
	}
	if _, ok := e.cfg.Runner.(TwoWayRunner); !ok {
		return ""
	}
	var plan string
	if err := e.db.QueryRowContext(ctx, "SELECT plan FROM "+tasksTable+" WHERE id = ?", t.ID).Scan(&plan); err != nil {
		e.log.Warn("read whether the task plans first", "task", t.ID, "err", err)
	}
	if plan == planning {
		return harness.ModePlan
	}
	return harness.ModeWork
}

// noOneToAsk is the answer to what a terminal task's CLI asks that the
// policy leaves to the owner.
const noOneToAsk = "Nobody can answer this now: the task was started from the terminal, and no Fetch serves a chat (fetch serve, fetch chat) to ask the owner in. It is denied; the owner can allow it in the workspace's policy (/policy), or run the task while Fetch serves a chat."

// errLoopGuard stops a run whose CLI keeps asking for what was denied.
var errLoopGuard = errors.New("stopped by the loop guard")

// steer answers the requests of one two-way run. Requests reach it from the
// runner's callback (event, which never blocks) and the owner's answers
// from AnswerRequest (answered, which never blocks); its goroutine, which
// drive starts and waits for, decides with the policy, records, asks the
// owner (a Requested update) and sends the replies to the CLI's stdin.
type steer struct {
	e       *Engine
	t       Task
	ht      harness.Task
	mode    harness.TwoWayMode
	tw      harness.TwoWay
	runner  TwoWayRunner
	pt      policy.Task
	stopRun func(error)

	mu    sync.Mutex
	items []steerItem
	wake  chan struct{}
	quit  chan struct{}
	done  chan struct{}

	// Owned by the goroutine; read by drive after done.
	open   map[int64]openRequest
	timers map[int64]*time.Timer
	// approved is the plan the owner approved; guardMsg why the loop
	// guard stopped the run.
	approved string
	guardMsg string
}

type openRequest struct {
	req  harness.Request
	pol  policy.Request
	view CLIRequest
}

type steerItem struct {
	ev     *harness.Event
	answer *RequestAnswer
	id     int64 // of answer or expire
	expire bool
}

// newSteer builds the steer of t's run, or nil for a one-shot run.
func (e *Engine) newSteer(ctx context.Context, t Task, ht harness.Task, stopRun func(error)) *steer {
	mode := e.twoWayMode(ctx, t)
	if mode == "" {
		return nil
	}
	a, _ := e.cfg.Harnesses.Get(harness.Name(t.Harness))
	st := &steer{
		e: e, t: t, ht: ht, mode: mode, tw: a.(harness.TwoWay), runner: e.cfg.Runner.(TwoWayRunner), stopRun: stopRun,
		pt: policy.Task{ID: t.ID, Workspace: t.Workspace, Worktree: t.Worktree, BaseBranch: t.BaseBranch, Branch: t.Branch,
			Commands: policy.BuildCommands(e.cfg.Workspaces.ProjectType(t.Workspace))},
		wake: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{}),
		open: map[int64]openRequest{}, timers: map[int64]*time.Timer{},
	}
	e.steering.set(t.ID, st)
	go st.loop()
	return st
}

// wrap passes a run's events to add and its requests to the steer.
func (s *steer) wrap(add func(harness.Event)) func(harness.Event) {
	if s == nil {
		return add
	}
	return func(ev harness.Event) {
		add(ev)
		switch ev.Kind {
		case harness.KindPermission, harness.KindAsk, harness.KindPlan, harness.KindBadRequest, harness.KindRequestCancelled, harness.KindResult:
			s.push(steerItem{ev: &ev})
		}
	}
}

func (s *steer) push(it steerItem) {
	s.mu.Lock()
	s.items = append(s.items, it)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *steer) take() []steerItem {
	s.mu.Lock()
	defer s.mu.Unlock()
	its := s.items
	s.items = nil
	return its
}

// close ends the steer once its run ended: requests still open are
// cancelled and the owner told.
func (s *steer) close() {
	if s == nil {
		return
	}
	close(s.quit)
	<-s.done
	s.e.steering.set(s.t.ID, nil)
}

func (s *steer) loop() {
	defer close(s.done)
	ctx := context.WithoutCancel(s.e.lifetime())
	var poll <-chan time.Time
	if s.t.ConversationID == "" { // its requests may be relayed
		tick := time.NewTicker(relayEvery)
		defer tick.Stop()
		poll = tick.C
	}
	for {
		select {
		case <-poll:
			s.pollRelayed(ctx)
		case <-s.wake:
			for _, it := range s.take() {
				s.handle(ctx, it)
			}
		case <-s.quit:
			for _, it := range s.take() {
				s.handle(ctx, it)
			}
			for id, o := range s.open {
				s.closed(ctx, id, o, RequestCancelled, ByEnd, "")
			}
			return
		}
	}
}

func (s *steer) handle(ctx context.Context, it steerItem) {
	switch {
	case it.expire:
		s.expire(ctx, it.id)
	case it.answer != nil:
		s.reply(ctx, it.id, *it.answer)
	case it.ev != nil:
		s.request(ctx, *it.ev)
	}
}

// sendTimeout bounds one reply to the CLI.
const sendTimeout = kennel.SendTimeout + 5*time.Second

// to returns the function that sends a reply the adapter built.
func (s *steer) to(ctx context.Context) func(msg []byte, err error) {
	return func(msg []byte, err error) { s.send(ctx, msg, err) }
}

func (s *steer) send(ctx context.Context, msg []byte, err error) {
	if err != nil {
		s.e.log.Error("build a reply to the CLI", "task", s.t.ID, "err", err)
		return
	}
	sctx, cancel := context.WithTimeout(ctx, sendTimeout)
	defer cancel()
	if err := s.runner.Send(sctx, s.ht, msg); err != nil {
		s.e.log.Warn("send a reply to the CLI", "task", s.t.ID, "err", err)
	}
}

func (s *steer) audit(ctx context.Context, entry store.AuditEntry) {
	entry.Detail = s.e.store.Scrub(entry.Detail)
	if err := s.e.store.Audit(ctx, entry); err != nil {
		s.e.log.Error("audit", "task", s.t.ID, "err", err)
	}
}

func (s *steer) publish(ctx context.Context, kind UpdateKind, r CLIRequest) {
	if r.Relayed {
		// The terminal that follows the task reads its log.
		s.e.logEntry(s.t.ID, KindRelayed, RelayedEntry{Update: kind, Request: r})
	}
	s.e.notify(ctx, Update{Kind: kind, Task: s.t, Request: &r})
}

// request handles one event of the run that concerns requests.
func (s *steer) request(ctx context.Context, ev harness.Event) {
	if ev.Kind == harness.KindResult {
		// The CLI keeps running after its result until its input ends.
		// RunTwoWay closes it, but not for a run followed again (after a
		// restart, or a lost stream whose close did not get through):
		// closing a closed input is success. A result before the last
		// (a message of the owner's still makes a turn) leaves it open.
		if m := s.ht.Mailbox; m != nil && !m.Closed() {
			return
		}
		cctx, cancel := context.WithTimeout(ctx, sendTimeout)
		defer cancel()
		if err := s.runner.CloseInput(cctx, s.ht); err != nil {
			s.e.log.Warn("close the input of a followed run", "task", s.t.ID, "err", err)
		}
		return
	}
	r := ev.Request
	if r == nil {
		return
	}
	if ev.Kind == harness.KindRequestCancelled {
		for id, o := range s.open {
			if o.req.ID == r.ID {
				s.closed(ctx, id, o, RequestCancelled, ByCLI, "")
			}
		}
		return
	}
	if r.ID == "" {
		s.e.log.Warn("the CLI sent a request that cannot be answered", "task", s.t.ID, "reason", ev.Text)
		return
	}
	kind := ev.Kind
	summary, detail := s.e.describeRequest(kind, *r)
	stored := *r
	stored.Input = nil
	view := CLIRequest{TaskID: s.t.ID, ConversationID: s.t.ConversationID, Kind: kind, Tool: r.Tool, Summary: summary, Detail: detail, NoReason: r.NoReason, CreatedAt: s.e.now()}
	for _, q := range r.Questions {
		q.Question = s.e.store.Scrub(q.Question)
		for i := range q.Options {
			q.Options[i].Label = s.e.store.Scrub(q.Options[i].Label)
		}
		view.Questions = append(view.Questions, q)
	}
	sr := storedRequest{Request: stored}

	var d policy.Decision
	switch kind {
	case harness.KindBadRequest:
		view.State, view.By, view.Answer = RequestDenied, ByPolicy, "Fetch could not read this request"
	case harness.KindPermission:
		sr.Policy = policyRequest(*r)
		d = s.decide(ctx, sr.Policy)
		sr.Remember = d.Remember
		switch d.Verdict {
		case policy.Allow:
			view.State, view.By = RequestAllowed, ByPolicy
		case policy.Deny:
			view.State, view.By, view.Answer = RequestDenied, ByPolicy, d.Reason
		case policy.Ask:
			view.State = RequestPending
			if d.By == policy.ByDenyList {
				view.Warning = d.Reason
			}
			if d.Remember != nil {
				view.Remember = d.Remember.String()
			}
		}
	default: // a question, a plan: only the owner answers
		view.State = RequestPending
	}
	if view.State == RequestPending && s.t.ConversationID == "" {
		// A task from the terminal: its request goes to the owner's chat
		// when a Fetch serves one (relay.go). Otherwise nobody can be
		// asked, so what the policy would ask about is denied, and the
		// CLI told why.
		if to := s.e.relayTarget(ctx, s.t); to != "" {
			view.ConversationID, view.Relayed = to, true
		} else {
			view.State, view.By, view.Answer = RequestDenied, ByPolicy, noOneToAsk
		}
	}
	if view.State == RequestPending {
		view.ExpiresAt = view.CreatedAt.Add(s.e.approvalTTL())
	}
	got, inserted, err := s.e.insertRequest(ctx, s.t, s.ht.ID, view, sr)
	if err != nil {
		s.e.log.Error("record a request of the CLI; denying it", "task", s.t.ID, "err", err)
		s.to(ctx)(s.tw.Deny(*r, "Fetch could not record this request, so it is denied."))
		return
	}
	if !inserted {
		if got.State == RequestPending {
			if _, mine := s.open[got.ID]; mine {
				return
			}
			// Asked before a restart of Fetch: whoever was asked can no
			// longer answer into this process. Denied, and the owner told.
			s.closed(ctx, got.ID, openRequest{req: *r, view: got}, RequestExpired, ByRestart, "")
		}
		return // replayed: answered before
	}
	if kind == harness.KindPermission {
		s.audit(ctx, policy.AuditEntry(s.t.ConversationID, s.pt, sr.Policy, d))
	}
	switch got.State {
	case RequestAllowed:
		s.to(ctx)(s.tw.Allow(*r))
	case RequestDenied:
		s.to(ctx)(s.tw.Deny(*r, got.Answer))
		if kind == harness.KindPermission {
			s.guard(sr.Policy)
		}
	case RequestPending:
		s.open[got.ID] = openRequest{req: *r, pol: sr.Policy, view: got}
		id := got.ID
		s.timers[id] = time.AfterFunc(time.Until(got.ExpiresAt), func() { s.push(steerItem{id: id, expire: true}) })
		s.publish(ctx, Requested, got)
	}
}

// decide asks the policy, with the conversation's autonomy level and the
// rules the owner remembered.
func (s *steer) decide(ctx context.Context, pr policy.Request) policy.Decision {
	level := instincts.Cautious
	if c, err := s.e.store.Conversation(ctx, s.t.ConversationID); err == nil {
		if l, ok := instincts.ParseAutonomy(c.Autonomy); ok {
			level = l
		}
	}
	rules, err := s.e.store.PolicyRules(ctx, s.t.Workspace, s.t.ID)
	if err != nil {
		s.e.log.Warn("read the policy rules; deciding without them", "task", s.t.ID, "err", err)
	}
	return policy.Decide(pr, s.pt, level, rules)
}

// guard counts a denial; the run is stopped when the CLI keeps asking.
func (s *steer) guard(pr policy.Request) {
	st := s.e.steering.guard.Denied(s.t.ID, pr)
	if st.Stop && s.guardMsg == "" {
		s.guardMsg = st.Message
		s.stopRun(errLoopGuard)
	}
}

// closed closes an open request without the owner (TTL, restart, end of
// the run, withdrawn), denies it to the CLI when it still runs, and tells
// the owner.
func (s *steer) closed(ctx context.Context, id int64, o openRequest, state RequestState, by, answer string) {
	if err := s.e.closeRequest(ctx, nil, id, state, by, answer); err != nil {
		if r, _, rerr := s.e.request(ctx, s.e.db, id); o.view.Relayed && rerr == nil && r.State != RequestPending {
			// Answered in the chat it was relayed to just before.
			s.answeredElsewhere(ctx, id, o, r)
			return
		}
		s.drop(id)
		s.e.log.Warn("close a request", "task", s.t.ID, "request", id, "err", err)
		return
	}
	s.drop(id)
	switch by {
	case ByTTL:
		s.to(ctx)(s.tw.Deny(o.req, fmt.Sprintf("The user did not answer within %s, so this is denied.", s.e.approvalTTL())))
	case ByRestart:
		s.to(ctx)(s.tw.Deny(o.req, "Fetch restarted while this waited for the user, so it is denied. Ask again if you still need it."))
	}
	v := o.view
	v.State, v.By, v.Answer = state, by, answer
	s.audit(ctx, store.AuditEntry{ConversationID: s.t.ConversationID, Actor: "fetch", Action: "request_" + string(state),
		Detail: fmt.Sprintf("task %s: request %d (%s %s): %s", s.t.ID, id, v.Kind, v.Summary, by)})
	s.publish(ctx, RequestClosed, v)
}

// drop forgets the open request id and stops its timer.
func (s *steer) drop(id int64) {
	delete(s.open, id)
	if t := s.timers[id]; t != nil {
		t.Stop()
		delete(s.timers, id)
	}
}

func (s *steer) expire(ctx context.Context, id int64) {
	o, ok := s.open[id]
	if !ok {
		return
	}
	s.closed(ctx, id, o, RequestExpired, ByTTL, "")
}

// reply sends the owner's recorded answer to the CLI.
func (s *steer) reply(ctx context.Context, id int64, a RequestAnswer) {
	o, ok := s.open[id]
	if !ok {
		s.e.log.Warn("an answer for a request this run does not hold", "task", s.t.ID, "request", id)
		return
	}
	s.answer(ctx, id, o, a)
}

// answer sends the owner's answer a to open request id to the CLI.
func (s *steer) answer(ctx context.Context, id int64, o openRequest, a RequestAnswer) {
	s.drop(id)
	switch a.Reply {
	case ReplyAllow, ReplyAllowTask, ReplyAllowAlways:
		s.to(ctx)(s.tw.Allow(o.req))
	case ReplyDeny:
		reason := "The user denied this."
		if a.Text != "" {
			reason = "The user denied this: " + a.Text
		}
		s.to(ctx)(s.tw.Deny(o.req, reason))
		if o.view.Kind == harness.KindPermission {
			s.guard(o.pol)
		}
	case ReplyAnswer:
		answers := make([]string, len(o.req.Questions))
		for i := range answers {
			answers[i] = a.Text
		}
		s.to(ctx)(s.tw.Answer(o.req, answers))
	case ReplyApprove:
		s.approved = o.req.Plan
		s.to(ctx)(s.tw.DenyAndStop(o.req, "The user approved the plan. Stop now: it is carried out in the next turn."))
	case ReplyRevise:
		s.to(ctx)(s.tw.Deny(o.req, a.Text)) // the owner's words: the CLI plans again
	case ReplyCancel:
		s.to(ctx)(s.tw.DenyAndStop(o.req, "The user cancelled the task."))
		if _, err := s.e.RequestCancel(ctx, s.t.ID); err != nil {
			s.e.log.Warn("cancel a task whose plan was cancelled", "task", s.t.ID, "err", err)
		}
	}
	v := o.view
	v.State, v.By, v.Answer = answerState(a.Reply), a.By, a.Text
	s.publish(ctx, RequestClosed, v)
}

// answerState is the state an answer leaves its request in.
func answerState(r Reply) RequestState {
	switch r {
	case ReplyAllow, ReplyAllowTask, ReplyAllowAlways:
		return RequestAllowed
	case ReplyAnswer, ReplyApprove:
		return RequestAnswered
	}
	return RequestDenied
}

func (e *Engine) approvalTTL() time.Duration {
	if e.cfg.ApprovalTTL > 0 {
		return e.cfg.ApprovalTTL
	}
	return DefaultApprovalTTL
}

// AnswerRequest records the owner's answer to a request of a running
// task's CLI and hands it to the run, which sends it to the CLI (this
// never waits for the CLI). "Allow for this task" and "Always allow in
// this workspace" remember the request's rule in the same transaction.
// A request that is no longer open is ErrRequestClosed; an answer that
// does not fit the request is ErrInvalid. It returns the request as
// answered.
func (e *Engine) AnswerRequest(ctx context.Context, id int64, a RequestAnswer) (CLIRequest, error) {
	a.Text = e.store.Scrub(strings.TrimSpace(a.Text))
	r, sr, err := e.request(ctx, e.db, id)
	if err != nil {
		return r, err
	}
	if r.State != RequestPending {
		return r, e.closedError(ctx, id)
	}
	if err := fits(r, sr, a); err != nil {
		return r, fmt.Errorf("task: answer request %d: %w", id, err)
	}
	st := e.steering.get(r.TaskID)
	if st == nil && !(r.Relayed && e.followedElsewhere(ctx, r.TaskID)) {
		// A relayed request's answer is recorded here for the process
		// that follows its run, which reads it (relay.go).
		return r, fmt.Errorf("%w: request %d: task %s's run is not followed by this Fetch (it ended, or another Fetch process follows it)", ErrRequestClosed, id, r.TaskID)
	}
	t, err := e.Get(ctx, r.TaskID)
	if err != nil {
		return r, err
	}
	var rule int64
	err = e.tx(ctx, func(tx *sql.Tx) error {
		if err := e.closeRequest(ctx, tx, id, answerState(a.Reply), a.By, a.Text); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "UPDATE "+requestsTable+" SET reply = ? WHERE id = ?", string(a.Reply), id); err != nil {
			return err
		}
		if a.Reply != ReplyAllowTask && a.Reply != ReplyAllowAlways {
			return nil
		}
		pr := store.PolicyRule{Workspace: t.Workspace, Tool: string(sr.Remember.Tool), Pattern: sr.Remember.Pattern, CreatedBy: a.By}
		if a.Reply == ReplyAllowTask {
			pr.TaskID = t.ID
		}
		var err error
		rule, _, err = e.store.AddPolicyRuleTx(ctx, tx, pr)
		return err
	})
	if err != nil {
		if errors.Is(err, ErrRequestClosed) {
			return r, err
		}
		return r, fmt.Errorf("task: answer request %d: %w", id, err)
	}
	pt := policy.Task{ID: t.ID, Workspace: t.Workspace}
	entry := policy.AnswerEntry(t.ConversationID, a.By, pt, sr.Policy, policyAnswer(a.Reply), rule)
	if r.Kind != harness.KindPermission {
		entry.Detail = fmt.Sprintf("task %s: request %d (%s %s): %s %s", t.ID, id, r.Kind, r.Summary, a.Reply, a.Text)
	}
	entry.Detail = e.store.Scrub(entry.Detail)
	if err := e.store.Audit(ctx, entry); err != nil {
		e.log.Error("audit", "task", t.ID, "err", err)
	}
	if st != nil {
		st.push(steerItem{id: id, answer: &a})
	}
	r.State, r.By, r.Answer, r.Reply = answerState(a.Reply), a.By, a.Text, a.Reply
	return r, nil
}

// fits checks that an answer is one the request can take.
func fits(r CLIRequest, sr storedRequest, a RequestAnswer) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), ErrInvalid)
	}
	switch r.Kind {
	case harness.KindPermission:
		switch a.Reply {
		case ReplyAllow, ReplyDeny:
		case ReplyAllowTask, ReplyAllowAlways:
			if sr.Remember == nil {
				return bad("this request can only be allowed once (a command line that is not one plain command, or one on the deny list)")
			}
		default:
			return bad("a permission is answered allow, allow for this task, always or deny")
		}
	case harness.KindAsk:
		switch {
		case a.Reply == ReplyDeny:
		case a.Reply != ReplyAnswer:
			return bad("a question is answered with one of its options or your own words")
		case a.Text == "":
			return bad("the answer is empty")
		}
	case harness.KindPlan:
		switch {
		case a.Reply == ReplyRevise && a.Text == "":
			return bad("say what to change in the plan")
		case a.Reply != ReplyApprove && a.Reply != ReplyRevise && a.Reply != ReplyCancel:
			return bad("a plan is answered approve, revise or cancel")
		}
	default:
		return bad("this request cannot be answered")
	}
	if len(a.Text) > MaxGoalLen {
		return bad("the text is longer than %d characters", MaxGoalLen)
	}
	return nil
}

func policyAnswer(r Reply) policy.Answer {
	switch r {
	case ReplyAllow:
		return policy.AllowOnce
	case ReplyAllowTask:
		return policy.AllowTask
	case ReplyAllowAlways:
		return policy.AllowAlways
	}
	return policy.DenyOnce
}

// afterSteer decides what follows a two-way run besides its outcome: a
// plan the owner approved is carried out by a new run that resumes the
// session (next, true); a run the loop guard stopped fails with its
// message (reason).
func (e *Engine) afterSteer(ctx context.Context, st *steer, cur Task, out harness.Outcome) (next Task, run bool, reason string) {
	if st == nil {
		return cur, false, ""
	}
	if st.guardMsg != "" {
		return cur, false, st.guardMsg
	}
	if st.approved == "" || st.mode != harness.ModePlan || cur.CancelRequested {
		return cur, false, ""
	}
	if _, err := e.db.ExecContext(ctx, "UPDATE "+tasksTable+" SET plan = '' WHERE id = ?", cur.ID); err != nil {
		e.log.Error("record the approved plan", "task", cur.ID, "err", err)
		return cur, false, ""
	}
	if out.SessionID != "" {
		cur.SessionID = out.SessionID
	}
	e.setCost(ctx, &cur, out)
	cur.Answer = harness.ApprovedPlanGoal(cur.Goal, st.approved)
	return cur, true, ""
}

// CreatePlan creates a task that first runs its CLI in plan mode: the
// plan comes to the owner (Approve · Revise · Cancel) and, approved, is
// carried out in the same CLI session. Only a conversation's task on a
// harness with a two-way mode can plan.
func (e *Engine) CreatePlan(ctx context.Context, req Request) (Task, error) {
	name := harness.Name(req.Harness)
	if name == "" {
		name = e.cfg.DefaultHarness
	}
	a, err := e.cfg.Harnesses.Get(name)
	if err != nil {
		return Task{}, fmt.Errorf("task: plan: unknown harness %q: %w", req.Harness, ErrInvalid)
	}
	if _, ok := a.(harness.TwoWay); !ok || !a.Traits().TwoWay || !slices.Contains(a.Traits().Relays, harness.KindPlan) || req.ConversationID == "" {
		return Task{}, fmt.Errorf("task: plan: %s has no plan mode Fetch can drive (only Claude Code's two-way mode, from a conversation): %w", name, ErrNoPlanMode)
	}
	if _, ok := e.cfg.Runner.(TwoWayRunner); !ok {
		return Task{}, fmt.Errorf("task: plan: %w", errNoInbox)
	}
	req.Mode, req.Defer = Work, true
	t, err := e.Create(ctx, req)
	if err != nil {
		return t, err
	}
	if _, err := e.db.ExecContext(ctx, "UPDATE "+tasksTable+" SET plan = ? WHERE id = ?", planning, t.ID); err != nil {
		return t, fmt.Errorf("task: plan: %w", err)
	}
	if t.State == Queued {
		started, err := e.claimQueued(ctx, t)
		if err != nil {
			return t, fmt.Errorf("task: plan: %w", err)
		}
		if started.State == Running {
			e.follow(started, false)
			return started, nil
		}
	}
	return t, nil
}

// run starts the carrier's run: two-way when it has a steer.
func (c *carrier) run(ctx context.Context, name harness.Name) (harness.Outcome, error) {
	if c.steer != nil {
		return c.steer.runner.RunTwoWay(ctx, name, c.ht, c.steer.mode, c.pass)
	}
	return c.e.cfg.Runner.Run(ctx, name, c.ht, c.pass)
}

// endSteer drops what steering kept for a task that ended: the loop
// guard's counts and its "Allow for this task" rules.
func (e *Engine) endSteer(ctx context.Context, taskID string) {
	e.steering.guard.Forget(taskID)
	if _, err := e.store.EndTaskPolicyRules(ctx, taskID); err != nil {
		e.log.Warn("remove the task's policy rules", "task", taskID, "err", err)
	}
}
