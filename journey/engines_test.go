package journey

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/volume"

	"github.com/fetch-dev/fetch/internal/testkit"
)

// R1: with a second Docker engine in FETCH_ENGINES, a new workspace is
// placed there (a volume: nothing of it on this machine); a task on it
// runs in a kennel on that engine, its result comes to the chat, and its
// branch is in Fetch's own repository of the workspace. A /stop there is
// answered within a second and leaves no CLI process on that engine.
func TestJourneyTaskOnAnotherEngine(t *testing.T) {
	t.Parallel()
	w := newRemoteWorld(t)
	w.start()
	w.createWorkspace("app")
	if _, err := os.Stat(w.workspacePath("app")); err == nil {
		t.Errorf("the workspace is a directory on this machine; it should live on the remote engine")
	}
	vols, err := w.docker.VolumeList(context.Background(), volume.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, v := range vols.Volumes {
		found = found || v.Labels["fetch.kennel.workspace-volume"] == w.workspacePath("app")
	}
	if !found {
		t.Errorf("no volume for app on the remote engine")
	}

	st := w.ask(ownerID, "/status", statusRe)
	if !regexp.MustCompile(`Engines: local \(\d+ kennel\(s\).*\), remote \(\d+ kennel\(s\), -?[\d.]+ GiB and -?\d+ CPUs left\)`).MatchString(st.Text) {
		t.Errorf("/status does not show the engines and their load: %q", st.Text)
	}

	m, status := w.startTask(ownerID, "add a health endpoint to app", "add a health endpoint [file:health.go]", "app")
	id := taskID(t, status.Text)
	res := w.awaitResult(m, regexp.MustCompile(`✅ Task `+id+` succeeded on app`), "the task's result")
	if !strings.Contains(res.Text, "health.go") || !strings.Contains(res.Text, "+fake claude was here") {
		t.Errorf("the result lacks the file or its diff: %q", res.Text)
	}
	// The branch is in Fetch's own repository (read here with git on a
	// repository only Fetch writes).
	out, err := exec.Command("git", "--git-dir", filepath.Join(w.data, "repos", "app.git"), "show", "fetch/"+id+":health.go").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "fake claude was here") {
		t.Errorf("fetch/%s:health.go in Fetch's repository: %v: %s", id, err, out)
	}

	// A stop on the remote engine.
	m, status = w.startTask(ownerID, "run the long suite in app", "run the long suite [scenario:hang]", "app")
	id = taskID(t, status.Text)
	if ps, ok := w.waitProcesses(waitTimeout, func(ps []string) bool { return len(ps) > 0 }); !ok {
		t.Fatalf("no CLI process on the remote engine (%q)", ps)
	}
	sent := time.Now()
	w.send(ownerID, "/stop")
	w.stopWithin(m, sent, regexp.MustCompile(`Stopping task `+id))
	if ps, ok := w.waitProcesses(waitTimeout, func(ps []string) bool { return len(ps) == 0 }); !ok {
		t.Errorf("CLI processes left on the remote engine after /stop: %q", ps)
	}
	w.awaitResult(m, regexp.MustCompile(`⏹️ Task `+id+` was cancelled`), "the cancelled task's result")
}

// newRemoteWorld is a world whose Fetch uses only a second engine for new
// workspaces (FETCH_ENGINES); the world looks at the kennels there.
func newRemoteWorld(t *testing.T) *world {
	t.Helper()
	return newRemoteWorldOn(t, testkit.RemoteEngine(t))
}

// newRemoteWorldOn is newRemoteWorld on a given second engine.
func newRemoteWorldOn(t *testing.T, engine *testkit.Engine) *world {
	t.Helper()
	w := newWorld(t)
	w.env["FETCH_ENGINES"] = "remote=" + engine.Host + "?certs=" + engine.CertPath
	// The kennels are looked at, and removed, where they run, before the
	// client closes.
	local := w.docker
	w.docker = engine.Client(t)
	t.Cleanup(func() {
		w.removeKennels()
		w.docker = local
	})
	return w
}

// createWorkspace has the model create workspace name for the owner.
func (w *world) createWorkspace(name string) {
	w.t.Helper()
	args, _ := json.Marshal(map[string]string{"name": name})
	w.llm.Script(testkit.Use(testkit.Call{ID: "call-create-" + name, Name: "workspace_create", Arguments: string(args)}), testkit.Say("Created "+name+"."))
	w.ask(ownerID, "create a new workspace named "+name, regexp.MustCompile(`^Created `+regexp.QuoteMeta(name)+`\.`))
}

// R2: Fetch is SIGKILLed while a task runs on the second engine; after the
// restart the run is followed again there (announced once, as a new
// message) and its result comes, its work on its branch.
func TestJourneyCrashMidTaskOnAnotherEngine(t *testing.T) {
	t.Parallel()
	w := newRemoteWorld(t)
	w.start()
	w.createWorkspace("app")
	m, status := w.startTask(ownerID, "add a health endpoint to app", "add a health endpoint [scenario:slow:12] [file:health.go]", "app")
	id := taskID(t, status.Text)
	w.await(m, regexp.MustCompile(`(?s)Task `+id+` on app .*Steps: \d`), "progress in the status message")
	w.kill()

	m = w.mark(ownerID)
	w.start()
	notice := w.awaitNew(m, regexp.MustCompile(`Task `+id+`.*restart`), "the re-attach notice")
	if strings.Contains(notice.Text, "interrupted") {
		t.Fatalf("the run on the second engine was lost: %q", notice.Text)
	}
	res := w.awaitResult(m, regexp.MustCompile(`✅ Task `+id+` succeeded on app`), "the followed task's result")
	if !strings.Contains(res.Text, "health.go") {
		t.Errorf("result %q does not name health.go", res.Text)
	}
	out, err := exec.Command("git", "--git-dir", filepath.Join(w.data, "repos", "app.git"), "show", "fetch/"+id+":health.go").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "fake claude was here") {
		t.Errorf("fetch/%s:health.go in Fetch's repository: %v: %s", id, err, out)
	}
}

// R3: the second engine goes away while a task runs there (its machine
// lost: the engine's container killed, which ends the kennel with it):
// the owner is told once that Fetch lost the connection to it, naming it,
// and the task is not ended while the engine does not answer; when it is
// back (its dockerd restarted without the run) the task is reported
// interrupted, once, and the workspace (its volume), its history and
// Fetch's repository are all there and a new task runs.
//
// The engine is killed rather than stopped: a stopped dockerd ends its
// containers and may still answer for a moment, and Fetch, told then that
// the kennel no longer has the run, rightly reports it interrupted before
// the engine is gone, which leaves nothing to look for here.
func TestJourneyEngineGoesAway(t *testing.T) {
	t.Parallel()
	engine := testkit.NewRemoteEngine(t) // its own: it is killed
	w := newRemoteWorldOn(t, engine)
	w.start()
	w.createWorkspace("app")
	m, status := w.startTask(ownerID, "add a health endpoint to app", "add a health endpoint [file:health.go]", "app")
	first := taskID(t, status.Text)
	w.awaitResult(m, regexp.MustCompile(`✅ Task `+first+` succeeded on app`), "the first task's result")

	m, status = w.startTask(ownerID, "run the long suite in app", "run the long suite [scenario:slow:60]", "app")
	id := taskID(t, status.Text)
	w.await(m, regexp.MustCompile(`(?s)Task `+id+` on app .*Steps: \d`), "progress in the status message")
	engine.Kill(t)
	lost := regexp.MustCompile(`Lost the connection to engine remote while task ` + id + ` ran`)
	failed := regexp.MustCompile(`❌ Task ` + id + ` failed on app`)
	w.awaitNew(m, lost, "word that the engine does not answer")
	// Long enough for a few of Fetch's attempts to reach it (2 s, then 4 s).
	time.Sleep(7 * time.Second)
	if _, ok := w.find(m, regexp.MustCompile(`Task `+id+` (failed|succeeded|was cancelled)`), nil); ok {
		t.Fatalf("the task ended while its engine was away")
	}
	engine.Start(t)
	res := w.awaitResult(m, failed, "word of the task")
	if !strings.Contains(res.Text, "interrupted") || !strings.Contains(res.Text, "remote") || !strings.Contains(res.Text, "went away") {
		t.Errorf("the result does not say that the task was interrupted when the engine remote went away: %q", res.Text)
	}
	if n := w.told(m, lost); n != 1 {
		t.Errorf("the owner was told %d times that the connection was lost; want once", n)
	}
	if n := w.told(m, regexp.MustCompile(`Task `+id+` failed`)); n != 1 {
		t.Errorf("the owner was told %d times that the task failed; want once", n)
	}
	// Nothing lost: the first task's branch is in Fetch's repository.
	w.inFetchRepo("app", first, "health.go")
	m, status = w.startTask(ownerID, "add a readme note to app", "add a note [file:note.txt]", "app")
	id = taskID(t, status.Text)
	w.awaitResult(m, regexp.MustCompile(`✅ Task `+id+` succeeded on app`), "the next task's result")
}

// R4: the hostile-workspace plantings (hooks, configuration naming
// programs, filter drivers) in a workspace on the second engine: a task
// there completes and its branch reaches Fetch's repository, and none of
// the planted programs runs on Fetch's machine (no marker in a directory
// of this machine that they all try to write).
func TestJourneyHostileWorkspaceOnAnotherEngine(t *testing.T) {
	t.Parallel()
	w := newRemoteWorld(t)
	host := t.TempDir()
	if err := os.Chmod(host, 0o777); err != nil {
		t.Fatal(err)
	}
	w.start()
	w.createWorkspace("app")
	ws := w.workspacePath("app")
	w.inRemoteKennel(ws, plantScript(ws, ws+"/.git", host, false))

	// The test's sensitivity: the planted repository, brought to this
	// machine at the same path and used by git the way git usually is,
	// does run the planted code. It is removed again before any task (a
	// directory there would make the workspace look local).
	w.copyFromRemoteVolume(ws)
	os.WriteFile(filepath.Join(ws, "new.txt"), []byte("x\n"), 0o644)
	hostGit(t, ws, "status")
	hostGit(t, ws, "add", "-A")
	hostGit(t, ws, "commit", "--no-gpg-sign", "-m", "x")
	hostGit(t, ws, "diff", "HEAD~1", "HEAD")
	got := markers(t, host)
	for _, want := range []string{"core-fsmonitor", "filter-evil-clean", "hook-pre-commit", "hook-post-commit", "diff-external"} {
		if !slices.Contains(got, want) {
			t.Fatalf("the planted %s did not run under host git (markers %q): the test cannot see what it looks for", want, got)
		}
	}
	if err := os.RemoveAll(ws); err != nil {
		t.Fatal(err)
	}
	for _, m := range got {
		os.Remove(filepath.Join(host, m))
	}

	m, status := w.startTask(ownerID, "add a note to app", "add a note [file:note.txt]", "app")
	id := taskID(t, status.Text)
	w.awaitResult(m, regexp.MustCompile(`✅ Task `+id+` succeeded on app`), "the task's result")
	out, err := exec.Command("git", "--git-dir", filepath.Join(w.data, "repos", "app.git"), "log", "--oneline", "fetch/"+id).CombinedOutput()
	if err != nil {
		t.Errorf("fetch/%s in Fetch's repository: %v: %s", id, err, out)
	}
	if got := markers(t, host); len(got) > 0 {
		t.Errorf("code planted in the workspace ran on Fetch's machine: %q", got)
	}
}

// copyFromRemoteVolume copies the workspace ws out of its volume on the
// world's engine to the same path on this machine (the test's only, to
// show what host git would do with it).
func (w *world) copyFromRemoteVolume(ws string) {
	w.t.Helper()
	ctx := context.Background()
	name := w.remoteVolume(ws)
	resp, err := w.docker.ContainerCreate(ctx, &container.Config{Image: harnessImage(w.t), Entrypoint: []string{"true"}},
		&container.HostConfig{Mounts: []mount.Mount{{Type: mount.TypeVolume, Source: name, Target: ws, VolumeOptions: &mount.VolumeOptions{NoCopy: true}}}}, nil, nil, "")
	if err != nil {
		w.t.Fatal(err)
	}
	defer w.docker.ContainerRemove(ctx, resp.ID, container.RemoveOptions{Force: true})
	rc, _, err := w.docker.CopyFromContainer(ctx, resp.ID, ws)
	if err != nil {
		w.t.Fatal(err)
	}
	defer rc.Close()
	if err := os.MkdirAll(filepath.Dir(ws), 0o755); err != nil {
		w.t.Fatal(err)
	}
	untar := exec.Command("tar", "-x", "-C", filepath.Dir(ws))
	untar.Stdin = rc
	if out, err := untar.CombinedOutput(); err != nil {
		w.t.Fatalf("untar %s: %v\n%s", ws, err, out)
	}
}

// remoteVolume is the name of workspace ws's volume on the world's engine.
func (w *world) remoteVolume(ws string) string {
	w.t.Helper()
	vols, err := w.docker.VolumeList(context.Background(), volume.ListOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	for _, v := range vols.Volumes {
		if v.Labels["fetch.kennel.workspace-volume"] == ws {
			return v.Name
		}
	}
	w.t.Fatalf("no volume for %s on the engine", ws)
	return ""
}

// inRemoteKennel runs a shell script as the kennel's user in a container
// of the kennel image on the world's engine with the workspace's volume
// mounted at its path, as a coding CLI would run it.
func (w *world) inRemoteKennel(ws, script string) {
	w.t.Helper()
	ctx := context.Background()
	name := w.remoteVolume(ws)
	uid, gid := kennelUser()
	resp, err := w.docker.ContainerCreate(ctx, &container.Config{
		Image: harnessImage(w.t), User: fmt.Sprintf("%d:%d", uid, gid), Entrypoint: []string{"/bin/sh", "-c", script},
	}, &container.HostConfig{Mounts: []mount.Mount{{Type: mount.TypeVolume, Source: name, Target: ws, VolumeOptions: &mount.VolumeOptions{NoCopy: true}}}}, nil, nil, "")
	if err != nil {
		w.t.Fatal(err)
	}
	defer w.docker.ContainerRemove(ctx, resp.ID, container.RemoveOptions{Force: true})
	waitC, errC := w.docker.ContainerWait(ctx, resp.ID, container.WaitConditionNextExit)
	if err := w.docker.ContainerStart(ctx, resp.ID, container.StartOptions{}); err != nil {
		w.t.Fatal(err)
	}
	select {
	case r := <-waitC:
		if r.StatusCode != 0 {
			w.t.Fatalf("the planting script exited %d", r.StatusCode)
		}
	case err := <-errC:
		w.t.Fatal(err)
	}
}
