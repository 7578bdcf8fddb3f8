package journey

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/internal/testkit"
)

// resultGrace is how long after a task's result showed up as an edit of
// its status message the journeys still wait for it as a message of its
// own: both are sent by the same code one after the other.
const resultGrace = 10 * time.Second

// awaitResult waits for a task's result (re) and requires it as a message
// of its own, created since m with that text, not only as an edit of the
// status message: an edit does not notify the owner on Discord. When it
// came only as an edit, the test fails and the journey goes on with it.
func (w *world) awaitResult(m mark, re *regexp.Regexp, what string) seen {
	w.t.Helper()
	got := w.await(m, re, what)
	if !got.Edit {
		return got
	}
	var sent seen
	if !w.wait(resultGrace, func() bool {
		var ok bool
		sent, ok = w.find(m, re, func(s seen) bool { return !s.Edit })
		return ok
	}) {
		w.t.Errorf("%s arrived only as an edit of an earlier message (first sent as %q), never as a message of its own (Discord notifies nobody of an edit)",
			what, firstVersion(got.Msg))
		return got
	}
	return sent
}

func firstVersion(m testkit.DiscordMessage) string {
	if len(m.Edits) > 0 {
		return m.Edits[0]
	}
	return m.Content
}

// startTask DMs a request for which the model calls task_create with goal
// on workspace ws, and returns the mark before the request and the task's
// status message once the task runs.
func (w *world) startTask(user, request, goal, ws string) (mark, seen) {
	w.t.Helper()
	w.llm.Script(taskCreate("call-"+ws, goal, ws), testkit.Say("Started it."))
	m := w.send(user, request)
	status := w.await(m, regexp.MustCompile(`Task \S+ on `+regexp.QuoteMeta(ws)+` \(\w+\) — running`), "the task's status message")
	w.await(m, regexp.MustCompile(`^Started it\.`), "the agent's answer")
	return m, status
}

// J1: a request becomes a task in the kennel; its status message shows
// progress; the result comes as a new message naming the changed file, and
// the task's branch holds it.
func TestJourneyRequestBecomesBranch(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "app")
	w.start()
	m, status := w.startTask(ownerID, "add a health endpoint to the app workspace",
		"add a health endpoint [scenario:slow:6] [file:health.go]", "app")
	id := taskID(t, status.Text)

	if ps, ok := w.waitProcesses(waitTimeout, func(ps []string) bool { return len(ps) > 0 }); !ok {
		t.Fatalf("the task runs, but no CLI process showed in the kennel (%q)", ps)
	}
	w.await(m, regexp.MustCompile(`(?s)Task `+id+` on app .*— running.*Steps: \d`), "progress in the status message")

	res := w.awaitResult(m, regexp.MustCompile(`✅ Task `+id+` succeeded on app`), "the task's result")
	if !strings.Contains(res.Text, "health.go") || !strings.Contains(res.Text, "fetch/"+id) {
		t.Errorf("result %q does not name the changed file health.go and the branch fetch/%s", res.Text, id)
	}
	// The status message was edited while the task ran, before the end.
	for _, msg := range w.messages(ownerID) {
		if msg.ID == status.Msg.ID && !strings.Contains(strings.Join(msg.Edits, "\n"), "Steps:") && !strings.Contains(msg.Content, "Steps:") {
			t.Errorf("the status message was never edited to show progress: versions %q then %q", msg.Edits, msg.Content)
		}
	}
	got, err := w.gitShow("app", "fetch/"+id, "health.go")
	if err != nil {
		t.Fatalf("branch fetch/%s: %v", id, err)
	}
	if !strings.Contains(got, "fake claude was here") {
		t.Fatalf("health.go on fetch/%s = %q", id, got)
	}
	if ps := w.cliProcesses(); len(ps) != 0 {
		t.Errorf("CLI processes left in the kennel after the task ended: %q", ps)
	}
}

// stopWithin waits for the reply to a stop sent at sent, since m: it must
// come within a second (within). The product promises that a stop is
// answered at once, whatever else runs; this is that functional promise,
// not a speed benchmark. When it is late the journey fails and goes on
// (see evidenceWait), to report whether it came at all and what else
// happened.
func (w *world) stopWithin(m mark, sent time.Time, re *regexp.Regexp) seen {
	w.t.Helper()
	limit := within(time.Second)
	var got seen
	found := func() bool {
		var ok bool
		got, ok = w.find(m, re, func(s seen) bool { return s.New })
		return ok
	}
	if w.wait(time.Until(sent.Add(limit)), found) {
		return got
	}
	w.t.Errorf("no reply to the stop within %s", limit)
	if w.wait(waitTimeout, found) {
		w.t.Errorf("the reply to the stop (%q) came %s after it", got.Text, got.Msg.CreatedAt.Sub(sent).Round(time.Millisecond))
		return got
	}
	w.t.Errorf("no reply to the stop at all (waited %s more)", evidenceWait)
	return seen{}
}

// J2: a stop during a task answers at once, ends the CLI in the kennel,
// and the conversation answers afterwards — typed, as a slash command, and
// as a plain word.
func TestJourneyStopMidTask(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, scenario string
		stop           func(w *world)
	}{
		{"typed", "hang", func(w *world) { w.d.DM(ownerID, "/stop") }},
		{"slash", "hang", func(w *world) { w.d.Slash(ownerID, "stop", nil) }},
		{"word", "ignore-int", func(w *world) { w.d.DM(ownerID, "stop") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, "app")
			w.start()
			_, status := w.startTask(ownerID, "add a health endpoint to the app workspace",
				fmt.Sprintf("add a health endpoint and run the long suite [scenario:%s]", tc.scenario), "app")
			id := taskID(t, status.Text)
			if ps, ok := w.waitProcesses(waitTimeout, func(ps []string) bool { return len(ps) > 0 }); !ok {
				t.Fatalf("the task runs, but no CLI process showed in the kennel (%q)", ps)
			}

			m := w.mark(ownerID)
			sent := time.Now()
			tc.stop(w)
			if reply := w.stopWithin(m, sent, regexp.MustCompile(`Stopping task `+id)); reply.Text != "" {
				t.Logf("stop answered after %s: %q", reply.Msg.CreatedAt.Sub(sent).Round(time.Millisecond), reply.Text)
			}

			if ps, ok := w.waitProcesses(waitTimeout, func(ps []string) bool { return len(ps) == 0 }); !ok {
				t.Errorf("CLI processes still in the kennel %s after the stop: %q", waitTimeout, ps)
			}
			cancelled := regexp.MustCompile(`Task ` + id + ` was cancelled`)
			if !w.wait(waitTimeout, func() bool { _, ok := w.find(m, cancelled, nil); return ok }) {
				t.Errorf("no word that task %s was cancelled", id)
			}
			if got := w.ask(ownerID, "/status", statusRe); !strings.Contains(got.Text, "Task: none running") {
				t.Errorf("/status after the stop = %q; want no task running", got.Text)
			}
		})
	}
}

// J3: the CLI asks a question; the owner's answer by DM resumes the task,
// which succeeds.
func TestJourneyQuestionAnswered(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "app")
	w.start()
	m, status := w.startTask(ownerID, "add a health endpoint to the app workspace",
		"add a health endpoint [scenario:question] [file:health.go]", "app")
	id := taskID(t, status.Text)
	q := w.awaitNew(m, regexp.MustCompile(`❓ Task `+id+` asks:\n(?s).*append to health.go or replace`), "the task's question")
	t.Logf("question: %q", q.Text)

	m = w.send(ownerID, "append, please")
	w.awaitNew(m, regexp.MustCompile(`Resuming task `+id), "the answer to be passed on")
	res := w.awaitResult(m, regexp.MustCompile(`✅ Task `+id+` succeeded on app`), "the resumed task's result")
	if !strings.Contains(res.Text, "health.go") {
		t.Errorf("result %q does not name health.go", res.Text)
	}
	got, err := w.gitShow("app", "fetch/"+id, "health.go")
	if err != nil {
		t.Fatalf("branch fetch/%s: %v", id, err)
	}
	if !strings.Contains(got, "answer: append, please") {
		t.Fatalf("health.go on fetch/%s = %q; want the answer in it", id, got)
	}
}

// approval waits for the approval message since m and returns it with
// the custom id of its button labelled button.
func (w *world) approval(m mark, body *regexp.Regexp, button string) (seen, string) {
	w.t.Helper()
	ask := w.awaitNew(m, body, "the approval message")
	for _, row := range ask.Msg.Components {
		for _, b := range row.Components {
			if b.Label == button {
				return ask, b.CustomID
			}
		}
	}
	w.t.Fatalf("approval message %q has no %s button: %+v", ask.Text, button, ask.Msg.Components)
	return ask, ""
}

var deleteApproval = regexp.MustCompile(`(?s)approval.*workspace_delete \{"name":"demo"\}`)

// deleteCall is the model's call of workspace_delete on demo.
func deleteCall() testkit.Step {
	return testkit.Use(testkit.Call{ID: "del", Name: "workspace_delete", Arguments: `{"name":"demo"}`})
}

// J4: deleting a workspace waits for the owner: Deny leaves it, Approve
// deletes it.
func TestJourneyApproveAndDenyDelete(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "demo")
	w.start()

	w.llm.Script(deleteCall())
	m := w.send(ownerID, "delete the demo workspace")
	ask, deny := w.approval(m, deleteApproval, "Deny")
	m = w.mark(ownerID)
	w.d.Click(ownerID, ask.Msg.ID, deny)
	w.awaitNew(m, regexp.MustCompile(`^Denied\. Nothing was done\.$`), "the denial's reply")
	if !w.exists("demo") {
		t.Fatal("Deny deleted the workspace")
	}

	w.llm.Script(deleteCall(), testkit.Say("demo is deleted."))
	m = w.send(ownerID, "delete the demo workspace")
	ask, approve := w.approval(m, deleteApproval, "Approve")
	m = w.mark(ownerID)
	w.d.Click(ownerID, ask.Msg.ID, approve)
	w.awaitNew(m, regexp.MustCompile(`^Approved\.`), "the approval's reply")
	w.awaitNew(m, regexp.MustCompile(`demo is deleted\.`), "the model's confirmation")
	if w.exists("demo") {
		t.Fatal("Approve did not delete the workspace")
	}
}

// J5: fetch is killed while a task runs; after the restart the owner hears
// (in a new message) that it is still running and then its result, or that
// it was interrupted by the restart.
func TestJourneyCrashMidTask(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "app")
	w.start()
	m, status := w.startTask(ownerID, "add a health endpoint to the app workspace",
		"add a health endpoint [scenario:slow:12] [file:health.go]", "app")
	id := taskID(t, status.Text)
	w.await(m, regexp.MustCompile(`(?s)Task `+id+` on app .*Steps: \d`), "progress in the status message")
	w.kill()

	m = w.mark(ownerID)
	w.start()
	news := regexp.MustCompile(`(?i)Task ` + id + `.*(restart|succeeded)`)
	first := w.await(m, news, "word of the task after the restart")
	t.Logf("after the restart (new message: %v): %q", !first.Edit, first.Text)
	switch {
	case strings.Contains(first.Text, "interrupted by restart"):
		w.awaitResult(m, regexp.MustCompile(`Task `+id+`(?s).*interrupted by restart`), "the interrupted task's result")
	case strings.Contains(first.Text, "succeeded"):
		t.Fatalf("after the restart the task went on and succeeded, but the owner never saw a notice that it was still running (neither a new message nor an edit); the result came as %q (new message: %v)", first.Text, !first.Edit)
	default:
		// The new message and the edit of the status message go out in
		// that order, but an edit may reach Discord first (edits are
		// coalesced apart): the new message must come, in any order.
		w.awaitNew(m, regexp.MustCompile(`Task `+id+` on app is still running after a restart`), "a new message saying the task still runs")
		res := w.awaitResult(m, regexp.MustCompile(`✅ Task `+id+` succeeded on app`), "the followed task's result")
		if !strings.Contains(res.Text, "health.go") {
			t.Errorf("result %q does not name health.go", res.Text)
		}
		if got, err := w.gitShow("app", "fetch/"+id, "health.go"); err != nil || !strings.Contains(got, "fake claude was here") {
			t.Errorf("health.go on fetch/%s = %q, %v", id, got, err)
		}
	}
}

// lateAfter is how late fetch's scheduler may fire a reminder and still
// call it on time (internal/schedule); a reminder further behind is marked
// late.
const lateAfter = time.Minute

// J6: a reminder due while fetch is down arrives once after the restart,
// marked late.
func TestJourneyReminderAcrossRestart(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.start()
	const due = 3 * time.Second
	set := w.ask(ownerID, "/remind in 3s water the plants", regexp.MustCompile(`water the plants`))
	setAt := time.Now()
	w.kill()
	if time.Since(setAt) >= due {
		t.Fatalf("fetch was killed only %s after the reminder was set; it may have been due", time.Since(setAt))
	}
	if ms := w.messages(ownerID); len(ms) != 1 {
		t.Fatalf("messages before the restart: %q; want the confirmation %q only", texts(ms), set.Text)
	}
	// Fetch stays down until the reminder is more than lateAfter overdue.
	time.Sleep(due + lateAfter + 2*time.Second)

	m := w.mark(ownerID)
	w.start()
	got := w.awaitNew(m, regexp.MustCompile(`⏰ Reminder.*water the plants`), "the reminder")
	if !strings.Contains(got.Text, "Fetch was not running") {
		t.Errorf("the reminder %q is not marked late", got.Text)
	}
	w.ask(ownerID, "/status", statusRe)
	w.stop()
	w.start()
	w.ask(ownerID, "/status", statusRe)
	var n int
	for _, msg := range w.messages(ownerID) {
		if strings.HasPrefix(msg.Content, "⏰ Reminder") {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("the reminder arrived %d times: %q", n, texts(w.messages(ownerID)))
	}
}

func texts(ms []testkit.DiscordMessage) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Content)
	}
	return out
}

// J7: the owner and the allowed friend each run a task at once; both
// finish and each hears only of their own.
func TestJourneyTwoConversations(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "app", "web")
	w.start()
	// The fake model answers in order, so the second request is sent once
	// the first took its answers; the tasks overlap (slow:8).
	mo, so := w.startTask(ownerID, "add a health endpoint to the app workspace",
		"add a health endpoint [scenario:slow:8] [file:health.go]", "app")
	mf, sf := w.startTask(friendID, "add a footer to the web workspace",
		"add a footer [scenario:slow:4] [file:footer.html]", "web")
	owner, friend := taskID(t, so.Text), taskID(t, sf.Text)

	ro := w.awaitResult(mo, regexp.MustCompile(`✅ Task `+owner+` succeeded on app`), "the owner's result")
	rf := w.awaitResult(mf, regexp.MustCompile(`✅ Task `+friend+` succeeded on web`), "the friend's result")
	if !strings.Contains(ro.Text, "health.go") || !strings.Contains(rf.Text, "footer.html") {
		t.Errorf("results %q and %q do not name their files", ro.Text, rf.Text)
	}
	for _, c := range []struct{ user, other, otherWS, otherFile string }{
		{ownerID, friend, "web", "footer.html"},
		{friendID, owner, "app", "health.go"},
	} {
		for _, msg := range w.messages(c.user) {
			for _, text := range append(msg.Edits, msg.Content) {
				if strings.Contains(text, c.other) || strings.Contains(text, " on "+c.otherWS) || strings.Contains(text, c.otherFile) {
					t.Errorf("%s was told of the other conversation's task: %q", c.user, text)
				}
			}
		}
	}
	if _, err := w.gitShow("app", "fetch/"+owner, "health.go"); err != nil {
		t.Error(err)
	}
	if _, err := w.gitShow("web", "fetch/"+friend, "footer.html"); err != nil {
		t.Error(err)
	}
}

// J8: a stop while the model has not answered yet answers at once, and the
// conversation answers afterwards.
func TestJourneyStopWhileTheModelThinks(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "app")
	w.start()
	w.llm.Script(testkit.Step{Delay: 10 * time.Minute, Text: "too late"})
	w.send(ownerID, "add a health endpoint to the app workspace")
	// The model's request is on its way (the fake has no change channel;
	// the gateway's heartbeats re-check this every two seconds).
	w.must("the request to reach the model", func() bool { return len(w.llm.Requests()) > 0 })

	m := w.mark(ownerID)
	sent := time.Now()
	w.d.DM(ownerID, "/stop")
	if reply := w.stopWithin(m, sent, regexp.MustCompile(`^Stopped\.$`)); reply.Text != "" {
		t.Logf("stop answered after %s", reply.Msg.CreatedAt.Sub(sent).Round(time.Millisecond))
	}
	w.ask(ownerID, "/status", statusRe)
	if got := w.since(m); len(got) != 2 {
		var all []string
		for _, s := range got {
			all = append(all, s.Text)
		}
		t.Errorf("after the stop: %q; want its reply and the /status reply only (the stopped turn says nothing)", all)
	}
}

// J9: an approval is open when fetch is killed; after the restart the
// owner is told once that it expired, and a later "yes" approves nothing.
func TestJourneyApprovalExpiresAtRestart(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "demo")
	w.start()
	w.llm.Script(deleteCall())
	m := w.send(ownerID, "delete the demo workspace")
	w.approval(m, deleteApproval, "Approve")
	w.kill()

	// Should fetch take the "yes" as a new request, or (wrongly) as the
	// approval and then ask the model for its confirmation, the model
	// answers this.
	w.llm.Script(testkit.Say("There is nothing to approve."))
	m = w.mark(ownerID)
	w.start()
	expired := regexp.MustCompile(`(?i)expired|no longer|restart`)
	var notice seen
	if !w.wait(waitTimeout, func() bool { var ok bool; notice, ok = w.find(m, expired, nil); return ok }) {
		t.Errorf("no notice within %s of the restart that the approval expired", waitTimeout)
	} else {
		t.Logf("notice: %q", notice.Text)
	}

	m2 := w.send(ownerID, "yes")
	w.awaitNew(m2, regexp.MustCompile(`.`), "the reply to the late yes")
	w.ask(ownerID, "/status", statusRe)
	if !w.exists("demo") {
		t.Fatal("the yes after the restart deleted the workspace")
	}
	for _, s := range w.since(m2) {
		if strings.HasPrefix(s.Text, "Approved") || strings.Contains(s.Text, "Deleted workspace") {
			t.Errorf("the yes after the restart approved: %q", s.Text)
		}
	}
	w.stop()
	w.start()
	w.ask(ownerID, "/status", statusRe)
	var n int
	for _, s := range w.since(m) {
		if expired.MatchString(s.Text) && s.New {
			n++
		}
	}
	if n != 1 {
		t.Errorf("told %d times that the approval expired; want once", n)
	}
}
