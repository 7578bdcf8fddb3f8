package progress_test

import (
	"strings"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/harness"
	"github.com/fetch-dev/fetch/internal/progress"
	"github.com/fetch-dev/fetch/internal/task"
)

func TestTrackerCoalescesStepsAndEndsWithANewMessage(t *testing.T) {
	tr := progress.NewTracker(3*time.Second, nil)
	tk := task.Task{ID: "t1", Workspace: "api", Harness: "claude", Goal: "add a health endpoint", State: task.Running}
	start := tr.Started(tk, "")
	if start.Key != progress.Key("t1") || len(start.Actions) != 1 || start.Actions[0].Send != progress.StopCommand {
		t.Fatalf("status message = %+v", start)
	}
	now := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	steps := []harness.Event{
		{Kind: harness.KindCommand, Command: "go test ./..."},
		{Kind: harness.KindText, Text: "tests pass"},
		{Kind: harness.KindUsage},
	}
	r, ok := tr.Step(tk, steps[0], now)
	if !ok || !strings.Contains(r.Text, "$ go test ./...") {
		t.Fatalf("first step: %v %q", ok, r.Text)
	}
	if _, ok := tr.Step(tk, steps[1], now.Add(time.Second)); ok {
		t.Fatal("a step within the interval edited the message")
	}
	if _, ok := tr.Step(tk, steps[2], now.Add(5*time.Second)); ok {
		t.Fatal("a usage event edited the message")
	}
	r, ok = tr.Step(tk, harness.Event{Kind: harness.KindText, Text: "done"}, now.Add(5*time.Second))
	if !ok || !strings.Contains(r.Text, "Steps: 3") || !strings.Contains(r.Text, "tests pass") {
		t.Fatalf("coalesced edit: %v %q", ok, r.Text)
	}

	tk.State = task.Succeeded
	end := tr.Ended(tk)
	if len(end) != 2 || end[0].Key != progress.Key("t1") || !strings.Contains(end[0].Text, "succeeded") || end[0].Actions != nil {
		t.Fatalf("final status = %+v", end)
	}
	if end[1].Key != "" || !strings.HasPrefix(end[1].Text, "✅ Task t1 succeeded on api") {
		t.Fatalf("result = %+v; want a new message", end[1])
	}
}

func TestEndedCarriesTheTaskPageLink(t *testing.T) {
	tk := task.Task{ID: "t3", Workspace: "api", State: task.Succeeded}
	if end := progress.NewTracker(0, nil).Ended(tk); len(end[1].Actions) != 0 {
		t.Errorf("without a task page the result has buttons: %+v", end[1].Actions)
	}
	tr := progress.NewTracker(0, nil).Linking(func(id string) string { return "https://page.example/t/" + id + "?sig=x" })
	if st := tr.Started(tk, ""); len(st.Actions) != 2 || st.Actions[0].Send != progress.StopCommand || st.Actions[1].Label != progress.PageLabel {
		t.Errorf("status message actions = %+v; want Stop and the task page's link", st.Actions)
	}
	end := tr.Ended(tk)
	if len(end[1].Actions) != 1 || end[1].Actions[0].Label != progress.PageLabel || end[1].Actions[0].URL != "https://page.example/t/t3?sig=x" {
		t.Errorf("result actions = %+v; want the task page's link", end[1].Actions)
	}
	if end[0].Actions != nil {
		t.Errorf("the final status message got buttons: %+v", end[0].Actions)
	}
}

func TestReattachedIsANewMessage(t *testing.T) {
	tr := progress.NewTracker(0, nil)
	rs := tr.Reattached(task.Task{ID: "t2", Workspace: "web"})
	if len(rs) != 2 || rs[0].Key != "" || !strings.Contains(rs[0].Text, "still running after a restart") || rs[1].Key != progress.Key("t2") {
		t.Fatalf("replies = %+v", rs)
	}
}

func TestQuestionPromptNamesItsTask(t *testing.T) {
	p := progress.QuestionPrompt(task.Task{ID: "t3", ConversationID: "c", Question: "Which port?"})
	if progress.PromptTask(p) != "t3" || p.Body != "Which port?" {
		t.Fatalf("prompt = %+v", p)
	}
	if q := progress.Question(task.Task{ID: "t3", Question: "Which port?"}, true); !strings.Contains(q.Text, "fetch task answer t3") {
		t.Fatalf("queued question = %q", q.Text)
	}
}

// TestStartedNearALimit: a task whose CLI reported its subscription near
// a limit says so in its first message, and keeps saying it in the edits
// while it runs.
func TestStartedNearALimit(t *testing.T) {
	tr := progress.NewTracker(time.Millisecond, nil)
	tk := task.Task{ID: "t1", Workspace: "api", Harness: "claude", Goal: "add a health endpoint", State: task.Running}
	const note = "claude's subscription is near its limit (five_hour 93% used, resets Nov 28 15:00 UTC): the run may be refused or slowed before it ends."
	if st := tr.Started(tk, note); !strings.Contains(st.Text, "⚠️ "+note) {
		t.Errorf("first message %q does not say the CLI is near its limit", st.Text)
	}
	r, ok := tr.Step(tk, harness.Event{Kind: harness.KindCommand, Command: "go test ./..."}, time.Now())
	if !ok || !strings.Contains(r.Text, note) {
		t.Errorf("edit %q (%v) dropped the note", r.Text, ok)
	}
	if st := tr.Started(task.Task{ID: "t2", Workspace: "api", Harness: "claude", Goal: "x"}, ""); strings.Contains(st.Text, "near its limit") {
		t.Errorf("a task not near a limit says it is: %q", st.Text)
	}
}
