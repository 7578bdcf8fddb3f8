package journey

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"

	"github.com/fetch-dev/fetch/internal/testkit"
)

// TestBuildImagesWithoutIndex: scripts/build-images.sh asked for CLIs from
// a package index it cannot reach stops before it builds anything, with a
// line of its own that names the index and the NAME=FILE way around it.
// The indexes are made unreachable through a proxy that refuses
// connections, so the test never reaches the network.
func TestBuildImagesWithoutIndex(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ clis, index, hint string }{
		{"claude", "npm's registry", "--cli claude=FILE"},
		{"claude,codex,cursor-agent=/bin/true", "npm's registry", "--cli claude=FILE,codex=FILE"},
		{"aider", "PyPI", "--cli aider=FILE"},
	} {
		cmd := exec.Command("scripts/build-images.sh", "--kennel-only", "--kennel-image", "fetch-kennel-unreachable:never", "--cli", tc.clis)
		cmd.Dir = repoRoot(t)
		cmd.Env = append(os.Environ(), "https_proxy=http://127.0.0.1:1", "HTTPS_PROXY=http://127.0.0.1:1", "no_proxy=", "NO_PROXY=")
		out, err := cmd.CombinedOutput()
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if cmd.ProcessState.ExitCode() != 1 || len(lines) != 1 ||
			!strings.HasPrefix(lines[0], "build-images: "+tc.index) || !strings.Contains(lines[0], "could not be reached") || !strings.Contains(lines[0], tc.hint) {
			t.Errorf("--cli %s: %v, output:\n%s\nwant exit 1 and one line naming %s and %q", tc.clis, err, out, tc.index, tc.hint)
		}
	}
}

// TestBuildImagesFailureLeavesNothing: a kennel build that fails (here on
// an empty base image, which has no shell for the first RUN) says so in a
// line of its own and leaves neither the containers its steps ran in nor
// the untagged images they made.
func TestBuildImagesFailureLeavesNothing(t *testing.T) {
	c := testkit.RequireDocker(t)
	base := fmt.Sprintf("fetch-empty-firsthour:%d", os.Getpid())
	imp := exec.Command("docker", "import", "-", base)
	imp.Stdin = emptyTar(t)
	if out, err := imp.CombinedOutput(); err != nil {
		t.Fatalf("docker import: %v\n%s", err, out)
	}
	t.Cleanup(func() { exec.Command("docker", "rmi", base).Run() })

	root := repoRoot(t)
	cmd := exec.Command("scripts/build-images.sh", "--kennel-only", "--kennel-image", base+"-kennel", "--cli", "cursor-agent=/bin/true")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "BASE="+base)
	out, _ := cmd.CombinedOutput()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if cmd.ProcessState.ExitCode() != 1 || !strings.HasPrefix(lines[len(lines)-1], "build-images: building "+base+"-kennel from Dockerfile.kennel failed") {
		t.Fatalf("exit %d, output:\n%s\nwant exit 1 and a last line saying the build failed", cmd.ProcessState.ExitCode(), out)
	}
	log, err := os.ReadFile(filepath.Join(root, "build", "Dockerfile.kennel.log"))
	if err != nil {
		t.Fatal(err)
	}
	var containers, images []string
	skip := false // the next image is a FROM's base or a cached one
	for _, l := range strings.Split(string(log), "\n") {
		switch {
		case strings.HasPrefix(l, " ---> Running in "):
			containers = append(containers, strings.TrimPrefix(l, " ---> Running in "))
		case strings.HasPrefix(l, " ---> ") && !skip && !strings.Contains(l, "Using cache"):
			images = append(images, strings.TrimPrefix(l, " ---> "))
		}
		skip = strings.Contains(l, " : FROM ") || strings.Contains(l, " ---> Using cache")
	}
	if len(containers) == 0 || len(images) == 0 {
		t.Fatalf("the build ran no step in a container or made no image:\n%s", log)
	}
	for _, id := range containers {
		if _, err := c.ContainerInspect(t.Context(), id); !cerrdefs.IsNotFound(err) {
			t.Errorf("the container %s of a failed step is still there (%v)", id, err)
		}
	}
	for _, id := range images {
		if _, err := c.ImageInspect(t.Context(), id); !cerrdefs.IsNotFound(err) {
			t.Errorf("the image %s a failed build made is still there (%v)", id, err)
		}
	}
}

// emptyTar is a tar archive with nothing in it: the file system of an
// image without even a shell.
func emptyTar(t testing.TB) io.Reader {
	var b bytes.Buffer
	if err := tar.NewWriter(&b).Close(); err != nil {
		t.Fatal(err)
	}
	return &b
}

// TestJourneyReminderInPlainWords: a reminder and a schedule typed in
// plain words are understood without the LLM, shown back with their time
// in the owner's zone (FETCH_TIMEZONE), and the reminder arrives.
func TestJourneyReminderInPlainWords(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.env["FETCH_TIMEZONE"] = "Asia/Kolkata"
	w.start()
	set := w.ask(ownerID, "remind me in 3 seconds to water the plants", regexp.MustCompile(`⏰ I'll remind you .* IST \(in 3s\): water the plants`))
	got := w.awaitNew(w.mark(ownerID), regexp.MustCompile(`⏰ Reminder.*water the plants`), "the reminder")
	if strings.Contains(got.Text, "Fetch was not running") {
		t.Errorf("the reminder %q is marked late", got.Text)
	}
	w.ask(ownerID, "every monday at 9 summarize open PRs", regexp.MustCompile(`🔁 Scheduled "0 9 \* \* 1" \(Asia/Kolkata\); next run Mon .* 09:00 IST .*summarize open PRs`))
	w.ask(ownerID, "/cron list", regexp.MustCompile(`0 9 \* \* 1`))
	if n := len(w.llm.Requests()); n != 0 {
		t.Errorf("the LLM was asked %d times; reminders in plain words need no LLM (confirmation %q)", n, set.Text)
	}
	w.stop()
}

// TestJourneyGuardConfirmsRoutineQuestions: at the default autonomy level
// (cautious) Fetch answers its own routine "shall I go ahead?" itself and
// only the destructive question reaches the owner; under supervised the
// routine one reaches the owner too.
func TestJourneyGuardConfirmsRoutineQuestions(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.start()
	const routineQ, destructiveQ = "Shall I go ahead with the cleanup?", "Shall I delete the old release branches?"
	ask := func(id, q string) testkit.Step {
		return testkit.Use(testkit.Call{ID: id, Name: "ask_user", Arguments: fmt.Sprintf(`{"question":%q}`, q)})
	}
	w.llm.Script(ask("q1", routineQ), ask("q2", destructiveQ))
	m := w.send(ownerID, "clean up the repository's release branches")
	w.awaitNew(m, regexp.MustCompile(regexp.QuoteMeta(destructiveQ)), "the destructive question")
	for _, msg := range w.messages(ownerID) {
		if strings.Contains(msg.Content, routineQ) {
			t.Errorf("the routine question reached the owner in cautious mode: %q", msg.Content)
		}
	}
	w.ask(ownerID, "/stop", regexp.MustCompile(`.`))

	w.ask(ownerID, "/autonomy supervised", regexp.MustCompile(`Autonomy: supervised`))
	w.llm.Script(ask("q3", routineQ))
	m = w.send(ownerID, "clean up the repository's release branches")
	w.awaitNew(m, regexp.MustCompile(regexp.QuoteMeta(routineQ)), "the routine question under supervised")
	w.stop()
}

// TestJourneyAuditAndPrune: fetch audit prints what was decided without
// sqlite3, as text and JSON, filtered; fetch prune (dry, then for real)
// removes delivered messages older than FETCH_KEEP and keeps the audit
// log.
func TestJourneyAuditAndPrune(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.env["FETCH_TIMEZONE"] = "Asia/Kolkata"
	if code, out, errs := w.cli("/autonomy supervised\n/clear\n", "chat"); code != 0 {
		t.Fatalf("fetch chat: exit %d\n%s%s", code, out, errs)
	}
	audit := regexp.MustCompile(`(?m)^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d IST  \S+\s+autonomy\s+supervised$`)
	code, out, errs := w.cli("", "audit")
	if code != 0 || !audit.MatchString(out) || !strings.Contains(out, " clear ") {
		t.Fatalf("fetch audit: exit %d\n%s%s\nwant the autonomy change and the clear, in IST", code, out, errs)
	}
	code, out, _ = w.cli("", "audit", "--action", "autonomy", "--since", "1h", "--json")
	var entries []struct{ Actor, Action, Detail string }
	if err := json.Unmarshal([]byte(out), &entries); code != 0 || err != nil || len(entries) != 1 || entries[0].Detail != "supervised" {
		t.Fatalf("fetch audit --action autonomy --json: exit %d, %v\n%s", code, err, out)
	}
	if code, _, errs := w.cli("", "audit", "--limit", "-1"); code != 2 || !strings.Contains(errs, "--limit") {
		t.Errorf("fetch audit --limit -1: exit %d, %q; want a usage error", code, errs)
	}

	// The messages are older than FETCH_KEEP a moment later.
	w.env["FETCH_KEEP"] = "1s"
	time.Sleep(1500 * time.Millisecond)
	pruned := regexp.MustCompile(`^(Would prune|Pruned) what ended before .* \(FETCH_KEEP 1s\): (\d+) messages, \d+ agent turns, \d+ task events, \d+ patches\. The audit log is kept\.\n$`)
	var counts []string
	for _, args := range [][]string{{"prune", "--dry-run"}, {"prune"}, {"prune", "--dry-run"}} {
		code, out, errs := w.cli("", args...)
		m := pruned.FindStringSubmatch(out)
		if code != 0 || m == nil {
			t.Fatalf("fetch %v: exit %d\n%s%s", args, code, out, errs)
		}
		counts = append(counts, m[1]+" "+m[2])
	}
	if counts[0] != "Would prune 4" || counts[1] != "Pruned 4" || counts[2] != "Would prune 0" {
		t.Errorf("prune said %q; want the 4 messages of the chat would go, went, and then none left", counts)
	}
	if code, out, _ := w.cli("", "audit"); code != 0 || !audit.MatchString(out) {
		t.Errorf("fetch audit after the prune: exit %d\n%s\nwant the autonomy change still there", code, out)
	}

	// fetch serve prunes at its start.
	if code, out, errs := w.cli("/status\n", "chat"); code != 0 {
		t.Fatalf("fetch chat: exit %d\n%s%s", code, out, errs)
	}
	time.Sleep(1500 * time.Millisecond)
	w.watch = append(w.watch, "pruned what FETCH_KEEP no longer keeps")
	p := w.start()
	w.must("fetch serve to prune at its start", func() bool { return p.log.saw("pruned what FETCH_KEEP no longer keeps") })
	w.stop()
	if _, out, _ := w.cli("", "prune", "--dry-run"); !strings.HasPrefix(out, "Would prune what ended before") || !strings.Contains(out, ": 0 messages") {
		t.Errorf("after fetch serve started: %q; want nothing left to prune", out)
	}
}

// TestComposeNeedsDockerGID: compose.yaml takes the Docker socket's group
// from DOCKER_GID and, without it, stops with how to find it rather than
// guess a group that differs between machines.
func TestComposeNeedsDockerGID(t *testing.T) {
	t.Parallel()
	compose, err := exec.LookPath("docker-compose")
	if err != nil {
		t.Skip("no docker-compose")
	}
	env := filepath.Join(t.TempDir(), "fetch.env")
	if err := os.WriteFile(env, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	config := func(gid string) (string, error) {
		cmd := exec.Command(compose, "-f", "compose.yaml", "config")
		cmd.Dir = repoRoot(t)
		cmd.Env = slices.DeleteFunc(os.Environ(), func(v string) bool { return strings.HasPrefix(v, "DOCKER_GID=") })
		cmd.Env = append(cmd.Env, "FETCH_ENV_FILE="+env)
		if gid != "" {
			cmd.Env = append(cmd.Env, "DOCKER_GID="+gid)
		}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := config(""); err == nil || !strings.Contains(out, "stat -c %g /var/run/docker.sock") {
		t.Errorf("docker-compose config without DOCKER_GID: %v\n%s\nwant a failure saying how to find the group", err, out)
	}
	if out, err := config("105"); err != nil || !strings.Contains(out, "- '105'") {
		t.Errorf("docker-compose config with DOCKER_GID=105: %v\n%s\nwant group 105 added", err, out)
	}
}

// TestJourneyServeWaitsForDiscord: fetch serve started while Discord
// cannot be reached stays up, says so in its log and tries again, and
// connects once Discord answers: under a supervisor's restart policy it
// does not exit in a loop.
func TestJourneyServeWaitsForDiscord(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	// An address nothing listens on yet; later it forwards to the fake.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	w.env["FETCH_DISCORD_URL"] = "http://" + addr
	const retrying = "cannot reach Discord; trying again"
	p := startWatched(t, w.environ(), []string{retrying}, "serve")
	// Nothing changes on the fake Discord meanwhile: the log is read.
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(waitTimeout)
	for !p.log.saw(retrying) {
		select {
		case <-tick.C:
		case <-p.done:
			t.Fatalf("fetch serve exited when Discord could not be reached: %v", p.err)
		case <-deadline:
			t.Fatalf("fetch serve did not say it cannot reach Discord within %s", waitTimeout)
		}
	}
	l, err = net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen again on %s: %v", addr, err)
	}
	t.Cleanup(func() { l.Close() })
	go forward(l, strings.TrimPrefix(w.d.URL(), "http://"))
	w.fetch, w.starts = p, 1
	w.d.WaitConnected(t, 1, 0)
	w.ask(ownerID, "/status", statusRe)
	w.stop()
}

// forward copies each connection l accepts to and from a connection to
// the address to, until l is closed.
func forward(l net.Listener, to string) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			u, err := net.Dial("tcp", to)
			if err != nil {
				return
			}
			defer u.Close()
			go io.Copy(u, c)
			io.Copy(c, u)
		}()
	}
}
