package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/fetch-dev/fetch/internal/task"
)

// How fetch task run --wait waits (and continue, retry and answer, which
// follow the run they start): the task never runs in the command's own
// process. A task worker (`fetch task follow`, in a session of its own,
// which a terminal's Ctrl-C does not reach) starts and runs it, as for run
// without --wait, and the command follows the task's log in the database
// and prints its steps. Ctrl-C therefore only ends the
// following: the task runs on in the worker and ends there as it would
// have, recorded by the process that ran it. A second Ctrl-C within
// detachGrace cancels the task instead (through the database and the
// kennel, as fetch task cancel does), and the command follows it to its
// end.

// exitDetached is fetch task run --wait's exit code when Ctrl-C left the
// task running.
const exitDetached = 4

// detachGrace is how long after a first Ctrl-C a second one cancels the
// task rather than leaving it running: long enough to press it again on
// purpose, short enough that leaving is not a wait.
const detachGrace = 3 * time.Second

// workerReportFD is the file descriptor on which a task worker started
// with --report says how its task started (a workerStart), then closes.
// workerJobFD is the one from which a worker started with --job reads
// what to do (a workerJob).
const (
	workerReportFD = 3
	workerJobFD    = 4
)

// workerStart is what a task worker reports once it started its task (or
// failed to).
type workerStart struct {
	State task.State `json:"state,omitempty"`
	Error string     `json:"error,omitempty"`
	// How, MessageID and Branch: what became of a continue's message
	// (task.Told).
	How       task.TellHow `json:"how,omitempty"`
	MessageID int64        `json:"message_id,omitempty"`
	Branch    string       `json:"branch,omitempty"`
}

// workerJob is a follow-up run for a worker to start: fetch task continue
// (Kind "continue", with Text and Attachments), retry or answer (Text).
type workerJob struct {
	Kind        string            `json:"kind"`
	Text        string            `json:"text,omitempty"`
	Attachments []task.Attachment `json:"attachments,omitempty"`
}

// errNothingToFollow: the worker had no run to start (a continue's
// message waits for the run going on); what became of it was said.
var errNothingToFollow = errors.New("nothing to follow")

// taskWorker is a task worker this command started and waits on.
type taskWorker struct {
	id     string
	out    string
	report *os.File
	// exited is closed when the worker process has ended; its
	// goroutine (cmd.Wait) ends with the process.
	exited chan struct{}
}

// alive tells whether the worker still runs.
func (w *taskWorker) alive() bool {
	select {
	case <-w.exited:
		return false
	default:
		return true
	}
}

// started waits until the worker says how the task started.
func (w *taskWorker) started(ctx context.Context) (workerStart, error) {
	defer w.report.Close()
	stop := context.AfterFunc(ctx, func() { w.report.SetReadDeadline(time.Now()) })
	defer stop()
	line, err := bufio.NewReader(io.LimitReader(w.report, 64<<10)).ReadBytes('\n')
	if ctx.Err() != nil {
		return workerStart{}, fmt.Errorf("start task %s: %w", w.id, context.Cause(ctx))
	}
	var st workerStart
	if len(line) == 0 || json.Unmarshal(line, &st) != nil {
		return workerStart{}, fmt.Errorf("the worker of task %s ended before it started the task (%v); its output is in %s", w.id, err, w.out)
	}
	if st.Error != "" {
		return workerStart{}, errors.New(st.Error)
	}
	return st, nil
}

// reportStart is the worker's side of started: it writes how the task
// started to workerReportFD, which its parent gave it (--report).
func reportStart(st workerStart, startErr error) {
	f := os.NewFile(workerReportFD, "report")
	if f == nil {
		return
	}
	defer f.Close()
	if startErr != nil {
		st = workerStart{Error: startErr.Error()}
	}
	b, _ := json.Marshal(st)
	f.Write(append(b, '\n'))
}

// readJob is the worker's side of a job: it reads it from workerJobFD,
// which its parent gave it (--job).
func readJob() (workerJob, error) {
	f := os.NewFile(workerJobFD, "job")
	if f == nil {
		return workerJob{}, errors.New("no job given")
	}
	defer f.Close()
	var j workerJob
	if err := json.NewDecoder(io.LimitReader(f, 1<<20)).Decode(&j); err != nil {
		return workerJob{}, fmt.Errorf("read the job: %w", err)
	}
	return j, nil
}

// startWorker starts `fetch task follow ID` in a session of its own, so
// that the task runs on after this command returns and a Ctrl-C in the
// terminal does not reach it. Its output goes to DataDir/tasks/ID.out.
// With wait, it reports how the task started (taskWorker.started) and
// this process keeps its handle; without a job it also adopts the runs
// killed Fetch processes left, as the command that stays to the end of a
// task the user started. With a job it starts that follow-up run instead
// of a queued task.
func startWorker(cfg Config, getenv func(string) string, id string, wait bool, job *workerJob) (*taskWorker, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("start task worker: %w", err)
	}
	dir := filepath.Join(cfg.DataDir, "tasks")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("start task worker: %w", err)
	}
	outPath := filepath.Join(dir, id+".out")
	out, err := os.OpenFile(outPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("start task worker: %w", err)
	}
	defer out.Close()
	args := []string{"task", "follow", id}
	switch {
	case job != nil:
		args = []string{"task", "follow", "--report", "--job", id}
	case wait:
		args = []string{"task", "follow", "--report", "--adopt", id}
	}
	cmd := exec.Command(self, args...)
	cmd.Env = os.Environ()
	for _, k := range taskEnv {
		if v := getenv(k); v != "" {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	for k, v := range cfg.Credentials {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if !wait {
		if err := cmd.Start(); err != nil {
			return nil, fmt.Errorf("start task worker: %w", err)
		}
		return nil, cmd.Process.Release()
	}
	r, wr, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("start task worker: %w", err)
	}
	cmd.ExtraFiles = []*os.File{wr} // workerReportFD
	var jobW *os.File
	if job != nil {
		jr, jw, err := os.Pipe()
		if err != nil {
			r.Close()
			wr.Close()
			return nil, fmt.Errorf("start task worker: %w", err)
		}
		cmd.ExtraFiles = append(cmd.ExtraFiles, jr) // workerJobFD
		defer jr.Close()
		jobW = jw
	}
	err = cmd.Start()
	wr.Close()
	if err != nil {
		r.Close()
		if jobW != nil {
			jobW.Close()
		}
		return nil, fmt.Errorf("start task worker: %w", err)
	}
	if jobW != nil {
		// A job is small: the pipe's buffer holds it.
		b, _ := json.Marshal(job)
		_, werr := jobW.Write(b)
		jobW.Close()
		if werr != nil {
			r.Close()
			return nil, fmt.Errorf("start task worker: give it the job: %w", werr)
		}
	}
	w := &taskWorker{id: id, out: outPath, report: r, exited: make(chan struct{})}
	go func() {
		cmd.Wait()
		close(w.exited)
	}()
	return w, nil
}

// followed is how a followed task ended, or why following it did.
type followed struct {
	t   task.Task
	err error
}

// waitDetachable runs follow (which follows task id until it settles)
// and turns how the task ended into the exit code. A Ctrl-C ends the
// following and leaves the task running (exitDetached), unless a second
// one comes within detachGrace: that cancels the task, which is then
// followed to its end. SIGTERM, or ctx ending otherwise, leaves at once.
func waitDetachable(ctx context.Context, engine *task.Engine, id string, stdout io.Writer, clean func(string) string, follow func(context.Context) (task.Task, error)) error {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt)
	defer signal.Stop(sigs)
	// The following outlives ctx, which main cancels at the first
	// SIGINT: this function decides what a SIGINT means.
	fctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()
	done := make(chan followed, 1)
	go func() {
		t, err := follow(fctx)
		done <- followed{t, err}
	}()
	leave := func() error {
		stop()
		<-done
		fmt.Fprintf(stdout, "Task %s is still running; follow it with `fetch task log -f %s`, stop it with `fetch task cancel %s`.\n", id, id, id)
		return &exitError{code: exitDetached}
	}
	select {
	case r := <-done:
		return ended(r, stdout, clean)
	case <-sigs:
	case <-ctx.Done():
		// main's signal context and sigs hear the same SIGINT, but
		// os/signal may cancel ctx before it puts the SIGINT on sigs:
		// when ctx ended for a SIGINT, that SIGINT is the first Ctrl-C
		// and is taken off sigs here (so it is not also the second).
		// SIGTERM, or a caller's cancel, leaves at once.
		if !interrupted(ctx) {
			return leave()
		}
		select {
		case <-sigs:
		case <-time.After(time.Second): // delivered elsewhere; never seen
		}
	}
	stop()
	<-done
	fmt.Fprintf(stdout, "\nLeaving task %s running; Ctrl-C again within %s cancels it.\n", id, detachGrace)
	grace := time.NewTimer(detachGrace)
	defer grace.Stop()
	select {
	case <-grace.C:
		fmt.Fprintf(stdout, "Task %s is still running; follow it with `fetch task log -f %s`, stop it with `fetch task cancel %s`.\n", id, id, id)
		return &exitError{code: exitDetached}
	case <-sigs:
	}
	fmt.Fprintf(stdout, "Cancelling task %s…\n", id)
	// A third Ctrl-C stops waiting for the cancel to be done.
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	go func() {
		select {
		case <-sigs:
			cancel()
		case <-cctx.Done():
		}
	}()
	if err := engine.Cancel(cctx, id); err != nil && !errors.Is(err, task.ErrState) {
		if cctx.Err() != nil {
			return &exitError{code: exitInterrupted}
		}
		return err
	}
	t, err := followTask(cctx, engine, id, math.MaxInt64, func(task.LogEntry) {}, func(t task.Task) bool { return t.State.Terminal() })
	if err != nil {
		if cctx.Err() != nil {
			fmt.Fprintf(stdout, "Task %s is being cancelled; fetch task show %s tells when it ended.\n", id, id)
			return &exitError{code: exitInterrupted}
		}
		return err
	}
	return ended(followed{t: t}, stdout, clean)
}

// interrupted says whether ctx (main's signal context) ended because of
// a SIGINT: os/signal gives the signal as the context's cause.
func interrupted(ctx context.Context) bool {
	cause := context.Cause(ctx)
	return cause != nil && cause.Error() == os.Interrupt.String()+" signal received"
}

// ended prints how a followed task ended and returns its exit code.
func ended(r followed, stdout io.Writer, clean func(string) string) error {
	if errors.Is(r.err, errNothingToFollow) {
		return nil
	}
	if r.err != nil {
		return r.err
	}
	printEnd(stdout, cleanTask(r.t, clean), clean)
	if code := r.t.State.ExitCode(); code != 0 {
		return &exitError{code: code}
	}
	return nil
}

// followWorker is the follow of waitDetachable for a task its worker w
// runs: it waits for the worker to start the task, prints the head line,
// then the task's steps (those after entry after) until it settles. Past
// an end that messages waited for, the follow-up run the worker starts is
// followed too.
func followWorker(engine *task.Engine, w *taskWorker, t task.Task, after int64, head func(workerStart) (string, error), stdout io.Writer, clean func(string) string) func(context.Context) (task.Task, error) {
	return func(ctx context.Context) (task.Task, error) {
		st, err := w.started(ctx)
		if err != nil {
			return task.Task{}, err
		}
		line, err := head(st)
		fmt.Fprintln(stdout, line)
		if err != nil {
			return task.Task{}, err
		}
		p := &stepPrinter{w: stdout, clean: clean, tasks: engine, id: t.ID}
		end, err := followTask(ctx, engine, t.ID, after, func(le task.LogEntry) { p.entry(ctx, le) }, func(cur task.Task) bool {
			if !settled(cur) {
				return false
			}
			if !cur.State.Terminal() || cur.Worktree == "" || !w.alive() {
				return true
			}
			msgs, err := engine.QueuedMessages(ctx, cur.ID)
			return err != nil || len(msgs) == 0
		})
		if err == nil {
			// The worker leaves once it saw the end too: the command
			// ends after it (bounded), with nothing of the task left
			// running.
			wait := time.NewTimer(workerExitWait)
			defer wait.Stop()
			select {
			case <-w.exited:
			case <-wait.C:
			case <-ctx.Done():
			}
		}
		return end, err
	}
}

// workerExitWait bounds the wait for a task's worker to leave after the
// task settled (it closes its engine).
const workerExitWait = 15 * time.Second

// lastSeq is the last entry of task id's log: a follow-up's steps are
// those after it.
func lastSeq(ctx context.Context, tasks taskLog, id string) (int64, error) {
	var seq int64
	err := tasks.LogAfter(ctx, id, 0, func(le task.LogEntry) error {
		seq = le.Seq
		return nil
	})
	return seq, err
}
