package kennel_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fetch-dev/fetch/internal/testkit"
	"github.com/fetch-dev/fetch/kennel"
)

// echoLoop prints each line it reads, then "eof" when its stdin ends.
const echoLoop = `echo ready; while read -r l; do echo "got:$l"; done; echo eof`

func TestInboxSendsInOrderThenEOF(t *testing.T) {
	e := newEnv(t)
	task := newTaskID()
	run := e.start(context.Background(), e.k, kennel.ExecSpec{Argv: []string{"sh", "-c", echoLoop}, TaskID: task, Inbox: true}, "ready")
	t.Cleanup(func() { e.k.Stop(context.Background(), e.ws, task) })
	ctx := context.Background()
	got2 := run.lines.await("got:two")
	for _, m := range []string{"one\n", "two\n"} {
		if err := e.k.Send(ctx, e.ws, task, []byte(m)); err != nil {
			t.Fatalf("send %q: %v", m, err)
		}
	}
	select {
	case <-got2:
	case <-time.After(30 * time.Second):
		t.Fatalf("the messages never came out: %q", run.lines.out())
	}
	if err := e.k.CloseInput(ctx, e.ws, task); err != nil {
		t.Fatalf("close input: %v", err)
	}
	res, err := run.wait(t, stopLimit)
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("run: %+v, %v", res, err)
	}
	want := []string{"ready", "got:one", "got:two", "eof"}
	if diff := cmp.Diff(want, run.lines.out()); diff != "" {
		t.Errorf("stdout (-want +got):\n%s", diff)
	}
	if err := e.k.Send(ctx, e.ws, task, []byte("late\n")); !errors.Is(err, kennel.ErrNoTask) {
		t.Errorf("send to an ended task: %v, want ErrNoTask", err)
	}
	if err := e.k.CloseInput(ctx, e.ws, task); err != nil {
		t.Errorf("close input of an ended task: %v, want success", err)
	}
	// The log is kept as for any run.
	l := &lines{}
	if _, err := e.newKennel().Follow(ctx, e.ws, task, l.add); err != nil {
		t.Fatalf("follow: %v", err)
	}
	if diff := cmp.Diff(want, l.out()); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
}

func TestInboxConcurrentSendsStayWhole(t *testing.T) {
	e := newEnv(t)
	task := newTaskID()
	run := e.start(context.Background(), e.k, kennel.ExecSpec{
		Argv: []string{"sh", "-c", "echo ready; cat"}, TaskID: task, Inbox: true,
	}, "ready")
	t.Cleanup(func() { e.k.Stop(context.Background(), e.ws, task) })
	msgs := make([]string, 6)
	for i := range msgs {
		// Longer than PIPE_BUF, shorter than the kennel's longest line.
		msgs[i] = fmt.Sprintf("%d:%s", i, strings.Repeat(string(rune('a'+i)), 20<<10))
	}
	var wg sync.WaitGroup
	for _, m := range msgs {
		wg.Go(func() {
			if err := e.k.Send(context.Background(), e.ws, task, []byte(m+"\n")); err != nil {
				t.Errorf("send: %v", err)
			}
		})
	}
	wg.Wait()
	if err := e.k.CloseInput(context.Background(), e.ws, task); err != nil {
		t.Fatal(err)
	}
	if _, err := run.wait(t, stopLimit); err != nil {
		t.Fatal(err)
	}
	got := run.lines.out()[1:]
	slices.Sort(got)
	if diff := cmp.Diff(msgs, got); diff != "" {
		t.Errorf("lines (-sent +got):\n%.2000s", diff)
	}
}

func TestInboxRefusals(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	if err := e.k.Send(ctx, e.ws, "nothing", []byte("x\n")); !errors.Is(err, kennel.ErrNoTask) {
		t.Errorf("send without a container: %v", err)
	}
	plain := newTaskID()
	e.start(ctx, e.k, kennel.ExecSpec{Argv: []string{"sh", "-c", "echo ready; sleep 600"}, TaskID: plain}, "ready")
	inbox := newTaskID()
	e.start(ctx, e.k, kennel.ExecSpec{Argv: []string{"sh", "-c", echoLoop}, TaskID: inbox, Inbox: true}, "ready")
	t.Cleanup(func() {
		e.k.Stop(context.Background(), e.ws, plain)
		e.k.Stop(context.Background(), e.ws, inbox)
	})
	tests := []struct {
		name string
		task string
		msg  []byte
		want error
	}{
		{"unknown task", "nothing", []byte("x\n"), kennel.ErrNoTask},
		{"task without inbox", plain, []byte("x\n"), kennel.ErrInputClosed},
		{"2 MiB", inbox, bytes.Repeat([]byte("x"), 2<<20), kennel.ErrInvalid},
		{"empty", inbox, nil, kennel.ErrInvalid},
		{"bad task id", "../x", []byte("x\n"), kennel.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := e.k.Send(ctx, e.ws, tt.task, tt.msg)
			if !errors.Is(err, tt.want) {
				t.Errorf("send: %v, want %v", err, tt.want)
			}
		})
	}
	specs := []struct {
		name string
		spec kennel.ExecSpec
	}{
		{"inbox without task id", kennel.ExecSpec{Argv: []string{"cat"}, Inbox: true}},
		{"inbox with stdin", kennel.ExecSpec{Argv: []string{"cat"}, TaskID: newTaskID(), Inbox: true, Stdin: strings.NewReader("x")}},
	}
	for _, tt := range specs {
		t.Run(tt.name, func(t *testing.T) {
			if _, _, err := e.exec(ctx, tt.spec); !errors.Is(err, kennel.ErrInvalid) {
				t.Errorf("exec: %v, want ErrInvalid", err)
			}
		})
	}
}

func TestInboxStopEndsABlockedSend(t *testing.T) {
	e := newEnv(t)
	task := newTaskID()
	run := e.start(context.Background(), e.k, kennel.ExecSpec{Argv: []string{"sh", "-c", "echo ready; sleep 600"}, TaskID: task, Inbox: true}, "ready")
	t.Cleanup(func() { e.k.Stop(context.Background(), e.ws, task) })
	// The program never reads: fill its input. (Each send's shim waits
	// its deadline less sendMargin for room, and the exec has the rest.)
	fill := bytes.Repeat([]byte("x"), 256<<10)
	for i := 0; ; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := e.k.Send(ctx, e.ws, task, fill)
		cancel()
		if errors.Is(err, kennel.ErrInputStalled) {
			break
		}
		if err != nil || i > 8 {
			t.Fatalf("send %d: %v", i, err)
		}
	}
	sent := make(chan error, 1)
	go func() { sent <- e.k.Send(context.Background(), e.ws, task, []byte("blocked\n")) }()
	time.Sleep(300 * time.Millisecond) // let it wait for room
	if err := e.k.Stop(context.Background(), e.ws, task); err != nil {
		t.Fatalf("stop: %v", err)
	}
	// Without the stop it would wait for SendTimeout and report ErrInputStalled.
	if err := <-sent; !errors.Is(err, kennel.ErrNoTask) {
		t.Errorf("the blocked send after stop: %v, want ErrNoTask", err)
	}
	if res, err := run.wait(t, stopLimit); err != nil || !res.Stopped {
		t.Errorf("run: %+v, %v", res, err)
	}
	if left := e.rawExec("ls", "/tmp/fetch/tasks"); strings.Contains(left, task+".in") || strings.Contains(left, task+".ctl") {
		t.Errorf("inbox files left after stop: %q", left)
	}
}

// The re-attach test runs a second copy of this test binary as "Fetch": it
// starts a run with an inbox and is killed, so that the exec that started the
// run is gone with its stream.
const inboxEnvRole = "KENNEL_TEST_INBOX_ROLE"

// TestInboxHelperProcess is not a test: it is the Fetch of
// TestInboxAfterRestart. It prints "running" once the run is ready, then waits
// to be killed.
func TestInboxHelperProcess(t *testing.T) {
	if os.Getenv(inboxEnvRole) != "fetch" {
		t.Skip("helper process for TestInboxAfterRestart")
	}
	helperRun(t, kennel.ExecSpec{
		Workspace: os.Getenv(crashEnvWS),
		Argv:      []string{"sh", "-c", echoLoop},
		TaskID:    os.Getenv(crashEnvTask),
		Inbox:     true,
	})
}

func TestInboxAfterRestart(t *testing.T) {
	e := newEnv(t)
	task := newTaskID()
	fetch := startHelper(t, e, "TestInboxHelperProcess", task, inboxEnvRole+"=fetch")
	// A message while the first Fetch still has the run.
	k := e.newKennel()
	if err := k.Send(context.Background(), e.ws, task, []byte("before\n")); err != nil {
		t.Fatalf("send before the restart: %v", err)
	}
	// Fetch dies without any chance to clean up; its exec goes with it.
	if err := fetch.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = fetch.Wait()

	// A new Fetch re-attaches to the output and goes on talking.
	k = e.newKennel()
	l := &lines{}
	got := l.await("got:after")
	followed := make(chan error, 1)
	var res kennel.Result
	go func() {
		var err error
		res, err = k.Follow(context.Background(), e.ws, task, l.add)
		followed <- err
	}()
	if err := k.Send(context.Background(), e.ws, task, []byte("after\n")); err != nil {
		t.Fatalf("send after the restart: %v", err)
	}
	select {
	case <-got:
	case err := <-followed:
		t.Fatalf("follow ended: %v (%q)", err, l.out())
	case <-time.After(30 * time.Second):
		t.Fatalf("the message after the restart never came out: %q", l.out())
	}
	if err := k.CloseInput(context.Background(), e.ws, task); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-followed:
		if err != nil || res.ExitCode != 0 {
			t.Errorf("follow: %+v, %v", res, err)
		}
	case <-time.After(stopLimit):
		t.Fatal("follow did not end with the task")
	}
	if diff := cmp.Diff([]string{"ready", "got:before", "got:after", "eof"}, l.out()); diff != "" {
		t.Errorf("output read back (-want +got):\n%s", diff)
	}
}

// TestInboxOnARemoteEngine talks to a run on testkit's remote engine, over
// TLS, through a Pool that places the workspace there.
func TestInboxOnARemoteEngine(t *testing.T) {
	remote := testkit.RemoteEngine(t)
	cfg := localConfig(t)
	local := dialSpec(t, "local", cfg)
	eng := dialSpec(t, tlsEntry(remote), cfg)
	img := testkit.KennelImage(t)
	if _, err := kennel.EnsureImage(t.Context(), local, eng, img); err != nil {
		t.Fatal(err)
	}
	ws := remoteWorkspace(t, eng, img)
	kcfg := kennel.Config{
		Image:    img,
		Instance: "test-" + newTaskID(),
		Memory:   256 << 20,
		CPUs:     1,
		Pids:     64,
		TmpSize:  16 << 20,
		HomeSize: 16 << 20,
		Grace:    testGrace,
	}
	log := slog.New(slog.NewTextHandler(t.Output(), nil))
	kr, err := kennel.New(eng, kcfg, log)
	if err != nil {
		t.Fatal(err)
	}
	kl, err := kennel.New(local, kcfg, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := kr.Remove(context.Background(), ws); err != nil {
			t.Errorf("remove: %v", err)
		}
	})
	pool, err := kennel.NewPool("local", map[string]*kennel.Kennel{"local": kl, eng.Name(): kr},
		func(w string) string {
			if w == ws {
				return eng.Name()
			}
			return ""
		})
	if err != nil {
		t.Fatal(err)
	}
	task := newTaskID()
	l := &lines{}
	ready, got := l.await("ready"), l.await("got:remote")
	done := make(chan error, 1)
	var res kennel.Result
	go func() {
		var err error
		res, err = pool.Exec(context.Background(), kennel.ExecSpec{Workspace: ws, Argv: []string{"sh", "-c", echoLoop}, TaskID: task, Inbox: true}, l.add)
		done <- err
	}()
	t.Cleanup(func() {
		pool.Stop(context.Background(), ws, task)
		<-done
	})
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("run ended: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("the run never got ready")
	}
	if err := pool.Send(t.Context(), ws, task, []byte("remote\n")); err != nil {
		t.Fatalf("send: %v", err)
	}
	select {
	case <-got:
	case <-time.After(30 * time.Second):
		t.Fatalf("the message never came back: %q", l.out())
	}
	if err := pool.CloseInput(t.Context(), ws, task); err != nil {
		t.Fatalf("close input: %v", err)
	}
	select {
	case err := <-done:
		done <- err // for the cleanup
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("run: %+v, %v", res, err)
		}
	case <-time.After(stopLimit):
		t.Fatal("the run did not end after its input was closed")
	}
	if diff := cmp.Diff([]string{"ready", "got:remote", "eof"}, l.out()); diff != "" {
		t.Errorf("stdout (-want +got):\n%s", diff)
	}
}
