package journey

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"

	"github.com/fetch-dev/fetch/internal/testkit"
	"github.com/fetch-dev/fetch/internal/workspace"
	"github.com/fetch-dev/fetch/kennel"
)

// The people of the journeys and the bot's token, as in cmd/fetch's tests.
const (
	testToken = "MTAwMDAwMDAwMDAwMDAwMDAx.GhJkLm.fake-bot-token-for-the-tests-0123456789"
	ownerID   = "100000000000000001"
	friendID  = "100000000000000002"
)

const (
	// waitTimeout bounds every wait of a journey for something fetch should
	// do: a deadlock fails the journey with what was seen, not the go test
	// timeout.
	waitTimeout = 60 * time.Second
	// interruptGrace is how long fetch may take to stop after SIGINT.
	interruptGrace = 20 * time.Second
	// evidenceWait bounds each wait once a journey has failed: what it
	// still looks at is evidence for the report, and a deadlocked fetch
	// should not hold the suite for a full waitTimeout per step.
	evidenceWait = 20 * time.Second
	// killWait bounds the wait for a SIGKILLed fetch to be reaped.
	killWait = 10 * time.Second
	// procPoll is how often the kennel's process list is read: Docker has
	// no event for a process inside a container ending, so waiting for one
	// to go (or come) is the one place these tests poll.
	procPoll = 100 * time.Millisecond
	// logKeep is how much of fetch's output is kept for a failure report.
	logKeep = 256 << 10
	// journeyParallel is how many journeys run at once when -parallel is
	// not given: they mostly wait on Docker, fetch and the clock, so more
	// than GOMAXPROCS (2 on the CI machine) keeps the suite short.
	journeyParallel = "6"
)

// binDir holds the fetch binary built for this test process.
var binDir string

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		// The quick loop (go test -short ./...): journeys build the binary
		// and run real kennels, which takes minutes; the full suite runs them.
		fmt.Println("journey: skipped by -short")
		os.Exit(0)
	}
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit {
		flag.Set("test.parallel", journeyParallel)
	}
	dir, err := os.MkdirTemp("", "fetch-journey-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "journey:", err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	testkit.RemoveOrphanEgress() // what a world's cleanup could not remove
	os.Exit(code)
}

var (
	buildOnce sync.Once
	buildErr  error

	imageMu sync.Mutex
	image   string
)

// releaseFlags are the build flags of the fetch binary the image ships
// (scripts/build-images.sh; it adds the static link, which changes no
// package). The journeys build fetch with them, .ci/run vets with them and
// the newcomer's go install gets them in GOFLAGS, so that Fetch's packages
// are compiled once for all of them, not once as a plain build and again
// for the image (a few minutes of CPU each). TestJourneysBuildFetchAsTheImage
// keeps them in step with the script and .ci/run.
var releaseFlags = []string{"-trimpath", "-tags=osusergo,netgo,sqlite_omit_load_extension"}

// fetchBinary builds ./cmd/fetch once per test process, as the image has it
// (releaseFlags), and returns its path. It is not a -race build: one of
// fetch (with cgo SQLite) costs more than the journeys gain from it; the
// in-process tests of cmd/fetch run under the race detector.
func fetchBinary(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(binDir, "fetch")
	buildOnce.Do(func() {
		cmd := exec.Command(goTool(), append(append([]string{"build"}, releaseFlags...), "-o", bin, "./cmd/fetch")...)
		cmd.Dir = repoRoot(t)
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/fetch: %w\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return bin
}

// harnessImage is testkit.HarnessImage, asked once per test process so
// that parallel journeys do not build it side by side.
func harnessImage(t testing.TB) string {
	t.Helper()
	imageMu.Lock()
	defer imageMu.Unlock()
	if image == "" {
		image = testkit.HarnessImage(t)
	}
	return image
}

func repoRoot(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("journey: cannot locate the repository")
	}
	return filepath.Dir(filepath.Dir(file))
}

func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

// proc is one run of the fetch binary.
type proc struct {
	cmd  *exec.Cmd
	log  *tailBuffer
	done chan struct{} // closed when the process was reaped
	// err is what Wait returned; read it after done.
	err error
	// ended is set when the test ended the process on purpose.
	ended bool
}

// startWatched starts the fetch binary with args and exactly env (no
// inherited variables), its stdout and stderr kept in a bounded buffer that
// is printed when the test fails, looking for the strings watch in all that
// fetch writes (tailBuffer.saw). At cleanup a process still running is
// stopped with SIGINT (and a bounded wait).
func startWatched(t testing.TB, env, watch []string, args ...string) *proc {
	t.Helper()
	p := &proc{log: &tailBuffer{max: logKeep, watch: watch}, done: make(chan struct{})}
	p.cmd = exec.Command(fetchBinary(t), args...)
	p.cmd.Env = env
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	// Its own process group, so that a test's signals reach fetch only.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start fetch: %v", err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		if p.running() {
			p.interrupt(t)
		}
		if t.Failed() {
			t.Logf("fetch (pid %d) output, last %d KiB:\n%s", p.cmd.Process.Pid, logKeep>>10, p.log.String())
		}
	})
	return p
}

func (p *proc) running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// kill ends fetch with SIGKILL, as a crash would, and waits until it is
// gone.
func (p *proc) kill(t testing.TB) {
	t.Helper()
	p.ended = true
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Fatalf("kill fetch: %v", err)
	}
	select {
	case <-p.done:
	case <-time.After(killWait):
		t.Fatalf("fetch (pid %d) still there %s after SIGKILL", p.cmd.Process.Pid, killWait)
	}
}

// interrupt stops fetch as Ctrl-C would and checks that it exits within
// interruptGrace with the interrupted status (130); otherwise it is killed
// and the test fails.
func (p *proc) interrupt(t testing.TB) {
	t.Helper()
	p.ended = true
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("interrupt fetch: %v", err)
	}
	select {
	case <-p.done:
	case <-time.After(interruptGrace):
		t.Errorf("fetch (pid %d) did not stop within %s of SIGINT; killed it", p.cmd.Process.Pid, interruptGrace)
		p.kill(t)
		return
	}
	if code := p.cmd.ProcessState.ExitCode(); code != 130 {
		t.Errorf("fetch exited with %d after SIGINT (%v); want 130", code, p.err)
	}
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
	cut bool
	// watch are strings looked for in everything written, also what the
	// tail no longer keeps; seen those found.
	watch []string
	seen  map[string]bool
}

// saw tells whether s (one of watch) was ever written.
func (l *tailBuffer) saw(s string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.seen[s]
}

func (l *tailBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.watch {
		// The end of the last write and this one: a string cut between
		// two writes is found too.
		tail := l.b[max(0, len(l.b)-len(s)):]
		if strings.Contains(string(tail)+string(p), s) {
			if l.seen == nil {
				l.seen = map[string]bool{}
			}
			l.seen[s] = true
		}
	}
	l.b = append(l.b, p...)
	if over := len(l.b) - l.max; over > 0 {
		l.b = append(l.b[:0], l.b[over:]...)
		l.cut = true
	}
	return len(p), nil
}

func (l *tailBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cut {
		return "[…]" + string(l.b)
	}
	return string(l.b)
}

// world is one journey's surroundings: the fakes, a data directory, the
// workspaces, and the fetch process of the moment.
type world struct {
	t      testing.TB
	d      *testkit.Discord
	llm    *testkit.OpenRouter
	docker *client.Client
	data   string
	wsRoot string
	env    map[string]string
	fetch  *proc
	starts int
	// watch are strings looked for in all that fetch writes (secrets
	// that must never show).
	watch []string
}

// newWorld makes the fakes, a data directory and the named workspaces
// (git repositories on main, owned by the kennel's user, as fetch would
// create them). Fetch is not started; see start.
func newWorld(t testing.TB, workspaces ...string) *world {
	t.Helper()
	docker := testkit.RequireDocker(t)
	fetchBinary(t)
	img := harnessImage(t)
	w := &world{t: t, docker: docker}
	w.d = testkit.NewDiscord(t, testToken)
	w.llm = testkit.NewOpenRouter(t)
	w.data = t.TempDir()
	// The kennel's user runs git in the workspaces and must reach them.
	for p := w.data; p != os.TempDir() && p != "/"; p = filepath.Dir(p) {
		os.Chmod(p, 0o755)
	}
	w.wsRoot = filepath.Join(w.data, "workspaces")
	home := filepath.Join(w.data, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	w.env = map[string]string{
		"PATH":                os.Getenv("PATH"),
		"HOME":                home,
		"FETCH_DATA_DIR":      w.data,
		"FETCH_WORKSPACES":    w.wsRoot,
		"FETCH_DISCORD_TOKEN": testToken,
		"FETCH_DISCORD_URL":   w.d.URL(),
		"FETCH_OWNER_ID":      ownerID,
		"FETCH_ALLOWED_IDS":   friendID,
		"OPENROUTER_API_KEY":  testkit.OpenRouterKey,
		"FETCH_LLM_URL":       w.llm.URL(),
		"FETCH_KENNEL_IMAGE":  img,
		"FETCH_IDLE_AFTER":    "0",
		"FETCH_GIT_INTERVAL":  "0",
		"FETCH_TIMEZONE":      "UTC",
		"FETCH_LOG_LEVEL":     "debug",
		// Journeys run side by side: the page's default port is one.
		"FETCH_PAGE_ADDR": "off",
	}
	for _, k := range []string{"DOCKER_HOST", "DOCKER_CERT_PATH", "DOCKER_TLS_VERIFY", "DOCKER_API_VERSION", "TMPDIR"} {
		if v, ok := os.LookupEnv(k); ok {
			w.env[k] = v
		}
	}
	reg := workspace.New(w.wsRoot, slog.New(slog.DiscardHandler)).RunAs(kennelUser())
	for _, name := range workspaces {
		if _, err := reg.Create(context.Background(), name, ""); err != nil {
			t.Fatalf("create workspace %s: %v", name, err)
		}
	}
	// Registered before fetch starts, so it runs after fetch stopped.
	t.Cleanup(w.removeKennels)
	t.Cleanup(func() {
		if t.Failed() {
			w.dump()
		}
	})
	return w
}

// kennelUser is the uid and gid of the kennel's user, who owns workspaces.
func kennelUser() (int, int) {
	var uid, gid int
	fmt.Sscanf(kennel.DefaultUser, "%d:%d", &uid, &gid)
	return uid, gid
}

// environ is the process environment of the world's fetch.
func (w *world) environ() []string {
	var env []string
	for k, v := range w.env {
		env = append(env, k+"="+v)
	}
	slices.Sort(env)
	return env
}

// start runs fetch serve and waits until it is connected to the fake
// gateway (its own IDENTIFY) with its slash commands registered.
func (w *world) start() *proc {
	w.t.Helper()
	if w.fetch != nil && w.fetch.running() {
		w.t.Fatal("journey: fetch is already running")
	}
	w.fetch = startWatched(w.t, w.environ(), w.watch, "serve")
	w.starts++
	w.must("fetch to connect and register its commands", func() bool {
		ids, _ := w.d.Sessions()
		return ids >= w.starts && len(w.d.Commands()) > 0
	})
	w.d.WaitConnected(w.t, w.starts, 0)
	return w.fetch
}

// kill SIGKILLs fetch; stop ends it with SIGINT.
func (w *world) kill() { w.t.Helper(); w.fetch.kill(w.t) }
func (w *world) stop() { w.t.Helper(); w.fetch.interrupt(w.t) }

// wait waits until cond holds, checking it at every change of the fake
// Discord (requests, gateway events and heartbeats, which come every two
// seconds), for at most timeout. It reports whether cond held; it fails
// the test at once when fetch exits by itself.
func (w *world) wait(timeout time.Duration, cond func() bool) bool {
	w.t.Helper()
	deadline := time.NewTimer(w.limit(timeout))
	defer deadline.Stop()
	for {
		changed := w.d.Changed()
		if cond() {
			return true
		}
		var exited <-chan struct{}
		if w.fetch != nil && !w.fetch.ended {
			exited = w.fetch.done
		}
		select {
		case <-changed:
		case <-exited:
			w.t.Fatalf("fetch exited by itself (%v)", w.fetch.err)
		case <-deadline.C:
			return cond()
		}
	}
}

// limit is how long a wait of timeout may take: evidenceWait at most once
// the test failed.
func (w *world) limit(timeout time.Duration) time.Duration {
	if w.t.Failed() {
		return min(timeout, evidenceWait)
	}
	return timeout
}

// must is wait with waitTimeout, failing the test with what when cond does
// not come true.
func (w *world) must(what string, cond func() bool) {
	w.t.Helper()
	limit := w.limit(waitTimeout)
	if !w.wait(limit, cond) {
		w.t.Fatalf("waited %s for %s", limit, what)
	}
}

// channel is the DM channel of user with the bot.
func (w *world) channel(user string) string { return w.d.DMChannel(user) }

// messages are the bot's messages to user, oldest first.
func (w *world) messages(user string) []testkit.DiscordMessage {
	return w.d.Messages(w.channel(user))
}

// mark is a point in a DM's history: how many bot messages there were and
// how often each had been edited.
type mark struct {
	user  string
	n     int
	edits map[string]int
}

func (w *world) mark(user string) mark {
	m := mark{user: user, edits: map[string]int{}}
	for _, msg := range w.messages(user) {
		m.n++
		m.edits[msg.ID] = len(msg.Edits)
	}
	return m
}

// seen is one text a DM showed: a message as sent or as edited.
type seen struct {
	Msg  testkit.DiscordMessage
	Text string
	// Edit: this text came by editing a message; New: the message was
	// created after the mark.
	Edit, New bool
}

// since returns every text the DM showed after m: each version of the
// messages created since, and the new versions of older messages edited
// since, in order.
func (w *world) since(m mark) []seen {
	var out []seen
	for i, msg := range w.messages(m.user) {
		versions := append(slices.Clone(msg.Edits), msg.Content)
		from := 0
		isNew := i >= m.n
		if !isNew {
			from = m.edits[msg.ID] + 1
		}
		for v := from; v < len(versions); v++ {
			out = append(out, seen{Msg: msg, Text: versions[v], Edit: v > 0, New: isNew})
		}
	}
	return out
}

// find returns the first text since m that matches re and ok.
func (w *world) find(m mark, re *regexp.Regexp, ok func(seen) bool) (seen, bool) {
	for _, s := range w.since(m) {
		if re.MatchString(s.Text) && (ok == nil || ok(s)) {
			return s, true
		}
	}
	return seen{}, false
}

// await waits for a text since m matching re (as sent or edited) and
// returns it; it fails the test after waitTimeout.
func (w *world) await(m mark, re *regexp.Regexp, what string) seen {
	w.t.Helper()
	return w.awaitWithin(waitTimeout, m, re, nil, what)
}

// awaitNew waits for a message created since m whose text matches re.
func (w *world) awaitNew(m mark, re *regexp.Regexp, what string) seen {
	w.t.Helper()
	return w.awaitWithin(waitTimeout, m, re, func(s seen) bool { return s.New }, what)
}

func (w *world) awaitWithin(timeout time.Duration, m mark, re *regexp.Regexp, ok func(seen) bool, what string) seen {
	w.t.Helper()
	var got seen
	timeout = w.limit(timeout)
	if !w.wait(timeout, func() bool {
		var found bool
		got, found = w.find(m, re, ok)
		return found
	}) {
		w.t.Fatalf("waited %s for %s (a message matching %q)", timeout, what, re)
	}
	return got
}

// send DMs text to the bot as user and returns the mark before it.
func (w *world) send(user, text string) mark {
	m := w.mark(user)
	w.d.DM(user, text)
	return m
}

// ask DMs text and waits for the next message that matches re.
func (w *world) ask(user, text string, re *regexp.Regexp) seen {
	w.t.Helper()
	m := w.send(user, text)
	return w.awaitNew(m, re, fmt.Sprintf("the reply to %q", text))
}

// dump logs every DM the bot wrote, with edit histories.
func (w *world) dump() {
	for _, user := range []string{ownerID, friendID} {
		ms := w.messages(user)
		if len(ms) == 0 {
			continue
		}
		var b strings.Builder
		for i, m := range ms {
			fmt.Fprintf(&b, "#%d %s", i, m.CreatedAt.Format("15:04:05.000"))
			if m.Interaction != "" {
				b.WriteString(" (interaction response)")
			}
			for j, e := range m.Edits {
				fmt.Fprintf(&b, "\n   v%d: %q", j, e)
			}
			fmt.Fprintf(&b, "\n   now: %q\n", m.Content)
		}
		w.t.Logf("bot messages to %s:\n%s", user, b.String())
	}
}

// removeKennels removes the kennel containers of this world's workspaces.
func (w *world) removeKennels() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, id := range w.kennels(ctx) {
		if err := w.docker.ContainerRemove(ctx, id, container.RemoveOptions{Force: true}); err != nil {
			w.t.Logf("remove kennel %s: %v", id, err)
		}
	}
	w.removeEgress(ctx)
}

// kennels are the ids of the kennel containers that mount one of this
// world's workspaces (found by fetch's labels).
func (w *world) kennels(ctx context.Context) []string {
	list, err := w.docker.ContainerList(ctx, container.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("label", kennel.LabelWorkspace))})
	if err != nil {
		w.t.Errorf("list kennels: %v", err)
		return nil
	}
	var out []string
	for _, c := range list {
		if ws := c.Labels[kennel.LabelWorkspace]; ws == w.wsRoot || strings.HasPrefix(ws, w.wsRoot+"/") {
			out = append(out, c.ID)
		}
	}
	return out
}

// cliNames are the names the fake CLI runs under in the kennel, and the
// helper the hang scenario starts.
var cliNames = append(testkit.FakeCLINames(), "fakecli-child")

// cliProcesses lists the command lines of the fake CLI's processes in the
// kennels of this world's workspaces.
func (w *world) cliProcesses() []string {
	var out []string
	w.eachProcess(func(titles, p []string) {
		cmd := slices.Index(titles, "CMD")
		if cmd < 0 {
			cmd = slices.Index(titles, "COMMAND")
		}
		if cmd < 0 {
			w.t.Fatalf("docker top: no command column in %q", titles)
		}
		line := p[cmd]
		argv0 := strings.Fields(line + " x")[0]
		if slices.Contains(cliNames, filepath.Base(argv0)) {
			out = append(out, line)
		}
	})
	return out
}

// eachProcess calls fn with docker top's titles and each process of the
// running kennels of this world's workspaces.
func (w *world) eachProcess(fn func(titles, p []string)) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, id := range w.kennels(ctx) {
		top, err := w.docker.ContainerTop(ctx, id, nil)
		if err != nil {
			continue // not running
		}
		for _, p := range top.Processes {
			fn(top.Titles, p)
		}
	}
}

// waitProcesses polls the kennel's processes until cond holds, for at
// most timeout, and returns the last list read and whether cond held.
func (w *world) waitProcesses(timeout time.Duration, cond func([]string) bool) ([]string, bool) {
	return w.pollProcesses(timeout, procPoll, cond)
}

// pollProcesses is waitProcesses polling every poll.
func (w *world) pollProcesses(timeout, poll time.Duration, cond func([]string) bool) ([]string, bool) {
	deadline := time.Now().Add(w.limit(timeout))
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		ps := w.cliProcesses()
		if cond(ps) {
			return ps, true
		}
		if time.Now().After(deadline) {
			return ps, false
		}
		<-tick.C
	}
}

// workspacePath is the directory of a workspace.
func (w *world) workspacePath(name string) string { return filepath.Join(w.wsRoot, name) }

// exists reports whether the workspace directory is there.
func (w *world) exists(name string) bool {
	_, err := os.Stat(w.workspacePath(name))
	return err == nil
}

// gitShow reads rev:path in a copy of the workspace's repository (git on
// the host does not run in a tree the kennel can write).
func (w *world) gitShow(ws, rev, path string) (string, error) {
	w.t.Helper()
	repo := filepath.Join(w.t.TempDir(), "repo.git")
	if out, err := exec.Command("cp", "-r", filepath.Join(w.workspacePath(ws), ".git"), repo).CombinedOutput(); err != nil {
		w.t.Fatalf("copy the repository of %s: %v\n%s", ws, err, out)
	}
	out, err := exec.Command("git", "--git-dir", repo, "show", rev+":"+path).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("git show %s:%s: %w\n%s", rev, path, err, out)
	}
	return string(out), nil
}

// taskCreate is the model's call of task_create.
func taskCreate(id, goal, ws string) testkit.Step {
	args, _ := json.Marshal(map[string]string{"goal": goal, "workspace": ws})
	return testkit.Use(testkit.Call{ID: id, Name: "task_create", Arguments: string(args)})
}

// Texts fetch writes that the journeys look for.
var (
	statusRe = regexp.MustCompile(`(?s)since .*Task: `)
	// taskLineRe is a task's status message: "… Task ID on WS (HARNESS) — what".
	taskLineRe = regexp.MustCompile(`Task (\S+) on (\S+) \((\w+)\) — `)
)

// taskID reads the task id from a status message.
func taskID(t testing.TB, text string) string {
	t.Helper()
	m := taskLineRe.FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no task id in %q", text)
	}
	return m[1]
}

// within is how long a promise may take: the reply to a stop is promised
// within a second (a functional promise of the product, not a speed
// benchmark), relaxed under the race detector, which slows the fakes in
// this process.
func within(d time.Duration) time.Duration {
	if raceEnabled {
		return 5 * d
	}
	return d
}

var _ io.Writer = (*tailBuffer)(nil)

// TestJourneysBuildFetchAsTheImage: the flags the journeys build fetch with
// are the image's (scripts/build-images.sh) and .ci/run's vet: were one to
// change alone, CI would compile Fetch's packages once more for nothing.
func TestJourneysBuildFetchAsTheImage(t *testing.T) {
	tags := strings.TrimPrefix(releaseFlags[1], "-tags=")
	for file, want := range map[string]string{
		"scripts/build-images.sh": "go build -trimpath -tags '" + strings.ReplaceAll(tags, ",", " ") + "'",
		".ci/run":                 "go_release=(-trimpath -tags " + tags + ")",
	} {
		b, err := os.ReadFile(filepath.Join(repoRoot(t), file))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), want) {
			t.Errorf("%s does not build with %q (journey's releaseFlags: %q)", file, want, releaseFlags)
		}
	}
}
