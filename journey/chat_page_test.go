package journey

import (
	"context"
	"errors"
	"io"
	"net"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/fetch-dev/fetch/internal/testkit"
)

// freePageAddr is a loopback address nothing listens on (it did a moment
// ago; the kernel hands out ports in turn), for a page whose address
// fetch page must know.
func freePageAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// ttyProc is fetch chat on a pseudo-terminal (script(1)): what is typed,
// what it printed so far, and its end.
type ttyProc struct {
	in   io.WriteCloser
	out  *syncBuffer
	done chan error
}

// startTTYChat runs the world's fetch chat on a new pseudo-terminal, as
// ttyChat does, and keeps its end for the test.
func startTTYChat(t *testing.T, w *world) *ttyProc {
	t.Helper()
	scriptBin, err := exec.LookPath("script")
	if err != nil {
		t.Skip("needs script(1) for a pseudo-terminal")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	cmd := exec.CommandContext(ctx, scriptBin, "-q", "-e", "-c", fetchBinary(t)+" chat", "/dev/null")
	cmd.Env = append(w.environ(), "TERM=dumb")
	in, err := cmd.StdinPipe()
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	p := &ttyProc{in: in, out: &syncBuffer{changed: make(chan struct{}, 1)}, done: make(chan error, 1)}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	go func() { p.done <- cmd.Wait() }()
	t.Cleanup(func() {
		in.Close()
		cancel()
		<-p.done
		if t.Failed() {
			t.Logf("fetch chat printed:\n%s", p.out.String())
		}
	})
	return p
}

// await waits until what fetch chat printed matches re, and returns the
// match with its groups.
func (p *ttyProc) await(t *testing.T, what string, re *regexp.Regexp) []string {
	t.Helper()
	deadline := time.NewTimer(waitTimeout)
	defer deadline.Stop()
	for {
		if m := re.FindStringSubmatch(p.out.String()); m != nil {
			return m
		}
		select {
		case <-p.out.changed:
		case err := <-p.done:
			p.done <- err
			t.Fatalf("fetch chat ended (%v) before %s; it printed:\n%s", err, what, p.out.String())
		case <-deadline.C:
			t.Fatalf("waited %s for %s (%s); fetch chat printed:\n%s", waitTimeout, what, re, p.out.String())
		}
	}
}

// TestJourneyChatTaskPage: only fetch chat runs, typed at a terminal; it
// serves the task page (FETCH_PAGE_ADDR) as fetch serve does. A request
// becomes a task; its messages show the page's link, and replies take the
// prompt's line rather than follow it. The link fetch page prints for the
// task opens, in a real headless Chromium, the task's page: its goal, its
// state, its diff, and the cost fetch task show says. Once the chat has
// ended, fetch page says that nothing serves the page and what to run,
// and exits 1 without a link.
func TestJourneyChatTaskPage(t *testing.T) {
	t.Parallel()
	browser := testkit.Browser(t)
	w := newWorld(t, "app")
	addr := freePageAddr(t)
	w.env["FETCH_PAGE_ADDR"] = addr

	const goal = "add a health endpoint [file:health.go]"
	w.llm.Script(taskCreate("call-app", goal, "app"), testkit.Say("Started it."))
	chat := startTTYChat(t, w)
	chat.await(t, "the greeting naming the page", regexp.MustCompile(`Task page: served here at http://`+regexp.QuoteMeta(addr)))
	io.WriteString(chat.in, "add a health endpoint to the app workspace\r")
	id := chat.await(t, "the task's status", regexp.MustCompile(`Task (\S+) on app \(\w+\) — running`))[1]
	chat.await(t, "the task's result", regexp.MustCompile(`✅ Task `+id+` succeeded on app`))
	chat.await(t, "the link to the task's page", regexp.MustCompile(`Task page: http://`+regexp.QuoteMeta(addr)+`/t/`+id+`\?`))
	out := chat.out.String()
	for _, reply := range []string{"Started it.", "✅ Task " + id, "🔵 Task " + id} {
		if strings.Contains(out, "> "+reply) {
			t.Errorf("the reply %q follows the prompt on its line, as if typed", reply)
		}
	}

	page := exec.Command(fetchBinary(t), "page", id)
	page.Env = w.environ()
	printed, err := page.Output()
	link := strings.TrimSpace(string(printed))
	if err != nil || !strings.HasPrefix(link, "http://"+addr+"/t/"+id+"?") {
		t.Fatalf("fetch page %s while fetch chat runs: %v, printed %q", id, err, printed)
	}
	browse(t, browser, "open the task's page", chromedp.Navigate(link), chromedp.WaitVisible(chromedp.CSS("#diff")))
	seen, err := chromedp.Run(browser, chromedp.Evaluate[map[string]string](`({
		state: document.getElementById("state").textContent,
		goal: document.getElementById("goal").textContent,
		diff: document.getElementById("diff").innerText,
		added: String(document.querySelectorAll("#diff .diffline.add").length),
		cost: document.getElementById("cost").textContent})`))
	if err != nil {
		t.Fatal(err)
	}
	if seen["state"] != "succeeded" || seen["goal"] != goal || !strings.Contains(seen["diff"], "health.go") || seen["added"] == "0" {
		t.Errorf("the task's page shows state %q, goal %q, %s added lines, diff:\n%s", seen["state"], seen["goal"], seen["added"], seen["diff"])
	}
	screenshot(t, browser, "chat-task-page.png")

	show := exec.Command(fetchBinary(t), "task", "show", id)
	show.Env = w.environ()
	shown, err := show.CombinedOutput()
	if err != nil {
		t.Fatalf("fetch task show: %v\n%s", err, shown)
	}
	wantCost := ""
	for line := range strings.SplitSeq(string(shown), "\n") {
		if rest, ok := strings.CutPrefix(line, "Cost:"); ok {
			wantCost = strings.TrimSpace(rest)
		}
	}
	if wantCost == "" || !strings.HasPrefix(seen["cost"], wantCost) {
		t.Errorf("the page's cost %q; fetch task show says %q", seen["cost"], wantCost)
	}

	// The chat ends (Ctrl-D); nothing serves the page any more.
	io.WriteString(chat.in, "\x04")
	select {
	case err := <-chat.done:
		chat.done <- err
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatalf("fetch chat: %v", err)
		}
		if err != nil {
			t.Errorf("fetch chat ended with %v at Ctrl-D", err)
		}
	case <-time.After(waitTimeout):
		t.Fatalf("fetch chat did not end within %s of Ctrl-D", waitTimeout)
	}
	page = exec.Command(fetchBinary(t), "page", id)
	page.Env = w.environ()
	var stderr strings.Builder
	page.Stderr = &stderr
	printed, err = page.Output()
	var exit *exec.ExitError
	want := "fetch page: nothing serves the task page at http://" + addr + " (nothing listens there). \"fetch serve\" and \"fetch chat\" serve it while they run"
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || len(printed) != 0 || !strings.HasPrefix(stderr.String(), want) {
		t.Errorf("fetch page with nothing serving: %v, printed %q, said %q; want exit 1, no link, and %q", err, printed, stderr.String(), want)
	}
}
