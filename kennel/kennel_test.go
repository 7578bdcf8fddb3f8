package kennel_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/stdcopy"
	"go.uber.org/goleak"

	"github.com/fetch-dev/fetch/internal/testkit"
	"github.com/fetch-dev/fetch/kennel"
)

// These tests run against a real Docker engine (testkit.RequireDocker), with
// the kennel test image plus kennel-helper (testdata/kennelhelper). Each test
// gets its own instance label, so its containers are its own and are removed
// when it ends.

// TestMain checks that no test leaves a goroutine behind: every stream
// reader the kennel starts must end with its call.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// helperPath is where the test image has kennel-helper.
const helperPath = "/usr/local/bin/kennel-helper"

// testGrace is the stop grace in tests: short, but long enough to see
// SIGTERM come before SIGKILL.
const testGrace = time.Second

// helperImg is helperImage's image, made once per test process.
var helperImg struct {
	sync.Mutex
	name string
}

// helperImage builds kennel-helper and layers it on the kennel test image,
// once per test process (every env asks for it).
func helperImage(t testing.TB) string {
	t.Helper()
	helperImg.Lock()
	defer helperImg.Unlock()
	if helperImg.name == "" {
		helperImg.name = buildHelperImage(t)
	}
	return helperImg.name
}

func buildHelperImage(t testing.TB) string {
	t.Helper()
	base := testkit.KennelImage(t)
	bin := filepath.Join(t.TempDir(), "kennel-helper")
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin, "./testdata/kennelhelper")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build kennel-helper: %v\n%s", err, out)
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	return testkit.KennelLayer(t, base, "fetch-kennel-helper-test", []testkit.ImageFile{{Path: helperPath, Mode: 0o755, Data: data}})
}

// env is a kennel on a fresh instance label with one workspace.
type env struct {
	t        testing.TB
	docker   *client.Client
	cfg      kennel.Config
	k        *kennel.Kennel
	ws       string
	instance string
}

func newEnv(t testing.TB, tweak ...func(*kennel.Config)) *env {
	t.Helper()
	docker := testkit.RequireDocker(t)
	e := &env{
		t:        t,
		docker:   docker,
		instance: "test-" + strings.ToLower(rand.Text()[:10]),
		ws:       testkit.KennelWorkspace(t),
	}
	e.cfg = kennel.Config{
		Image:    helperImage(t),
		Instance: e.instance,
		Memory:   1 << 30,
		CPUs:     1,
		Pids:     256,
		TmpSize:  256 << 20,
		HomeSize: 64 << 20,
		Grace:    testGrace,
	}
	for _, f := range tweak {
		f(&e.cfg)
	}
	e.k = e.newKennel()
	t.Cleanup(e.removeContainers)
	return e
}

// newKennel makes another Kennel on the same instance, as a restarted Fetch would.
func (e *env) newKennel() *kennel.Kennel {
	e.t.Helper()
	k, err := kennel.New(e.docker, e.cfg, slog.New(slog.NewTextHandler(e.t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug})))
	if err != nil {
		e.t.Fatalf("kennel.New: %v", err)
	}
	return k
}

// containers lists the instance's containers.
func (e *env) containers() []container.Summary {
	e.t.Helper()
	list, err := e.docker.ContainerList(context.Background(), container.ListOptions{
		All:     true,
		Filters: filters.NewArgs(filters.Arg("label", kennel.LabelInstance+"="+e.instance)),
	})
	if err != nil {
		e.t.Fatalf("list containers: %v", err)
	}
	return list
}

// containerID returns the ID of the workspace's container; there must be one.
func (e *env) containerID() string {
	e.t.Helper()
	for _, c := range e.containers() {
		if c.Labels[kennel.LabelWorkspace] == e.ws {
			return c.ID
		}
	}
	e.t.Fatalf("no container for %s", e.ws)
	return ""
}

func (e *env) removeContainers() {
	for _, c := range e.containers() {
		if err := e.docker.ContainerRemove(context.Background(), c.ID, container.RemoveOptions{Force: true}); err != nil {
			e.t.Errorf("remove container %s: %v", c.ID, err)
		}
	}
}

// exec runs spec in the env's workspace and collects its lines.
func (e *env) exec(ctx context.Context, spec kennel.ExecSpec) (kennel.Result, *lines, error) {
	e.t.Helper()
	if spec.Workspace == "" {
		spec.Workspace = e.ws
	}
	l := &lines{}
	res, err := e.k.Exec(ctx, spec, l.add)
	return res, l, err
}

// mustExec runs argv and fails the test on error.
func (e *env) mustExec(argv ...string) (kennel.Result, *lines) {
	e.t.Helper()
	res, l, err := e.exec(context.Background(), kennel.ExecSpec{Argv: argv})
	if err != nil {
		e.t.Fatalf("exec %q: %v", argv, err)
	}
	return res, l
}

// rawExec runs argv in the workspace's container straight through the SDK,
// as root, independent of the code under test, and returns its stdout.
func (e *env) rawExec(argv ...string) string {
	e.t.Helper()
	ctx := context.Background()
	resp, err := e.docker.ContainerExecCreate(ctx, e.containerID(), container.ExecOptions{
		User: "0", AttachStdout: true, AttachStderr: true, Cmd: argv,
	})
	if err != nil {
		e.t.Fatalf("raw exec %q: %v", argv, err)
	}
	hijack, err := e.docker.ContainerExecAttach(ctx, resp.ID, container.ExecAttachOptions{})
	if err != nil {
		e.t.Fatalf("raw exec %q: %v", argv, err)
	}
	defer hijack.Close()
	var out, errOut bytes.Buffer
	if _, err := stdcopy.StdCopy(&out, &errOut, hijack.Reader); err != nil {
		e.t.Fatalf("raw exec %q: %v", argv, err)
	}
	return out.String()
}

// processes lists the container's live processes (not zombies) as "pid
// args" lines, through ps.
func (e *env) processes() []string {
	e.t.Helper()
	var live []string
	for _, line := range strings.Split(e.rawExec("ps", "-eo", "pid=,stat=,args="), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 || strings.HasPrefix(f[1], "Z") {
			continue
		}
		live = append(live, f[0]+" "+strings.Join(f[2:], " "))
	}
	return live
}

// processesMatching returns the live processes whose command line contains mark.
func (e *env) processesMatching(mark string) []string {
	e.t.Helper()
	var out []string
	for _, p := range e.processes() {
		if strings.Contains(p, mark) && !strings.Contains(p, "ps -eo") {
			out = append(out, p)
		}
	}
	return out
}

// lines collects a run's output.
type lines struct {
	mu       sync.Mutex
	stdout   []string
	stderr   []string
	prepared []string
	recorded []string
	seen     map[string]chan struct{}
}

func (l *lines) add(s kennel.Stream, line []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	text := string(line)
	switch s {
	case kennel.Prepared:
		l.prepared = append(l.prepared, text)
	case kennel.Recorded:
		l.recorded = append(l.recorded, text)
	case kennel.Stderr:
		l.stderr = append(l.stderr, text)
	default:
		l.stdout = append(l.stdout, text)
	}
	if ch, ok := l.seen[text]; ok {
		close(ch)
		delete(l.seen, text)
	}
}

// await returns a channel closed when a line equal to text arrives. Call it
// before the run starts.
func (l *lines) await(text string) <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.seen == nil {
		l.seen = make(map[string]chan struct{})
	}
	ch := make(chan struct{})
	l.seen[text] = ch
	return ch
}

func (l *lines) out() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.stdout...)
}

func (l *lines) err() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.stderr...)
}

// background runs spec in a goroutine; wait returns its outcome. The goroutine
// ends when the run does (the test stops it or it ends by itself).
type background struct {
	lines *lines
	done  chan struct{}
	res   kennel.Result
	err   error
}

func (e *env) start(ctx context.Context, k *kennel.Kennel, spec kennel.ExecSpec, ready string) *background {
	e.t.Helper()
	if spec.Workspace == "" {
		spec.Workspace = e.ws
	}
	b := &background{lines: &lines{}, done: make(chan struct{})}
	readyCh := b.lines.await(ready)
	go func() {
		defer close(b.done)
		b.res, b.err = k.Exec(ctx, spec, b.lines.add)
	}()
	e.t.Cleanup(func() { <-b.done })
	select {
	case <-readyCh:
	case <-b.done:
		e.t.Fatalf("run %q ended before %q: %+v, %v (stderr %q)", spec.Argv, ready, b.res, b.err, b.lines.err())
	case <-time.After(30 * time.Second):
		e.t.Fatalf("run %q never printed %q", spec.Argv, ready)
	}
	return b
}

// wait returns the run's outcome, failing the test if it takes longer than limit.
func (b *background) wait(t testing.TB, limit time.Duration) (kennel.Result, error) {
	t.Helper()
	select {
	case <-b.done:
		return b.res, b.err
	case <-time.After(limit):
		t.Fatalf("run still going after %v", limit)
		return kennel.Result{}, nil
	}
}

// script writes a shell script into the workspace and returns its path. The
// scripts are the tests' own; no user text reaches a shell.
func (e *env) script(name, body string) string {
	e.t.Helper()
	p := filepath.Join(e.ws, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		e.t.Fatal(err)
	}
	return p
}

func newTaskID() string { return "task-" + strings.ToLower(rand.Text()[:12]) }
