package main

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoSecretAtRestAfterATask runs a task whose goal holds the
// configured OpenRouter key (typed by the owner) and an OSC 52 clipboard
// write, with a CLI that prints realistic tokens and its own configured
// key; then it greps everything Fetch left behind — the data directory
// (database, its log, patches, worker output), the task branch's history
// and what fetch task printed — for each secret and for the escape.
func TestNoSecretAtRestAfterATask(t *testing.T) {
	vars := taskVars(t)
	const (
		openRouter   = "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"
		discordToken = "MTE4OTk5ODg4Nzc3NjY2NTU1.GxYzAb.q1w2e3r4t5y6u7i8o9p0a1s2d3f4g5h6j7k8l9"
		anthropicKey = "sk-ant-api03-configuredCONFIGURED0123456789abcdefABCDEF-confAA"
		// What the fake CLI's secret scenario prints besides its key.
		fakeAnthropic = "sk-ant-api03-FAKEfakeFAKEfake0123456789abcdefABCDEF-FAKEfakeAA"
		fakeGitHub    = "ghp_k3Jd9QmZ2xWv7LpR4tYb8NcF1hGs6AeU0oIq"
		fakeAWS       = "AKIAQZ7XW2M4K6PBVN3T"
		fakeSlack     = "xoxb-4815162342-1088127366514-h7Tq2Vz9Rk3Lm6Wp1Xc8Yd5B"
	)
	vars["OPENROUTER_API_KEY"] = openRouter
	vars["FETCH_DISCORD_TOKEN"] = discordToken
	vars["ANTHROPIC_API_KEY"] = anthropicKey
	secrets := []string{openRouter, discordToken, anthropicKey, fakeAnthropic, fakeGitHub, fakeAWS, fakeSlack}

	goal := "use the key " + openRouter + " to check the notes \x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J [scenario:secret]"
	code, out, errs := runFetch(t, vars, "", "task", "run", "--workspace", "app", "--wait", goal)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	id := strings.Fields(out)[1]
	printed := out + errs
	for _, sub := range [][]string{{"show", id}, {"log", id}, {"list"}} {
		_, o, e := runFetch(t, vars, "", append([]string{"task"}, sub...)...)
		printed += o + e
	}
	if strings.Contains(printed, "\x1b") || strings.Contains(printed, "\a") {
		t.Errorf("fetch task printed a control sequence:\n%q", printed)
	}
	if !strings.Contains(printed, "[REDACTED]") {
		t.Errorf("nothing was redacted in what fetch task printed:\n%s", printed)
	}

	places := map[string][]byte{"fetch task output": []byte(printed)}
	filepath.WalkDir(vars["FETCH_DATA_DIR"], func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.Contains(path, string(filepath.Separator)+".git"+string(filepath.Separator)) {
			return nil
		}
		if data, err := os.ReadFile(path); err == nil {
			places[path] = data
		}
		return nil
	})
	history, err := exec.Command("git", "-c", "safe.directory=*", "-C", filepath.Join(vars["FETCH_DATA_DIR"], "workspaces", "app"), "log", "-p", "--all").CombinedOutput()
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
