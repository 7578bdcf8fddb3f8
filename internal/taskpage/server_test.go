package taskpage

import (
	"bufio"
	"context"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/fetch-dev/fetch/harness"
	"github.com/fetch-dev/fetch/internal/progress"
	"github.com/fetch-dev/fetch/internal/redact"
	"github.com/fetch-dev/fetch/internal/task"
	"github.com/fetch-dev/fetch/internal/workspace"
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
	// out are the tasks' out files (outfiles_test.go).
	out map[string][]task.OutFile
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

// failedWorktree is the failed task's worktree on the host: the page
// never shows it.
const failedWorktree = "/srv/fetch/workspaces/app/.fetch/worktrees/fa11ed00"

// failSentence is why the failed task failed.
const failSentence = "the coding CLI exited with status 2 and reported no result"

// failedTask puts a failed task whose run read and changed files by
// absolute paths, ran a failing command, spent in steps and whose price
// was estimated, and returns its ID.
func (f *fixture) failedTask() string {
	const id = "fa11ed00"
	start := time.Unix(1_700_000_000, 0)
	f.tasks.put(task.Task{ID: id, Workspace: "app", Harness: "claude", State: task.Failed, Mode: task.Work,
		Goal: "fix the flaky test", Branch: "fetch/" + id, Worktree: failedWorktree, BaseBranch: "main", Base: "0123456789abcdef0123",
		Error: failSentence, ExitCode: 2, Runs: 1, StderrTail: "panic: boom\ngoroutine 1 [running]:",
		Commits: []workspace.Commit{{Hash: "feedfacecafebeef0000", Subject: "test: retry the flaky one"}},
		Patch:   "diff --git a/x_test.go b/x_test.go\nindex 1..2 100644\n--- a/x_test.go\n+++ b/x_test.go\n@@ -3,2 +3,2 @@ func X()\n ctx\n-old\n+new\n",
		CostUSD: 0.0012, CLICostUSD: 0.0012,
		CreatedAt: start, StartedAt: start, EndedAt: start.Add(2 * time.Minute)})
	exit1 := 1
	f.tasks.add(id, "state", stateData{To: task.Queued, Reason: "created"})
	f.tasks.add(id, "state", stateData{From: task.Queued, To: task.Running, Reason: "created"})
	f.tasks.add(id, string(harness.KindToolUse), harness.Event{Kind: harness.KindToolUse, Tool: "Read", ToolID: "r1",
		Input: json.RawMessage(`{"file_path":"` + failedWorktree + `/x_test.go","limit":20}`)})
	f.tasks.add(id, string(harness.KindSpend), harness.Event{Kind: harness.KindSpend, Usage: &harness.Usage{InputTokens: 10, CostUSD: 0.0005}})
	f.tasks.add(id, string(harness.KindCommand), harness.Event{Kind: harness.KindCommand, Tool: "Bash", ToolID: "c1", Command: "go test ./..."})
	f.tasks.add(id, string(harness.KindCommand), harness.Event{Kind: harness.KindCommand, Tool: "Bash", ToolID: "c1", ExitCode: &exit1, Text: "--- FAIL: TestX\nFAIL"})
	f.tasks.add(id, string(harness.KindFileChanged), harness.Event{Kind: harness.KindFileChanged, Path: failedWorktree + "/x_test.go", Change: harness.ChangeModified})
	f.tasks.add(id, string(harness.KindUsage), harness.Event{Kind: harness.KindUsage, Usage: &harness.Usage{InputTokens: 100, OutputTokens: 20, CostUSD: 0.0012, CostEstimated: true}})
	f.tasks.add(id, string(harness.KindResult), harness.Event{Kind: harness.KindResult, Text: failSentence})
	f.tasks.add(id, "state", stateData{From: task.Running, To: task.Failed, Reason: failSentence})
	return id
}

// pageText is the page's HTML without tags.
func pageText(html string) string {
	return regexp.MustCompile(`<[^>]*>`).ReplaceAllString(html, "")
}

// TestFailedTaskPage: a failed task's page says why once, shows the CLI's
// exit code and last output, the commit, base branch and how to take the
// work; its timeline has no spend entries and no "created", shows a
// command with its exit code, the command and its output open, and file
// and tool entries with paths relative to the worktree, never the host's.
func TestFailedTaskPage(t *testing.T) {
	f := newFixture(t)
	f.srv.cfg.Repos = "/srv/fetch/data/repos"
	id := f.failedTask()
	code, page := f.get(t, f.links.Task(id))
	if code != http.StatusOK {
		t.Fatalf("page = %d:\n%s", code, page)
	}
	text := pageText(page)
	if n := strings.Count(text, failSentence); n != 1 {
		t.Errorf("the failure sentence appears %d times; want once", n)
	}
	for _, want := range []string{
		`<title>failed · fix the flaky test · task fa11ed00 · Fetch</title>`,
		`<dt>Exit code</dt><dd id="exit">2</dd>`,
		`<pre id="output" class="output">panic: boom`,
		`<code>feedfacecafe</code> test: retry the flaky one`,
		`from main at <code>0123456789ab</code>`,
		`git fetch /srv/fetch/data/repos/app.git fetch/fa11ed00`,
		`Command (exit 1, 1s)`, `<pre class="text">go test ./...</pre>`,
		`<details open><summary>output</summary><pre class="detail">--- FAIL: TestX`,
		`Edited x_test.go`, `Tool Read: x_test.go`, "file_path: x_test.go\nlimit: 20",
		`$0.0012 (estimated by Fetch from the tokens)`,
		`<span class="muted">+1 −1</span>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	for _, bad := range []string{failedWorktree, `class="item spend`, "created</pre>", "Command running", `"file_path"`, "diff --git", "+++ b/"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page shows %q", bad)
		}
	}
	if strings.Count(page, `class="item command`) != 1 {
		t.Log(page[strings.Index(page, `<ol id="timeline"`):])
		t.Errorf("the command's start and end are not one entry")
	}
}

// TestCost: the page says a task's cost as `fetch task show` does
// (progress.Cost), tells tokens of an unpriced model from nothing
// reported, and while a task runs shows what it cost so far from its
// spend reports, also over the live stream.
func TestCost(t *testing.T) {
	f := newFixture(t)
	start := time.Unix(1_700_000_000, 0)
	for _, tc := range []struct {
		t    task.Task
		want string
	}{
		{task.Task{CostUSD: 0.001, CLICostUSD: 0.001}, "$0.0010"},
		{task.Task{CostUSD: 0.001, CLICostUSD: 0.001, CostUnknown: true}, "$0.0010 plus tokens of a model whose price Fetch does not know"},
		{task.Task{CostUnknown: true}, "unknown: the coding CLI reported tokens of a model whose price Fetch does not know"},
		{task.Task{}, "none reported"},
	} {
		tk := tc.t
		tk.ID, tk.State, tk.Workspace, tk.CreatedAt, tk.StartedAt, tk.EndedAt = "c0570000", task.Succeeded, "app", start, start, start.Add(time.Second)
		f.tasks.put(tk)
		_, page := f.get(t, f.links.Task(tk.ID))
		if !strings.Contains(page, `<dd id="cost">`+tc.want+`</dd>`) {
			t.Errorf("cost of %+v: the page lacks %q", tc.t, tc.want)
		}
		if want := progress.Cost(tk); want != "" && want != tc.want {
			t.Errorf("fetch task show says %q, the page %q", want, tc.want)
		}
	}

	// Running: an earlier run's $0.01, then this run's spend reports.
	f.tasks.put(task.Task{ID: "5e4d0000", State: task.Running, Workspace: "app", CostUSD: 0.01, CLICostUSD: 0.01, CreatedAt: time.Now(), StartedAt: time.Now()})
	f.tasks.add("5e4d0000", "state", stateData{From: task.WaitingInput, To: task.Running})
	f.tasks.add("5e4d0000", string(harness.KindSpend), harness.Event{Kind: harness.KindSpend, Usage: &harness.Usage{CostUSD: 0.002}})
	f.tasks.add("5e4d0000", string(harness.KindSpend), harness.Event{Kind: harness.KindSpend, Usage: &harness.Usage{CostUSD: 0.003}})
	_, page := f.get(t, f.links.Task("5e4d0000"))
	if !strings.Contains(page, `<dd id="cost">$0.0130 so far</dd>`) {
		t.Errorf("running task's cost: %s", regexp.MustCompile(`<dd id="cost">[^<]*`).FindString(page))
	}
	link := strings.Replace(f.links.Task("5e4d0000"), "/t/5e4d0000?", "/t/5e4d0000/events?after=0&", 1)
	ch, _ := events(t, f.http.URL+strings.TrimPrefix(link, "http://127.0.0.1:1"))
	if got := next(t, ch, "task"); !strings.Contains(got, `"cost":"$0.0130 so far"`) {
		t.Errorf("stream's cost %s", got)
	}
	f.tasks.add("5e4d0000", string(harness.KindSpend), harness.Event{Kind: harness.KindSpend, Usage: &harness.Usage{CostUSD: 0.005}})
	if got := next(t, ch, "task"); !strings.Contains(got, `"cost":"$0.0150 so far"`) {
		t.Errorf("stream's cost after a spend report %s", got)
	}

	// A run of a model without a price of its own, priced as its
	// provider's dearest: the cost and the usage entry say it is an
	// estimate, and as which model.
	f.tasks.put(task.Task{ID: "e5700000", State: task.Failed, Workspace: "app", CostUSD: 0.0625, CLICostUSD: 0.0625, CreatedAt: start, StartedAt: start, EndedAt: start.Add(time.Second)})
	f.tasks.add("e5700000", "state", stateData{To: task.Running})
	f.tasks.add("e5700000", string(harness.KindSpend), harness.Event{Kind: harness.KindSpend, Usage: &harness.Usage{InputTokens: 10000, OutputTokens: 500, CostUSD: 0.0625, CostEstimated: true, PricedAs: "claude-opus-4-8"}})
	f.tasks.add("e5700000", string(harness.KindUsage), harness.Event{Kind: harness.KindUsage, Usage: &harness.Usage{InputTokens: 10000, OutputTokens: 500, CostUSD: 0.0625, CostEstimated: true, PricedAs: "claude-opus-4-8"}})
	_, page = f.get(t, f.links.Task("e5700000"))
	est := html.EscapeString(harness.EstimatedAs("claude-opus-4-8"))
	if !strings.Contains(page, `<dd id="cost">$0.0625 `+est+`</dd>`) {
		t.Errorf("estimated task's cost: %s", regexp.MustCompile(`<dd id="cost">[^<]*`).FindString(page))
	}
	if !strings.Contains(page, "10000 tokens in, 500 out, $0.0625 "+est) {
		t.Errorf("the usage entry does not say the cost is estimated as claude-opus-4-8")
	}
}

// TestTimes: times are in the configured zone, a timeline stamp of
// another day shows its date, and a run under a second its tenths.
func TestTimes(t *testing.T) {
	f := newFixture(t)
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	f.srv.cfg.Location, f.srv.clock.loc = berlin, berlin
	start := time.Date(2026, 3, 1, 22, 30, 0, 0, time.UTC)
	f.srv.clock.now = func() time.Time { return start.Add(30 * time.Hour) }
	f.tasks.put(task.Task{ID: "71e50000", State: task.Succeeded, Workspace: "app", CreatedAt: start, StartedAt: start, EndedAt: start.Add(400 * time.Millisecond)})
	f.tasks.add("71e50000", "state", stateData{To: task.Running})
	f.tasks.log["71e50000"][0].At = start
	_, page := f.get(t, f.links.Task("71e50000"))
	for _, want := range []string{
		`<time datetime="2026-03-01T22:30:00Z">2026-03-01 23:30:00 CET</time>`,
		`<time class="at" datetime="2026-03-01T22:30:00Z">Mar 1 23:30:00</time>`,
		`<dd id="duration">0.4s</dd>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if c := (clock{now: func() time.Time { return start }, loc: berlin}); c.stamp(start.Add(time.Minute)) != "23:31:00" {
		t.Errorf("today's stamp %q; want the clock alone", c.stamp(start.Add(time.Minute)))
	}
}

// TestStaticFiles: /static/ lists nothing and serves no template; the
// favicon is served.
func TestStaticFiles(t *testing.T) {
	f := newFixture(t)
	for path, want := range map[string]int{
		"/static/": 404, "/static/list.html": 404, "/static/task.html": 404, "/static/../server.go": 404,
		"/static/page.css": 200, "/static/code.css": 200, "/static/live.js": 200, "/favicon.ico": 200, "/static/favicon.svg": 200,
	} {
		resp, err := http.Get(f.http.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s = %d; want %d", path, resp.StatusCode, want)
		}
		if path == "/favicon.ico" && resp.Header.Get("Content-Type") != "image/svg+xml" {
			t.Errorf("favicon's type %q", resp.Header.Get("Content-Type"))
		}
	}
}

// TestCodeColoursContrast: every text colour of the code stylesheet keeps
// 4.5:1 on every background code is shown on, and the stylesheet sets no
// background of the page's code.
func TestCodeColoursContrast(t *testing.T) {
	css, err := codeCSS()
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(css), "\n") {
		if strings.Contains(line, "background-color") && (strings.Contains(line, "PreWrapper") || strings.Contains(line, "/* Background */")) {
			t.Errorf("the code stylesheet sets the code's background: %s", line)
		}
		if strings.Contains(line, "background-color") || strings.Contains(line, "TextWhitespace") {
			continue
		}
		for _, m := range cssColor.FindAllStringSubmatch(line, -1) {
			r, g, b := parseHex(m[2])
			for _, bg := range codeBackgrounds {
				br, bgg, bb := parseHex(strings.TrimPrefix(bg, "#"))
				if c := contrast(r, g, b, br, bgg, bb); c < minContrast {
					t.Errorf("#%s on %s: contrast %.2f:1 (%s)", m[2], bg, c, line)
				}
			}
		}
	}
	// chroma's own grey (#6a737d) fails on the lines' colours.
	r, g, b := parseHex("6a737d")
	worst := 21.0
	for _, bg := range codeBackgrounds {
		br, bgg, bb := parseHex(strings.TrimPrefix(bg, "#"))
		worst = min(worst, contrast(r, g, b, br, bgg, bb))
	}
	if worst >= minContrast {
		t.Fatalf("the contrast check passes chroma's own grey (%.2f:1)", worst)
	}
}

// TestNoCountsWithoutLines: a diff heading shows no "+0 −0".
func TestNoCountsWithoutLines(t *testing.T) {
	f := newFixture(t)
	f.tasks.put(task.Task{ID: "b1a40000", State: task.Succeeded, Workspace: "app",
		Patch: "diff --git a/logo.png b/logo.png\nnew file mode 100644\nindex 0000000..1111111\nBinary files /dev/null and b/logo.png differ\n"})
	_, page := f.get(t, f.links.Task("b1a40000"))
	if strings.Contains(page, "+0 −0</span></h2>") {
		t.Errorf("the diff's heading says +0 −0")
	}
	if !strings.Contains(page, "binary file") || !strings.Contains(page, "new file") {
		t.Errorf("the binary file's heading does not say what it is")
	}
}
