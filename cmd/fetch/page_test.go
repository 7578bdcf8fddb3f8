package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestPageConfig(t *testing.T) {
	for _, tc := range []struct {
		addr, url, ttl string
		wantAddr       string
		wantTTL        time.Duration
		problem        string
	}{
		{wantAddr: defaultPageAddr, wantTTL: defaultPageTTL},
		{addr: "off", wantTTL: defaultPageTTL},
		{addr: "8686", wantAddr: "127.0.0.1:8686", wantTTL: defaultPageTTL},
		{addr: ":0", wantAddr: "127.0.0.1:0", wantTTL: defaultPageTTL},
		{addr: "0.0.0.0:9000", url: "https://fetch.example.com/fetch/", ttl: "24h", wantAddr: "0.0.0.0:9000", wantTTL: 24 * time.Hour},
		{addr: "lots", problem: envPageAddr},
		{addr: "127.0.0.1:99999", problem: envPageAddr},
		{addr: "8686", url: "fetch.example.com", problem: envPageURL},
		{addr: "8686", url: "https://x/?a=b", problem: envPageURL},
		{addr: "8686", ttl: "10s", problem: envPageTTL},
	} {
		cfg, err := loadConfig(envOf(map[string]string{"HOME": "/h", envPageAddr: tc.addr, envPageURL: tc.url, envPageTTL: tc.ttl}))
		switch {
		case tc.problem != "":
			if err == nil || !strings.Contains(err.Error(), tc.problem) {
				t.Errorf("%+v: error %v; want one naming %s", tc, err, tc.problem)
			}
		case err != nil:
			t.Errorf("%+v: %v", tc, err)
		case cfg.PageAddr != tc.wantAddr || cfg.PageTTL != tc.wantTTL:
			t.Errorf("%+v: addr %q ttl %s", tc, cfg.PageAddr, cfg.PageTTL)
		}
	}
}

// freeAddr is a loopback address nothing listens on (it did a moment
// ago, and the kernel gives out ports in turn).
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// TestPageCommandSaysWhenNothingServesThePage: fetch page prints a link
// (exit 0) only when it works; with the page off, nothing listening,
// another Fetch or another program at its address, it says so and what
// to run, and exits non-zero without a link.
func TestPageCommandSaysWhenNothingServesThePage(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := runFetch(t, map[string]string{"FETCH_DATA_DIR": dir, envPageAddr: "off"}, "", "page")
	if code != exitUsage || out != "" || !strings.Contains(errs, "the task page is off") {
		t.Errorf("fetch page with the page off: %d %q %q", code, out, errs)
	}
	addr := freeAddr(t)
	for _, args := range [][]string{{"page"}, {"page", "ab12cd34"}} {
		code, out, errs = runFetch(t, map[string]string{"FETCH_DATA_DIR": dir, envPageAddr: addr}, "", args...)
		want := "fetch page: nothing serves the task page at http://" + addr + " (nothing listens there). \"fetch serve\" and \"fetch chat\" serve it while they run"
		if code != exitFailed || out != "" || !strings.HasPrefix(errs, want) {
			t.Errorf("fetch %v with nothing serving: %d %q %q; want exit 1 and %q", args, code, out, errs, want)
		}
	}
	if code, _, _ := runFetch(t, map[string]string{"FETCH_DATA_DIR": dir, envPageAddr: addr}, "", "page", "a", "b"); code != exitUsage {
		t.Errorf("fetch page a b exited %d", code)
	}

	// Another Fetch (its key is another: 401 with the page's scheme), and
	// another program.
	for _, tc := range []struct {
		name string
		h    http.HandlerFunc
		want string
	}{
		{"another Fetch", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("WWW-Authenticate", `FetchLink realm="fetch task page"`)
			w.WriteHeader(http.StatusUnauthorized)
		}, "another Fetch, with another data directory, serves the task page at "},
		{"another program", http.NotFound, "something other than Fetch's task page answers at "},
	} {
		srv := httptest.NewServer(tc.h)
		base := strings.TrimPrefix(srv.URL, "http://")
		code, out, errs := runFetch(t, map[string]string{"FETCH_DATA_DIR": dir, envPageAddr: base}, "", "page")
		srv.Close()
		if code != exitFailed || out != "" || !strings.Contains(errs, tc.want+srv.URL) || !strings.Contains(errs, "8687") {
			t.Errorf("%s at the address: fetch page = %d %q %q; want exit 1 and %q", tc.name, code, out, errs, tc.want)
		}
	}
}

// pageChat runs fetch chat with vars, fed through a pipe, until the test
// ends, and waits until it answered /status: by then its task page (if
// it has one) serves. It returns the lines it wrote to stderr about the
// page (those that start "fetch chat:").
func pageChat(t *testing.T, vars map[string]string) string {
	t.Helper()
	// Its own context: the test's ends before the cleanup that ends the
	// chat at the end of its input.
	ctx, cancel := context.WithCancel(context.Background())
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	errs := &lockedBuffer{}
	done := make(chan int, 1)
	go func() {
		code := run(ctx, []string{"chat"}, envOf(vars), inR, outW, errs)
		outW.Close()
		done <- code
	}()
	t.Cleanup(func() {
		defer cancel()
		inW.Close()
		go io.Copy(io.Discard, outR)
		if code := <-done; code != 0 {
			t.Errorf("fetch chat exited %d: %s", code, errs.String())
		}
	})
	io.WriteString(inW, "/status\n")
	sc := bufio.NewScanner(outR)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "Task: ") {
			var said []string
			for l := range strings.Lines(errs.String()) {
				if strings.HasPrefix(l, "fetch chat:") {
					said = append(said, l)
				}
			}
			return strings.Join(said, "")
		}
	}
	t.Fatalf("fetch chat ended before it answered /status: %s", errs.String())
	return ""
}

// TestChatServesThePage: fetch chat serves the task page on
// FETCH_PAGE_ADDR, as fetch serve does: fetch page's links work there
// (and a task it does not have is named as such). A second chat on the
// same data directory finds the address taken, goes on, and says once
// that the first one's page shows its tasks; one on another data
// directory says that another Fetch holds the address.
func TestChatServesThePage(t *testing.T) {
	dir := t.TempDir()
	addr := freeAddr(t)
	vars := map[string]string{"FETCH_DATA_DIR": dir, envPageAddr: addr}
	if errs := pageChat(t, vars); errs != "" {
		t.Errorf("fetch chat with a free page address wrote to stderr: %q", errs)
	}
	code, out, errs := runFetch(t, vars, "", "page")
	link := strings.TrimSpace(out)
	if code != exitOK || !strings.HasPrefix(link, "http://"+addr+"/tasks?exp=") {
		t.Fatalf("fetch page while fetch chat runs: %d %q %q", code, out, errs)
	}
	resp, err := http.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET %s: %s", link, resp.Status)
	}
	code, out, errs = runFetch(t, vars, "", "page", "ab12cd34")
	if code != exitFailed || out != "" || !strings.Contains(errs, `has no task "ab12cd34": fetch task ls lists the tasks`) {
		t.Errorf("fetch page for a task the page does not have: %d %q %q", code, out, errs)
	}

	second := pageChat(t, vars)
	if strings.Count(second, "\n") != 1 || !strings.HasPrefix(second, "fetch chat: the task page is served by another Fetch on this data directory, at http://"+addr) {
		t.Errorf("a second fetch chat on the data directory wrote %q; want one line saying the first one serves the page", second)
	}
	other := pageChat(t, map[string]string{"FETCH_DATA_DIR": t.TempDir(), envPageAddr: addr})
	if strings.Count(other, "\n") != 1 || !strings.HasPrefix(other, "fetch chat: going on without the task page: another Fetch, on another data directory, serves its address "+addr) {
		t.Errorf("a fetch chat on another data directory wrote %q; want one line saying another Fetch holds the address", other)
	}
}
