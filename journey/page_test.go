package journey

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/fetch-dev/fetch/internal/testkit"
)

// pagePlanted is the Claude key configured for the task page's journey:
// the scripted CLI's secret scenario prints it in its output.
const pagePlanted = "sk-ant-api03-PAGEpagePAGEpage0123456789abcdefABCDEF-PAGEpageAA"

// browserWait bounds one wait of the browser for the page.
const browserWait = 45 * time.Second

// artefacts is where the journeys keep what a person looks at afterwards
// (screenshots): $FETCH_TEST_ARTEFACTS, or build/artefacts in the
// repository.
func artefacts(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("FETCH_TEST_ARTEFACTS")
	if dir == "" {
		dir = filepath.Join(repoRoot(t), "build", "artefacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// screenshot keeps the browser's page as name in the artefacts.
func screenshot(t testing.TB, browser context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(browser, chromedp.FullScreenshot(100))
	if err != nil {
		t.Errorf("screenshot %s: %v", name, err)
		return
	}
	path := filepath.Join(artefacts(t), name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Errorf("screenshot %s: %v", name, err)
		return
	}
	t.Logf("screenshot: %s", path)
}

// pageButton is the URL of a message's "Task page" link button.
func pageButton(m testkit.DiscordMessage) string {
	for _, row := range m.Components {
		for _, b := range row.Components {
			if b.Label == "Task page" && b.URL != "" {
				return b.URL
			}
		}
	}
	return ""
}

// browse runs the browser's actions, bounded by browserWait.
func browse(t testing.TB, browser context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(browser, browserWait)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("browser: %s: %v", what, err)
	}
}

// poll waits in the browser until the JavaScript expression is true.
func poll(t testing.TB, browser context.Context, what, expr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(browser, browserWait+5*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(browserWait))); err != nil {
		text, _ := chromedp.Run(browser, chromedp.Evaluate[string]("document.body ? document.body.innerText : ''"))
		t.Fatalf("browser: %s: %v\nthe page shows:\n%s", what, err, text)
	}
}

// pollReload is poll for a page that reloads itself while it is waited
// for (the task page does when its task ends): an evaluation that the
// reload cut short is tried again in the new document.
func pollReload(t testing.TB, browser context.Context, what, expr string) {
	t.Helper()
	deadline := time.Now().Add(browserWait)
	for {
		ctx, cancel := context.WithTimeout(browser, time.Until(deadline)+5*time.Second)
		_, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(time.Until(deadline))))
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			text, _ := chromedp.Run(browser, chromedp.Evaluate[string]("document.body ? document.body.innerText : ''"))
			t.Fatalf("browser: %s: %v\nthe page shows:\n%s", what, err, text)
		}
		t.Logf("browser: %s: %v; trying again", what, err)
		select {
		case <-browser.Done():
			t.Fatalf("browser: %s: %v", what, browser.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// get is a plain HTTP GET of link: its status and body.
func get(t testing.TB, link string) (int, string) {
	t.Helper()
	resp, err := http.Get(link)
	if err != nil {
		t.Fatalf("GET %s: %v", link, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestJourneyTaskPage: with FETCH_PAGE_ADDR set, a task's messages carry
// a link to its page. In a real headless Chromium, the running task's
// page shows its timeline and a new step arrives without a reload; at the
// end the page shows the result and the diff, the cost fetch task show
// says, times in FETCH_TIMEZONE and the state and goal in its title; a
// task whose CLI printed the configured key shows it masked; the owner's
// list link (fetch page) lists the tasks; on a phone neither the list nor
// the task's page scrolls sideways; a request without a valid link gets
// 401. Screenshots are
// kept as artefacts.
func TestJourneyTaskPage(t *testing.T) {
	t.Parallel()
	browser := testkit.Browser(t)
	w := newWorld(t, "app")
	w.env["FETCH_PAGE_ADDR"] = "127.0.0.1:0"
	w.env["ANTHROPIC_API_KEY"] = pagePlanted
	w.env["FETCH_TIMEZONE"] = "Asia/Kolkata"
	w.watch = append(w.watch, pagePlanted)
	w.start()

	// A running task: its status message links to its page.
	m, status := w.startTask(ownerID, "add a health endpoint to the app workspace",
		"add a health endpoint [scenario:slow:12] [file:health.go]", "app")
	id := taskID(t, status.Text)
	link := pageButton(status.Msg)
	if link == "" {
		t.Fatalf("the running task's status message has no Task page button: %+v", status.Msg.Components)
	}
	if u, err := url.Parse(link); err != nil || u.Hostname() != "127.0.0.1" || u.Path != "/t/"+id {
		t.Fatalf("task page link %q: want one to /t/%s on the loopback address", link, id)
	}
	browse(t, browser, "open the running task's page", chromedp.Navigate(link), chromedp.WaitVisible(chromedp.CSS("#timeline")))
	poll(t, browser, "a step of the running task", `[...document.querySelectorAll("#timeline li")].some(li => /Still working \(\d+\/12\)/.test(li.innerText))`)
	state, err := chromedp.Run(browser, chromedp.Text(chromedp.CSS("#state")))
	if err != nil || state != "running" {
		t.Errorf("the running task's page shows state %q (%v)", state, err)
	}
	// Mark this document: a reload would lose the mark.
	before, err := chromedp.Run(browser, chromedp.Evaluate[int](`window.fetchJourneyMark = "kept"; document.querySelectorAll("#timeline li").length`))
	if err != nil {
		t.Fatal(err)
	}
	screenshot(t, browser, "task-page-running.png")
	poll(t, browser, "a new step without a reload", fmt.Sprintf(`document.querySelectorAll("#timeline li").length > %d && window.fetchJourneyMark === "kept" && document.getElementById("state").textContent === "running"`, before))
	after, _ := chromedp.Run(browser, chromedp.Evaluate[int](`document.querySelectorAll("#timeline li").length`))
	t.Logf("timeline entries: %d when marked, %d later in the same document", before, after)
	screenshot(t, browser, "task-page-live.png")

	// The end: the result links to the page, which shows it and the diff.
	res := w.awaitResult(m, regexp.MustCompile(`✅ Task `+id+` succeeded on app`), "the task's result")
	if pageButton(res.Msg) == "" {
		t.Errorf("the result message has no Task page button: %+v", res.Msg.Components)
	}
	pollReload(t, browser, "the page showing the end, the result and the diff",
		`document.getElementById("state").textContent === "succeeded" && !!document.querySelector("#diff .file") && document.getElementById("diff").innerText.includes("health.go") && document.getElementById("timeline").innerText.includes("Result")`)
	if hl, _ := chromedp.Run(browser, chromedp.Evaluate[int](`document.querySelectorAll("#diff .diffline.add").length`)); hl == 0 {
		t.Errorf("the diff shows no added lines")
	}
	screenshot(t, browser, "task-page-done.png")

	// The page says the cost as fetch task show does, and times in
	// FETCH_TIMEZONE; its title carries the state and the goal.
	show := exec.Command(fetchBinary(t), "task", "show", id)
	show.Env = w.environ()
	shown, err := show.CombinedOutput()
	if err != nil {
		t.Fatalf("fetch task show: %v\n%s", err, shown)
	}
	wantCost := "none reported"
	for line := range strings.SplitSeq(string(shown), "\n") {
		if rest, ok := strings.CutPrefix(line, "Cost:"); ok {
			wantCost = strings.TrimSpace(rest)
		}
	}
	facts, err := chromedp.Run(browser, chromedp.Evaluate[map[string]string](`({cost: document.getElementById("cost").textContent, title: document.title, created: document.querySelector("dl.facts time").textContent})`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(facts["cost"], wantCost) {
		t.Errorf("the page's cost %q; fetch task show says %q", facts["cost"], wantCost)
	}
	if !strings.HasSuffix(facts["created"], " IST") || !strings.HasPrefix(facts["title"], "succeeded · add a health endpoint") {
		t.Errorf("created %q (want India's time, FETCH_TIMEZONE), title %q", facts["created"], facts["title"])
	}

	// A task whose CLI printed the configured key: masked on the page.
	m2, status2 := w.startTask(ownerID, "add a note to the app workspace", "add a note [scenario:secret]", "app")
	id2 := taskID(t, status2.Text)
	res2 := w.awaitResult(m2, regexp.MustCompile(`Task `+id2+` \S+ on app|Task `+id2+` on app needs`), "the secret task's result")
	link2 := pageButton(res2.Msg)
	if link2 == "" {
		t.Fatalf("the secret task's result has no Task page button: %+v", res2.Msg.Components)
	}
	browse(t, browser, "open the secret task's page", chromedp.Navigate(link2), chromedp.WaitVisible(chromedp.CSS("#timeline")))
	text, err := chromedp.Run(browser, chromedp.Evaluate[string]("document.documentElement.outerHTML"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text, pagePlanted) || strings.Contains(text, "PAGEpage") {
		t.Errorf("the task page shows the configured key")
	}
	if !strings.Contains(text, "Found credentials") || !strings.Contains(text, "[REDACTED]") {
		t.Errorf("the task page does not show the CLI's output masked:\n%s", text)
	}
	if _, body := get(t, link2); strings.Contains(body, pagePlanted) {
		t.Errorf("the task page's HTML holds the configured key")
	}
	screenshot(t, browser, "task-page-secret.png")

	// The owner's list link, from fetch page (FETCH_PAGE_URL names where
	// the page is, as behind a reverse proxy).
	u, _ := url.Parse(link)
	cmd := exec.Command(fetchBinary(t), "page")
	cmd.Env = append(w.environ(), "FETCH_PAGE_URL="+u.Scheme+"://"+u.Host+"/")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("fetch page: %v\n%s", err, out)
	}
	list := strings.TrimSpace(string(out))
	browse(t, browser, "open the list", chromedp.Navigate(list), chromedp.WaitVisible(chromedp.CSS("#tasks")))
	rows, err := chromedp.Run(browser, chromedp.Text(chromedp.CSS("#tasks tbody")))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{id, id2, "succeeded", "claude", "app"} {
		if !strings.Contains(rows, want) {
			t.Errorf("the list lacks %q:\n%s", want, rows)
		}
	}
	screenshot(t, browser, "task-list.png")

	// On a phone neither the list nor a task's page scrolls sideways.
	phone := chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(3), chromedp.EmulateMobile, chromedp.EmulatePortrait, chromedp.EmulateTouch)
	for what, l := range map[string]string{"the list": list, "the task's page": link} {
		browse(t, browser, "open "+what+" on a phone", phone, chromedp.Navigate(l), chromedp.WaitReady(chromedp.CSS("main")))
		over, err := chromedp.Run(browser, chromedp.Evaluate[float64](`document.documentElement.scrollWidth - document.documentElement.clientWidth`))
		if err != nil || over > 0 {
			t.Errorf("on a phone %s scrolls sideways by %.0fpx (%v)", what, over, err)
		}
	}
	screenshot(t, browser, "task-page-phone.png")

	// Without a valid link: 401.
	bare := u.Scheme + "://" + u.Host
	q := u.Query()
	sig := []byte(q.Get("sig"))
	sig[0] = map[bool]byte{true: 'B', false: 'A'}[sig[0] == 'A']
	q.Set("sig", string(sig))
	for what, l := range map[string]string{
		"the task without a link":         bare + "/t/" + id,
		"the list without a link":         bare + "/tasks",
		"the task with a bad signature":   bare + "/t/" + id + "?" + q.Encode(),
		"the list with the task's link":   bare + "/tasks?" + u.RawQuery,
		"another task with the task link": bare + "/t/" + id2 + "?" + u.RawQuery,
		"the stream without a link":       bare + "/t/" + id + "/events",
	} {
		if code, body := get(t, l); code != http.StatusUnauthorized {
			t.Errorf("%s: %d %q; want 401", what, code, body)
		}
	}
}
