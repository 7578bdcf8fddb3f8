package journey

import (
	"regexp"
	"strings"
	"testing"
)

// A task started from the terminal on a two-way CLI runs two-way too: what
// its CLI asks that the policy leaves to the owner goes to the owner's
// chat when a Fetch serves one on the same data directory, and the
// owner's answers there reach the CLI of the terminal's process. With no
// chat served, the policy decides and what it would ask about is denied.
func TestJourneyTerminalTaskAsksInChat(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "app")
	w.start()
	w.selectWorkspace("app")
	m := w.mark(ownerID)
	p := startWatched(t, w.environ(), w.watch, "task", "run", "--wait", "--workspace", "app",
		"tidy app [ask-permission:Bash:make deploy] [ask-permission:Bash:make release]")
	var id string
	w.must("the terminal task to start", func() bool {
		if mm := regexp.MustCompile(`Task (\S+) running on app`).FindStringSubmatch(p.log.String()); mm != nil {
			id = mm[1]
		}
		return id != ""
	})

	deploy := w.awaitNew(m, requestRe(id, "make deploy"), "the terminal task's request, in the chat")
	w.must("the terminal to say where the request was asked", func() bool {
		return strings.Contains(p.log.String(), "(make deploy): asked in your chat")
	})
	m = w.mark(ownerID)
	w.d.Click(ownerID, deploy.Msg.ID, w.button(deploy, "Allow once"))
	w.awaitNew(m, regexp.MustCompile(`^Allowed once \(task `+id+`, request \d+: make deploy\)`), "the allow's reply")
	w.await(m, regexp.MustCompile(`Task `+id+`'s request \d+ \(make deploy\) — allowed by `+ownerID), "the request message closed")

	release := w.awaitNew(m, requestRe(id, "make release"), "the second request, in the chat")
	w.button(release, "Deny")
	m = w.send(ownerID, "no, because we never release on a friday") // a typed answer, with the reason
	w.awaitNew(m, regexp.MustCompile(`^Denied; the CLI is told: we never release on a friday`), "the denial's reply")

	code := exited(t, p, waitTimeout)
	out := p.log.String()
	if code != 0 {
		t.Fatalf("fetch task run --wait exited %d; want 0 (succeeded)\n%s", code, out)
	}
	for _, want := range []string{"Ran `make deploy`", "Did not run `make release`: The user denied this: we never release on a friday"} {
		if !strings.Contains(out, want) {
			t.Errorf("the terminal task's output does not say %q:\n%s", want, out)
		}
	}

	// With no Fetch serving a chat, nobody could answer: the task runs
	// one-shot, as before, and the kennel is the boundary.
	w.stop()
	q := startWatched(t, w.environ(), w.watch, "task", "run", "--wait", "--workspace", "app", "tidy app again [ask-permission:Bash:make deploy]")
	// exited, not w.must: with fetch serve stopped nothing on the fake
	// Discord changes to wake a wait.
	code = exited(t, q, waitTimeout)
	out = q.log.String()
	if code != 0 {
		t.Fatalf("fetch task run --wait exited %d; want 0\n%s", code, out)
	}
	if strings.Contains(out, "asked in your chat") || strings.Contains(out, "Nobody can answer") {
		t.Errorf("with no chat served, the task still asked:\n%s", out)
	}
}
