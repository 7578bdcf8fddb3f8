package journey

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"

	"github.com/fetch-dev/fetch/internal/testkit"
	"github.com/fetch-dev/fetch/kennel"
)

// kennelPoll is how often the sleep journey looks at the engine.
const kennelPoll = 200 * time.Millisecond

// kennelOf lists the containers (any state: created, running, exited) that
// fetch made for one workspace, by its label.
func (w *world) kennelOf(ws string) []container.Summary {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	list, err := w.docker.ContainerList(ctx, container.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("label", kennel.LabelWorkspace+"="+w.workspacePath(ws)))})
	if err != nil {
		w.t.Fatalf("list the kennels of %s: %v", ws, err)
	}
	return list
}

// noKennels fails the test when a container exists for any of the
// world's workspaces, in any state: what was done before (what) started
// one.
func (w *world) noKennels(what string) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if ids := w.kennels(ctx); len(ids) > 0 {
		w.t.Errorf("%s: %d kennel container(s) exist for the world's workspaces (%v); want none", what, len(ids), ids)
	}
}

// awaitKennels polls the engine until cond holds for the workspace's
// containers, for at most timeout.
func (w *world) awaitKennels(ws string, timeout time.Duration, what string, cond func([]container.Summary) bool) {
	w.t.Helper()
	deadline := time.Now().Add(w.limit(timeout))
	tick := time.NewTicker(kennelPoll)
	defer tick.Stop()
	for {
		list := w.kennelOf(ws)
		if cond(list) {
			return
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("%s: not within %s (containers of %s: %+v)", what, timeout, ws, list)
		}
		<-tick.C
	}
}

// J-sleep: kennels run only while they are used. Read-only commands, /status
// and a question in chat start none; a task starts its workspace's kennel,
// which stops once idle for FETCH_KENNEL_IDLE and starts again for the next
// task, which succeeds.
func TestJourneyKennelsSleep(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "app", "docs")
	w.env["FETCH_KENNEL_IDLE"] = "3s"

	// Read-only commands.
	for _, args := range [][]string{
		{"workspace", "list"},
		{"workspace", "list", "--json"},
		{"task", "ls"},
	} {
		if code, out, errs := w.cli("", args...); code != 0 {
			t.Fatalf("fetch %v: exit %d\n%s\n%s", args, code, out, errs)
		}
	}
	w.noKennels("fetch workspace list and fetch task ls")

	// Chat: a command and a question about the selected workspace's code.
	w.start()
	w.ask(ownerID, "/use app", regexp.MustCompile(`Workspace app selected`))
	w.ask(ownerID, "/status", regexp.MustCompile(`Workspace: app`))
	w.llm.Script(
		testkit.Use(testkit.Call{ID: "map", Name: "code_map", Arguments: `{}`}),
		testkit.Say("The app workspace holds a README and nothing else yet."),
	)
	w.ask(ownerID, "what is in the app workspace?", regexp.MustCompile(`holds a README`))
	w.noKennels("/use, /status and a question in chat")

	// A task starts app's kennel (only app's) and succeeds.
	m, status := w.startTask(ownerID, "add a health endpoint to app", "add a health endpoint [file:health.go]", "app")
	id := taskID(t, status.Text)
	w.awaitResult(m, regexp.MustCompile(`✅ Task `+id+` succeeded on app`), "the first task's result")
	if list := w.kennelOf("docs"); len(list) != 0 {
		t.Errorf("a task on app started docs' kennel too: %+v", list)
	}

	// Idle for FETCH_KENNEL_IDLE, the kennel stops: its container is gone.
	w.awaitKennels("app", waitTimeout, "app's kennel stopping once idle", func(l []container.Summary) bool { return len(l) == 0 })
	// Reading the task, and the list, do not wake it.
	for _, args := range [][]string{{"task", "show", id}, {"task", "log", id}, {"workspace", "list"}} {
		code, out, errs := w.cli("", args...)
		if code != 0 {
			t.Fatalf("fetch %v: exit %d\n%s\n%s", args, code, out, errs)
		}
		if args[0] == "workspace" && !regexp.MustCompile(`(?m)^app\s+-\s+main\s+asleep\s+`).MatchString(out) {
			t.Errorf("fetch workspace list while app's kennel sleeps:\n%s\nwant app on main, asleep", out)
		}
	}
	w.noKennels("fetch task show, fetch task log and fetch workspace list after the kennel slept")

	// The next task starts it again and succeeds.
	m, status = w.startTask(ownerID, "add a readiness endpoint to app", "add a readiness endpoint [file:ready.go]", "app")
	id2 := taskID(t, status.Text)
	w.awaitResult(m, regexp.MustCompile(`✅ Task `+id2+` succeeded on app`), "the second task's result")
	if got, err := w.gitShow("app", "fetch/"+id2, "ready.go"); err != nil || got == "" {
		t.Fatalf("ready.go on fetch/%s: %q, %v", id2, got, err)
	}
	// A follow-up of the first task: its CLI's session went with the
	// kennel that slept, so the follow-up goes on in a new session, on
	// the task's branch.
	out, err := w.fetchCLI("task", "continue", id, "also log the errors")
	if err != nil || !strings.Contains(out, "✅ Task "+id+" succeeded") {
		t.Fatalf("fetch task continue after the kennel slept: %v\n%s", err, out)
	}
	// And it sleeps again.
	w.awaitKennels("app", waitTimeout, "app's kennel stopping again once idle", func(l []container.Summary) bool { return len(l) == 0 })
	w.noKennels("the end")
}
