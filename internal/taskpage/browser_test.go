package taskpage

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/fetch-dev/fetch/internal/testkit"
)

// browserWait bounds one wait of the browser for the page.
const browserWait = 45 * time.Second

// laidLine is a diff line as Chromium lays it out: its class, the
// innerText of the line and of its code, and the boxes of its gutter and
// code (CSS pixels).
type laidLine struct {
	Class     string  `json:"class"`
	Text      string  `json:"text"`
	Src       string  `json:"src"`
	MarkWidth float64 `json:"markWidth"`
	MarkRight float64 `json:"markRight"`
	SrcLeft   float64 `json:"srcLeft"`
	Height    float64 `json:"height"`
}

const layoutJS = `[...document.querySelectorAll("#diff .diffline")].map(l => {
  const m = l.querySelector(".mark").getBoundingClientRect(), s = l.querySelector(".src");
  return {class: l.className.replace(/^diffline /, ""), text: l.innerText, src: s.innerText,
    markWidth: m.width, markRight: m.right, srcLeft: s.getBoundingClientRect().left, height: l.getBoundingClientRect().height};
})`

// TestDiffInBrowser: in a real headless Chromium, on a desktop window and
// on a phone, every diff line shows exactly its patch line and its code
// exactly its source line, in Python, JavaScript and Go (chroma's flex
// .line once ate their spaces), and the +/− gutter keeps its width and
// stays clear of the code on a 120-character line.
func TestDiffInBrowser(t *testing.T) {
	browser := testkit.Browser(t)
	f := newFixture(t)
	id := f.sourceTask()
	link := f.http.URL + strings.TrimPrefix(f.links.Task(id), "http://127.0.0.1:1")

	var wantText, wantSrc []string
	wantText = strings.Split(strings.TrimSuffix(sourcePatch(), "\n"), "\n")
	for _, s := range sources() {
		wantSrc = append(wantSrc, s.lines...)
	}
	for _, view := range []struct {
		name     string
		viewport chromedp.Action[chromedp.Void]
	}{
		{"desktop 1280", chromedp.EmulateViewport(1280, 900)},
		{"phone 390x844", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(3), chromedp.EmulateMobile, chromedp.EmulatePortrait, chromedp.EmulateTouch)},
	} {
		t.Run(view.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(browser, browserWait)
			defer cancel()
			if err := chromedp.Do(ctx, view.viewport, chromedp.Navigate(link), chromedp.WaitVisible(chromedp.CSS("#diff .file"))); err != nil {
				t.Fatalf("browser: open the task page: %v", err)
			}
			width, err := chromedp.Run(ctx, chromedp.Evaluate[float64]("window.innerWidth"))
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("viewport width %v", width)
			lines, err := chromedp.Run(ctx, chromedp.Evaluate[[]laidLine](layoutJS))
			if err != nil {
				t.Fatal(err)
			}
			var gotText, gotSrc []string
			var short, long *laidLine
			for i, l := range lines {
				gotText = append(gotText, l.Text)
				if l.Class != "add" {
					continue
				}
				gotSrc = append(gotSrc, l.Src)
				switch {
				case l.Src == longLine():
					long = &lines[i]
				case l.Src == "import subprocess":
					short = &lines[i]
				}
			}
			if diff := cmp.Diff(wantText, gotText); diff != "" {
				t.Errorf("the lines' innerText differs from the patch's lines (-patch +page):\n%s", diff)
			}
			if diff := cmp.Diff(wantSrc, gotSrc); diff != "" {
				t.Errorf("the added lines' code differs from the sources (-source +page):\n%s", diff)
			}
			if short == nil || long == nil {
				t.Fatalf("the page lacks the short or the %d-character line", longLineLen)
			}
			if short.MarkWidth <= 0 || math.Abs(long.MarkWidth-short.MarkWidth) > 0.01 {
				t.Errorf("gutter width %.2fpx on the %d-character line, %.2fpx on a short one; want the same", long.MarkWidth, longLineLen, short.MarkWidth)
			}
			for name, l := range map[string]*laidLine{"short": short, "long": long} {
				if l.MarkRight > l.SrcLeft+0.5 {
					t.Errorf("on the %s line the gutter (right edge %.2f) runs into the code (left edge %.2f)", name, l.MarkRight, l.SrcLeft)
				}
			}
			if math.Abs(long.Height-short.Height) > 0.5 {
				t.Errorf("the %d-character line is %.1fpx high, a short one %.1fpx: it wraps", longLineLen, long.Height, short.Height)
			}
		})
	}
}
