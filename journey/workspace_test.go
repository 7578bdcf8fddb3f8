package journey

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/internal/testkit"
)

// cli runs one fetch command of the world (not fetch serve) with stdin
// (a pipe: not a terminal) and returns its exit code and output.
func (w *world) cli(stdin string, args ...string) (int, string, string) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, fetchBinary(w.t), args...)
	cmd.Env = w.environ()
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String(), errb.String()
	case errors.As(err, &exit):
		return exit.ExitCode(), out.String(), errb.String()
	}
	w.t.Fatalf("fetch %v: %v\n%s", args, err, errb.String())
	return 0, "", ""
}

// J-ws1: workspaces from the command line: add a new one and a copy of a
// local repository, list them, show one, remove one (refused without
// --yes off a terminal); a task in a missing workspace says where Fetch
// looked and how to add one; a usage error names the subcommand.
func TestJourneyWorkspaceCommands(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.env["FETCH_LOG_LEVEL"] = "error"
	src := filepath.Join(t.TempDir(), "src")
	for _, args := range [][]string{
		{"init", "-q", "-b", "trunk", src},
		{"-C", src, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "first commit"},
	} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	step := func(stdin string, wantCode int, wantOut string, args ...string) string {
		t.Helper()
		code, out, errs := w.cli(stdin, args...)
		got := out
		if code != 0 {
			got = errs
		}
		if code != wantCode || !strings.Contains(got, wantOut) {
			t.Fatalf("fetch %s: exit %d\nstdout:\n%s\nstderr:\n%s\nwant exit %d and %q", strings.Join(args, " "), code, out, errs, wantCode, wantOut)
		}
		return got
	}
	step("", 0, "Workspace demo: new repository, in "+w.workspacePath("demo"), "workspace", "add", "demo")
	step("", 0, "Workspace api: copied from "+src, "workspace", "add", "api", src)
	step("", 1, "workspace exists already", "workspace", "add", "demo")
	step("", 2, "fetch workspace add: takes 1 or 2 argument(s)", "workspace", "add")

	// No kennel runs yet, and listing starts none (J-sleep checks the
	// engine): the branch is read from HEAD, the changes are not.
	list := step("", 0, "NAME", "workspace", "list")
	for _, re := range []string{`(?m)^api\s+-\s+trunk\s+asleep\s+` + regexp.QuoteMeta(w.workspacePath("api")), `(?m)^demo\s+-\s+main\s+asleep\s+`, `fetch workspace show NAME reads its changes`} {
		if !regexp.MustCompile(re).MatchString(list) {
			t.Errorf("workspace list:\n%s\nwant a line matching %s", list, re)
		}
	}
	show := step("", 0, "Workspace:", "workspace", "show", "api")
	// show started api's kennel, so listing reads api's changes.
	list = step("", 0, "NAME", "workspace", "list")
	for _, re := range []string{`(?m)^api\s+-\s+trunk\s+clean\s+`, `(?m)^demo\s+-\s+main\s+asleep\s+`} {
		if !regexp.MustCompile(re).MatchString(list) {
			t.Errorf("workspace list after show api:\n%s\nwant a line matching %s", list, re)
		}
	}
	for _, want := range []string{"Branch:      trunk", "Changes:     none", "first commit",
		"written by the kennel", "fetch task apply ID [DIR], from Fetch's own repository " + filepath.Join(w.data, "repos", "api.git")} {
		if !strings.Contains(show, want) {
			t.Errorf("workspace show api:\n%s\nwant %q", show, want)
		}
	}

	step("", 2, "confirm with --yes", "workspace", "remove", "demo")
	if !w.exists("demo") {
		t.Fatal("an unconfirmed remove removed the workspace")
	}
	step("", 0, "Removed workspace demo.", "workspace", "remove", "--yes", "demo")
	if w.exists("demo") {
		t.Fatal("workspace demo is still there after remove --yes")
	}
	step("", 1, "no such workspace", "workspace", "show", "demo")

	errs := step("", 1, "fetch task run: ", "task", "run", "--workspace", "nosuch", "do something")
	for _, want := range []string{"no such workspace in " + w.wsRoot, "fetch workspace add NAME [PATH]", "fetch workspace clone URL"} {
		if !strings.Contains(errs, want) {
			t.Errorf("task run in a missing workspace:\n%s\nwant %q", errs, want)
		}
	}
	step("", 2, "fetch task run: flag provided but not defined: -bogus", "task", "run", "--bogus", "x")
}

// J-ws2: in fetch chat, /use selects a workspace without the LLM, and
// "select the demo workspace" reaches the model as an action, whose
// workspace_select selects it; /status shows each, with what changes
// Fetch's behaviour.
func TestJourneyChatSelectsAWorkspace(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "demo", "api")
	w.env["FETCH_BUDGET_DAY_TOKENS"] = "100000"
	w.llm.Script(
		testkit.Use(testkit.Call{ID: "sel-1", Name: "workspace_select", Arguments: `{"name":"demo"}`}),
		testkit.Say("Selected demo."),
	)
	code, out, errs := w.cli("/use nosuch\n/use api\n/status\nselect the demo workspace\n/status\n", "chat")
	if code != 0 {
		t.Fatalf("fetch chat: exit %d\n%s\n%s", code, out, errs)
	}
	order := []string{
		`There is no workspace "nosuch"; nothing changed. Workspaces: api, demo.`,
		"Workspace api selected",
		"Workspace: api\n",
		"Autonomy: cautious\n",
		"Waiting for your approval or answer: nothing\n",
		"of 100000 tokens; left today: ",
		"Selected demo.",
		"Workspace: demo\n",
	}
	at := 0
	for _, want := range order {
		i := strings.Index(out[at:], want)
		if i < 0 {
			t.Fatalf("fetch chat printed:\n%s\nwant, in order, %q (after byte %d)", out, want, at)
		}
		at += i + len(want)
	}
	reqs := w.llm.Requests()
	if len(reqs) == 0 {
		t.Fatal("/use reached nothing, but the request never reached the model")
	}
	// /use made no request; the request was offered workspace_select.
	if first := reqs[0]; !strings.Contains(first.Raw, "select the demo workspace") || !strings.Contains(strings.Join(first.Tools(), " "), "workspace_select") {
		t.Fatalf("first model request: tools %v; want the request, with workspace_select offered", first.Tools())
	}
	if strings.Contains(reqs[0].Raw, "/use api") {
		t.Error("/use reached the model")
	}
}

// J-ws3: the owner lets another Discord user talk to Fetch with /allow;
// the list survives a restart; /allow remove makes Fetch ignore them
// again; an allowed user cannot use /allow.
func TestJourneyAllow(t *testing.T) {
	t.Parallel()
	const newcomer = "100000000000000003"
	w := newWorld(t)
	w.start()
	whoami := regexp.MustCompile(`^You are ` + newcomer + ` \(allowed\)`)

	w.ask(ownerID, "/allow add "+newcomer, regexp.MustCompile(newcomer+` may now talk to me`))
	w.ask(newcomer, "/whoami", whoami)
	w.ask(friendID, "/allow add 100000000000000004", regexp.MustCompile(`^Only the owner can manage who may talk to me\.`))
	w.ask(ownerID, "/allow remove "+friendID, regexp.MustCompile(`FETCH_ALLOWED_IDS, which /allow cannot change`))
	w.ask(ownerID, "/allow list", regexp.MustCompile(friendID+` \(FETCH_ALLOWED_IDS\), `+newcomer+` \(added `))

	w.stop()
	w.start()
	w.ask(newcomer, "/whoami", whoami)
	w.ask(ownerID, "/allow remove "+newcomer, regexp.MustCompile(newcomer+` may no longer talk to me`))
	m := w.send(newcomer, "/whoami")
	// The owner's next answer comes after Fetch read the newcomer's
	// message (one gateway, in order); nothing answered the newcomer.
	w.ask(ownerID, "/status", statusRe)
	if got := w.since(m); len(got) != 0 {
		t.Fatalf("a removed user was answered: %q", got[0].Text)
	}
}

// J-ws4: a short "fix it" while a task runs reaches the model, with the
// running task in its context, instead of "I'm not sure what to do".
func TestJourneyFixItWhileATaskRuns(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "app")
	w.start()
	_, status := w.startTask(ownerID, "add a health endpoint to the app workspace",
		"add a health endpoint and run the long suite [scenario:hang]", "app")
	id := taskID(t, status.Text)
	before := len(w.llm.Requests())
	w.llm.Script(testkit.Say("I'll look at task " + id + "."))
	got := w.ask(ownerID, "fix it", regexp.MustCompile(`I'll look at task|I'm not sure what to do`))
	if !strings.HasPrefix(got.Text, "I'll look at task "+id) {
		t.Fatalf("fix it while task %s runs: %q; want the model's answer", id, got.Text)
	}
	reqs := w.llm.Requests()
	if len(reqs) <= before {
		t.Fatal("fix it never reached the model")
	}
	if sys := reqs[before].System(); !strings.Contains(sys, "Running task: "+id) {
		t.Errorf("the model's context for fix it does not name the running task %s:\n%s", id, sys)
	}
	w.ask(ownerID, "/stop", regexp.MustCompile(`Stopping task `+id))
}

// J-ws5: fetch chat at a terminal greets with where its data is, whether
// an LLM is set and where the commands are; piped, it does not (the
// script's output stays what its commands print).
func TestJourneyChatGreetsAtATerminal(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	delete(w.env, "OPENROUTER_API_KEY")
	_, out := ttyChat(t, w)
	wants := []string{"Fetch: data in " + w.data + ", workspaces in " + w.wsRoot + ".", "LLM: not set", "/help lists the commands"}
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	for {
		missing := ""
		for _, want := range wants {
			if !strings.Contains(out.String(), want) {
				missing = want
				break
			}
		}
		if missing == "" {
			break
		}
		select {
		case <-out.changed:
		case <-deadline.C:
			t.Fatalf("fetch chat at a terminal printed:\n%s\nwant %q", out.String(), missing)
		}
	}
	code, piped, _ := w.cli("/whoami\n", "chat")
	if code != 0 || strings.Contains(piped, "/help lists the commands") || !strings.HasPrefix(piped, "You are ") {
		t.Fatalf("piped fetch chat: exit %d, printed %q; want only the reply", code, piped)
	}
}

// J-ws6: the owner lets a workspace's runs reach a host from the chat:
// /hosts asks for a workspace first; /hosts add refuses a URL with the
// form it expects and allows a host name; /status shows it; an allowed
// user who is not the owner is refused; fetch workspace show, on the same
// database, lists the host too. No task runs.
func TestJourneyHostsFromChat(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "app")
	w.start()
	w.ask(ownerID, "/hosts add allowed.example.org", regexp.MustCompile(`^No workspace is selected: /use NAME selects one`))
	w.ask(ownerID, "/use app", regexp.MustCompile(`^Workspace app selected`))
	w.ask(ownerID, "/hosts add https://allowed.example.org/x", regexp.MustCompile(`^Nothing changed: .*a URL or a host with a port.*; want a host name such as registry\.npmjs\.org`))
	w.ask(ownerID, "/hosts add allowed.example.org", regexp.MustCompile(`^Workspace app's runs may now reach allowed\.example\.org, from the next run on \(hosts allowed: allowed\.example\.org\)`))
	w.ask(ownerID, "/status", regexp.MustCompile(`(?m)^Workspace: app\n(?s:.*)^Way out: proxy; hosts allowed: allowed\.example\.org$`))
	w.ask(friendID, "/hosts add evil.example.org", regexp.MustCompile(`^Only the owner can see or change the hosts a workspace's runs may reach\.`))

	code, out, errs := w.cli("", "workspace", "show", "app")
	if code != 0 {
		t.Fatalf("fetch workspace show app: exit %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(out, "Hosts allowed to this workspace: allowed.example.org\n") || strings.Contains(out, "evil.example.org") {
		t.Errorf("fetch workspace show app after /hosts add:\n%s", out)
	}
}
