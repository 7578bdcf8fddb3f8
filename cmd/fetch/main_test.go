package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/harness"
	"github.com/fetch-dev/fetch/internal/redact"
	"github.com/fetch-dev/fetch/internal/testkit"
	"go.uber.org/goleak"
)

// asFetchEnv makes the test binary behave as the fetch binary: fetch task
// run without --wait starts itself (os.Executable) as a worker.
const asFetchEnv = "FETCH_TEST_AS_FETCH"

func TestMain(m *testing.M) {
	if os.Getenv(asFetchEnv) == "1" {
		os.Exit(run(context.Background(), os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr))
	}
	// The ways out of the tests' data directories go with them (the
	// cleanup is the one that exits).
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		testkit.RemoveOrphanEgress()
		os.Exit(code)
	}))
}

// egressCleaned are the data directories whose way out a test's cleanup
// removes.
var egressCleaned sync.Map

// cleanEgress has the way out Fetch makes for vars' data directory (its
// proxy and network) removed when the test ends, once per directory.
func cleanEgress(t *testing.T, vars map[string]string) {
	dir := vars["FETCH_DATA_DIR"]
	if _, loaded := egressCleaned.LoadOrStore(dir, true); dir == "" || loaded {
		return
	}
	t.Cleanup(func() { testkit.RemoveEgressOf(dir) })
}

func envOf(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// runFetch runs fetch with exactly vars. The task page is off unless
// vars say otherwise: tests run side by side, and its default address is
// one.
func runFetch(t *testing.T, vars map[string]string, stdin string, args ...string) (int, string, string) {
	cleanEgress(t, vars)
	t.Helper()
	if _, ok := vars[envPageAddr]; !ok {
		with := map[string]string{envPageAddr: "off"}
		maps.Copy(with, vars)
		vars = with
	}
	var out, errb bytes.Buffer
	code := run(t.Context(), args, envOf(vars), strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestChatStatusOnFreshDataDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	code, out, errs := runFetch(t, map[string]string{"FETCH_DATA_DIR": dir}, "/status\n", "chat")
	if code != 0 {
		t.Fatalf("exit %d, stderr %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 6 || !strings.HasPrefix(lines[0], "🟢 ALERT since ") || lines[1] != "Workspace: none selected (/use WORKSPACE selects one)" || lines[2] != "Task: none running" ||
		lines[3] != "Autonomy: cautious" || lines[4] != "Waiting for your approval or answer: nothing" || !strings.HasPrefix(lines[5], "LLM: none configured") {
		t.Fatalf("output:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "fetch.db")); err != nil {
		t.Fatalf("no database in the data dir: %v", err)
	}
}

func TestChatScriptIsDeterministic(t *testing.T) {
	script := "hello\n/whoami\n\n   \nfix it\n/clear\n/nope\nyes\nstop\n/commands\n"
	var outs []string
	for range 2 {
		dir := t.TempDir()
		code, out, errs := runFetch(t, map[string]string{"FETCH_DATA_DIR": dir, "FETCH_OWNER_ID": "42"}, script, "chat")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		outs = append(outs, out)
	}
	if outs[0] != outs[1] {
		t.Fatalf("two runs differ:\n%s\n---\n%s", outs[0], outs[1])
	}
	want := []string{
		noAgentReply,
		"You are 42 (owner) on term.",
		"I'm not sure what to do yet.",
		"History cleared (no workspace selected).",
		`I don't know the command "/nope".`,
		"Nothing is waiting for a yes or no right now.",
		"Nothing is running.",
		"Commands: /help",
	}
	lines := strings.Split(strings.TrimSpace(outs[0]), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), outs[0])
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d = %q; want prefix %q", i, lines[i], w)
		}
	}
}

func TestChatKeepsStateAcrossRuns(t *testing.T) {
	dir := t.TempDir()
	vars := map[string]string{"FETCH_DATA_DIR": dir, "FETCH_IDLE_AFTER": "0"}
	if code, _, errs := runFetch(t, vars, "/whoami\n", "chat"); code != 0 {
		t.Fatal(errs)
	}
	code, out, errs := runFetch(t, vars, "/status\n", "chat")
	if code != 0 || !strings.Contains(out, "ALERT") {
		t.Fatalf("exit %d out %q err %q", code, out, errs)
	}
}

func TestUsageAndHelp(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		out  string // in stdout, or stderr when code != 0
	}{
		{nil, exitUsage, "Usage:"},
		{[]string{"help"}, exitOK, "fetch chat"},
		{[]string{"--help"}, exitOK, "FETCH_DATA_DIR"},
		{[]string{"chat", "--help"}, exitOK, "echo /status | fetch chat"},
		{[]string{"version"}, exitOK, "fetch "},
		{[]string{"frobnicate"}, exitUsage, `unknown command "frobnicate"`},
		{[]string{"chat", "extra"}, exitUsage, `unexpected argument "extra"`},
	} {
		code, out, errs := runFetch(t, map[string]string{"FETCH_DATA_DIR": t.TempDir()}, "", tc.args...)
		text := out
		if tc.code != exitOK {
			text = errs
		}
		if code != tc.code || !strings.Contains(text, tc.out) {
			t.Errorf("fetch %v: exit %d, out %q, err %q; want %d and %q", tc.args, code, out, errs, tc.code, tc.out)
		}
	}
}

// TestUsageErrorsAreOneLine: a command used wrongly says in one line
// what is wrong and where its help is (exit 2), rather than print the
// whole help.
func TestUsageErrorsAreOneLine(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"frobnicate"}, "fetch: unknown command \"frobnicate\"\nRun \"fetch help\" for the commands.\n"},
		{[]string{"chat", "extra"}, "fetch chat: unexpected argument \"extra\"\nSee \"fetch chat --help\".\n"},
		{[]string{"serve", "extra"}, "fetch serve: unexpected argument \"extra\"\nSee \"fetch serve --help\".\n"},
		{[]string{"doctor", "extra"}, "fetch doctor: unexpected argument \"extra\"\nSee \"fetch doctor --help\".\n"},
		{[]string{"page", "a", "b"}, "fetch page: unexpected argument \"b\"\nSee \"fetch page --help\".\n"},
		{[]string{"task", "frob"}, "fetch task: unknown subcommand \"frob\"\nSee \"fetch task --help\".\n"},
		{[]string{"task", "run", "--bogus", "x"}, "fetch task run: flag provided but not defined: -bogus\nSee \"fetch task run --help\".\n"},
		{[]string{"task", "show", "a", "b"}, "fetch task show: takes 1 argument(s), got 2\nSee \"fetch task show --help\".\n"},
		{[]string{"workspace", "add"}, "fetch workspace add: takes 1 or 2 argument(s), got 0\nSee \"fetch workspace add --help\".\n"},
		{[]string{"workspace", "hosts"}, "fetch workspace hosts: takes 1 or 3 argument(s), got 0\nSee \"fetch workspace hosts --help\".\n"},
		{[]string{"audit", "--bogus"}, "fetch audit: flag provided but not defined: -bogus\nSee \"fetch audit --help\".\n"},
		{[]string{"prune", "x"}, "fetch prune: unexpected argument \"x\"\nSee \"fetch prune --help\".\n"},
	} {
		code, out, errs := runFetch(t, map[string]string{"FETCH_DATA_DIR": t.TempDir()}, "", tc.args...)
		if code != exitUsage || out != "" || errs != tc.want {
			t.Errorf("fetch %v: exit %d, out %q, err %q; want exit 2 and %q", tc.args, code, out, errs, tc.want)
		}
	}
}

func TestConfigListsEveryProblem(t *testing.T) {
	vars := map[string]string{
		"FETCH_DATA_DIR":    t.TempDir(),
		"FETCH_OWNER_ID":    "abc",
		"FETCH_ALLOWED_IDS": "1, x2,3",
		"FETCH_LLM_URL":     "ftp://example",
		"FETCH_LOG_LEVEL":   "loud",
		"FETCH_IDLE_AFTER":  "soon",
		"FETCH_WORKSPACES":  "relative/ws",
	}
	code, _, errs := runFetch(t, vars, "/status\n", "chat")
	if code != exitUsage {
		t.Fatalf("exit %d; want %d", code, exitUsage)
	}
	for _, name := range []string{"FETCH_OWNER_ID", `"x2"`, "FETCH_LLM_URL", "FETCH_LOG_LEVEL", "FETCH_IDLE_AFTER", "FETCH_WORKSPACES"} {
		if !strings.Contains(errs, name) {
			t.Errorf("error does not name %s:\n%s", name, errs)
		}
	}
}

func TestConfigDefaults(t *testing.T) {
	cfg, err := loadConfig(envOf(map[string]string{"HOME": "/home/me"}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.DataDir != "/home/me/.local/share/fetch" || cfg.Workspaces != "/home/me/.local/share/fetch/workspaces" ||
		cfg.DiscordURL != "https://discord.com" || cfg.LLMURL != "https://openrouter.ai/api/v1" || cfg.KennelImage != "fetch-kennel:latest" {
		t.Fatalf("defaults = %+v", cfg)
	}
	if _, err := loadConfig(envOf(nil)); err == nil || !strings.Contains(err.Error(), "FETCH_DATA_DIR") {
		t.Fatalf("no HOME and no data dir: %v", err)
	}
}

func TestChatBadDatabase(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "fetch.db")
	if err := os.WriteFile(path, bytes.Repeat([]byte("garbage "), 1000), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runFetch(t, map[string]string{"FETCH_DATA_DIR": dir}, "/status\n", "chat")
	if code != exitFailed || !strings.Contains(errs, path) {
		t.Fatalf("exit %d, stderr %q; want a failure naming %s", code, errs, path)
	}
}

func TestChatStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	defer r.Close()
	done := make(chan int)
	var out, errb bytes.Buffer
	go func() {
		done <- run(ctx, []string{"chat"}, envOf(map[string]string{"FETCH_DATA_DIR": t.TempDir(), envPageAddr: "off"}), r, &out, &errb)
	}()
	cancel()
	if code := <-done; code != exitInterrupted {
		t.Fatalf("exit %d after cancel: %s", code, errb.String())
	}
	w.Close() // ends the reader goroutine blocked on the pipe
}

func TestChatWithTheAgent(t *testing.T) {
	fake := testkit.NewOpenRouter(t)
	fake.Script(testkit.Say("Hi! Nothing is running right now."))
	vars := map[string]string{
		"FETCH_DATA_DIR":     t.TempDir(),
		"OPENROUTER_API_KEY": testkit.OpenRouterKey,
		"FETCH_LLM_URL":      fake.URL(),
		"FETCH_IDLE_AFTER":   "0",
	}
	code, out, errs := runFetch(t, vars, "hey fetch, how are you?\n/autonomy autonomous\n/status\n", "chat")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"Hi! Nothing is running right now.", "Autonomy: autonomous.", "Today: 120 tokens"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if reqs := fake.Requests(); len(reqs) != 1 || !strings.Contains(reqs[0].System(), "You are Fetch") {
		t.Fatalf("%d requests to the LLM", len(reqs))
	}
}

func TestChatWithABadKeyTellsWhatToFix(t *testing.T) {
	fake := testkit.NewOpenRouter(t)
	vars := map[string]string{"FETCH_DATA_DIR": t.TempDir(), "OPENROUTER_API_KEY": "sk-or-wrong-secret", "FETCH_LLM_URL": fake.URL()}
	code, out, errs := runFetch(t, vars, "add a health check to the API\n", "chat")
	if code != 0 || !strings.Contains(out, "OPENROUTER_API_KEY") || strings.Contains(out+errs, "sk-or-wrong-secret") {
		t.Fatalf("exit %d, out %q, err %q", code, out, errs)
	}
}

func TestAgentConfig(t *testing.T) {
	cfg, err := loadConfig(envOf(map[string]string{"HOME": "/h", "FETCH_BUDGET_DAY_USD": "$2.50", "FETCH_BUDGET_TURN_TOKENS": "5000", "FETCH_MAX_ROUNDS": "4"}))
	if err != nil || cfg.BudgetDayUSD != 2.5 || cfg.BudgetTurnTokens != 5000 || cfg.MaxRounds != 4 || cfg.TurnTimeout != 5*time.Minute {
		t.Fatalf("cfg %+v, %v", cfg, err)
	}
	_, err = loadConfig(envOf(map[string]string{"HOME": "/h", "FETCH_BUDGET_DAY_USD": "lots", "FETCH_MAX_ROUNDS": "0", "FETCH_TURN_TIMEOUT": "-1s", "FETCH_BUDGET_DAY_TOKENS": "-5"}))
	for _, name := range []string{"FETCH_BUDGET_DAY_USD", "FETCH_MAX_ROUNDS", "FETCH_TURN_TIMEOUT", "FETCH_BUDGET_DAY_TOKENS"} {
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("error does not name %s: %v", name, err)
		}
	}
}

// TestChatActionEndsAsTaskInTheKennel: an action typed in fetch chat goes
// through the agent (the fake OpenRouter scripts its tool calls), becomes
// a task of the real engine in a real kennel with the scripted CLI, and
// its result comes back to the chat.
func TestChatActionEndsAsTaskInTheKennel(t *testing.T) {
	vars, _, inW, outR, done := agentChat(t,
		testkit.Use(testkit.Call{ID: "s", Name: "workspace_select", Arguments: `{"name":"app"}`}),
		testkit.Use(testkit.Call{ID: "c", Name: "task_create", Arguments: `{"goal":"note that it works [file:notes/DONE.md]","harness":"claude"}`}),
		testkit.Say("A harness is on it."),
	)
	go io.WriteString(inW, "add a note that it works to the app workspace\n")
	sc := bufio.NewScanner(outR)
	var out []string
	var id string
	for sc.Scan() {
		line := sc.Text()
		out = append(out, line)
		if strings.HasPrefix(line, "Task ") && strings.Contains(line, " started") {
			id = strings.Fields(line)[1]
		}
		if strings.HasPrefix(line, "✅ Task ") && strings.Contains(line, " succeeded on ") {
			break
		}
		if strings.HasPrefix(line, "❌") || strings.HasPrefix(line, "⚠️") {
			t.Fatalf("task did not succeed:\n%s", strings.Join(out, "\n"))
		}
	}
	inW.Close()
	go io.Copy(io.Discard, outR)
	if code := <-done; code != exitOK {
		t.Fatalf("fetch chat exited %d:\n%s", code, strings.Join(out, "\n"))
	}
	text := strings.Join(out, "\n")
	if id == "" || !strings.Contains(text, "A harness is on it.") || !strings.Contains(text, "✅ Task "+id+" succeeded on app") {
		t.Fatalf("chat output:\n%s", text)
	}
	// The task is the engine's, on its own branch of the real workspace.
	cfg, _ := loadConfig(envOf(vars))
	db := openDB(t, cfg.DataDir)
	var state, branch string
	if err := db.SQL().QueryRowContext(t.Context(), "SELECT state, branch FROM tasks WHERE id = ?", id).Scan(&state, &branch); err != nil || state != "succeeded" || branch != "fetch/"+id {
		t.Fatalf("task %s: state %q branch %q (%v)", id, state, branch, err)
	}
}

// TestChatTaskQuestionAnsweredThroughTheAgentsResolver: a task's question
// is a prompt the agent did not open; the owner's answer passes the
// agent's resolver on to the task reporter, and the task resumes.
func TestChatTaskQuestionAnsweredThroughTheAgentsResolver(t *testing.T) {
	_, fake, inW, outR, done := agentChat(t,
		testkit.Use(testkit.Call{ID: "c", Name: "task_create", Arguments: `{"goal":"ask first [scenario:question]","workspace":"app"}`}),
		testkit.Say("Started."),
	)
	go io.WriteString(inW, "start the app task\n")
	sc := bufio.NewScanner(outR)
	var out []string
	for sc.Scan() {
		line := sc.Text()
		out = append(out, line)
		if strings.HasPrefix(line, "❓ Task ") {
			go io.WriteString(inW, "append\n")
		}
		if strings.HasPrefix(line, "✅ Task ") || strings.HasPrefix(line, "❌") {
			break
		}
	}
	inW.Close()
	go io.Copy(io.Discard, outR)
	<-done
	text := strings.Join(out, "\n")
	if !strings.Contains(text, "❓ Task ") || !strings.Contains(text, "Resuming task") || !strings.Contains(text, "✅ Task ") {
		t.Fatalf("chat output:\n%s", text)
	}
	if n := len(fake.Requests()); n != 2 {
		t.Fatalf("%d LLM requests: the answer to the task went to the LLM", n)
	}
}

// TestLoggerRedacts: the logger every command uses removes the configured
// secrets and credential patterns from what it writes.
func TestLoggerRedacts(t *testing.T) {
	cfg, err := loadConfig(envOf(map[string]string{
		"FETCH_DATA_DIR":      t.TempDir(),
		"OPENROUTER_API_KEY":  "sk-or-v1-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		"FETCH_DISCORD_TOKEN": "configured.discord.token-value",
	}))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	log, _, err := newLogger(&out, cfg, slog.LevelInfo)
	if err != nil {
		t.Fatal(err)
	}
	log.Info("harness said", "line", "key "+cfg.OpenRouter+" token configured.discord.token-value gh ghp_q8Jx2LmZ0vT4nR7cW1yB5dK9sH3fG6pA2eU0")
	for _, secret := range []string{cfg.OpenRouter, "configured.discord.token-value", "ghp_q8Jx2LmZ0vT4nR7cW1yB5dK9sH3fG6pA2eU0"} {
		if strings.Contains(out.String(), secret) {
			t.Fatalf("log holds %q:\n%s", secret, out.String())
		}
	}
	if !strings.Contains(out.String(), "harness said") {
		t.Fatalf("log lost the record: %s", out.String())
	}
}

// agentChat runs fetch chat with the agent on the scripted fake OpenRouter
// and the kennel with the scripted CLIs (workspace "app"), fed through a
// pipe. It returns the environment, the fake, the input, the output and
// the exit code to come.
func agentChat(t *testing.T, script ...testkit.Step) (map[string]string, *testkit.OpenRouter, *io.PipeWriter, *io.PipeReader, <-chan int) {
	t.Helper()
	vars := taskVars(t)
	fake := testkit.NewOpenRouter(t)
	vars["OPENROUTER_API_KEY"] = testkit.OpenRouterKey
	vars["FETCH_LLM_URL"] = fake.URL()
	vars["FETCH_IDLE_AFTER"] = "0"
	vars[envPageAddr] = "off"
	fake.Script(script...)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan int, 1)
	// Fetch's log, for the report of a failed test (it says why a task
	// failed, which the chat's line does not).
	logs := &lockedBuffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("fetch chat's log:\n%s", logs.String())
		}
	})
	go func() {
		code := run(t.Context(), []string{"chat"}, envOf(vars), inR, outW, logs)
		outW.Close()
		done <- code
	}()
	return vars, fake, inW, outR, done
}

// TestEveryCredentialIsASecret: whatever credential a coding CLI may get
// is also redacted.
func TestEveryCredentialIsASecret(t *testing.T) {
	secrets := map[string]bool{}
	for _, k := range secretEnv() {
		secrets[k] = true
	}
	for _, k := range credentialVars() {
		if (strings.Contains(k, "KEY") || strings.Contains(k, "TOKEN")) && !secrets[k] {
			t.Errorf("%s reaches the coding CLIs but is not redacted", k)
		}
	}
	for _, k := range []string{"DASHSCOPE_API_KEY", "XAI_API_KEY", "GITHUB_TOKEN", "ANTHROPIC_API_KEY"} {
		if !secrets[k] {
			t.Errorf("%s is not redacted", k)
		}
	}
}

// TestEveryAdapterKeyIsRedacted: for each adapter, each secret key it
// declares is read from the environment into its credentials and its value
// is masked by the redactor built from the configuration; no second list
// of keys stands between the adapters and the redactor.
func TestEveryAdapterKeyIsRedacted(t *testing.T) {
	reg := harness.NewRegistry()
	for _, n := range reg.Names() {
		a, _ := reg.Get(n)
		for _, k := range a.Keys() {
			if !k.Secret {
				continue
			}
			t.Run(string(n)+"/"+k.Name, func(t *testing.T) {
				value := "v4lue-of-" + strings.ToLower(k.Name) + "-Zq81"
				cfg, err := loadConfig(envOf(map[string]string{"HOME": t.TempDir(), k.Name: value}))
				if err != nil {
					t.Fatal(err)
				}
				if cfg.Credentials[k.Name] != value {
					t.Errorf("%s is not among the credentials", k.Name)
				}
				red, err := redact.New(cfg.Secrets...)
				if err != nil {
					t.Fatal(err)
				}
				if out := red.String("the CLI printed " + value); strings.Contains(out, value) {
					t.Errorf("%s is not redacted: %q", k.Name, out)
				}
			})
		}
	}
}
