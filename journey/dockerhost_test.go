package journey

import (
	"regexp"
	"strings"
	"testing"

	"github.com/fetch-dev/fetch/internal/testkit"
)

// TestJourneyDockerHost: with DOCKER_HOST naming another socket path to
// the engine, Fetch reaches the engine there, as the docker CLI would: a
// task runs in a kennel made through that socket, and the work is on its
// branch.
func TestJourneyDockerHost(t *testing.T) {
	t.Parallel()
	proxy := testkit.NewDockerProxy(t)
	w := newWorld(t, "app")
	w.env["DOCKER_HOST"] = proxy.Host
	w.start()
	m, status := w.startTask(ownerID, "add a note to the app workspace", "add a note [file:note.md]", "app")
	id := taskID(t, status.Text)
	w.awaitResult(m, regexp.MustCompile(`✅ Task `+id+` succeeded on app`), "the task's result")
	if got, err := w.gitShow("app", "fetch/"+id, "note.md"); err != nil || !strings.Contains(got, "fake claude was here") {
		t.Errorf("note.md on fetch/%s = %q, %v", id, got, err)
	}
	// Not only a check at start: the kennel was made, and the task run,
	// through DOCKER_HOST.
	for _, req := range []string{"/containers/create", "/exec"} {
		if !proxy.Saw(req) {
			t.Errorf("no %s request came through DOCKER_HOST=%s: Fetch used another engine address (requests: %q)", req, proxy.Host, proxy.Requests())
		}
	}
}
