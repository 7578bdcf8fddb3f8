package taskpage

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/fetch-dev/fetch/harness"
	"github.com/fetch-dev/fetch/internal/redact"
	"github.com/fetch-dev/fetch/internal/task"
)

// The regexp2 clock (chroma's lexers use regexp2 with timeouts) is the
// library's own, and stops by itself a while after the last match.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("github.com/dlclark/regexp2/v2.runClock"))
}

// tasks is an in-memory Tasks: the page's own interface, filled by the
// test (the journey drives the real engine).
type tasks struct {
	mu  sync.Mutex
	ts  map[string]task.Task
	log map[string][]task.LogEntry
	seq int64
}

func newTasks() *tasks {
	return &tasks{ts: map[string]task.Task{}, log: map[string][]task.LogEntry{}}
}

func (f *tasks) put(t task.Task) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ts[t.ID] = t
}

func (f *tasks) add(id, kind string, data any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, _ := json.Marshal(data)
	f.seq++
	f.log[id] = append(f.log[id], task.LogEntry{Seq: f.seq, At: time.Unix(1_700_000_000+f.seq, 0), Kind: kind, Data: b})
}

func (f *tasks) Get(_ context.Context, id string) (task.Task, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.ts[id]
	if !ok {
		return task.Task{}, task.ErrNotFound
	}
	return t, nil
}

func (f *tasks) List(context.Context, task.Filter) ([]task.Task, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []task.Task
	for _, t := range f.ts {
		out = append(out, t)
	}
	return out, nil
}

func (f *tasks) LogAfter(ctx context.Context, id string, seq int64, fn func(task.LogEntry) error) error {
	f.mu.Lock()
	entries := append([]task.LogEntry(nil), f.log[id]...)
	f.mu.Unlock()
	for _, le := range entries {
		if le.Seq > seq {
			if err := fn(le); err != nil {
				return err
			}
		}
	}
	return ctx.Err()
}

// planted is a configured secret that the tasks' text holds.
const planted = "sk-ant-api03-PLANTEDplanted0123456789abcdefABCDEF-PLANTEDxx"

const patch = `diff --git a/main.go b/main.go
index 1111111..2222222 100644
--- a/main.go
+++ b/main.go
@@ -1,3 +1,4 @@
 package main
-func old() {}
+// key: ` + planted + `
+func health() string { return "ok" }
`

type fixture struct {
	srv   *Server
	http  *httptest.Server
	links *Links
	tasks *tasks
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	red, err := redact.New(planted)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{tasks: newTasks()}
	f.links, err = NewLinks(testKey, "http://127.0.0.1:1", time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.srv, err = New(Config{Tasks: f.tasks, Links: f.links, Redactor: red, Poll: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	f.http = httptest.NewServer(f.srv.Handler())
	t.Cleanup(func() {
		http.DefaultClient.CloseIdleConnections()
		f.http.Close()
	})
	start := time.Unix(1_700_000_000, 0)
	f.tasks.put(task.Task{ID: "ab12cd34", Workspace: "app", Harness: "claude", State: task.Succeeded, Mode: task.Work,
		Goal: "add health using " + planted, Branch: "fetch/ab12cd34", Summary: "Added health().", Patch: patch, CostUSD: 0.42,
		CreatedAt: start, StartedAt: start, EndedAt: start.Add(90 * time.Second)})
	f.tasks.add("ab12cd34", "state", stateData{To: task.Running})
	f.tasks.add("ab12cd34", string(harness.KindText), harness.Event{Kind: harness.KindText, Text: "I found " + planted + " in .env"})
	f.tasks.add("ab12cd34", string(harness.KindQuestion), harness.Event{Kind: harness.KindQuestion, Text: "Append or replace?"})
	f.tasks.add("ab12cd34", "state", stateData{From: task.Running, To: task.WaitingInput})
	f.tasks.add("ab12cd34", "state", stateData{From: task.WaitingInput, To: task.Running, Reason: "answered"})
	f.tasks.add("ab12cd34", task.KindReattached, struct{}{})
	f.tasks.add("ab12cd34", string(harness.KindResult), harness.Event{Kind: harness.KindResult, Success: true, Text: "Added health()."})
	f.tasks.add("ab12cd34", "state", stateData{From: task.Running, To: task.Succeeded})
	return f
}

// get fetches path+query from the page and returns the status and body.
func (f *fixture) get(t *testing.T, link string) (int, string) {
	t.Helper()
	if strings.HasPrefix(link, "http://127.0.0.1:1") {
		link = f.http.URL + strings.TrimPrefix(link, "http://127.0.0.1:1")
	}
	resp, err := http.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestPageNeedsAValidLink(t *testing.T) {
	f := newFixture(t)
	taskLink := f.links.Task("ab12cd34")
	for _, tc := range []struct{ name, link string }{
		{"root", f.http.URL + "/"},
		{"list without link", f.http.URL + "/tasks"},
		{"task without link", f.http.URL + "/t/ab12cd34"},
		{"stream without link", f.http.URL + "/t/ab12cd34/events"},
		{"task link on the list", strings.Replace(taskLink, "/t/ab12cd34", "/tasks", 1)},
		{"task link on another task", strings.Replace(taskLink, "ab12cd34", "ab12cd35", 1)},
		{"bad signature", strings.Replace(taskLink, "sig=", "sig=A", 1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := f.get(t, tc.link)
			if code != http.StatusUnauthorized || strings.Contains(body, "ab12cd34") {
				t.Errorf("GET %s = %d %q; want 401 telling nothing of the task", tc.link, code, body)
			}
		})
	}
}

func TestPageShowsListAndTaskRedacted(t *testing.T) {
	f := newFixture(t)
	code, list := f.get(t, f.links.List())
	if code != http.StatusOK || !strings.Contains(list, `href="t/ab12cd34?exp=`) || !strings.Contains(list, "$0.42") || !strings.Contains(list, "1m30s") {
		t.Fatalf("list = %d:\n%s", code, list)
	}
	code, page := f.get(t, f.links.Task("ab12cd34"))
	if code != http.StatusOK {
		t.Fatalf("task page = %d:\n%s", code, page)
	}
	for _, want := range []string{"Waiting for an answer", "Answered; running again", "Followed again after a restart of Fetch",
		"Result: success", "Append or replace?", `<span class="diffline add">`, `class="kd"`, "$0.42", "[REDACTED]"} {
		if !strings.Contains(page, want) {
			t.Errorf("task page lacks %q", want)
		}
	}
	for name, body := range map[string]string{"list": list, "task": page} {
		if strings.Contains(body, planted) || strings.Contains(body, "PLANTED") {
			t.Errorf("the %s page shows the planted secret", name)
		}
	}
	if strings.Contains(page, "all tasks") {
		t.Errorf("a task link leads to the list")
	}
	// Through the list link, the task page leads back to the list.
	if _, page := f.get(t, strings.Replace(f.links.List(), "/tasks", "/t/ab12cd34", 1)); !strings.Contains(page, "all tasks") {
		t.Errorf("the list link's task page has no way back")
	}
}

// events reads a stream's events (name and data) onto a channel until it
// ends.
func events(t *testing.T, link string) (<-chan [2]string, *http.Response) {
	t.Helper()
	resp, err := http.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	ch := make(chan [2]string, 64)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(resp.Body)
		var name, data string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if name != "" {
					ch <- [2]string{name, data}
				}
				name, data = "", ""
			case strings.HasPrefix(line, "event: "):
				name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				data += strings.TrimPrefix(line, "data: ")
			}
		}
	}()
	return ch, resp
}

func next(t *testing.T, ch <-chan [2]string, name string) string {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				t.Fatalf("the stream ended before a %q event", name)
			}
			if ev[0] == name {
				return ev[1]
			}
		case <-timeout:
			t.Fatalf("no %q event", name)
		}
	}
}

func TestStreamFollowsARunningTask(t *testing.T) {
	f := newFixture(t)
	f.tasks.put(task.Task{ID: "ee00ff11", Workspace: "app", Harness: "codex", State: task.Running, CreatedAt: time.Now(), StartedAt: time.Now()})
	f.tasks.add("ee00ff11", "state", stateData{To: task.Running})
	code, page := f.get(t, f.links.Task("ee00ff11"))
	if code != http.StatusOK || !strings.Contains(page, `data-events="ee00ff11/events?after=`) || !strings.Contains(page, "No diff yet.") {
		t.Fatalf("running task page = %d:\n%s", code, page)
	}
	link := strings.Replace(f.links.Task("ee00ff11"), "/t/ee00ff11?", "/t/ee00ff11/events?after=0&", 1)
	ch, resp := events(t, f.http.URL+strings.TrimPrefix(link, "http://127.0.0.1:1"))
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("stream content type %q", ct)
	}
	if got := next(t, ch, "item"); !strings.Contains(got, "Started") {
		t.Errorf("first item %q", got)
	}
	if got := next(t, ch, "task"); !strings.Contains(got, `"state":"running"`) {
		t.Errorf("task event %q", got)
	}
	f.tasks.add("ee00ff11", string(harness.KindCommand), harness.Event{Kind: harness.KindCommand, Command: "go test ./... # " + planted})
	got := next(t, ch, "item")
	if !strings.Contains(got, "go test ./...") || strings.Contains(got, planted) {
		t.Errorf("new step %q: want the command, redacted", got)
	}
	end := f.tasks.ts["ee00ff11"]
	end.State = task.Failed
	f.tasks.put(end)
	next(t, ch, "end")
	if _, ok := <-ch; ok {
		t.Errorf("the stream goes on after the end")
	}
}

func TestCloseEndsStreams(t *testing.T) {
	f := newFixture(t)
	ln, err := Listen(t.Context(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.srv.Open(t.Context(), ln); err != nil {
		t.Fatal(err)
	}
	f.tasks.put(task.Task{ID: "ee00ff11", State: task.Running})
	link := strings.Replace(f.links.Task("ee00ff11"), "/t/ee00ff11?", "/t/ee00ff11/events?", 1)
	ch, _ := events(t, "http://"+f.srv.Addr()+strings.TrimPrefix(link, "http://127.0.0.1:1"))
	next(t, ch, "task")
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := f.srv.Close(ctx); err != nil {
		t.Fatalf("close with a stream open: %v", err)
	}
	for range ch {
	}
	if err := f.srv.Close(ctx); err != nil {
		t.Errorf("second close: %v", err)
	}
}
