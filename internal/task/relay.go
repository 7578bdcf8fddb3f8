package task

import (
	"context"
	"fmt"
	"time"

	"github.com/fetch-dev/fetch/internal/store"
)

// A task started from the terminal (fetch task run) has no conversation,
// but its two-way CLI still asks what the policy leaves to the owner. When
// a Fetch that serves a chat (fetch serve, fetch chat) runs on the same
// data directory, the process that follows the run relays such a request
// to the owner's conversation there: it records the request with relay_to
// naming the conversation, the serving Fetch shows it (relayLoop), records
// the owner's answer (AnswerRequest), and the following process reads the
// answer back and gives it to its CLI (steer.pollRelayed). The two
// processes share only the store: either may be restarted.

// Relay is what a Fetch that serves a chat offers to take: the requests of
// terminal tasks, asked of UserID in Channel.
type Relay struct {
	// Channel is the chat (the chat.Message channel: "discord",
	// "terminal"); UserID the owner's id there.
	Channel, UserID string
}

const relaysTable = "relays"

// relayEvery is how often the serving Fetch looks for relayed requests,
// and the following one for answers to them.
const relayEvery = 500 * time.Millisecond

// openRelay records this engine as one that takes relayed requests and
// starts looking for them; the goroutine ends with the engine.
func (e *Engine) openRelay(ctx context.Context) error {
	r := e.cfg.Relay
	if r == nil || r.Channel == "" || r.UserID == "" {
		return nil
	}
	if _, err := e.db.ExecContext(ctx, "INSERT OR REPLACE INTO "+relaysTable+" (owner, channel, user_id, started_at) VALUES (?, ?, ?, ?)",
		e.owner, r.Channel, r.UserID, store.FormatTime(e.now())); err != nil {
		return fmt.Errorf("task: offer to relay requests: %w", err)
	}
	e.live(e.relayLoop)
	return nil
}

// closeRelay withdraws this engine's offer.
func (e *Engine) closeRelay(ctx context.Context) {
	if e.cfg.Relay == nil {
		return
	}
	if _, err := e.db.ExecContext(context.WithoutCancel(ctx), "DELETE FROM "+relaysTable+" WHERE owner = ?", e.owner); err != nil {
		e.log.Warn("withdraw the offer to relay requests", "err", err)
	}
}

// relayTarget is the conversation a request of terminal task t is relayed
// to: the owner's conversation, in a chat a live Fetch serves, that
// selected t's workspace, or else the one the owner wrote in last; "" when
// no live Fetch serves a chat the owner talks in.
func (e *Engine) relayTarget(ctx context.Context, t Task) string {
	rows, err := e.db.QueryContext(ctx, `SELECT r.owner, c.id FROM `+relaysTable+` r
		JOIN conversations c ON c.channel = r.channel AND c.user_id = r.user_id
		ORDER BY (c.workspace = ?) DESC, COALESCE((SELECT MAX(m.id) FROM messages m WHERE m.conversation_id = c.id), 0) DESC`, t.Workspace)
	if err != nil {
		e.log.Warn("look for a chat to relay a request to", "task", t.ID, "err", err)
		return ""
	}
	type cand struct{ owner, conv string }
	var cands []cand
	for rows.Next() {
		var c cand
		if err := rows.Scan(&c.owner, &c.conv); err != nil {
			e.log.Warn("look for a chat to relay a request to", "task", t.ID, "err", err)
			break
		}
		cands = append(cands, c)
	}
	rows.Close()
	dead := map[string]bool{}
	for _, c := range cands {
		if dead[c.owner] {
			continue
		}
		if ownerAlive(c.owner) {
			return c.conv
		}
		dead[c.owner] = true
	}
	for owner := range dead { // a Fetch that died without Close
		if _, err := e.db.ExecContext(ctx, "DELETE FROM "+relaysTable+" WHERE owner = ?", owner); err != nil {
			e.log.Warn("forget a dead Fetch's offer to relay requests", "err", err)
		}
	}
	return ""
}

// relayLoop shows the owner, in this engine's chat, the requests other
// processes relay to it, and their ends. What it showed is kept in memory:
// after a restart the requests still pending are shown again (their old
// messages' buttons still work).
func (e *Engine) relayLoop(ctx context.Context) {
	shown := map[int64]bool{}
	tick := time.NewTicker(relayEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			e.relayOnce(ctx, shown)
		}
	}
}

func (e *Engine) relayOnce(ctx context.Context, shown map[int64]bool) {
	rows, err := e.db.QueryContext(ctx, "SELECT "+requestColumns+" FROM "+requestsTable+" r JOIN "+tasksTable+" t ON t.id = r.task_id JOIN conversations c ON c.id = r.relay_to WHERE r.state = 'pending' AND c.channel = ? AND c.user_id = ? ORDER BY r.id",
		e.cfg.Relay.Channel, e.cfg.Relay.UserID)
	if err != nil {
		if ctx.Err() == nil {
			e.log.Warn("look for relayed requests", "err", err)
		}
		return
	}
	var pending []CLIRequest
	for rows.Next() {
		r, _, err := scanRequest(rows)
		if err != nil {
			e.log.Warn("read a relayed request", "err", err)
			continue
		}
		pending = append(pending, r)
	}
	rows.Close()
	still := map[int64]bool{}
	for _, r := range pending {
		still[r.ID] = true
		if shown[r.ID] {
			continue
		}
		t, err := e.Get(ctx, r.TaskID)
		if err != nil {
			e.log.Warn("read the task of a relayed request", "request", r.ID, "err", err)
			continue
		}
		shown[r.ID] = true
		e.notify(ctx, Update{Kind: Requested, Task: t, Request: &r})
	}
	for id := range shown {
		if still[id] {
			continue
		}
		delete(shown, id)
		r, _, err := e.request(ctx, e.db, id)
		if err != nil {
			e.log.Warn("read a relayed request that closed", "request", id, "err", err)
			continue
		}
		t, err := e.Get(ctx, r.TaskID)
		if err != nil {
			continue
		}
		e.notify(ctx, Update{Kind: RequestClosed, Task: t, Request: &r})
	}
}

// followedElsewhere tells whether task id runs in another live Fetch
// process, which then gives its CLI the answers recorded here.
func (e *Engine) followedElsewhere(ctx context.Context, id string) bool {
	t, err := e.Get(ctx, id)
	return err == nil && t.State == Running && t.Owner != "" && t.Owner != e.owner && ownerAlive(t.Owner)
}

// pollRelayed gives the CLI the answers that the serving Fetch recorded
// for this run's relayed requests.
func (s *steer) pollRelayed(ctx context.Context) {
	for id, o := range s.open {
		if !o.view.Relayed {
			continue
		}
		r, _, err := s.e.request(ctx, s.e.db, id)
		if err != nil {
			s.e.log.Warn("read a relayed request", "task", s.t.ID, "request", id, "err", err)
			continue
		}
		if r.State == RequestPending {
			continue
		}
		s.answeredElsewhere(ctx, id, o, r)
	}
}

// answeredElsewhere gives the CLI what another process recorded for its
// request id, which is no longer pending: the owner's answer, or a denial.
func (s *steer) answeredElsewhere(ctx context.Context, id int64, o openRequest, r CLIRequest) {
	if r.Reply != "" {
		s.answer(ctx, id, o, RequestAnswer{Reply: r.Reply, Text: r.Answer, By: r.By})
		return
	}
	s.drop(id)
	s.to(ctx)(s.tw.Deny(o.req, "This request was closed without an answer ("+string(r.State)+"), so it is denied."))
	s.publish(ctx, RequestClosed, r)
}
