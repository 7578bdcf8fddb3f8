package kennel_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"

	"github.com/fetch-dev/fetch/internal/testkit"
	"github.com/fetch-dev/fetch/kennel"
)

// The messages the kennel logs when its configuration changed.
const (
	msgRecreating = `msg="kennel: configuration changed; recreating the workspace's container"`
	msgKept       = `msg="kennel: configuration changed; the workspace's container is busy and will be recreated when idle"`
)

// variantImage is the env's image with one more file, /etc/fetch-variant
// holding "B": another image ID, told apart from inside.
func (e *env) variantImage() string {
	e.t.Helper()
	return testkit.KennelLayer(e.t, e.cfg.Image, "fetch-kennel-variant-test", []testkit.ImageFile{
		{Path: "/etc/fetch-variant", Mode: 0o644, Data: []byte("B\n")},
	})
}

// movingTag tags ref with a fresh tag, which the test can move to another
// image as a rebuild would; the tag is removed when the test ends.
func (e *env) movingTag(ref string) string {
	e.t.Helper()
	tag := "fetch-kennel-moving-test:" + strings.ToLower(rand.Text()[:10])
	e.retag(ref, tag)
	e.t.Cleanup(func() {
		if _, err := e.docker.ImageRemove(context.Background(), tag, image.RemoveOptions{}); err != nil {
			e.t.Errorf("untag %s: %v", tag, err)
		}
	})
	return tag
}

func (e *env) retag(ref, tag string) {
	e.t.Helper()
	if err := e.docker.ImageTag(context.Background(), ref, tag); err != nil {
		e.t.Fatalf("tag %s as %s: %v", ref, tag, err)
	}
}

// loggedKennel is a Kennel on e.cfg (as a Fetch restarted with it would
// have) whose log is also kept for the test to read.
func (e *env) loggedKennel() (*kennel.Kennel, *logBuffer) {
	e.t.Helper()
	logs := &logBuffer{}
	h := slog.NewTextHandler(io.MultiWriter(e.t.Output(), logs), &slog.HandlerOptions{Level: slog.LevelDebug})
	k, err := kennel.New(e.docker, e.cfg, slog.New(h))
	if err != nil {
		e.t.Fatalf("kennel.New: %v", err)
	}
	return k, logs
}

// imageOf returns the container's image reference and ID.
func (e *env) imageOf(ctr string) (ref, id string) {
	e.t.Helper()
	info, err := e.docker.ContainerInspect(context.Background(), ctr)
	if err != nil {
		e.t.Fatal(err)
	}
	return info.Config.Image, info.Image
}

func (e *env) imageID(ref string) string {
	e.t.Helper()
	info, err := e.docker.ImageInspect(context.Background(), ref)
	if err != nil {
		e.t.Fatal(err)
	}
	return info.ID
}

// execWith runs argv in the env's workspace with k and returns its stdout.
func (e *env) execWith(k *kennel.Kennel, argv ...string) []string {
	e.t.Helper()
	l := &lines{}
	res, err := k.Exec(context.Background(), kennel.ExecSpec{Workspace: e.ws, Argv: argv}, l.add)
	if err != nil || res.ExitCode != 0 {
		e.t.Fatalf("exec %q: %+v, %v (stderr %q)", argv, res, err, l.err())
	}
	return l.out()
}

// logBuffer collects log output; safe for concurrent use.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// lines returns the logged lines that contain all of parts.
func (l *logBuffer) lines(parts ...string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for line := range strings.Lines(l.buf.String()) {
		if !slices.ContainsFunc(parts, func(p string) bool { return !strings.Contains(line, p) }) {
			out = append(out, line)
		}
	}
	return out
}

func TestContainerFollowsImageChange(t *testing.T) {
	// FETCH_KENNEL_IMAGE changes across a restart: the next run is in a
	// new container of the new image.
	e := newEnv(t)
	imageA := e.cfg.Image
	e.mustExec("true")
	first := e.containerID()

	e.cfg.Image = e.variantImage()
	k2, logs := e.loggedKennel()
	if got := e.execWith(k2, "cat", "/etc/fetch-variant"); !slices.Equal(got, []string{"B"}) {
		t.Errorf("run after the change printed %q, want B from the new image", got)
	}
	second := e.containerID()
	if second == first || len(e.containers()) != 1 {
		t.Fatalf("after the change: container %s (of %d), want one new replacing %s", second, len(e.containers()), first)
	}
	if ref, _ := e.imageOf(second); ref != e.cfg.Image {
		t.Errorf("new container's image %s, want %s", ref, e.cfg.Image)
	}
	if got := logs.lines(msgRecreating, "old_image="+imageA+"@", "new_image="+e.cfg.Image+"@", "changed=", "image"); len(got) != 1 {
		t.Errorf("want one log line saying the container is recreated, with both images and the image among the changes; log:\n%s", logs.lines("kennel:"))
	}

	// Reused from then on, by this kennel and by one restarted alike.
	e.execWith(k2, "true")
	e.execWith(e.newKennel(), "true")
	if got := e.containerID(); got != second {
		t.Errorf("same configuration: container %s, want %s kept", got, second)
	}
	if got := logs.lines(msgRecreating); len(got) != 1 {
		t.Errorf("recreated %d times, want once", len(got))
	}
}

func TestContainerFollowsRebuiltImage(t *testing.T) {
	// The configured tag moves to another image (the image was rebuilt)
	// while Fetch runs: the same Kennel's next run is in a new container.
	e := newEnv(t)
	variant := e.variantImage()
	e.cfg.Image = e.movingTag(e.cfg.Image)
	k, logs := e.loggedKennel()
	e.execWith(k, "true")
	first := e.containerID()

	e.retag(variant, e.cfg.Image)
	if got := e.execWith(k, "cat", "/etc/fetch-variant"); !slices.Equal(got, []string{"B"}) {
		t.Errorf("run after the rebuild printed %q, want B from the rebuilt image", got)
	}
	second := e.containerID()
	if _, id := e.imageOf(second); second == first || id != e.imageID(variant) {
		t.Errorf("after the rebuild: container %s of image %s, want a new one of %s", second, id, e.imageID(variant))
	}
	if got := logs.lines(msgRecreating, "changed=[image_id]"); len(got) != 1 {
		t.Errorf("want one log line saying the image ID changed; log:\n%s", logs.lines("kennel:"))
	}
}

func TestBusyContainerIsRecreatedWhenIdle(t *testing.T) {
	// A limit changes while a task runs (in another Fetch process: the
	// kennel with the new setting knows of the run only through the
	// container): the running task goes on in the old container, which
	// is replaced once the task has ended and its log was read back.
	e := newEnv(t)
	e.mustExec("true")
	first := e.containerID()
	task := newTaskID()
	sh := e.script("long.sh", "echo ready; exec sleep 60")
	run := e.start(context.Background(), e.k, kennel.ExecSpec{Argv: []string{sh}, TaskID: task}, "ready")

	e.cfg.Pids = 300
	k2, logs := e.loggedKennel()
	for range 2 {
		e.execWith(k2, "true")
		if got := e.containerID(); got != first {
			t.Fatalf("busy container replaced by %s", got)
		}
	}
	if got := logs.lines(msgKept, "task "+task, "changed=", "pids"); len(got) != 1 {
		t.Errorf("want the busy container (its task, the changed pids) logged once; log:\n%s", logs.lines("kennel:"))
	}
	if got := logs.lines(msgRecreating); len(got) != 0 {
		t.Errorf("logged a recreation while busy: %s", got)
	}

	// The task ends; its log is still in the container until it is read
	// back and forgotten.
	if err := e.k.Stop(context.Background(), e.ws, task); err != nil {
		t.Fatal(err)
	}
	if res, err := run.wait(t, 10*time.Second); err != nil || !res.Stopped {
		t.Fatalf("stopped run: %+v, %v", res, err)
	}
	e.execWith(k2, "true")
	if got := e.containerID(); got != first {
		t.Fatalf("container with an unread task log replaced by %s", got)
	}
	if err := e.k.Forget(context.Background(), e.ws, task); err != nil {
		t.Fatal(err)
	}

	e.execWith(k2, "true")
	second := e.containerID()
	if second == first || len(e.containers()) != 1 {
		t.Fatalf("idle: container %s (of %d), want one new replacing %s", second, len(e.containers()), first)
	}
	info, err := e.docker.ContainerInspect(context.Background(), second)
	if err != nil {
		t.Fatal(err)
	}
	if p := info.HostConfig.PidsLimit; p == nil || *p != 300 {
		t.Errorf("new container's pids limit %v, want 300", p)
	}
	if got := logs.lines(msgRecreating, "changed=", "pids"); len(got) != 1 {
		t.Errorf("want one log line saying the container is recreated for pids; log:\n%s", logs.lines("kennel:"))
	}
	if got := logs.lines(msgKept); len(got) != 1 {
		t.Errorf("busy container logged %d times, want once", len(got))
	}
}

func TestRunsDuringRebuildAreNotCutShort(t *testing.T) {
	// Runs go on in one Kennel while its image tag moves: each run either
	// finishes in the old container or starts in the new one; none is
	// killed by the replacement, and one container is left, of the new
	// image.
	e := newEnv(t)
	variant := e.variantImage()
	e.cfg.Image = e.movingTag(e.cfg.Image)
	k, logs := e.loggedKennel()
	e.execWith(k, "true")

	const workers, runs = 4, 4
	errs := make(chan error, workers*runs)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range runs {
				if w == 0 && i == 1 {
					e.retag(variant, e.cfg.Image)
				}
				res, err := k.Exec(context.Background(), kennel.ExecSpec{Workspace: e.ws, Argv: []string{"sh", "-c", "sleep 0.05; echo ok"}}, nil)
				if err == nil && res.ExitCode != 0 {
					t.Errorf("run exit %d, stderr %q", res.ExitCode, res.StderrTail)
				}
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("run: %v", err)
		}
	}
	e.execWith(k, "true")
	if n := len(e.containers()); n != 1 {
		t.Errorf("%d containers left", n)
	}
	if _, id := e.imageOf(e.containerID()); id != e.imageID(variant) {
		t.Errorf("container of image %s, want %s", id, e.imageID(variant))
	}
	if got := logs.lines(msgRecreating); len(got) != 1 {
		t.Errorf("recreated %d times, want once; log:\n%s", len(got), logs.lines("kennel:"))
	}
}

func TestConcurrentRunsAfterConfigurationChange(t *testing.T) {
	// Several first runs of a restarted Fetch with another limit: one new
	// container, made once.
	e := newEnv(t)
	e.mustExec("true")
	first := e.containerID()
	e.cfg.Memory = 512 << 20
	k2, logs := e.loggedKennel()
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			_, err := k2.Exec(context.Background(), kennel.ExecSpec{Workspace: e.ws, Argv: []string{"true"}}, nil)
			errs <- err
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Errorf("concurrent run: %v", err)
		}
	}
	if got := e.containerID(); got == first || len(e.containers()) != 1 {
		t.Errorf("container %s (of %d), want one new replacing %s", got, len(e.containers()), first)
	}
	if got := logs.lines(msgRecreating, "memory"); len(got) != 1 {
		t.Errorf("recreated %d times, want once; log:\n%s", len(got), logs.lines("kennel:"))
	}
}

// gatedDocker holds the start of the execs whose argv holds gateMark until
// release is closed, after telling reached: a run caught between the creation
// of its exec and its start, when the container shows it nowhere yet.
type gatedDocker struct {
	*client.Client
	reached, release chan struct{}
	mu               sync.Mutex
	gated            map[string]bool
}

const gateMark = "gated-run"

func (g *gatedDocker) ContainerExecCreate(ctx context.Context, ctr string, opts container.ExecOptions) (container.ExecCreateResponse, error) {
	resp, err := g.Client.ContainerExecCreate(ctx, ctr, opts)
	if err == nil && slices.Contains(opts.Cmd, gateMark) {
		g.mu.Lock()
		g.gated[resp.ID] = true
		g.mu.Unlock()
	}
	return resp, err
}

func (g *gatedDocker) ContainerExecAttach(ctx context.Context, id string, opts container.ExecAttachOptions) (types.HijackedResponse, error) {
	g.mu.Lock()
	gated := g.gated[id]
	g.mu.Unlock()
	if gated {
		close(g.reached)
		<-g.release
	}
	return g.Client.ContainerExecAttach(ctx, id, opts)
}

func TestRunAboutToStartKeepsTheContainer(t *testing.T) {
	// A run of this Kennel has created its exec in the container but not
	// started it when the image is rebuilt and another run asks for the
	// container: the container is kept for it, and replaced afterwards.
	e := newEnv(t)
	variant := e.variantImage()
	e.cfg.Image = e.movingTag(e.cfg.Image)
	gate := &gatedDocker{Client: e.docker, reached: make(chan struct{}), release: make(chan struct{}), gated: make(map[string]bool)}
	logs := &logBuffer{}
	k, err := kennel.New(gate, e.cfg, slog.New(slog.NewTextHandler(io.MultiWriter(t.Output(), logs), nil)))
	if err != nil {
		t.Fatal(err)
	}
	e.execWith(k, "true")
	first := e.containerID()

	type outcome struct {
		res kennel.Result
		out []string
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		l := &lines{}
		res, err := k.Exec(context.Background(), kennel.ExecSpec{Workspace: e.ws, Argv: []string{"echo", gateMark}}, l.add)
		done <- outcome{res, l.out(), err}
	}()
	select {
	case <-gate.reached:
	case <-time.After(30 * time.Second):
		t.Fatal("the gated run never created its exec")
	}

	e.retag(variant, e.cfg.Image)
	e.execWith(k, "true")
	if got := e.containerID(); got != first {
		t.Errorf("container replaced by %s under a run about to start", got)
	}
	if got := logs.lines(msgKept, "busy=", "run exec-"); len(got) != 1 {
		t.Errorf("want the container logged as held by the run; log:\n%s", logs.lines("kennel:"))
	}
	close(gate.release)
	if o := <-done; o.err != nil || o.res.ExitCode != 0 || !slices.Equal(o.out, []string{gateMark}) {
		t.Errorf("gated run: %+v %q, %v", o.res, o.out, o.err)
	}

	e.execWith(k, "true")
	if _, id := e.imageOf(e.containerID()); id != e.imageID(variant) {
		t.Errorf("after the run: container of image %s, want %s", id, e.imageID(variant))
	}
}
