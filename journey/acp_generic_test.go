package journey

import (
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/fetch-dev/fetch/internal/testkit"
)

// The generic ACP harness: an ACP agent Fetch has no code for, run
// two-way by naming it in one setting. The scripted agent is installed as
// /usr/local/bin/pi-agent in an image of the test's own; Fetch knows
// nothing of it but the name FETCH_HARNESS gives.

var (
	piImageOnce sync.Once
	piImage     string
)

// piAgentImage is the journeys' kennel image with the scripted ACP agent
// also installed as pi-agent, built once per test process.
func piAgentImage(t testing.TB) string {
	t.Helper()
	base := harnessImage(t)
	piImageOnce.Do(func() {
		data, err := os.ReadFile(testkit.FakeCLI(t))
		if err != nil {
			t.Fatalf("journey: %v", err)
		}
		piImage = testkit.KennelLayer(t, base, testkit.HarnessRepo, []testkit.ImageFile{{Path: "/usr/local/bin/pi-agent", Mode: 0o755, Data: data}})
	})
	if piImage == "" {
		t.Fatal("journey: the pi-agent image was not built")
	}
	return piImage
}

// startOn DMs a request for which the model calls task_create with goal
// on ws, and returns the mark before it and the task's id once the task
// runs on harness.
func (w *world) startOn(harness, request, goal, ws string) (mark, string) {
	w.t.Helper()
	w.llm.Script(taskCreate("call-"+ws, goal, ws), testkit.Say("Started it."))
	m := w.send(ownerID, request)
	re := regexp.MustCompile(`Task (\S+) on ` + regexp.QuoteMeta(ws) + ` \(` + regexp.QuoteMeta(harness) + `\) — running`)
	status := w.await(m, re, "the task's status message on "+harness)
	return m, re.FindStringSubmatch(status.Text)[1]
}

// The generic ACP harness running a scripted ACP agent it was never
// compiled for, configured by one setting: FETCH_HARNESS=acp:pi-agent.
// The agent asks before its edit, the edit is on the task's branch, and
// the result is the agent's own message.
func TestJourneyGenericACPAgent(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "app")
	w.env["FETCH_KENNEL_IMAGE"] = piAgentImage(t)
	w.env["FETCH_HARNESS"] = "acp:pi-agent"
	w.start()
	m, id := w.startOn("acp:pi-agent", "write the release notes in app", "write the release notes [ask-edit:NOTES.md]", "app")

	res := w.awaitResult(m, regexp.MustCompile(`(?s)✅ Task `+id+` succeeded on app`), "the task's result")
	if !strings.Contains(res.Text, "NOTES.md") || !strings.Contains(res.Text, "fetch/"+id) {
		t.Errorf("result %q does not name the changed file NOTES.md and the branch fetch/%s", res.Text, id)
	}
	got, err := w.gitShow("app", "fetch/"+id, "NOTES.md")
	if err != nil {
		t.Fatalf("branch fetch/%s: %v", id, err)
	}
	if !strings.Contains(got, "fake pi-agent edited this with the owner's permission") {
		t.Errorf("NOTES.md on fetch/%s = %q", id, got)
	}
}

// A generic ACP harness whose command is not in the kennel: the task
// fails, and what the owner reads names the command.
func TestJourneyGenericACPAgentNotInKennel(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "app")
	w.env["FETCH_HARNESS"] = "acp:goose acp"
	w.start()
	m, id := w.startOn("acp:goose acp", "tidy app", "tidy", "app")
	res := w.awaitResult(m, regexp.MustCompile(`(?s)❌ Task `+id+` failed on app`), "the task's failure")
	if !strings.Contains(res.Text, "goose is not in the kennel") {
		t.Errorf("the failure %q does not say that goose is not in the kennel", res.Text)
	}
}
