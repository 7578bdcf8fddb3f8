package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestChatRemindersAndWatches: the commands reach the real scheduler and
// watchers through fetch chat, and a reminder is still there in the next
// run.
func TestChatRemindersAndWatches(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "workspaces", "api"), 0o755); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"FETCH_DATA_DIR": dir, "FETCH_TIMEZONE": "Europe/Berlin", "FETCH_GIT_INTERVAL": "0", "FETCH_IDLE_AFTER": "0"}
	script := "/remind in 3 hours check the deploy\n/remind at 25:00 x\n/schedule \"0 9 * * 1-5\" summarize open PRs\n/watch on api\n/watch on nope\n/watch off api\n"
	code, out, errs := runFetch(t, vars, script, "chat")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	want := []string{
		"⏰ I'll remind you ",
		"I could not read that time of day (times are in Europe/Berlin",
		`🔁 Scheduled "0 9 * * 1-5" (Europe/Berlin)`,
		"👀 Watching api",
		"There is no workspace nope.",
		"Stopped watching api.",
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), out)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d = %q; want prefix %q", i, lines[i], w)
		}
	}
	if !strings.Contains(lines[0], "(in 3h00m") || !strings.Contains(lines[0], "[#1 — /cron remove 1 cancels it]") {
		t.Errorf("confirmation = %q", lines[0])
	}

	code, out, errs = runFetch(t, vars, "/cron list\n", "chat")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "(2 of 20, times in Europe/Berlin)") || !strings.Contains(out, "#1 · next ") || !strings.Contains(out, "once remind: check the deploy") || !strings.Contains(out, `#2 · next `) {
		t.Fatalf("list in the next run:\n%s", out)
	}
}

// TestHelpCommandsAllWork: every command /help lists is answered by the
// fully wired Fetch — none is unknown or unavailable.
func TestHelpCommandsAllWork(t *testing.T) {
	dir := t.TempDir()
	vars := map[string]string{"FETCH_DATA_DIR": dir, "FETCH_IDLE_AFTER": "0"}
	_, help, _ := runFetch(t, vars, "/help\n", "chat")
	cmds := regexp.MustCompile(`(?m)^(/\w+)`).FindAllString(help, -1)
	if len(cmds) < 10 {
		t.Fatalf("help lists %d commands:\n%s", len(cmds), help)
	}
	code, out, errs := runFetch(t, vars, strings.Join(cmds, "\n")+"\n", "chat")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, bad := range []string{"I don't know the command", "not available in this Fetch", "went wrong"} {
		if strings.Contains(out, bad) {
			t.Fatalf("a command from /help does not work (%q):\n%s", bad, out)
		}
	}
}

func TestConfigTimezoneAndGitInterval(t *testing.T) {
	cfg, err := loadConfig(envOf(map[string]string{"HOME": "/home/me", "FETCH_TIMEZONE": "America/New_York", "FETCH_GIT_INTERVAL": "1m"}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Location.String() != "America/New_York" || cfg.GitInterval != time.Minute {
		t.Fatalf("config = %v %v", cfg.Location, cfg.GitInterval)
	}
	_, err = loadConfig(envOf(map[string]string{"HOME": "/home/me", "FETCH_TIMEZONE": "Mars/Olympus", "FETCH_GIT_INTERVAL": "1s"}))
	if err == nil || !strings.Contains(err.Error(), "FETCH_TIMEZONE") || !strings.Contains(err.Error(), "FETCH_GIT_INTERVAL") {
		t.Fatalf("bad values → %v", err)
	}
}
