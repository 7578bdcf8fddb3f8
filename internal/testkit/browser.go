package testkit

import (
	"context"
	"os"
	"os/exec"
	"testing"

	"github.com/chromedp/chromedp"
)

// chromiumNames are the names Debian's chromium package and others give
// the browser.
var chromiumNames = []string{"chromium", "chromium-browser", "google-chrome"}

// Browser starts a headless Chromium (Debian's chromium package, which
// scripts/chromium.sh installs) and returns a chromedp context for one tab
// in it; the browser is closed at cleanup. Without Chromium the test is
// skipped, except under CI=true, where it fails.
func Browser(t testing.TB) context.Context {
	t.Helper()
	path := ""
	for _, n := range chromiumNames {
		if p, err := exec.LookPath(n); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("testkit: Chromium is required under CI=true (scripts/chromium.sh installs it)")
		}
		t.Skip("testkit: no Chromium (scripts/chromium.sh installs it)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.Flag("headless", "new"),
		chromedp.WindowSize(1280, 900),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
	)
	if os.Geteuid() == 0 {
		// Chromium's sandbox refuses to run as root.
		opts = append(opts, chromedp.NoSandbox)
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("testkit: start Chromium (%s): %v", path, err)
	}
	return ctx
}
