package journey

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fetch-dev/fetch/internal/testkit"
)

// outage is how long the network to the second engine stays cut: long
// enough for Fetch to find it out of reach and ask again.
const outage = 4 * time.Second

// newProxiedWorld is newRemoteWorldOn with the second engine reached
// through a TCP proxy, which cuts the network without stopping it.
func newProxiedWorld(t *testing.T, engine *testkit.Engine) (*world, *testkit.TCPProxy) {
	t.Helper()
	w := newRemoteWorldOn(t, engine)
	proxy := testkit.NewTCPProxy(t, strings.TrimPrefix(engine.Host, "tcp://"))
	w.env["FETCH_ENGINES"] = "remote=tcp://" + proxy.Addr + "?certs=" + engine.CertPath
	return w, proxy
}

// told counts the messages created since m whose text matches re.
func (w *world) told(m mark, re *regexp.Regexp) int {
	ids := map[string]bool{}
	for _, s := range w.since(m) {
		if s.New && re.MatchString(s.Text) {
			ids[s.Msg.ID] = true
		}
	}
	return len(ids)
}

// inFetchRepo checks that the task's branch holds file with the fake
// CLI's line in Fetch's own repository of the workspace.
func (w *world) inFetchRepo(ws, id, file string) {
	w.t.Helper()
	out, err := exec.Command("git", "--git-dir", filepath.Join(w.data, "repos", ws+".git"), "show", "fetch/"+id+":"+file).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "fake claude was here") {
		w.t.Errorf("fetch/%s:%s in Fetch's repository: %v: %s", id, file, err, out)
	}
}

// R5: the network to the second engine is cut while a task runs there
// (the engine and the run go on): the owner is told once that Fetch lost
// the connection, the CLI keeps working there meanwhile, and when the
// network is back the run is followed again and the task succeeds, its
// branch in Fetch's repository.
func TestJourneyNetworkCutMidTask(t *testing.T) {
	t.Parallel()
	w, proxy := newProxiedWorld(t, testkit.RemoteEngine(t))
	w.start()
	w.createWorkspace("app")
	m, status := w.startTask(ownerID, "add a health endpoint to app", "add a health endpoint [scenario:slow:20] [file:health.go]", "app")
	id := taskID(t, status.Text)
	w.await(m, regexp.MustCompile(`(?s)Task `+id+` on app .*Steps: \d`), "progress in the status message")

	proxy.Block()
	proxy.Cut()
	lost := regexp.MustCompile(`Lost the connection to engine remote while task ` + id + ` ran`)
	w.awaitNew(m, lost, "word that the engine does not answer")
	if ps, ok := w.waitProcesses(waitTimeout, func(ps []string) bool { return len(ps) > 0 }); !ok {
		t.Fatalf("the CLI is not working on the remote engine while the network is cut (%q)", ps)
	}
	time.Sleep(outage) // the network stays cut a while
	proxy.Unblock()

	w.awaitNew(m, regexp.MustCompile(`Engine remote answers again; task `+id+` on app is still running`), "word that the run is followed again")
	res := w.awaitResult(m, regexp.MustCompile(`✅ Task `+id+` succeeded on app`), "the task's result")
	if !strings.Contains(res.Text, "health.go") {
		t.Errorf("the result does not name health.go: %q", res.Text)
	}
	if n := w.told(m, lost); n != 1 {
		t.Errorf("the owner was told %d times that the connection was lost; want once", n)
	}
	w.inFetchRepo("app", id, "health.go")
}

// R6: Fetch is SIGKILLed while a task runs on the second engine, and
// starts again while that engine is out of reach: the owner is told once,
// and when the engine answers the run is followed again and the task
// succeeds.
func TestJourneyStartWhileEngineUnreachable(t *testing.T) {
	t.Parallel()
	w, proxy := newProxiedWorld(t, testkit.RemoteEngine(t))
	w.start()
	w.createWorkspace("app")
	m, status := w.startTask(ownerID, "add a health endpoint to app", "add a health endpoint [scenario:slow:25] [file:health.go]", "app")
	id := taskID(t, status.Text)
	w.await(m, regexp.MustCompile(`(?s)Task `+id+` on app .*Steps: \d`), "progress in the status message")
	w.kill()
	proxy.Block()
	proxy.Cut()

	m = w.mark(ownerID)
	w.start()
	lost := regexp.MustCompile(`Lost the connection to engine remote while task ` + id + ` ran`)
	w.awaitNew(m, lost, "word that the engine does not answer")
	time.Sleep(outage)
	proxy.Unblock()

	notice := w.awaitNew(m, regexp.MustCompile(`Task `+id+`.*(restart|following it again)`), "the re-attach notice")
	if strings.Contains(notice.Text, "interrupted") {
		t.Fatalf("the run on the second engine was lost: %q", notice.Text)
	}
	w.awaitResult(m, regexp.MustCompile(`✅ Task `+id+` succeeded on app`), "the followed task's result")
	if n := w.told(m, lost); n != 1 {
		t.Errorf("the owner was told %d times that the connection was lost; want once", n)
	}
	w.inFetchRepo("app", id, "health.go")
}
