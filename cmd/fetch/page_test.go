package main

import (
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

func TestPageCommandPrintsSignedLinks(t *testing.T) {
	dir := t.TempDir()
	code, _, errs := runFetch(t, map[string]string{"FETCH_DATA_DIR": dir, envPageAddr: "off"}, "", "page")
	if code != exitUsage || !strings.Contains(errs, "the task page is off") {
		t.Errorf("fetch page with the page off: %d %q", code, errs)
	}
	code, out, _ := runFetch(t, map[string]string{"FETCH_DATA_DIR": dir}, "", "page")
	if code != 0 || !strings.HasPrefix(out, "http://"+defaultPageAddr+"/tasks?exp=") {
		t.Errorf("fetch page by default = %d %q", code, out)
	}
	vars := map[string]string{"FETCH_DATA_DIR": dir, envPageAddr: "8686", envPageURL: "https://fetch.example.com/fetch/"}
	code, out, errs = runFetch(t, vars, "", "page")
	if code != 0 || !strings.HasPrefix(out, "https://fetch.example.com/fetch/tasks?exp=") || !strings.Contains(out, "&sig=") {
		t.Errorf("fetch page = %d %q %q", code, out, errs)
	}
	code, out, _ = runFetch(t, vars, "", "page", "ab12cd34")
	if code != 0 || !strings.HasPrefix(out, "https://fetch.example.com/fetch/t/ab12cd34?exp=") {
		t.Errorf("fetch page TASK = %d %q", code, out)
	}
	if code, _, _ := runFetch(t, vars, "", "page", "a", "b"); code != exitUsage {
		t.Errorf("fetch page a b exited %d", code)
	}
}
