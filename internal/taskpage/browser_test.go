package taskpage

import (
	"context"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/fetch-dev/fetch/internal/task"
	"github.com/fetch-dev/fetch/internal/testkit"
)

// browserWait bounds one wait of the browser for the page.
const browserWait = 45 * time.Second

// laidLine is a diff line as Chromium lays it out: its class, the
// innerText of the line and of its code, its line number, and the boxes
// of its gutter and code (CSS pixels; SrcLeft the leftmost of the code's
// boxes, one per wrapped row).
type laidLine struct {
	Class     string  `json:"class"`
	Text      string  `json:"text"`
	Src       string  `json:"src"`
	N         string  `json:"n"`
	MarkWidth float64 `json:"markWidth"`
	MarkRight float64 `json:"markRight"`
	SrcLeft   float64 `json:"srcLeft"`
	Height    float64 `json:"height"`
}

const layoutJS = `[...document.querySelectorAll("#diff .diffline")].map(l => {
  const m = l.querySelector(".mark").getBoundingClientRect(), s = l.querySelector(".src");
  const rects = [...s.getClientRects()];
  return {class: l.className.replace(/^diffline /, ""), text: l.innerText, src: s.innerText,
    n: getComputedStyle(l.querySelector(".lno"), "::before").content.replace(/^"|"$/g, ""),
    markWidth: m.width, markRight: m.right, srcLeft: rects.length ? Math.min(...rects.map(r => r.left)) : 0,
    height: l.getBoundingClientRect().height};
})`

// overflowJS is how far the page scrolls sideways: the document's width
// past the viewport's.
const overflowJS = `document.documentElement.scrollWidth - document.documentElement.clientWidth`

// views are the windows the page is checked in: a desktop and a phone.
var views = []struct {
	name     string
	viewport chromedp.Action[chromedp.Void]
}{
	{"desktop 1280", chromedp.EmulateViewport(1280, 900)},
	{"phone 390x844", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(3), chromedp.EmulateMobile, chromedp.EmulatePortrait, chromedp.EmulateTouch)},
}

// open runs the steps that open a page in the browser and returns the
// context to go on with, bounded by browserWait.
func open(t *testing.T, browser context.Context, what string, steps ...chromedp.Action[chromedp.Void]) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(browser, browserWait)
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("browser: open %s: %v", what, err)
	}
	return ctx
}

// eval evaluates js in the page.
func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("browser: %s: %v", js, err)
	}
	return v
}

// TestDiffInBrowser: in a real headless Chromium, on a desktop window and
// on a phone, every diff line shows exactly its patch line and its code
// exactly its source line, in Python, JavaScript and Go (chroma's flex
// .line once ate their spaces), with its line number from the hunk
// header; the +/− gutter keeps its width and stays clear of the code on
// a 120-character line, wrapped (the default) or not; the page never
// scrolls sideways, only an unwrapped file's code does; and the diff
// comes before the timeline.
func TestDiffInBrowser(t *testing.T) {
	browser := testkit.Browser(t)
	f := newFixture(t)
	id := f.sourceTask()
	link := f.http.URL + strings.TrimPrefix(f.links.Task(id), "http://127.0.0.1:1")

	wantText := shownPatchLines()
	var wantSrc, wantN []string
	for _, s := range sources() {
		wantSrc = append(wantSrc, s.lines...)
		for i := range s.lines {
			wantN = append(wantN, strconv.Itoa(i+1))
		}
	}
	for _, view := range views {
		t.Run(view.name, func(t *testing.T) {
			ctx := open(t, browser, "the task page", view.viewport, chromedp.Navigate(link), chromedp.WaitVisible(chromedp.CSS("#diff .file")))
			width := eval[float64](t, ctx, "window.innerWidth")
			t.Logf("viewport width %v", width)
			if !eval[bool](t, ctx, `!!(document.querySelector("#diff").compareDocumentPosition(document.querySelector("#timeline")) & Node.DOCUMENT_POSITION_FOLLOWING)`) {
				t.Errorf("the timeline comes before the diff")
			}
			for _, wrap := range []bool{true, false} {
				if !wrap {
					if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#wrap"))); err != nil {
						t.Fatalf("browser: uncheck wrap: %v", err)
					}
				}
				lines := eval[[]laidLine](t, ctx, layoutJS)
				var gotText, gotSrc, gotN []string
				var short, long *laidLine
				for i, l := range lines {
					gotText = append(gotText, l.Text)
					if l.Class != "add" {
						continue
					}
					gotSrc = append(gotSrc, l.Src)
					gotN = append(gotN, l.N)
					switch {
					case l.Src == longLine():
						long = &lines[i]
					case l.Src == "import subprocess":
						short = &lines[i]
					}
				}
				if diff := cmp.Diff(wantText, gotText); diff != "" {
					t.Errorf("wrap %v: the lines' innerText differs from the patch's lines (-patch +page):\n%s", wrap, diff)
				}
				if diff := cmp.Diff(wantSrc, gotSrc); diff != "" {
					t.Errorf("wrap %v: the added lines' code differs from the sources (-source +page):\n%s", wrap, diff)
				}
				if diff := cmp.Diff(wantN, gotN); diff != "" {
					t.Errorf("wrap %v: the added lines' numbers (-want +page):\n%s", wrap, diff)
				}
				if short == nil || long == nil {
					t.Fatalf("the page lacks the short or the %d-character line", longLineLen)
				}
				if short.MarkWidth <= 0 || math.Abs(long.MarkWidth-short.MarkWidth) > 0.01 {
					t.Errorf("wrap %v: gutter width %.2fpx on the %d-character line, %.2fpx on a short one; want the same", wrap, long.MarkWidth, longLineLen, short.MarkWidth)
				}
				for name, l := range map[string]*laidLine{"short": short, "long": long} {
					if l.MarkRight > l.SrcLeft+0.5 {
						t.Errorf("wrap %v: on the %s line the gutter (right edge %.2f) runs into the code (left edge %.2f)", wrap, name, l.MarkRight, l.SrcLeft)
					}
				}
				if !wrap && math.Abs(long.Height-short.Height) > 0.5 {
					t.Errorf("unwrapped, the %d-character line is %.1fpx high, a short one %.1fpx: it wraps", longLineLen, long.Height, short.Height)
				}
				if over := eval[float64](t, ctx, overflowJS); over > 0 {
					t.Errorf("wrap %v: the page scrolls sideways by %.0fpx", wrap, over)
				}
				if wrap && eval[float64](t, ctx, `Math.max(...[...document.querySelectorAll("#diff pre.code")].map(p => p.scrollWidth - p.clientWidth))`) > 0 {
					t.Errorf("wrapped, a file's code still scrolls sideways")
				}
			}
		})
	}
}

// listRowJS is each row of the list: the boxes of its goal, state,
// duration, cost and created time, and the texts of the last three.
const listRowJS = `[...document.querySelectorAll("#tasks tbody tr")].map(r => {
  const box = sel => { const b = r.querySelector(sel).getBoundingClientRect(); return {left: b.left, right: b.right, top: b.top, bottom: b.bottom, width: b.width}; };
  return {goal: box("td.goal"), state: box(".badge"), duration: box("td.duration"), cost: box("td.cost"), created: box("td.created"),
    text: r.innerText, height: r.getBoundingClientRect().height};
})`

type box struct{ Left, Right, Top, Bottom, Width float64 }

type listRow struct {
	Goal, State, Duration, Cost, Created box
	Text                                 string
	Height                               float64
}

// TestListInBrowser: on a desktop and on a 390×844 phone the list of
// tasks never scrolls sideways, and each task's goal, state, duration,
// cost and creation time are within the screen's width.
func TestListInBrowser(t *testing.T) {
	browser := testkit.Browser(t)
	f := newFixture(t)
	start := time.Unix(1_700_000_000, 0)
	f.tasks.put(task.Task{ID: "1ong0a1", Workspace: "a-workspace-with-a-long-name", Harness: "claude", State: task.NeedsAttention, Mode: task.Work,
		Goal:    "make https://example.com/a/very/long/unbroken/path/that/goes/on/and/on/and/on/for/ever.html load faster " + strings.Repeat("and more words ", 10),
		CostUSD: 0.001, CostUnknown: true, CreatedAt: start, StartedAt: start, EndedAt: start.Add(400 * time.Millisecond)})
	f.tasks.put(task.Task{ID: "f00dcafe", Workspace: "app", Harness: "codex", State: task.WaitingInput, Mode: task.Work,
		Goal: "short", CreatedAt: start, StartedAt: start, UpdatedAt: start})
	link := f.http.URL + strings.TrimPrefix(f.links.List(), "http://127.0.0.1:1")
	for _, view := range views {
		t.Run(view.name, func(t *testing.T) {
			ctx := open(t, browser, "the list", view.viewport, chromedp.Navigate(link), chromedp.WaitVisible(chromedp.CSS("#tasks")))
			width := eval[float64](t, ctx, "document.documentElement.clientWidth")
			if over := eval[float64](t, ctx, overflowJS); over > 0 {
				t.Errorf("the list scrolls sideways by %.0fpx in a %.0fpx window", over, width)
			}
			rows := eval[[]listRow](t, ctx, listRowJS)
			if len(rows) != 3 {
				t.Fatalf("%d rows; want 3", len(rows))
			}
			for _, r := range rows {
				for name, b := range map[string]box{"goal": r.Goal, "state": r.State, "duration": r.Duration, "cost": r.Cost, "created": r.Created} {
					if b.Width <= 0 || b.Left < 0 || b.Right > width+0.5 {
						t.Errorf("row %q: its %s is at %.0f–%.0fpx, outside the %.0fpx window", r.Text, name, b.Left, b.Right, width)
					}
				}
			}
			text := eval[string](t, ctx, "document.body.innerText")
			for _, want := range []string{"$0.0010 + unpriced tokens", "0.4s", "$0.4200"} {
				if !strings.Contains(text, want) {
					t.Errorf("the list does not say %q:\n%s", want, text)
				}
			}
		})
	}
}

// TestFailedTaskInBrowser: on a phone, a failed task's page shows its
// failing output and the failed command's output without a click, says
// the failure once, and does not scroll sideways.
func TestFailedTaskInBrowser(t *testing.T) {
	browser := testkit.Browser(t)
	f := newFixture(t)
	id := f.failedTask()
	link := f.http.URL + strings.TrimPrefix(f.links.Task(id), "http://127.0.0.1:1")
	ctx := open(t, browser, "the failed task", views[1].viewport, chromedp.Navigate(link), chromedp.WaitReady(chromedp.CSS("#timeline")))
	text := eval[string](t, ctx, "document.body.innerText")
	for _, want := range []string{"panic: boom", "--- FAIL: TestX", "Exit code"} {
		if !strings.Contains(text, want) {
			t.Errorf("the page does not show %q without a click:\n%s", want, text)
		}
	}
	if n := strings.Count(text, failSentence); n != 1 {
		t.Errorf("the failure sentence shows %d times; want once", n)
	}
	if over := eval[float64](t, ctx, overflowJS); over > 0 {
		t.Errorf("the page scrolls sideways by %.0fpx", over)
	}
	if bg := eval[string](t, ctx, `getComputedStyle(document.querySelector("#diff .file")).backgroundColor`); bg != "rgb(255, 255, 255)" {
		t.Errorf("a file's background is %s; want the page's white", bg)
	}
}

// TestLiveBadge: a running task's page without JavaScript says it does
// not update and offers a reload, and shows no "live"; with JavaScript its
// badge says live while the stream is up and, once the stream is gone,
// says so in a neutral colour.
func TestLiveBadge(t *testing.T) {
	browser := testkit.Browser(t)
	f := newFixture(t)
	f.tasks.put(task.Task{ID: "11fe0000", Workspace: "app", Harness: "codex", State: task.Running, CreatedAt: time.Now(), StartedAt: time.Now()})
	f.tasks.add("11fe0000", "state", stateData{To: task.Running})
	link := f.http.URL + strings.TrimPrefix(f.links.Task("11fe0000"), "http://127.0.0.1:1")
	ctx, cancel := context.WithTimeout(browser, browserWait)
	defer cancel()

	noJS := func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		_, err := cdp.Call(ctx, tg, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true})
		return chromedp.Void{}, err
	}
	if err := chromedp.Do(ctx, noJS, chromedp.Navigate(link), chromedp.WaitReady(chromedp.CSS("#timeline"))); err != nil {
		t.Fatalf("browser: open without JavaScript: %v", err)
	}
	text := eval[string](t, ctx, "document.body.innerText")
	if !strings.Contains(text, "Without JavaScript this page reloads itself every 15 seconds") || strings.Contains(text, "live") {
		t.Errorf("without JavaScript the running page says:\n%s", text)
	}
	if got := eval[string](t, ctx, `(document.querySelector('meta[http-equiv="refresh"]') || {}).content || ""`); got != "15" {
		t.Errorf("without JavaScript the running page has no refresh (got %q)", got)
	}
	if href := eval[string](t, ctx, `document.querySelector("noscript a") ? document.querySelector("noscript a").href : ""`); !strings.HasPrefix(href, f.http.URL+"/t/11fe0000?") {
		t.Errorf("the reload link is %q", href)
	}

	withJS := func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		_, err := cdp.Call(ctx, tg, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: false})
		return chromedp.Void{}, err
	}
	if err := chromedp.Do(ctx, withJS, chromedp.Navigate(link), chromedp.WaitVisible(chromedp.CSS("#live.on"))); err != nil {
		t.Fatalf("browser: the badge never says live: %v", err)
	}
	if got := eval[string](t, ctx, `document.getElementById("live").textContent`); got != "live" {
		t.Errorf("badge %q while the stream is up", got)
	}
	// The stream goes: the server is gone.
	f.http.CloseClientConnections()
	f.http.Close()
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS("#live.off"))); err != nil {
		t.Fatalf("browser: the badge does not say the stream is gone: %v", err)
	}
	got := eval[string](t, ctx, `document.getElementById("live").textContent`)
	if got == "live" || !(strings.Contains(got, "reconnecting") || strings.Contains(got, "disconnected")) {
		t.Errorf("badge %q after the stream went", got)
	}
	if c := eval[string](t, ctx, `getComputedStyle(document.getElementById("live")).color`); c == "rgb(207, 34, 46)" || c == "rgb(255, 255, 255)" {
		t.Errorf("the gone stream's badge is coloured %s", c)
	}
}
