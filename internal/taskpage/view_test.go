package taskpage

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/harness"
	"github.com/fetch-dev/fetch/internal/progress"
	"github.com/fetch-dev/fetch/internal/task"
	"github.com/fetch-dev/fetch/internal/workspace"
)

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
