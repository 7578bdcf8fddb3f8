package journey

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestJourneyNoSecretAtRest runs, through the built binary, a task whose
// goal holds the configured OpenRouter key (typed by the owner), an OSC 52
// clipboard write and a screen clear, with a CLI that prints realistic
// tokens on stdout and stderr; then it greps everything Fetch left behind
// — the data directory (database and its WAL, patches, worker output),
// the task branch's history and what fetch printed, its log included —
// for each secret and for the escapes.
func TestJourneyNoSecretAtRest(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "app")
	const (
		openRouter   = "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"
		discordToken = "MTE4OTk5ODg4Nzc3NjY2NTU1.GxYzAb.q1w2e3r4t5y6u7i8o9p0a1s2d3f4g5h6j7k8l9"
		anthropicKey = "sk-ant-api03-configuredCONFIGURED0123456789abcdefABCDEF-confAA"
		// What the scripted CLI's secret scenario prints besides its key.
		fakeAnthropic = "sk-ant-api03-FAKEfakeFAKEfake0123456789abcdefABCDEF-FAKEfakeAA"
		fakeGitHub    = "ghp_k3Jd9QmZ2xWv7LpR4tYb8NcF1hGs6AeU0oIq"
		fakeAWS       = "AKIAQZ7XW2M4K6PBVN3T"
		fakeSlack     = "xoxb-4815162342-1088127366514-h7Tq2Vz9Rk3Lm6Wp1Xc8Yd5B"
	)
	w.env["OPENROUTER_API_KEY"] = openRouter
	w.env["FETCH_DISCORD_TOKEN"] = discordToken
	w.env["ANTHROPIC_API_KEY"] = anthropicKey
	secrets := []string{openRouter, discordToken, anthropicKey, fakeAnthropic, fakeGitHub, fakeAWS, fakeSlack}

	// fetch runs the binary and returns its stdout, its stdout and stderr
	// (the log) together, and its exit code.
	fetch := func(args ...string) (string, string, int) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, fetchBinary(t), args...)
		cmd.Env = w.environ()
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		if err != nil && cmd.ProcessState == nil {
			t.Fatalf("fetch %s: %v", strings.Join(args, " "), err)
		}
		return out.String(), out.String() + errOut.String(), cmd.ProcessState.ExitCode()
	}
	goal := "use the key " + openRouter + " to check the notes \x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J [scenario:secret]"
	out, printed, code := fetch("task", "run", "--workspace", "app", "--wait", goal)
	if code != 0 {
		t.Fatalf("fetch task run exited %d:\n%s", code, printed)
	}
	fields := strings.Fields(out)
	if len(fields) < 2 {
		t.Fatalf("fetch task run printed:\n%s", printed)
	}
	id := fields[1]
	for _, sub := range [][]string{{"show", id}, {"log", id}, {"list"}} {
		_, all, _ := fetch(append([]string{"task"}, sub...)...)
		printed += all
	}
	if strings.ContainsAny(printed, "\x1b\a") {
		t.Errorf("fetch printed a control sequence:\n%q", printed)
	}
	if !strings.Contains(printed, "[REDACTED]") {
		t.Errorf("nothing was redacted in what fetch printed:\n%s", printed)
	}

	places := map[string][]byte{"what fetch printed": []byte(printed)}
	filepath.WalkDir(w.data, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.Contains(path, string(filepath.Separator)+".git"+string(filepath.Separator)) {
			return nil
		}
		if data, err := os.ReadFile(path); err == nil {
			places[path] = data
		}
		return nil
	})
	history, err := exec.Command("git", "-c", "safe.directory=*", "-C", filepath.Join(w.wsRoot, "app"), "log", "-p", "--all").CombinedOutput()
	if err != nil {
		t.Fatalf("git log: %v\n%s", err, history)
	}
	if !bytes.Contains(history, []byte("fetch: task "+id)) {
		t.Fatalf("the task's commit is not in the history:\n%s", history)
	}
	places["git log -p --all"] = history
	for where, data := range places {
		for _, s := range secrets {
			if bytes.Contains(data, []byte(s)) {
				t.Errorf("%s holds %.16s…", where, s)
			}
		}
	}
	if bytes.ContainsAny(history, "\x1b\a") {
		t.Errorf("the history holds a control sequence")
	}
}
